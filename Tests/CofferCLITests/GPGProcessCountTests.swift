import Coffer
import CofferTestSupport
import Testing

/// How many gpg processes a command starts, counted by a `gpg` wrapper first on `PATH`: once
/// gpg-agent runs, reading starts none and a re-encryption starts gpg for its first entry only. The
/// in-process path falls back to gpg silently, so without this count a regression would show only
/// in the benchmarks.
@Suite("gpg processes a command starts")
struct GPGProcessCountTests {
    @Test func readingStartsNoGPGAndReencryptionOneEncryption() throws {
        let sandbox = try GPGSandbox()
        let log = sandbox.directory + "/gpg.log"
        let environment = ["PATH": try sandbox.loggingWrappers(for: ["gpg"], log: log)]
        func coffer(_ arguments: [String], input: String = "") throws -> String {
            try sandbox.coffer(arguments, input: input, environment: environment)
        }
        /// The gpg command lines logged while `body` ran.
        func gpgRuns(_ body: () throws -> Void) throws -> [String] {
            try sandbox.check(["sh", "-c", ": > \"$0\"", log])
            try body()
            // The argv lines; each is followed by the environment, which is not wanted here.
            return try sandbox.read(log).split(separator: UInt8(ascii: "\n")).map {
                String(decoding: $0, as: UTF8.self)
            }.filter { $0.hasPrefix("argv:") }
        }

        _ = try coffer(["init", sandbox.keys[0].email])
        let names = (0..<30).map { "site\($0 % 3)/account\($0)" }
        for name in names { _ = try coffer(["insert", "-m", name], input: "pw-\(name)\nlogin: someone\n") }
        // The first decryption starts gpg (and through it the agent); the wrapper sees it.
        var output = ""
        let first = try gpgRuns { output = try coffer(["show", names[0]]) }
        #expect(output == "pw-\(names[0])\nlogin: someone")
        #expect(first.contains { $0.contains("[--decrypt]") })

        let shown = try gpgRuns { output = try coffer(["show", names[1]]) }
        #expect(output == "pw-\(names[1])\nlogin: someone")
        #expect(shown.isEmpty, "show ran gpg: \(shown)")
        let grepped = try gpgRuns { output = try coffer(["grep", "account1"]) }
        #expect(output.contains("account1"))
        #expect(grepped.isEmpty, "grep ran gpg: \(grepped)")

        let reencrypted = try gpgRuns {
            _ = try coffer(["init", sandbox.keys[1].email, sandbox.keys[2].email])
        }
        #expect(reencrypted.filter { $0.contains("[--encrypt]") }.count == 1, "\(reencrypted)")
        #expect(!reencrypted.contains { $0.contains("[--decrypt]") })
        // What was encrypted in the process, pass and gpg read.
        for name in names {
            let shownByPass = try sandbox.check(["pass", "show", name])
            #expect(shownByPass.outputText == "pw-\(name)\nlogin: someone")
        }
        // fsck's status is not the point here: it also reports plaintext folders that other tests'
        // killed edits leave in the shared /dev/shm meanwhile.
        let checked = try gpgRuns {
            _ = try sandbox.run([try CofferBinary.path(), "fsck"], environment: environment)
        }
        #expect(!checked.contains { $0.contains("[--decrypt]") }, "fsck ran gpg: \(checked)")
        let audited = try gpgRuns {
            let output = try sandbox.run(
                [try CofferBinary.path(), "audit", "--json"], environment: environment)
            #expect(output.status == 0 || output.status == 1, "audit: \(output.errorText)")
        }
        #expect(!audited.contains { $0.contains("[--decrypt]") }, "audit ran gpg: \(audited)")
    }
}
