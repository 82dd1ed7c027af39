import Coffer
import CofferTestSupport
import Testing

/// What another local user (here `nobody`, reached with `setpriv` as root, as CI runs) can do to a store
/// in a folder they may read: hold locks there, or own the store folder itself.
@Suite("Another local user", .enabled(if: geteuid() == 0))
struct LocalUserTests {
    static let nobody = "65534"

    /// Starts `command` as `nobody`; stopped by the caller.
    static func asNobody(_ command: [String], in installed: InstalledAsPass) throws -> pid_t {
        let started = try TestProcess.startWithOutputPipe(
            ["setpriv", "--reuid=\(nobody)", "--regid=\(nobody)", "--clear-groups", "--"] + command,
            environment: ["PATH": "/usr/bin:/bin"])
        close(started.output)
        return started.pid
    }

    @Test("a lock another user holds on the folder above the store stops no write")
    func foreignLockAboveTheStore() throws {
        let installed = try InstalledAsPass(entries: ["first": "first\n"])
        let home = installed.sandbox.home
        // The home folder readable by all, as Debian makes it, on a path others may pass through.
        chmod(installed.sandbox.directory, 0o711)
        chmod(home, 0o755)
        let holder = try Self.asNobody(["flock", "-x", home, "sleep", "60"], in: installed)
        defer { TestProcess.stop(holder, signal: SIGKILL) }
        // Until nobody holds it.
        let deadline = TestProcess.monotonicSeconds() + 10
        while TestProcess.monotonicSeconds() < deadline,
            !(String(decoding: TestFiles.read("/proc/locks") ?? [], as: UTF8.self).contains(" \(holder) "))
        {
            usleep(50_000)
        }
        let quick = ["COFFER_LOCK_TIMEOUT": "3"]
        let inserted = try installed.run(["insert", "-m", "second"], input: "second\n", environment: quick)
        #expect(inserted.status == 0, "\(inserted.errorText)")
        #expect(try installed.decrypted("second") == "second\n")
        // A store made under that folder.
        let fresh = ["PASSWORD_STORE_DIR": home + "/fresh"].merging(quick) { $1 }
        let made = try installed.run(["init", installed.sandbox.keys[0].fingerprint], environment: fresh)
        #expect(made.status == 0, "\(made.errorText)")
        #expect(FileSystem.exists(home + "/fresh/.gpg-id"))
    }

    @Test("fsck reports a store folder others may read or that another user owns; writes refuse the second")
    func storeFolderItself() throws {
        let installed = try InstalledAsPass(entries: ["first": "first\n"])
        let store = installed.store
        chmod(store, 0o755)
        let checked = try installed.run(["fsck"])
        #expect(checked.status != 0)
        #expect(checked.outputText.contains(".: mode 755, expected at most 700"), "\(checked.outputText)")
        _ = try installed.run(["fsck", "--fix"])
        var info = stat()
        #expect(stat(store, &info) == 0 && info.st_mode & 0o777 == 0o700)

        // The store folder made by another user (a name in /tmp taken first, say).
        try #require(chown(store, 65534, 65534) == 0)
        defer { chown(store, 0, 0) }
        let refused = try installed.run(["insert", "-m", "planted"], input: "x\n")
        #expect(refused.status == 1)
        #expect(
            refused.errorText.contains("belongs to user 65534")
                && refused.errorText.split(separator: "\n").count == 1,
            "\(refused.errorText)")
        #expect(!FileSystem.exists(store + "/planted.gpg"))
        let owned = try installed.run(["fsck"])
        #expect(owned.outputText.contains(".: owned by user 65534"), "\(owned.outputText)")
    }
}
