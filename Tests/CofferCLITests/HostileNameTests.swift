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
}
