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

    /// Red team (another local user): a link another user took first in a sticky folder passed the
    /// checks while it pointed at the user's own folder, and was re-pointed between the check and the
    /// write: the store's write, or the cache folder's journal, went elsewhere.
    @Test("a store or cache folder reached through another user's link in a sticky folder is refused")
    func linkAnotherUserOwns() throws {
        let installed = try InstalledAsPass(git: false, entries: ["first": "first\n"])
        let sticky = installed.sandbox.directory + "/tmp"
        try installed.sandbox.check(["mkdir", "-m", "1777", sticky])
        chmod(installed.sandbox.directory, 0o711)
        // The store through nobody's link: writes refused, reading still works.
        let storeLink = sticky + "/store"
        #expect(symlink(installed.store, storeLink) == 0 && lchown(storeLink, 65534, 65534) == 0)
        let viaLink = ["PASSWORD_STORE_DIR": storeLink]
        let refused = try installed.run(["insert", "-m", "second"], input: "x\n", environment: viaLink)
        #expect(refused.status == 1)
        #expect(refused.errorText.contains("another user may change"), "\(refused.errorText)")
        #expect(!FileSystem.exists(installed.store + "/second.gpg"))
        let shown = try installed.run(["show", "first"], environment: viaLink)
        #expect(shown.status == 0 && shown.outputText == "first", "\(shown.errorText)")
        // The same link the user owns is the user's: writes go on.
        #expect(lchown(storeLink, 0, 0) == 0)
        let own = try installed.run(["insert", "-m", "third"], input: "x\n", environment: viaLink)
        #expect(own.status == 0, "\(own.errorText)")
        // The cache folder through nobody's link: a change of several files in a store without git
        // refuses, saying why.
        let cache = installed.sandbox.home + "/real-cache"
        try installed.sandbox.check(["mkdir", "-m", "700", cache])
        let cacheLink = sticky + "/cache"
        #expect(symlink(cache, cacheLink) == 0 && lchown(cacheLink, 65534, 65534) == 0)
        let copied = try installed.run(["cp", "first", "copy"], environment: ["XDG_CACHE_HOME": cacheLink])
        #expect(copied.status == 1)
        #expect(copied.errorText.contains("XDG_CACHE_HOME"), "\(copied.errorText)")
        #expect(!FileSystem.exists(installed.store + "/copy.gpg"))
    }

    /// Red team (another local user), round 3: a git folder named by a `.git` file, through another
    /// user's link in a sticky folder, held the journal: they hid it while a change ended, and the
    /// next command put the old change back.
    @Test("a journal in a git folder another user may re-point is neither made nor put back")
    func gitFolderThroughAnotherUsersLink() throws {
        let installed = try InstalledAsPass(entries: ["first": "first\n"])
        let sticky = installed.sandbox.directory + "/tmp"
        try installed.sandbox.check(["mkdir", "-m", "1777", sticky])
        chmod(installed.sandbox.directory, 0o711)
        let realGit = installed.sandbox.home + "/real-git"
        try installed.sandbox.check(["mv", installed.store + "/.git", realGit])
        let link = sticky + "/gitlink"
        #expect(symlink(realGit, link) == 0 && lchown(link, 65534, 65534) == 0)
        try TestFiles.write("gitdir: \(link)\n", to: installed.store + "/.git", mode: 0o600)
        // A journal left there that would remove the entry.
        let journal = realGit + "/coffer-journal"
        try installed.sandbox.check(["mkdir", "-m", "700", journal])
        try TestFiles.write(
            PlantedJournalTests.manifest(
                missing: installed.store + "/first.gpg", restoring: installed.store + "/x.gpg"),
            to: journal + "/manifest", mode: 0o600)
        let shown = try installed.run(["show", "first"])
        #expect(shown.status == 0 && !shown.errorText.contains("Undid"), "\(shown.errorText)")
        #expect(FileSystem.exists(installed.store + "/first.gpg"))
        let refused = try installed.run(["insert", "-m", "second"], input: "x\n")
        #expect(refused.status == 1)
        #expect(refused.errorText.contains("may be changed by another user"), "\(refused.errorText)")
        #expect(!FileSystem.exists(installed.store + "/second.gpg"))
    }
}
