import Coffer
import CofferTestSupport
import Testing

/// `coffer audit` on what a red-team review found it got wrong: CRLF entries, a history git cannot read,
/// a merge that kept our side, a shallow clone, symbolic links to entries and folders, and the report's
/// wording (rounding, entries without a password, counts, names that are not UTF-8 or hold control
/// characters).
@Suite("audit regressions")
struct AuditRegressionTests {
    typealias AuditSandbox = AuditCommandTests.AuditSandbox

    /// Upper-case hexadecimal SHA-1 of `text`.
    static func sha1(_ audit: AuditSandbox, _ text: String) throws -> String {
        try audit.sandbox.check(["sha1sum"], input: Array(text.utf8)).outputText.prefix(40).uppercased()
    }

    @Test("a CRLF entry's password ends before the \\r: reuse and breaches are found")
    func crlfEntries() throws {
        let audit = try AuditSandbox(git: false)
        let shared = "Xq7#mZ2!vR9$kP4@wL"
        let breached = "Xq7#mZ2!vR9$kP4@wLbreached"
        try audit.insert("windows", shared + "\r\nlogin: bob\r\n")
        try audit.insert("unix", shared + "\nlogin: bob\n")
        try audit.insert("breached-crlf", breached + "\r\n")
        try audit.insert("common-crlf", "password\r\n")
        let list = audit.sandbox.directory + "/list.txt"
        try TestFiles.write(
            [try Self.sha1(audit, breached) + ":42", String(repeating: "F", count: 40) + ":1"].sorted()
                .joined(separator: "\r\n") + "\r\n", to: list)
        let output = try audit.run(["audit", "--breached", list])
        #expect(output.status == 1, "\(output.errorText)")
        let sections = AuditCommandTests.sections(output.outputText)
        #expect(sections["Reused passwords"] == ["unix, windows"], "\(output.outputText)")
        #expect(sections["Breached passwords"] == ["breached-crlf"], "\(output.outputText)")
        #expect(output.outputText.contains("common-crlf  (one of the most common passwords)"))
    }

    @Test("git cannot read the history: one error line, exit 2; --age 0 leaves ages out")
    func unreadableHistory() throws {
        let audit = try AuditSandbox()
        try audit.insert("bank", "Vq8#Lm3!pX7$wK2@nR5\n", date: "2019-01-01T00:00:00Z")
        // git missing from PATH (gpg still there).
        let bin = audit.sandbox.directory + "/bin-without-git"
        mkdir(bin, 0o700)
        for program in ["gpg", "gpgconf", "gpg-agent", "gpg-connect-agent"] {
            symlink("/usr/bin/" + program, bin + "/" + program)
        }
        let withoutGit = try audit.run(["audit"], environment: ["PATH": bin])
        #expect(withoutGit.status == 2)
        #expect(withoutGit.outputText.isEmpty, "\(withoutGit.outputText)")
        #expect(
            withoutGit.errorText.hasPrefix("Error: cannot read the git history of ")
                && withoutGit.errorText.contains("git is not installed")
                && !withoutGit.errorText.contains("\n"), "\(withoutGit.errorText)")
        #expect(try audit.run(["audit", "--age", "0"], environment: ["PATH": bin]).status == 0)
        // A repository git refuses (here a broken HEAD; "dubious ownership" goes the same way).
        try TestFiles.write(Array("garbage\n".utf8), to: audit.store + "/.git/HEAD")
        for json in [false, true] {
            let broken = try audit.run(["audit"] + (json ? ["--json"] : []))
            #expect(broken.status == 2)
            #expect(broken.outputText.isEmpty, "\(broken.outputText)")
            #expect(
                broken.errorText.hasPrefix("Error: cannot read the git history of ")
                    && broken.errorText.contains("fatal: ") && !broken.errorText.contains("\n"),
                "\(broken.errorText)")
        }
        #expect(try audit.run(["audit", "--age", "0"]).status == 0)
    }

    @Test("after a merge that kept our side, the password dates from our change, not theirs")
    func mergeKeepingOurs() throws {
        let audit = try AuditSandbox()
        let store = audit.store
        func git(_ arguments: [String], date: String? = nil) throws {
            var environment: [String: String] = [:]
            if let date {
                environment["GIT_AUTHOR_DATE"] = date
                environment["GIT_COMMITTER_DATE"] = date
            }
            try audit.sandbox.check(["git", "-C", store] + arguments, environment: environment)
        }
        try audit.insert("bank", "Vq8#Lm3!pX7$wK2@P1\n", date: "2019-01-01T00:00:00Z")
        let main = try audit.sandbox.check(["git", "-C", store, "symbolic-ref", "--short", "HEAD"]).outputText
        try git(["checkout", "-q", "-b", "laptop"])
        try audit.insert("bank", "Vq8#Lm3!pX7$wK2@P3\n", date: "2025-06-01T00:00:00Z")
        try git(["checkout", "-q", main])
        try audit.insert("bank", "Vq8#Lm3!pX7$wK2@P2\n", date: "2025-01-01T00:00:00Z")
        // The merge keeps our side whole (as resolving a conflict with `checkout --ours` does).
        try git(["merge", "-q", "-s", "ours", "--no-edit", "laptop"], date: "2025-12-01T00:00:00Z")
        let output = try audit.run(["audit"])
        #expect(output.status == 1, "\(output.outputText) \(output.errorText)")
        #expect(output.outputText.contains("  bank  (unchanged since 2025-01-01, "), "\(output.outputText)")
    }

    @Test("a shallow clone: ages cannot be known, an error (exit 2) unless --age 0")
    func shallowClone() throws {
        let audit = try AuditSandbox()
        try audit.insert("bank", "Vq8#Lm3!pX7$wK2@nR5\n", date: "2019-01-01T00:00:00Z")
        try audit.insert("other", "Zq8#Lm3!pX7$wK2@nR5\n")
        let clone = audit.sandbox.directory + "/shallow"
        try audit.sandbox.check(["git", "clone", "-q", "--depth", "1", "file://" + audit.store, clone])
        for json in [false, true] {
            let output = try audit.run(
                ["audit"] + (json ? ["--json"] : []), environment: ["PASSWORD_STORE_DIR": clone])
            #expect(output.status == 2)
            #expect(output.outputText.isEmpty, "\(output.outputText)")
            #expect(
                output.errorText.hasPrefix("Error: the git history of ")
                    && output.errorText.contains("is shallow") && output.errorText.contains("--age 0")
                    && !output.errorText.contains("\n"), "\(output.errorText)")
        }
        let noAge = try audit.run(["audit", "--age", "0"], environment: ["PASSWORD_STORE_DIR": clone])
        #expect(noAge.status == 0, "\(noAge.errorText)")
    }

    @Test("a symbolic link to an entry or a folder is audited once, not as reuse; an entry's is an alias")
    func symlinkAliases() throws {
        let audit = try AuditSandbox(git: false)
        try audit.insert("github", "Vq8#Lm3!pX7$wK2@nR5\n")
        try audit.insert("work/vpn", "Zq8#Lm3!pX7$wK2@nR5\n")
        symlink("github.gpg", audit.store + "/gh.gpg")
        symlink("work", audit.store + "/job")
        let output = try audit.run(["audit"])
        #expect(output.status == 0, "\(output.outputText)")
        let sections = AuditCommandTests.sections(output.outputText)
        #expect(sections["Reused passwords"] == nil)
        // The folder `work` is walked once, under its own name: nothing below `job` is listed at all.
        let aliases = sections["Aliases (symbolic links), audited once under the name they lead to"]
        #expect(aliases == ["gh -> github"], "\(output.outputText)")
        #expect(output.outputText.contains("among 2 entries."), "\(output.outputText)")
        let json = try audit.run(["audit", "--json"])
        #expect(json.outputText.contains("\"entries\": 2,"))
        #expect(json.outputText.contains("{\"entry\": \"gh\", \"sameAs\": \"github\"}"), "\(json.outputText)")
    }

    @Test("the report's wording: rounding, entries without a password, counts, odd names")
    func wording() throws {
        let audit = try AuditSandbox(git: false)
        let fingerprint = audit.sandbox.keys[0].fingerprint
        try audit.insert("cyr", "пароль\n")
        try audit.insert("note", "\nlogin: bob\n")
        try TestFiles.write([], to: audit.store + "/broken.gpg", mode: 0o600)
        // Names coffer itself refuses, made by another client.
        for name in ["evil\n  fake-entry  (seen 999 times)", "dup\u{1b}[8m"] {
            try audit.sandbox.check(
                [
                    "gpg", "--batch", "--yes", "-q", "-e", "-r", fingerprint, "-o",
                    audit.store + "/" + name + ".gpg",
                ],
                input: Array("Zq8#Lm3!pX7$wK2@nR5\n".utf8))
        }
        let output = try audit.run(["audit", "--age", "0"])
        #expect(output.status == 2)
        let text = output.outputText
        #expect(text.contains("  cyr  (about 39 bits, fewer than 40)\n"), "\(text)")
        #expect(
            text.contains("Without a password (first line empty), not judged (1):\n  note\n"), "\(text)")
        #expect(text.contains("4 of 5 entries audited: "), "\(text)")
        #expect(!text.contains("\u{1b}") && !text.contains("\n  fake-entry"), "\(text)")
        #expect(text.contains("\"dup\\033[8m\", \"evil\\n  fake-entry  (seen 999 times)\""), "\(text)")
        let json = try audit.run(["audit", "--age", "0", "--json"])
        #expect(json.outputText.contains("\"entries\": 5,"))

        // A name that is not UTF-8: the error says so, not "No such file".
        let latin = try AuditSandbox(git: false)
        try latin.insert("plain", "Vq8#Lm3!pX7$wK2@nR5\n")
        let path = latin.store + "/lat"
        try latin.sandbox.check(
            [
                "/bin/sh", "-c", "gpg --batch --yes -q -e -r \"$1\" -o \"$2\"$(printf '\\351').gpg", "-",
                fingerprint, path,
            ],
            input: Array("Zq8#Lm3!pX7$wK2@nR5\n".utf8))
        let odd = try latin.run(["audit", "--age", "0"])
        #expect(odd.status == 2)
        #expect(
            odd.errorText.contains("is not valid UTF-8") && !odd.errorText.contains("No such file"),
            "\(odd.errorText)")
    }
}
