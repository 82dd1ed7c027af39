import CofferTestSupport
import Testing

@testable import Coffer

/// kill -9 at random moments, and many writers at once: nothing lost, nothing half-written.
@Suite("Crash safety and concurrent coffer processes", .serialized)
struct CrashSafetyTests {
    let sandbox: GPGSandbox
    let coffer: String
    let environment: [String: String]

    init() throws {
        sandbox = try GPGSandbox()
        coffer = try CofferBinary.path()
        var environment = sandbox.environment
        environment["COFFER_LOCK_TIMEOUT"] = "600"
        self.environment = environment
    }

    /// Files an interrupted write could leave: coffer's temporary files and pass's.
    func strayFiles() throws -> String {
        try sandbox.run(["find", sandbox.storeDirectory, "-name", "*coffer-tmp*", "-o", "-name", "*.tmp.*"])
            .outputText
    }

    func expectFsckClean() throws {
        let fsck = try sandbox.run([coffer, "fsck"])
        #expect(fsck.status == 0 && fsck.outputText.isEmpty, "fsck: \(fsck.outputText) \(fsck.errorText)")
    }

    @Test func reencryptionSurvivesFiftySIGKILLs() throws {
        let store = sandbox.store()
        try store.initialize(recipients: [sandbox.keys[0].fingerprint])
        for index in 0..<300 {
            try store.write(
                "folder\(index % 7)/entry\(index)", SecureBytes(string: "secret number \(index)\n"))
        }
        let targets = [[sandbox.keys[1].fingerprint], [sandbox.keys[0].fingerprint]]
        var target = 0
        var kills = 0
        var generator = SystemRandomNumberGenerator()
        while kills < 50 {
            let pid = try TestProcess.start([coffer, "init"] + targets[target], environment: environment)
            usleep(UInt32.random(in: 20_000...250_000, using: &generator))
            if let status = TestProcess.statusIfEnded(pid) {
                // This run finished before the kill: turn round and re-encrypt everything back.
                #expect(status == 0)
                target = 1 - target
                continue
            }
            TestProcess.stop(pid, signal: SIGKILL)
            kills += 1
        }
        let final = try sandbox.run([coffer, "init"] + targets[target])
        #expect(final.status == 0, "\(final.errorText)")
        let wanted = try store.engine.encryptionKeyIDs(for: targets[target])
        for index in 0..<300 {
            let name = "folder\(index % 7)/entry\(index)"
            #expect(try store.read(name).string == "secret number \(index)\n")
            let ciphertext = try sandbox.read(store.entryPath(name))
            #expect(OpenPGPPackets.recipientKeyIDs(ciphertext) == wanted, "\(name) has other recipients")
        }
        #expect(try strayFiles().isEmpty)
        try expectFsckClean()
    }

    @Test func insertsSurviveFiftySIGKILLs() throws {
        try sandbox.check([coffer, "init", sandbox.keys[0].email])
        var generator = SystemRandomNumberGenerator()
        for index in 0..<50 {
            let insert =
                "printf 'value %s\\nline two\\n' \(index) | exec \(coffer) insert -m -f loop/e\(index)"
            let pid = try TestProcess.start(["sh", "-c", insert], environment: environment)
            usleep(UInt32.random(in: 0...120_000, using: &generator))
            TestProcess.stop(pid, signal: SIGKILL)
            // Whatever the moment, the entry is either absent or complete.
            let shown = try sandbox.run([coffer, "show", "loop/e\(index)"])
            #expect(shown.status != 0 || shown.outputText == "value \(index)\nline two")
            // Then the same insert, uninterrupted.
            let again = try sandbox.run(
                [coffer, "insert", "-m", "-f", "loop/e\(index)"],
                input: Array("value \(index)\nline two\n".utf8))
            #expect(again.status == 0)
        }
        for index in 0..<50 {
            #expect(
                try sandbox.run([coffer, "show", "loop/e\(index)"]).outputText == "value \(index)\nline two")
        }
        #expect(try strayFiles().isEmpty)
        try expectFsckClean()
    }

    @Test func eightProcessesInsertingIntoOneGitStore() throws {
        try sandbox.check([coffer, "init", sandbox.keys[0].email])
        try sandbox.check([coffer, "git", "init"])
        let loop =
            "set -e; for i in $(seq 1 25); do echo \"pw-$0-$i\" | \(coffer) insert -e \"p$0/e$i\" >/dev/null; done"
        let pids = try (0..<8).map { worker in
            try TestProcess.start(["sh", "-c", loop, "\(worker)"], environment: environment)
        }
        let statuses = pids.map { TestProcess.waitFor($0) }
        #expect(statuses == Array(repeating: 0, count: 8))
        #expect(try sandbox.store().allEntries().count == 200)
        let commits = try sandbox.check(["git", "-C", sandbox.storeDirectory, "rev-list", "--count", "HEAD"])
        // pass's two commits from `git init`, then one a password.
        #expect(commits.outputText == "202")
        let log = try sandbox.check(["git", "-C", sandbox.storeDirectory, "log", "--format=%s"]).outputText
        #expect(log.split(separator: "\n").filter { $0.hasPrefix("Add given password for p") }.count == 200)
        #expect(
            try sandbox.check(["git", "-C", sandbox.storeDirectory, "status", "--porcelain"]).outputText
                .isEmpty)
        #expect(try sandbox.run([coffer, "show", "p7/e25"]).outputText == "pw-7-25")
    }
}
