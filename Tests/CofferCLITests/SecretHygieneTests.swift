import Coffer
import CofferTestSupport
import Testing

/// No secret reaches a child process's argv or environment, or any file outside the store's ciphertext:
/// coffer runs with `gpg`, `git` and the editor replaced by wrappers that log their argv and environment.
@Suite("Secrets stay out of argv, environment and files")
struct SecretHygieneTests {
    @Test func childProcessesNeverSeeASecret() throws {
        let sandbox = try GPGSandbox()
        let log = sandbox.directory + "/children.log"
        let temporary = sandbox.directory + "/tmp"
        let path = try sandbox.loggingWrappers(for: ["gpg", "git"], log: log)
        try sandbox.check(["mkdir", "-p", temporary])
        // The editor writes the edited secret and logs what it was started with, like the wrappers.
        let editor = sandbox.directory + "/wrappers/editor"
        try sandbox.check([
            "sh", "-c",
            "printf '#!/bin/sh\\n{ echo \"argv: $0 $*\"; env; } >> %s\\nprintf \"edited-6f1d2b\\\\nuser: me\\\\n\" > \"$1\"\\n' "
                + "\"$2\" > \"$1\" && chmod +x \"$1\"",
            "sh", editor, log,
        ])
        let environment = ["PATH": path, "EDITOR": editor, "TMPDIR": temporary]
        func coffer(_ arguments: [String], input: String = "", extra: [String: String] = [:]) throws -> String
        {
            try sandbox.coffer(arguments, input: input, environment: environment.merging(extra) { $1 })
        }
        _ = try coffer(["init", sandbox.keys[0].email])
        _ = try coffer(["git", "init"])
        _ = try coffer(["insert", "-m", "web/site"], input: "inserted-93ac71\nlogin: someone\n")
        _ = try coffer(["generate", "web/generated", "32"])
        _ = try coffer(["edit", "web/site"])
        _ = try coffer(["cp", "web/site", "web/copy"])
        _ = try coffer(["generate", "--in-place", "web/copy", "28"])
        let shown = try coffer(["show", "web/site"])
        #expect(shown == "edited-6f1d2b\nuser: me")
        // Decryption without a gpg process is the rule once gpg-agent runs; this one goes through gpg.
        let shownByGPG = try coffer(["show", "web/site"], extra: ["COFFER_DIRECT_DECRYPT": "0"])
        #expect(shownByGPG == shown)
        let generated = try coffer(["show", "web/generated"])
        let regenerated = String(try coffer(["show", "web/copy"]).prefix(28))
        _ = try coffer(["git", "log", "--oneline"])
        // audit reads git's history and, for old versions, git's blobs: git never sees a password.
        let audited = try sandbox.run(
            [try CofferBinary.path(), "audit", "--show-passwords"], environment: environment)
        #expect(audited.status == 0 || audited.status == 1, "audit: \(audited.errorText)")
        #expect(try self.text(ofLog: log).contains("[log]"), "audit did not read the history")
        #expect(generated.count == 32 && regenerated.count == 28)

        let secrets = ["inserted-93ac71", "edited-6f1d2b", generated, regenerated]
        let text = try self.text(ofLog: log)
        // The wrappers did run: gpg encrypted and decrypted, git committed, the editor started.
        for expected in ["--decrypt", "--encrypt", "[commit]", "argv: " + editor] {
            #expect(text.contains(expected), "no child logged \(expected)")
        }
        for secret in secrets {
            let seen = text.contains(secret)
            #expect(!seen, "a child process saw a secret in its argv or environment (see \(log))")
            // Nor in a file: the keyring, HOME, TMPDIR and the store are searched (not the editor holding it).
            let files = try sandbox.run([
                "grep", "-rlaF", "--exclude-dir=wrappers", "--", secret, sandbox.directory,
            ])
            #expect(files.outputText.isEmpty, "secret found in \(files.outputText)")
        }
    }

    private func text(ofLog log: String) throws -> String {
        String(decoding: TestFiles.read(log) ?? [], as: UTF8.self)
    }
}
