import CofferTestSupport
import Testing

@testable import Coffer

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

// What the keychain libraries of Apple platforms offer (subscripts, labels, comments, item listings,
// removing everything, async calls), with real gpg, git and pass.
extension PasswordStoreTests {
    /// The number of commits in the store's repository.
    func commitCount() throws -> Int {
        Int(try sandbox.check(["git", "-C", store.root, "rev-list", "--count", "HEAD"]).outputText) ?? -1
    }

    /// The keychain of the tests' service over a store whose git commits carry the author date `date`.
    func keychain(authorDate date: String) throws -> Keychain {
        try Keychain(
            service: "com.example.app", store: sandbox.store(environment: ["GIT_AUTHOR_DATE": date]))
    }

    @Test func subscriptsReadWriteAndRemove() throws {
        let keychain = try self.keychain
        keychain["alice"] = "hunter2"
        #expect(keychain.subscriptError == nil)
        #expect(keychain["alice"] == "hunter2")
        #expect(try gpgDecrypt("alice") == Array("hunter2\n".utf8))
        #expect(try passShow("com.example.app/alice") == Array("hunter2\n".utf8))
        keychain["alice"] = nil
        #expect(try !keychain.contains(account: "alice"))
        #expect(keychain["alice"] == nil)
        #expect(keychain.subscriptError == nil)

        keychain[data: "blob"] = Data([0, 1, 0x0A, 0xFF])
        #expect(keychain[data: "blob"] == Data([0, 1, 0x0A, 0xFF]))
        #expect(try gpgDecrypt("blob") == [0, 1, 0x0A, 0xFF])
        keychain[data: "blob"] = nil
        #expect(try !keychain.contains(account: "blob"))

        keychain[string: "carol"] = "pw"
        #expect(keychain[string: "carol"] == "pw" && keychain["carol"] == "pw")
        try keychain.setAttributes(label: "Carol", comment: nil, account: "carol")
        #expect(keychain[attributes: "carol"]?.label == "Carol")
        #expect(keychain[attributes: "nobody"] == nil && keychain.subscriptError == nil)
    }

    @Test func subscriptFailuresAreRecordedNotSwallowed() throws {
        let keychain = try self.keychain
        keychain["two"] = "two\nlines"
        #expect((keychain.subscriptError as? CofferError)?.code == .invalidArgument)
        #expect(try !keychain.contains(account: "two"))
        keychain["a/b"] = "x"
        #expect((keychain.subscriptError as? CofferError)?.code == .invalidName)
        #expect(keychain["a/b"] == nil)
        #expect((keychain.subscriptError as? CofferError)?.code == .invalidName)
        // A copy shares the record; the next access that succeeds clears it.
        let copy = keychain
        #expect(copy.subscriptError != nil)
        copy["ok"] = "fine"
        #expect(keychain.subscriptError == nil)
        // An item that cannot be decrypted reads as nil with the error recorded.
        try FileSystem.atomicWrite(
            store.entryPath("com.example.app/broken"), bytes: [0x85, 0x01], mode: 0o600)
        #expect(keychain["broken"] == nil)
        #expect(keychain.subscriptError != nil)
    }

    @Test func labelsAndCommentsAreFields() throws {
        let keychain = try self.keychain
        try keychain.set("pw", account: "bob", label: "Work mail", comment: "IMAP, port 993")
        #expect(try gpgDecrypt("bob") == Array("pw\n#label: Work mail\n#comment: IMAP, port 993\n".utf8))
        #expect(
            try passShow("com.example.app/bob")
                == Array("pw\n#label: Work mail\n#comment: IMAP, port 993\n".utf8))
        let item = try keychain.item(account: "bob")
        #expect(item?.label == "Work mail" && item?.comment == "IMAP, port 993")
        #expect(try keychain.password(account: "bob") == "pw")

        try keychain.setAttributes(label: "Home mail", comment: nil, account: "bob")
        #expect(try gpgDecrypt("bob") == Array("pw\n#label: Home mail\n".utf8))
        try keychain.setAttributes(label: nil, comment: "multi\nline", account: "bob")
        #expect(try gpgDecrypt("bob") == Array("pw\n#comment: |\n  multi\n  line\n".utf8))
        #expect(try keychain.item(account: "bob")?.comment == "multi\nline")
        #expect(try keychain.item(account: "bob")?.label == nil)

        let credentials = Credentials(username: "carol", password: "pw3", port: 1, admin: false)
        try keychain.set(credentials, account: "carol", label: "Carol", comment: nil)
        #expect(try keychain.value(Credentials.self, account: "carol") == credentials)
        #expect(try keychain.item(account: "carol")?.label == "Carol")
        // A value's own `label` is its own; the keychain's label is kept apart from it.
        try keychain.set(["label": "own"], account: "erin", label: "given", comment: nil)
        #expect(try keychain.value([String: String].self, account: "erin") == ["label": "own"])
        #expect(try keychain.item(account: "erin")?.label == "given")
        #expect {
            try keychain.set("pw", account: "dave", label: " leading blank", comment: nil)
        } throws: { ($0 as? CofferError)?.code == .invalidArgument }
        #expect {
            try keychain.setAttributes(label: "x", comment: nil, account: "ghost")
        } throws: { ($0 as? CofferError)?.code == .notFound }
        #expect(try !keychain.contains(account: "dave") && !keychain.contains(account: "ghost"))
    }

    struct Deployment: Codable, Equatable {
        var password: String
        var servers: [ArchiveFixtures.Server]
        var tags: [String]
        var extra: [String: String]
    }

    @Test func anItemEditedByHandWithPassStillDecodes() throws {
        let keychain = try self.keychain
        let value = Deployment(
            password: "pw", servers: [.init(host: "h1", port: 22)], tags: ["a"], extra: ["github.com": "t"])
        try keychain.set(value, account: "deploy")
        let written = try passShow("com.example.app/deploy")
        #expect(
            String(decoding: written, as: UTF8.self)
                == "pw\nservers.0.host: h1\nservers.0.port: 22\ntags: a\nextra.\"github.com\": t\n")
        // What a person might do in `pass edit`: a comment, blank lines, spaces, another server, another
        // tag, a note, fields moved around, a dotted key without quotes.
        let edited = """
            pw

            # moved to the new data centre
            servers.1.host :  h2
            servers.1.port: 2222
            servers.0.port:22
            servers.0.host: h1
            tags: a
            tags:   b
            notes: |
              call ops first
            extra.gitlab.com: u
            extra."github.com": t

            """
        try sandbox.check(
            ["pass", "insert", "-m", "-f", "com.example.app/deploy"], input: Array(edited.utf8))
        let decoded = try keychain.value(Deployment.self, account: "deploy")
        #expect(
            decoded
                == Deployment(
                    password: "pw", servers: [.init(host: "h1", port: 22), .init(host: "h2", port: 2222)],
                    tags: ["a", "b"], extra: ["github.com": "t", "gitlab.com": "u"]))
    }

    @Test func allItemsHaveDatesFromGit() throws {
        try commitStore()
        try keychain(authorDate: "2021-01-01T00:00:00Z").set("a1", account: "a", label: "A", comment: nil)
        try keychain(authorDate: "2022-02-02T00:00:00Z").set("b1", account: "b")
        try keychain(authorDate: "2023-03-03T00:00:00Z").set("a2", account: "a", label: "A2", comment: "c")
        try keychain(authorDate: "2024-04-04T00:00:00Z").remove(account: "b")
        try keychain(authorDate: "2025-05-05T00:00:00Z").set("b2", account: "b")
        let nested = try Keychain(service: "com.example.app/nested", store: store)
        try nested.set("n", account: "inner")
        func date(_ text: String) -> Date? { SecretDateFormat.date(from: text) }
        #expect(
            try keychain.allItems() == [
                Keychain.Item(
                    account: "a", label: "A2", comment: "c", created: date("2021-01-01T00:00:00Z"),
                    modified: date("2023-03-03T00:00:00Z")),
                Keychain.Item(
                    account: "b", created: date("2025-05-05T00:00:00Z"),
                    modified: date("2025-05-05T00:00:00Z")),
            ])
        #expect(try nested.allItems().map(\.account) == ["inner"])
        #expect(try Keychain(service: "empty", store: store).allItems().isEmpty)
    }

    @Test func allItemsOutsideGitHaveTheFileTime() throws {
        let keychain = try self.keychain
        try keychain.set("x", account: "plain", label: "L", comment: nil)
        var status = stat()
        stat(store.entryPath("com.example.app/plain"), &status)
        let items = try keychain.allItems()
        #expect(items.count == 1 && items.first?.label == "L" && items.first?.created == nil)
        let modified = items.first?.modified?.timeIntervalSince1970 ?? 0
        #expect(abs(modified - TimeInterval(status.st_mtim.tv_sec)) < 1)
    }

    @Test func removeAllIsOneCommit() throws {
        try commitStore()
        let keychain = try self.keychain
        for account in ["a", "b", "c"] { try keychain.set("x", account: account) }
        let nested = try Keychain(service: "com.example.app/nested", store: store)
        try nested.set("n", account: "inner")
        let before = try commitCount()
        try keychain.removeAll()
        #expect(try commitCount() == before + 1)
        let subject = try sandbox.check(["git", "-C", store.root, "log", "-1", "--format=%s"]).outputText
        #expect(subject == "Remove 3 items of com.example.app from store.")
        #expect(try keychain.accounts().isEmpty)
        #expect(try nested.accounts() == ["inner"])
        #expect(try sandbox.check(["git", "-C", store.root, "status", "--porcelain"]).outputText.isEmpty)
        try keychain.removeAll()
        #expect(try commitCount() == before + 1)
        // A service whose items are all gone leaves no folder behind.
        try nested.removeAll()
        #expect(!FileSystem.isDirectory(store.root + "/com.example.app"))
    }

    @Test func aFailingCommitIsAnError() throws {
        try commitStore()
        let keychain = try self.keychain
        try keychain.set("x", account: "a")
        let hook = store.root + "/.git/hooks/pre-commit"
        try FileSystem.atomicWrite(hook, bytes: Array("#!/bin/sh\nexit 1\n".utf8), mode: 0o755)
        #expect { try keychain.removeAll() } throws: { ($0 as? CofferError)?.code == .git }
        keychain["b"] = "y"
        #expect((keychain.subscriptError as? CofferError)?.code == .git)
    }

    @Test @MainActor func asyncVariantsRunOffTheCallersThread() async throws {
        let keychain = try self.keychain
        // A thread-specific mark set on the caller's thread: a pthread_t alone is an address that a
        // thread started after another ended may reuse, which made this check fail once under load.
        var key = pthread_key_t()
        #expect(pthread_key_create(&key, nil) == 0)
        defer { pthread_key_delete(key) }
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: 1))
        let markKey = key
        let workerSeesMark = try await Parallel.offload { pthread_getspecific(markKey) != nil }
        #expect(!workerSeesMark)
        try await keychain.set("pw", account: "alice")
        try await keychain.set("pw2", account: "bob", label: "Bob", comment: nil)
        try await keychain.set(Data([1, 2]), account: "blob")
        let credentials = Credentials(username: "u", password: "p", port: 2, admin: true)
        try await keychain.set(credentials, account: "creds")
        #expect(try await keychain.password(account: "alice") == "pw")
        #expect(try await keychain.data(account: "blob") == Data([1, 2]))
        #expect(try await keychain.value(Credentials.self, account: "creds") == credentials)
        #expect(try await keychain.secret(account: "bob")?.field(Keychain.labelKey) == "Bob")
        try await keychain.setAttributes(label: "B", comment: "c", account: "bob")
        #expect(try await keychain.item(account: "bob")?.comment == "c")
        #expect(try await keychain.allItems().map(\.account) == ["alice", "blob", "bob", "creds"])
        try await keychain.remove(account: "alice")
        #expect(try await keychain.password(account: "alice") == nil)
        await #expect(throws: CofferError.self) { try await keychain.set("a\nb", account: "x") }
        try await keychain.removeAll()
        #expect(try keychain.accounts().isEmpty)
    }
}
