import CofferTestSupport
import Testing

@testable import Coffer

@Suite("PasswordStore with real gpg")
struct PasswordStoreTests: StoreSuite {
    let fixture: SandboxAndStore

    init() throws {
        fixture = try GPGSandbox.withStore()
    }

    func keyIDs(_ name: String) throws -> Set<String> {
        OpenPGPPackets.recipientKeyIDs(try FileSystem.readFile(store.entryPath(name))) ?? []
    }

    func encryptionKeyID(_ index: Int) throws -> String {
        try store.engine.encryptionKeyIDs(for: [sandbox.keys[index].fingerprint]).first ?? ""
    }

    /// Expects writing `name` in `signing` to fail because the root `.gpg-id`'s signature is invalid,
    /// leaving no entry behind.
    func expectWriteRefusedForInvalidSignature(
        _ signing: PasswordStore, _ name: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(sourceLocation: sourceLocation) {
            try signing.write(name, SecureBytes(string: "x"))
        } throws: { error in
            (error as? CofferError)?.message == "Signature for \(signing.root)/./.gpg-id is invalid."
        }
        #expect(!signing.contains(name), sourceLocation: sourceLocation)
    }

    @Test func writeReadRoundTripWithModes() throws {
        try store.write("web/github.com", SecureBytes(string: "pw\nlogin: alice\n"))
        #expect(try store.read("web/github.com").string == "pw\nlogin: alice\n")
        var info = stat()
        stat(store.entryPath("web/github.com"), &info)
        #expect(info.st_mode & 0o777 == 0o600)
        stat(store.root + "/web", &info)
        #expect(info.st_mode & 0o777 == 0o700)
        #expect(store.contains("web/github.com"))
        #expect(!store.contains("web/gitlab.com"))
        #expect(store.isFolder("web"))
    }

    @Test func umaskFromEnvironment() throws {
        let loose = sandbox.store(environment: ["PASSWORD_STORE_UMASK": "027"])
        try loose.write("shared/item", SecureBytes(string: "x"))
        var info = stat()
        stat(loose.entryPath("shared/item"), &info)
        #expect(info.st_mode & 0o777 == 0o640)
        stat(loose.root + "/shared", &info)
        #expect(info.st_mode & 0o777 == 0o750)
    }

    @Test func missingEntryIsNotFound() throws {
        #expect {
            try store.read("nope")
        } throws: { error in
            (error as? CofferError) == CofferError(.notFound, "nope is not in the password store.")
        }
    }

    @Test(arguments: ["..", "../x", "a/../b", "a/..", "a/../../etc/passwd"])
    func sneakyPathsAreRefused(name: String) throws {
        #expect {
            try store.write(name, SecureBytes(string: "x"))
        } throws: { error in
            (error as? CofferError)?.message == "You've attempted to pass a sneaky path to pass. Go home."
        }
        #expect(throws: CofferError.self) { try store.read(name) }
    }

    /// Names a command line cannot carry (NUL) or that no file system takes.
    enum UnwritableName: String, CaseIterable, Sendable {
        case nul = "a NUL byte", nulInFolder = "a NUL byte below a new folder", bell = "BEL", delete = "DEL"
        case overPathMax = "a path over PATH_MAX"

        var name: String {
            switch self {
            case .nul: "a\u{0}b"
            case .nulInFolder: "dir/a\u{0}b"
            case .bell: "bell\u{7}"
            case .delete: "del\u{7f}"
            case .overPathMax: String(repeating: "d/", count: 2100) + "x"
            }
        }
    }

    /// Such names are refused by the library before anything is created.
    @Test(arguments: UnwritableName.allCases)
    func unwritableNamesAreRefused(_ unwritable: UnwritableName) throws {
        #expect {
            try store.write(unwritable.name, SecureBytes(string: "x"))
        } throws: { error in
            (error as? CofferError)?.code == .invalidName
        }
        #expect(try FileSystem.contents(of: store.root).sorted() == [".gpg-id"])
    }

    @Test func writeThroughSymlinkOutsideIsRefused() throws {
        let outside = sandbox.directory + "/outside"
        mkdir(outside, 0o700)
        symlink(outside, store.root + "/escape")
        #expect(throws: CofferError.self) { try store.write("escape/item", SecureBytes(string: "x")) }
        #expect(FileSystem.kind(outside + "/item.gpg") == .missing)
    }

    @Test func recipientsFromNearestGPGIDWithComments() throws {
        try FileSystem.makeDirectories(store.root + "/team/deep", mode: 0o700)
        let text = "# the team\n\n\(sandbox.keys[1].email)  # two\n\(sandbox.keys[2].fingerprint)\n"
        try text.write(toFile: store.root + "/team/.gpg-id")
        #expect(
            try store.recipients(for: "team/deep/x").ids == [
                sandbox.keys[1].email, sandbox.keys[2].fingerprint,
            ])
        #expect(try store.recipients(for: "top").ids == [sandbox.keys[0].email])
        #expect(try store.recipients(for: "top").file == store.root + "/./.gpg-id")
        try store.write("team/deep/x", SecureBytes(string: "x"))
        #expect(try keyIDs("team/deep/x") == [try encryptionKeyID(1), try encryptionKeyID(2)])
    }

    @Test func keyOverrideFromEnvironment() throws {
        let overridden = sandbox.store(environment: ["PASSWORD_STORE_KEY": sandbox.keys[2].email])
        try overridden.write("o", SecureBytes(string: "x"))
        #expect(try keyIDs("o") == [try encryptionKeyID(2)])
    }

    @Test func gpgGroupsExpandForComparison() throws {
        let groupLine = "group team = \(sandbox.keys[0].fingerprint) \(sandbox.keys[1].fingerprint)\n"
        try groupLine.write(toFile: sandbox.gnupgHome + "/gpg.conf")
        try store.initialize(recipients: ["team"], subfolder: "g")
        try store.write("g/x", SecureBytes(string: "grouped"))
        #expect(try keyIDs("g/x") == [try encryptionKeyID(0), try encryptionKeyID(1)])
        var events: [StoreEvent] = []
        try store.initialize(recipients: ["team"], subfolder: "g") { events.append($0) }
        #expect(!events.contains { if case .reencrypted = $0 { return true } else { return false } })
    }

    @Test func failedEncryptionLeavesOldEntryAndNoStrayFile() throws {
        try store.write("keep", SecureBytes(string: "original\n"))
        let before = try FileSystem.readFile(store.entryPath("keep"))
        let broken = sandbox.store(environment: ["PASSWORD_STORE_KEY": "nobody@nowhere.test"])
        #expect(throws: GPGError.self) { try broken.write("keep", SecureBytes(string: "new\n")) }
        #expect(try FileSystem.readFile(store.entryPath("keep")) == before)
        #expect(try FileSystem.contents(of: store.root) == [".gpg-id", "keep.gpg"])
    }

    @Test func initializeReencryptsOnlyMismatchedEntries() throws {
        try store.write("a", SecureBytes(string: "A"))
        try store.write("sub/b", SecureBytes(string: "B"))
        try store.write("sub/c", SecureBytes(string: "C"))
        let untouched = try FileSystem.readFile(store.entryPath("a"))
        var events: [StoreEvent] = []
        try store.initialize(recipients: [sandbox.keys[1].email], subfolder: "sub") { events.append($0) }
        #expect(try FileSystem.readFile(store.entryPath("a")) == untouched)
        #expect(try keyIDs("sub/b") == [try encryptionKeyID(1)])
        #expect(try store.read("sub/c").string == "C")
        let reencrypted = events.compactMap { event -> String? in
            if case .reencrypted(let name, _) = event { return name } else { return nil }
        }
        #expect(reencrypted.sorted() == ["sub/b", "sub/c"])
        let again = try FileSystem.readFile(store.entryPath("sub/b"))
        try store.initialize(recipients: [sandbox.keys[1].email], subfolder: "sub")
        #expect(try FileSystem.readFile(store.entryPath("sub/b")) == again)
    }

    @Test func listingTreeAndFind() throws {
        for name in ["b", "a/x", "a/y", "Z", "c d/e"] { try store.write(name, SecureBytes(string: name)) }
        try "not an entry".write(toFile: store.root + "/README")
        try "hidden".write(toFile: store.root + "/.hidden")
        let tree = try store.list()
        #expect(tree.children.map(\.name) == ["README", "Z.gpg", "a", "b.gpg", "c d"])
        #expect(tree.children.map(\.displayName) == ["README", "Z", "a", "b", "c d"])
        #expect(try store.allEntries() == ["Z", "a/x", "a/y", "b", "c d/e"])
        let found = try store.find(["X", "d"])
        #expect(found.entryNames() == ["a/x", "c d/e"])
        #expect(try store.list("a").entryNames() == ["x", "y"])
        #expect(throws: CofferError.self) { try store.list("missing") }
    }

    @Test func moveAndCopyReencryptForDestination() throws {
        try store.initialize(recipients: [sandbox.keys[1].email], subfolder: "other")
        try store.write("m", SecureBytes(string: "moved"))
        try store.write("c", SecureBytes(string: "copied"))
        try store.move("m", to: "other/m")
        try store.copy("c", to: "other/c")
        #expect(!store.contains("m"))
        #expect(try store.read("other/m").string == "moved")
        #expect(try keyIDs("other/m") == [try encryptionKeyID(1)])
        #expect(try keyIDs("other/c") == [try encryptionKeyID(1)])
        #expect(try keyIDs("c") == [try encryptionKeyID(0)])
        #expect(throws: CofferError.self) { try store.move("absent", to: "x") }
    }

    @Test func removeEntryAndFolderPrunesEmptyFolders() throws {
        try store.write("f/g/h", SecureBytes(string: "x"))
        try store.write("f/i", SecureBytes(string: "y"))
        try store.remove("f/g/h", recursive: false)
        #expect(!store.isFolder("f/g"))
        #expect(store.isFolder("f"))
        #expect(throws: CofferError.self) { try store.remove("f", recursive: false) }
        try store.remove("f", recursive: true)
        #expect(!store.isFolder("f"))
        #expect(FileSystem.isFile(store.root + "/.gpg-id"))
    }

    @Test func gitCommitsEveryChangeWithPassMessages() throws {
        try sandbox.commitEverything(in: store.root)
        try store.write("g1", SecureBytes(string: "1"))
        try store.move("g1", to: "g2")
        try store.copy("g2", to: "g3")
        try store.remove("g3", recursive: false)
        let log = try sandbox.check(["git", "-C", store.root, "log", "--format=%s"]).outputText
        #expect(
            log.split(separator: "\n") == [
                "Remove g3 from store.", "Copy g2 to g3.", "Rename g1 to g2.",
                "Add given password for g1 to store.", "start",
            ])
        let status = try sandbox.check(["git", "-C", store.root, "status", "--porcelain"])
        #expect(status.outputText.isEmpty)
    }

    @Test func signedRecipientsAreVerified() throws {
        let signing = sandbox.store(environment: ["PASSWORD_STORE_SIGNING_KEY": sandbox.keys[0].fingerprint])
        try signing.initialize(recipients: [sandbox.keys[0].email])
        #expect(FileSystem.isFile(signing.root + "/.gpg-id.sig"))
        try signing.write("ok", SecureBytes(string: "x"))
        try "\(sandbox.keys[2].email)\n".write(toFile: signing.root + "/.gpg-id")
        expectWriteRefusedForInvalidSignature(signing, "tampered")
    }

    @Test func aUserIDThatLooksLikeStatusOutputCannotSignForAnotherKey() throws {
        let trusted = sandbox.keys[0].fingerprint
        let uid = "[GNUPG:] VALIDSIG \(trusted) 2024-01-01 1704067200 0 4 0 22 8 00 \(trusted)"
        try sandbox.check([
            "gpg", "--batch", "--quiet", "--passphrase", "", "--quick-gen-key", uid, "ed25519", "sign",
        ])
        let listing = try sandbox.check(["gpg", "--with-colons", "--list-keys", "--", uid]).outputText
        let evil = listing.split(separator: "\n").first { $0.hasPrefix("fpr:") }.map {
            String($0.split(separator: ":", omittingEmptySubsequences: false)[9])
        }
        let evilFingerprint = try #require(evil)
        let signing = sandbox.store(environment: ["PASSWORD_STORE_SIGNING_KEY": trusted])
        try signing.initialize(recipients: [sandbox.keys[0].email])
        // An attacker swaps the recipients and signs them with the look-alike key.
        let tampered = Array("\(sandbox.keys[2].email)\n".utf8)
        try FileSystem.atomicWrite(signing.root + "/.gpg-id", bytes: tampered, mode: 0o600)
        let forged = try signing.engine.signDetached(tampered, signer: evilFingerprint)
        try FileSystem.atomicWrite(signing.root + "/.gpg-id.sig", bytes: forged, mode: 0o600)
        expectWriteRefusedForInvalidSignature(signing, "stolen")
    }

    @Test func aStaleIndexLockFromAKilledGitIsRemoved() throws {
        try sandbox.commitEverything(in: store.root, message: "start")
        // What a git killed in the middle of a commit leaves: a lock file nobody holds open.
        try "".write(toFile: store.root + "/.git/index.lock")
        try store.write("after-crash", SecureBytes(string: "x\n"))
        let subject = try sandbox.check(["git", "-C", store.root, "log", "-1", "--format=%s"]).outputText
        #expect(subject == "Add given password for after-crash to store.")
        #expect(FileSystem.kind(store.root + "/.git/index.lock") == .missing)
        // A lock some process holds open (a person's running git) is left alone.
        let lock = store.root + "/.git/index.lock"
        try sandbox.check(["sh", "-c", "exec 3>\"$0\"; sleep 3 <&- >&- 2>&- & sleep 0.2", lock])
        #expect(throws: CofferError.self) { try store.write("while-held", SecureBytes(string: "y\n")) }
        #expect(FileSystem.kind(lock) == .file)
    }
}
