import CofferTestSupport
import Testing

@testable import Coffer

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

struct Credentials: Codable, Equatable {
    var username: String
    var password: String
    var port: Int
    var admin: Bool
}

// The Keychain with real gpg and pass, over the store every PasswordStoreTests test starts with.
extension PasswordStoreTests {
    /// The keychain of the service the tests use.
    var keychain: Keychain {
        get throws { try Keychain(service: "com.example.app", store: store) }
    }

    /// What `gpg -d` prints for an item.
    func gpgDecrypt(_ account: String) throws -> [UInt8] {
        try sandbox.check(["gpg", "--quiet", "--batch", "-d", store.entryPath("com.example.app/" + account)])
            .standardOutput
    }

    /// What `pass show` prints for an item.
    func passShow(_ name: String) throws -> [UInt8] {
        try sandbox.check(["pass", "show", name]).standardOutput
    }

    @Test func stringRoundTripReadableByGPGAndPass() throws {
        try keychain.set("hunter2", account: "alice")
        #expect(try keychain.password(account: "alice") == "hunter2")
        #expect(try gpgDecrypt("alice") == Array("hunter2\n".utf8))
        #expect(try passShow("com.example.app/alice") == Array("hunter2\n".utf8))
        #expect(throws: CofferError.self) { try keychain.set("two\nlines", account: "x") }
    }

    @Test(arguments: [0, 1, 1 << 20])
    func dataRoundTripIsExact(size: Int) throws {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
        try keychain.set(Data(bytes), account: "blob\(size)")
        #expect(try keychain.data(account: "blob\(size)") == Data(bytes))
        #expect(try gpgDecrypt("blob\(size)") == bytes)
    }

    @Test func codableRoundTripAndPassFormat() throws {
        let credentials = Credentials(username: "alice", password: "pw", port: 8443, admin: true)
        try keychain.set(credentials, account: "creds")
        #expect(try keychain.value(Credentials.self, account: "creds") == credentials)
        let text = String(decoding: try passShow("com.example.app/creds"), as: UTF8.self)
        #expect(text == "pw\nusername: alice\nport: 8443\nadmin: true\n")
        #expect(try keychain.secret(account: "creds")?.field("username") == "alice")
    }

    @Test func dictionaryRoundTrip() throws {
        let dictionary = ["username": "bob", "password": "pw2", "note": "from iOS"]
        try keychain.set(dictionary, account: "dict")
        #expect(try keychain.value([String: String].self, account: "dict") == dictionary)
        #expect(try gpgDecrypt("dict") == Array("pw2\nnote: from iOS\nusername: bob\n".utf8))
    }

    @Test func readsAnEntryWrittenByPass() throws {
        let text = "p4ss\nlogin: carol\nurl: https://example.com\nfree text\n"
        try sandbox.check(["pass", "insert", "-m", "com.example.app/carol"], input: Array(text.utf8))
        #expect(try keychain.password(account: "carol") == "p4ss")
        #expect(try keychain.data(account: "carol") == Data(text.utf8))
        #expect(try store.read("com.example.app/carol").string == text)
        #expect(try keychain.secret(account: "carol")?.field("login") == "carol")
    }

    @Test func missingItemsAreNilAndRemoveIsIdempotent() throws {
        #expect(try keychain.password(account: "ghost") == nil)
        #expect(try keychain.data(account: "ghost") == nil)
        #expect(try keychain.value(Credentials.self, account: "ghost") == nil)
        #expect(try !keychain.contains(account: "ghost"))
        try keychain.remove(account: "ghost")
        try keychain.set("x", account: "real")
        #expect(try keychain.contains(account: "real"))
        try keychain.remove(account: "real")
        #expect(try keychain.password(account: "real") == nil)
    }

    @Test func setIsAnUpsertAndAccountsAreListed() throws {
        try keychain.set("one", account: "b")
        try keychain.set("two", account: "b")
        try keychain.set("x", account: "a")
        let nested = try Keychain(service: "com.example.app/nested", store: store)
        try nested.set("n", account: "inner")
        #expect(try keychain.password(account: "b") == "two")
        #expect(try keychain.accounts() == ["a", "b"])
        #expect(try store.services() == ["com.example.app", "com.example.app/nested"])
        try keychain.removeAll()
        #expect(try keychain.accounts().isEmpty)
        #expect(try nested.accounts() == ["inner"])
    }

    @Test(arguments: ["", "/", "a/b", "..", ".", "with\0nul", "-leading", String(repeating: "x", count: 256)])
    func badAccountNamesAreRefused(account: String) throws {
        #expect {
            try keychain.set("x", account: account)
        } throws: { error in
            (error as? CofferError)?.code == .invalidName
        }
        #expect(throws: CofferError.self) { try keychain.password(account: account) }
        #expect(try FileSystem.contents(of: store.root) == [".gpg-id"])
    }

    @Test(arguments: ["", "/abs", "a//b", "../up", "a/../b"])
    func badServiceNamesAreRefused(service: String) {
        #expect(throws: CofferError.self) { try Keychain(service: service, store: store) }
    }

    @Test func shareReencryptsOnlyTheService() throws {
        let other = try Keychain(service: "other", store: store)
        try other.set("untouched", account: "o")
        try keychain.set("shared", account: "s")
        let before = try FileSystem.readFile(store.entryPath("other/o"))
        try keychain.share(with: [sandbox.keys[0].email, sandbox.keys[1].email])
        #expect(try keychain.recipients() == [sandbox.keys[0].email, sandbox.keys[1].email])
        #expect(try FileSystem.readFile(store.entryPath("other/o")) == before)
        let wanted = try store.engine.encryptionKeyIDs(for: [sandbox.keys[0].email, sandbox.keys[1].email])
        #expect(
            OpenPGPPackets.recipientKeyIDs(try FileSystem.readFile(store.entryPath("com.example.app/s")))
                == wanted)
        #expect(try keychain.password(account: "s") == "shared")
        // Without the first secret key, plain gpg still reads the shared item, and only it.
        try sandbox.check(["gpg", "--batch", "--yes", "--delete-secret-keys", sandbox.keys[0].fingerprint])
        #expect(try gpgDecrypt("s") == Array("shared\n".utf8))
        let unreadable = try sandbox.run(["gpg", "--quiet", "--batch", "-d", store.entryPath("other/o")])
        #expect(unreadable.status != 0)
    }

    @Test func fiftyConcurrentReads() async throws {
        try await keychain.set("parallel", account: "p")
        let keychain = try self.keychain
        try await withThrowingTaskGroup(of: String?.self) { group in
            for _ in 0..<50 { group.addTask { try keychain.password(account: "p") } }
            var count = 0
            for try await value in group {
                #expect(value == "parallel")
                count += 1
            }
            #expect(count == 50)
        }
    }
}
