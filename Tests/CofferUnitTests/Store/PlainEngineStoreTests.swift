import Coffer
import CofferTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The store's and the keychain's logic above the crypto, with the plain test engine: no gpg, no agent,
/// no keyring. What encrypts is tested with real gpg elsewhere; these run in milliseconds.
@Suite("Store logic without gpg (plain engine)")
struct PlainEngineStoreTests {
    /// A store in a new temporary folder, initialised for `alice` (and `bob` known, without a secret).
    static func store() throws -> (PasswordStore, PlainEngine, String) {
        var template = Array("/tmp/coffer-plain-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw CofferError(.io, "mkdtemp failed") }
        let folder = String(cString: made)
        var engine = PlainEngine(names: ["alice"])
        engine = PlainEngine(
            keys: engine.keys + [
                PlainEngine.Key(
                    fingerprint: String(repeating: "B", count: 40), userID: "bob <bob@coffer.test>",
                    hasSecret: false)
            ])
        var configuration = StoreConfiguration(environment: ["HOME": folder])
        configuration.root = folder + "/store"
        let store = PasswordStore(configuration: configuration, engine: engine)
        try store.initialize(recipients: ["alice@coffer.test"])
        return (store, engine, folder)
    }

    @Test("Write, read, list, move, copy and remove entries, with no gpg at all")
    func entries() throws {
        let (store, _, folder) = try Self.store()
        defer { try? FileSystem.removeTree(folder) }
        try store.write("web/site", SecureBytes(string: "pw\nlogin: alice\n"))
        try store.write("web/other", SecureBytes(string: "pw2\n"))
        #expect(try store.read("web/site").withUnsafeBytes { Array($0) } == Array("pw\nlogin: alice\n".utf8))
        #expect(try store.list().entryNames().sorted() == ["web/other", "web/site"])
        try store.move("web/site", to: "moved/site")
        try store.copy("moved/site", to: "copied")
        #expect(try store.list().entryNames().sorted() == ["copied", "moved/site", "web/other"])
        #expect(try store.read("copied").withUnsafeBytes { Array($0) } == Array("pw\nlogin: alice\n".utf8))
        try store.remove("web", recursive: true)
        #expect(!store.contains("web/other"))
        #expect(try store.find(["site"]).entryNames() == ["moved/site"])
    }

    @Test("An edit based on an old version merges with what changed meanwhile, field by field")
    func mergedWrite() throws {
        let (store, _, folder) = try Self.store()
        defer { try? FileSystem.removeTree(folder) }
        try store.write("bank", SecureBytes(string: "old\nlogin: alice\nurl: https://a.example\n"))
        let version = try store.readVersion("bank")
        // Another writer changes the url; this one changes the password.
        try store.write("bank", SecureBytes(string: "old\nlogin: alice\nurl: https://b.example\n"))
        let conflicted = try store.write(
            "bank", SecureBytes(string: "new\nlogin: alice\nurl: https://a.example\n"), basedOn: version)
        #expect(!conflicted)
        #expect(
            try store.read("bank").withUnsafeBytes { Array($0) }
                == Array("new\nlogin: alice\nurl: https://b.example\n".utf8))
    }

    @Test("An entry encrypted to another key only reads as an error that names no secret")
    func otherKeysEntry() throws {
        let (store, engine, folder) = try Self.store()
        defer { try? FileSystem.removeTree(folder) }
        let ciphertext = try engine.encrypt(SecureBytes(string: "theirs\n"), to: ["bob@coffer.test"])
        try FileSystem.atomicWrite(store.root + "/theirs.gpg", bytes: ciphertext, mode: 0o600)
        #expect(throws: GPGError.self) { try store.read("theirs") }
        #expect(try engine.decryptUnlessUnreadable(ciphertext) == nil)
    }

    @Test("The keychain keeps strings, data and Codable values, without gpg")
    func keychain() throws {
        let (store, _, folder) = try Self.store()
        defer { try? FileSystem.removeTree(folder) }
        struct Login: Codable, Equatable {
            var user: String
            var port: Int
        }
        let keychain = try Keychain(service: "example.org", store: store)
        try keychain.set("hunter2", account: "alice")
        try keychain.set(Data([0, 255, 10, 13]), account: "blob")
        try keychain.set(Login(user: "bob", port: 22), account: "ssh")
        #expect(try keychain.password(account: "alice") == "hunter2")
        #expect(try keychain.data(account: "blob") == Data([0, 255, 10, 13]))
        #expect(try keychain.value(Login.self, account: "ssh") == Login(user: "bob", port: 22))
        #expect(try keychain.accounts().sorted() == ["alice", "blob", "ssh"])
        try keychain.remove(account: "alice")
        #expect(try keychain.password(account: "alice") == nil)
    }

    @Test("Managing recipients needs a keyring: a store given only an engine says so")
    func noKeyring() throws {
        let (store, _, folder) = try Self.store()
        defer { try? FileSystem.removeTree(folder) }
        #expect(throws: CofferError.self) {
            try store.changeRecipients(adding: ["bob@coffer.test"], removing: [])
        }
    }
}
