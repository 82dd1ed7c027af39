import Coffer
import CofferTestSupport
import Dispatch
import Testing

@testable import CofferCLI

/// Names another local user can take first: coffer's per-user files must not be stopped or read by them.
/// The tests run as root and play the other user with uid 65534 (`nobody`).
@Suite("Per-user runtime files another user made first", .serialized)
struct RuntimeFilesTests {
    /// The other user.
    static let other: uid_t = 65534

    /// The name the store lock used to live under, which any user can make first.
    static let oldLockFolder = "/dev/shm/coffer-\(getuid())"

    /// Runs `body` while `/dev/shm/coffer-UID` is another user's: `make` puts it there. What was at the name
    /// before is put back afterwards.
    static func withSquattedLockFolder(_ make: (String) throws -> Void, _ body: () throws -> Void) throws {
        let kept = oldLockFolder + ".kept-\(getpid())"
        let hadOne = TestFiles.exists(oldLockFolder)
        if hadOne { try #require(rename(oldLockFolder, kept) == 0) }
        defer {
            _ = try? ChildProcess(["rm", "-rf", oldLockFolder]).run()
            if hadOne { rename(kept, oldLockFolder) }
        }
        try make(oldLockFolder)
        try body()
    }

    /// A folder of the other user in `/dev/shm`, open to all (removed by the caller).
    static func othersFolder() throws -> String {
        var template = Array("/dev/shm/coffer-theirs-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw SandboxError("mkdtemp failed") }
        let folder = String(cString: made)
        chmod(folder, 0o777)
        chown(folder, other, other)
        return folder
    }

    @Test(
        "a /dev/shm/coffer-UID of another user (a folder, a symlink) costs nothing: writes work and still exclude each other"
    )
    func squattedLockFolder() throws {
        let theirs = try Self.othersFolder()
        defer { _ = try? ChildProcess(["rm", "-rf", theirs]).run() }
        let squats: [(String, (String) throws -> Void)] = [
            (
                "a folder open to all",
                { path in
                    try #require(mkdir(path, 0o777) == 0)
                    chmod(path, 0o777)
                    chown(path, Self.other, Self.other)
                }
            ),
            ("a symlink to a folder of theirs", { path in try #require(symlink(theirs, path) == 0) }),
        ]
        for (squat, make) in squats {
            let installed = try InstalledAsPass(entries: ["first": "one\n"])
            try Self.withSquattedLockFolder(make) {
                try Self.writesWorkAndExcludeEachOther(installed, squat)
            }
        }
        #expect(try FileSystem.contents(of: theirs).isEmpty)
    }

    /// insert, generate, mv and rm, two writers at once with different environments (both kept), and a
    /// writer that waits for the other and names it.
    static func writesWorkAndExcludeEachOther(_ installed: InstalledAsPass, _ squat: String) throws {
        try installed.check(["insert", "-m", "web/mail"], input: "secret\n")
        try installed.check(["generate", "web/bank", "20"])
        try installed.check(["mv", "web/mail", "mail"])
        try installed.check(["rm", "web/bank"])
        #expect(try installed.decrypted("mail") == "secret\n", "\(squat)")
        #expect(!FileSystem.exists(installed.store + "/web"), "\(squat)")

        // Two environments: a session with a private XDG_RUNTIME_DIR, and a cron job without one, another
        // HOME and another TMPDIR.
        let sandbox = installed.sandbox
        let runtime = sandbox.directory + "/runtime"
        let cronHome = sandbox.directory + "/cron-home"
        for folder in [runtime, cronHome, cronHome + "/tmp"] { mkdir(folder, 0o700) }
        try TestFiles.write(TestFiles.read(sandbox.home + "/.gitconfig") ?? [], to: cronHome + "/.gitconfig")
        let session = ["XDG_RUNTIME_DIR": runtime, "TMPDIR": "/tmp"]
        let cron = ["HOME": cronHome, "TMPDIR": cronHome + "/tmp"]

        let commits = try installed.commitCount()
        let outputs = Locked<[Int: ChildProcess.Output]>([:])
        DispatchQueue.concurrentPerform(iterations: 2) { index in
            let output = try? installed.run(
                ["insert", "-m", "pair/\(index)"], input: "pair \(index)\n",
                environment: index == 0 ? session : cron)
            outputs.withLock { $0[index] = output }
        }
        for index in 0..<2 {
            let output = outputs.withLock { $0[index] }
            #expect(output?.status == 0, "\(squat): \(output?.errorText ?? "did not run")")
            #expect(try installed.decrypted("pair/\(index)") == "pair \(index)\n", "\(squat)")
        }
        #expect(try installed.commitCount() == commits + 2, "\(squat)")
        #expect(try installed.uncommitted().isEmpty, "\(squat)")

        // While the session's writer holds the lock (its commit hook waits), the cron job's writer waits
        // for it, and gives up naming it.
        let hold = sandbox.directory + "/hold"
        let started = sandbox.directory + "/started"
        try TestFiles.write(
            "#!/bin/sh\nif [ -e '\(hold)' ]; then touch '\(started)'; sleep 3; fi\n",
            to: installed.store + "/.git/hooks/pre-commit", mode: 0o755)
        try TestFiles.write("", to: hold)
        defer { unlink(hold) }
        var environment = installed.environment
        for (name, value) in session { environment[name] = value }
        let holder = try TestProcess.start(
            [installed.program, "generate", "held", "12"], environment: environment)
        let deadline = TestProcess.monotonicSeconds() + 30
        while !TestFiles.exists(started) && TestProcess.monotonicSeconds() < deadline { usleep(20_000) }
        var impatient = cron
        impatient["COFFER_LOCK_TIMEOUT"] = "0.5"
        let refused = try installed.run(["insert", "-m", "waiter"], input: "w\n", environment: impatient)
        #expect(refused.status == 1, "\(squat)")
        #expect(
            refused.errorText
                == "Error: the password store is locked by process \(holder); try again later",
            "\(squat)")
        #expect(!FileSystem.exists(installed.store + "/waiter.gpg"), "\(squat)")
        #expect(TestProcess.waitFor(holder) == 0, "\(squat)")
        #expect(FileSystem.isFile(installed.store + "/held.gpg"), "\(squat)")
        unlink(installed.store + "/.git/hooks/pre-commit")
    }

    @Test(
        "folders of another user in /dev/shm named as coffer names its edit folders: edit works, leaves them")
    func editFolderNamesTakenFirst() throws {
        let installed = try InstalledAsPass(entries: ["site": "old\n"])
        let sandbox = installed.sandbox
        // Folders and a symlink of the other user with the shapes of coffer's and pass's edit folders.
        let theirs = try Self.othersFolder()
        defer { _ = try? ChildProcess(["rm", "-rf", theirs]).run() }
        try TestFiles.write("theirs\n", to: theirs + "/.coffer-tmpdir")
        chown(theirs + "/.coffer-tmpdir", Self.other, Self.other)
        let planted = ["coffer.", "pass."].map { "/dev/shm/" + $0 + PlaintextFolder.randomName(13) }
        defer { for path in planted { _ = try? ChildProcess(["rm", "-rf", path]).run() } }
        try #require(symlink(theirs, planted[0]) == 0)
        lchown(planted[0], Self.other, Self.other)
        try #require(mkdir(planted[1], 0o700) == 0)
        chown(planted[1], Self.other, Self.other)

        // The editor says where it was given the file, and who may read that folder.
        let report = sandbox.directory + "/editor-report"
        let editor = sandbox.directory + "/editor"
        try TestFiles.write(
            "#!/bin/sh\nstat -c '%n %u %a' \"${1%/*}\" > '\(report)'\nprintf 'new\\n' > \"$1\"\n", to: editor,
            mode: 0o755)
        try installed.check(["edit", "site"], environment: ["EDITOR": editor])
        #expect(try installed.decrypted("site") == "new\n")
        let seen = String(decoding: TestFiles.read(report) ?? [], as: UTF8.self).split(separator: " ")
        try #require(seen.count == 3)
        #expect(seen[0].hasPrefix("/dev/shm/pass.") && !planted.contains(String(seen[0])))
        #expect(seen[1] == "\(getuid())" && seen[2] == "700\n")
        #expect(!TestFiles.exists(String(seen[0])))
        // Theirs are untouched, by edit and by fsck --fix, which sweeps abandoned edit folders.
        // (fsck's status is not looked at: other tests' killed edits may leave folders it reports.)
        try installed.run(["fsck", "--fix"])
        for path in planted { #expect(TestFiles.exists(path), "\(path)") }
        #expect(TestFiles.read(theirs + "/.coffer-tmpdir") == Array("theirs\n".utf8))
    }
}
