import Coffer
import CofferTestSupport
import Testing

/// Names a hostile caller passes (SECURITY.md: hostile environment and arguments), with coffer
/// installed only as `pass` and run by absolute path.
@Suite("hostile names never leave the store or pick another folder's recipients")
struct HostileNameTests {
    @Test(
        "a '..' part joined to a combining character is refused as pass refuses it; nothing is written above the store"
    )
    func sneakyPathWithACombiningCharacter() throws {
        let installed = try InstalledAsPass(git: true)
        let outside = installed.sandbox.home
        for name in ["../\u{200D}x", "web/../\u{200D}y", "../\u{0301}z/w"] {
            let inserted = try installed.run(["insert", "-m", name], input: "top secret\n")
            #expect(inserted.status == 1, "\(name)")
            #expect(inserted.errorText.contains("sneaky path"), "\(inserted.errorText)")
            for command in [["generate", name, "12"], ["show", name], ["rm", "-f", name], ["edit", name]] {
                #expect(try installed.run(command).status == 1, "\(command)")
            }
        }
        let names = try FileSystem.contents(of: outside)
        #expect(!names.contains { $0.hasSuffix(".gpg") }, "\(names)")
        #expect(
            !names.contains {
                $0.unicodeScalars.contains("\u{200D}") || $0.unicodeScalars.contains("\u{0301}")
            })
    }

    @Test(
        "a name whose '/' is joined to a combining character is refused, not written under the parent's recipients"
    )
    func joinedSlashIsRefused() throws {
        let installed = try InstalledAsPass(git: true)
        let keys = installed.sandbox.keys
        try installed.check(["init", keys[0].fingerprint, keys[1].fingerprint])
        try installed.check(["init", "-p", "personal", keys[0].fingerprint])
        let refused = try installed.run(["insert", "-m", "personal/\u{200D}bank"], input: "pin\n")
        #expect(refused.status == 1, "\(refused.outputText)")
        #expect(refused.errorText.split(separator: "\n").count == 1, "\(refused.errorText)")
        #expect(try FileSystem.contents(of: installed.store + "/personal") == [".gpg-id"])
    }

    @Test("an entry named so in the repository is re-encrypted for its own folder's recipients")
    func joinedSlashFromTheRepository() throws {
        let installed = try InstalledAsPass(git: true)
        let keys = installed.sandbox.keys
        try installed.check(["init", keys[0].fingerprint, keys[1].fingerprint])
        try installed.check(["init", "-p", "personal", keys[0].fingerprint])
        // A file put there by hand (or by a pull): personal/<U+200D>bank.gpg, for key 2 alone.
        let other = installed.sandbox.store(environment: ["PASSWORD_STORE_KEY": keys[2].fingerprint])
        try other.write("stray", SecureBytes(string: "bank pin\n"))
        rename(installed.store + "/stray.gpg", installed.store + "/personal/\u{200D}bank.gpg")
        try installed.git(["add", "-A"])
        try installed.git(["commit", "-q", "-m", "odd name"])
        _ = try installed.run(["fsck", "--fix"])
        let ids = OpenPGPPackets.recipientKeyIDs(
            try installed.sandbox.read(installed.store + "/personal/\u{200D}bank.gpg"))
        let personal = try installed.sandbox.engine.encryptionKeyIDs(for: [keys[0].fingerprint])
        let root = try installed.sandbox.engine.encryptionKeyIDs(for: [
            keys[0].fingerprint, keys[1].fingerprint,
        ])
        #expect(ids != root, "taken for an entry at the root")
        let alone = try installed.sandbox.engine.encryptionKeyIDs(for: [keys[2].fingerprint])
        #expect(ids == personal || ids == alone)
    }

    @Test(
        "names with a .git part are refused: no repository is made inside the store, git's config is not replaced"
    )
    func gitFoldersAreNoPlaceForEntries() throws {
        let installed = try InstalledAsPass(git: true, entries: ["x/config": "[core]\n\tfsmonitor = false\n"])
        let config = try installed.sandbox.read(installed.store + "/.git/config")
        for arguments in [
            ["insert", "-m", "team/.git/x"], ["insert", "-m", ".git/hooks/pre-commit"],
            ["cp", "x/config", ".git/"],
            ["mv", "x/config", ".git/config"], ["generate", "a/.GIT/b", "10"],
        ] {
            let output = try installed.run(arguments, input: "text\n")
            #expect(output.status == 1, "\(arguments): \(output.outputText)")
        }
        #expect(!FileSystem.exists(installed.store + "/team/.git"))
        #expect(!FileSystem.exists(installed.store + "/a"))
        #expect(try installed.sandbox.read(installed.store + "/.git/config") == config)
        #expect(try installed.uncommitted().isEmpty)
    }

    @Test("names with C1 controls, bidirectional controls or line separators are refused")
    func invisibleControlsAreRefused() throws {
        let installed = try InstalledAsPass(git: true)
        for name in ["csi\u{9b}2J", "next\u{85}line", "rlo\u{202e}gpj.exe", "sep\u{2028}x", "iso\u{2066}x"] {
            let output = try installed.run(["insert", "-m", name], input: "x\n")
            #expect(output.status == 1, "\(name.unicodeScalars.map(\.value))")
        }
        #expect(try installed.uncommitted().isEmpty)
        #expect(try installed.commitCount() == 2)
    }

    @Test(
        "an entry that is a link: to the same folder it is written through and both names committed; to another folder it is refused"
    )
    func entryLinks() throws {
        let installed = try InstalledAsPass(
            git: true, entries: ["web/target": "old\n", "private/secret": "s\n"])
        symlink("target.gpg", installed.store + "/web/link.gpg")
        symlink("../private/secret.gpg", installed.store + "/web/other.gpg")
        try installed.git(["add", "-A"])
        try installed.git(["commit", "-q", "-m", "links"])
        try installed.check(["insert", "-m", "-f", "web/link"], input: "new\n")
        #expect(try installed.decrypted("web/target") == "new\n")
        #expect(try installed.uncommitted().isEmpty)
        for arguments in [["insert", "-m", "-f", "web/other"], ["generate", "-f", "web/other", "8"]] {
            let refused = try installed.run(arguments, input: "replaced\n")
            #expect(
                refused.status == 1 && refused.errorText.contains("another folder"), "\(refused.errorText)")
        }
        #expect(try installed.decrypted("private/secret") == "s\n")
        #expect(try installed.uncommitted().isEmpty)
    }

    @Test("a committed .gitattributes or .gitignore cannot change or hold back what coffer commits")
    func pushedGitSettingsAreIgnored() throws {
        let installed = try InstalledAsPass(git: true)
        try "*.gpg text eol=crlf\n".write(toFile: installed.store + "/.gitattributes")
        try "*.gpg\n".write(toFile: installed.store + "/.gitignore")
        try installed.git(["add", "-f", ".gitattributes", ".gitignore"])
        try installed.git(["commit", "-q", "-m", "settings"])
        try installed.check(["git", "init"])
        for index in 0..<40 { try installed.insert("e\(index)", "secret \(index)\n") }
        #expect(try installed.uncommitted().isEmpty)
        for index in 0..<40 {
            let committed = try installed.sandbox.check([
                "git", "-C", installed.store, "show", "HEAD:e\(index).gpg",
            ])
            #expect(
                committed.standardOutput == (try installed.sandbox.read(installed.store + "/e\(index).gpg")),
                "e\(index)")
        }
    }

    /// Red team (pusher): a pushed `*.gpg text eol=crlf` rewrote the ciphertexts `coffer clone` checked out,
    /// before the clone's own attributes were written.
    @Test("coffer clone checks out every ciphertext as committed, whatever a pushed .gitattributes says")
    func cloneIgnoresPushedAttributes() throws {
        let installed = try InstalledAsPass(git: true)
        // Entries whose ciphertexts hold a LF byte (most of 40 do).
        for index in 0..<40 { try installed.insert("e\(index)", "secret \(index)\n") }
        try "*.gpg text eol=crlf\n".write(toFile: installed.store + "/.gitattributes")
        try installed.git(["add", "-f", ".gitattributes"])
        try installed.git(["commit", "-q", "-m", "settings"])
        let remote = installed.sandbox.directory + "/remote.git"
        try installed.sandbox.check(["git", "clone", "--quiet", "--bare", installed.store, remote])
        let clone = installed.sandbox.directory + "/clone"
        try installed.check(["clone", remote, "--path", clone])
        var withLF = 0
        for index in 0..<40 {
            let committed = try installed.sandbox.check(["git", "-C", remote, "show", "HEAD:e\(index).gpg"])
            if committed.standardOutput.contains(10) { withLF += 1 }
            #expect(
                committed.standardOutput == (try installed.sandbox.read(clone + "/e\(index).gpg")),
                "e\(index)")
        }
        #expect(withLF > 0)
        let status = try installed.sandbox.check(["git", "-C", clone, "status", "--porcelain"]).outputText
        #expect(status.isEmpty, "\(status)")
        let shown = try installed.sandbox.check(["gpg", "--batch", "--quiet", "-d", clone + "/e7.gpg"])
        #expect(shown.outputText.hasPrefix("secret 7"))
    }

    /// Red team (pusher): `coffer clone` printed a pushed `.gpg-id` line raw in its warning (escape
    /// sequences for the terminal), and a pushed `working-tree-encoding` turned `.gpg-id` into UTF-16.
    @Test("coffer clone quotes a pushed .gpg-id in its warning and checks it out as committed")
    func cloneQuotesAndKeepsRecipients() throws {
        let installed = try InstalledAsPass(git: true)
        let hostile = "\u{1B}]0;PWNED\u{07}\u{1B}[2Jnobody@coffer.test\n"
        try hostile.write(toFile: installed.store + "/.gpg-id")
        try installed.git(["add", "-f", ".gpg-id"])
        try installed.git(["commit", "-q", "-m", "recipients"])
        try ".gpg-id working-tree-encoding=UTF-16LE-BOM\n".write(toFile: installed.store + "/.gitattributes")
        try installed.git(["add", "-f", ".gitattributes"])
        try installed.git(["commit", "-q", "-m", "attributes"])
        let remote = installed.sandbox.directory + "/remote.git"
        try installed.sandbox.check(["git", "clone", "--quiet", "--bare", installed.store, remote])
        let clone = installed.sandbox.directory + "/clone"
        let cloned = try installed.run(["clone", remote, "--path", clone])
        #expect(cloned.status == 0, "\(cloned.errorText)")
        #expect(cloned.errorText.contains("Warning: no secret key for"), "\(cloned.errorText)")
        #expect(
            !cloned.errorText.utf8.contains(0x1B) && !cloned.errorText.utf8.contains(0x07),
            "\(cloned.errorText)")
        #expect(try installed.sandbox.read(clone + "/.gpg-id") == Array(hostile.utf8))
    }

    @Test("hostile variables: a umask bash refuses, pathspec switches, a store path that is not UTF-8")
    func hostileVariables() throws {
        let installed = try InstalledAsPass(git: true)
        // Empty counts as unset (pass's `${PASSWORD_STORE_UMASK:-077}`); what bash refuses keeps 077 too.
        for umask in ["", "10000", "+0", "0o77", "999"] {
            try installed.check(
                ["insert", "-m", "-f", "u"], input: "x\n", environment: ["PASSWORD_STORE_UMASK": umask])
            var info = stat()
            stat(installed.store + "/u.gpg", &info)
            #expect(info.st_mode & 0o077 == 0, "\(umask): \(String(info.st_mode & 0o777, radix: 8))")
        }
        for variable in ["GIT_ICASE_PATHSPECS", "GIT_GLOB_PATHSPECS", "GIT_NOGLOB_PATHSPECS"] {
            try installed.check(["insert", "-m", "-f", "p*"], input: "x\n", environment: [variable: "1"])
            #expect(try installed.uncommitted().isEmpty, "\(variable)")
        }
        let odd = try installed.sandbox.run(
            ["bash", "-c", "PASSWORD_STORE_DIR=\"$HOME/st$(printf '\\377')\" \"$0\" ls", installed.program],
            environment: installed.environment)
        #expect(odd.status == 1 && odd.errorText.contains("not valid UTF-8"), "\(odd.errorText)")
        // A store named relative to the current folder: every change is committed all the same.
        let relative = try installed.sandbox.run(
            [
                "bash", "-c",
                "cd \"$HOME\" && printf 'x\\n' | PASSWORD_STORE_DIR=.password-store \"$0\" insert -m rel/x",
                installed.program,
            ], environment: installed.environment)
        #expect(relative.status == 0, "\(relative.errorText)")
        #expect(try installed.uncommitted().isEmpty)
        #expect(try installed.lastCommit() == "Add given password for rel/x to store.")
        let huge = try installed.run(["generate", "big", "99999999999"])
        #expect(huge.status == 1 && huge.errorText.contains("at most"), "\(huge.errorText)")
    }
}
