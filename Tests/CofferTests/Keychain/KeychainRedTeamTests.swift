import CofferTestSupport
import Testing

@testable import Coffer

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

// The Keychain's answers to a red-team review: leaks in errors, hidden items, nil optionals, bytes, and
// the label and comment kept apart from a stored value.
extension PasswordStoreTests {
    /// What `gpg -d` prints for an item of the service `com.example.app`, as text.
    func decryptedText(_ account: String) throws -> String {
        String(decoding: try gpgDecrypt(account), as: UTF8.self)
    }

    // MARK: F1

    @Test func keychainErrorsNeverCarryThePassword() throws {
        struct Login: Codable { var password: String; var user: String }
        let attempts: [() throws -> Void] = [
            { try self.keychain.set(Login(password: "TOPSECRET\nx", user: "a"), account: "a") },
            { try self.keychain.set(Login(password: "TOPSECRET\r", user: "a"), account: "a") },
            {
                try self.keychain.set(
                    Login(password: "TOPSECRET\n", user: "a"), account: "a", label: "L", comment: nil)
            },
            { try self.keychain.set("TOPSECRET\n", account: "a") },
            { try self.keychain.set("TOPSECRET", account: "a", label: " leading", comment: nil) },
        ]
        for attempt in attempts {
            do {
                try attempt()
                Issue.record("stored what cannot be stored")
            } catch {
                #expect(!"\(error)".contains("TOPSECRET"), "\(error)")
                #expect(!String(reflecting: error).contains("TOPSECRET"))
            }
        }
        #expect(try !keychain.contains(account: "a"))
    }

    // MARK: F5, F6

    @Test func hiddenAccountsAreRefused() throws {
        for account in [".hidden", ".", "..", "...", ".env"] {
            #expect {
                try keychain.set("TOPSECRET", account: account)
            } throws: { error in
                guard let error = error as? CofferError, error.code == .invalidName else { return false }
                return error.message.contains("'.'") || error.message.contains("not allowed")
            }
        }
        #expect(try keychain.accounts().isEmpty)
        #expect(!FileSystem.isFile(store.root + "/com.example.app/.hidden.gpg"))
        // A dot inside or at the end of a name is an ordinary name.
        try keychain.set("pw", account: "a.b.")
        #expect(try keychain.accounts() == ["a.b."])
    }

    @Test func servicesInsideGitOrHiddenFoldersAreRefused() throws {
        for service in [".git", ".git/hooks", "x/.git", ".hidden", "a/.b/c", "a//b", "./a", "a/."] {
            #expect {
                _ = try Keychain(service: service, store: store)
            } throws: { ($0 as? CofferError)?.code == .invalidName }
        }
        #expect(
            !FileSystem.isDirectory(store.root + "/.git/hooks")
                || !FileSystem.isFile(store.root + "/.git/hooks/x.gpg"))
        _ = try Keychain(service: "com.example.app/web.site", store: store)
    }

    // MARK: F3, F4

    @Test func settingANilOptionalRemovesTheItem() throws {
        try keychain.set("hunter2", account: "alice")
        let newPassword: String? = nil
        try keychain.set(newPassword, account: "alice")
        #expect(try !keychain.contains(account: "alice"))
        try keychain.set(newPassword, account: "alice")  // removing a missing item does nothing
        let credentials: Credentials? = nil
        try keychain.set(Credentials(username: "u", password: "p", port: 1, admin: false), account: "c")
        try keychain.set(credentials, account: "c")
        #expect(try !keychain.contains(account: "c"))
        #expect {
            try keychain.set(newPassword, account: "alice", label: "L", comment: nil)
        } throws: { ($0 as? CofferError)?.code == .invalidArgument }
        let some: String? = "pw"
        try keychain.set(some, account: "alice")
        #expect(try decryptedText("alice") == "pw\n")
    }

    @Test func dataAndBytesAreStoredAsTheirExactBytesWhateverTheirStaticType() throws {
        let blob: Data? = Data([0, 1, 2, 0xFF])
        try keychain.set(blob, account: "blob")
        #expect(try keychain.data(account: "blob") == blob)
        #expect(try gpgDecrypt("blob") == [0, 1, 2, 0xFF])
        #expect(try keychain.value(Data.self, account: "blob") == blob)

        let bytes: [UInt8] = Array("hi".utf8)
        try keychain.set(bytes, account: "bytes")
        #expect(try keychain.data(account: "bytes") == Data(bytes))
        #expect(try keychain.value([UInt8].self, account: "bytes") == bytes)

        // Any other array, empty ones included, is archived.
        try keychain.set([Credentials](), account: "empty")
        #expect(try decryptedText("empty") == "\n")
        #expect(try keychain.value([Credentials].self, account: "empty") == [])

        func generic<Value: Encodable>(_ value: Value) throws { try keychain.set(value, account: "generic") }
        try generic(Data([9, 8]))
        #expect(try gpgDecrypt("generic") == [9, 8])
        #expect {
            try keychain.set(Data([1]), account: "x", label: "L", comment: nil)
        } throws: { ($0 as? CofferError)?.code == .invalidArgument }
    }

    // MARK: F2, F7, F13

    struct Note: Codable, Equatable {
        var password: String
        var comment: [String]
        var Label: String
    }

    @Test func setAttributesNeverTouchesAValuesOwnFields() throws {
        let note = Note(password: "pw", comment: ["first", "second"], Label: "mine")
        try keychain.set(note, account: "n")
        try keychain.setAttributes(label: "Work", comment: nil, account: "n")
        #expect(try keychain.value(Note.self, account: "n") == note)
        #expect(try keychain.item(account: "n")?.label == "Work")
        #expect(try keychain.item(account: "n")?.comment == nil)
        try keychain.setAttributes(label: nil, comment: "c", account: "n")
        #expect(try keychain.value(Note.self, account: "n") == note)
        #expect(
            try decryptedText("n") == "pw\ncomment: first\ncomment: second\nLabel: mine\n#comment: c\n")
    }

    struct WithLabel: Codable, Equatable {
        var password: String
        var label: String?
        var comment: String?
    }

    @Test func theKeychainLabelNeverLeaksIntoADecodedValue() throws {
        try keychain.set(["user": "alice", "password": "pw"], account: "d", label: "Work", comment: "note")
        #expect(
            try keychain.value([String: String].self, account: "d") == ["user": "alice", "password": "pw"])
        #expect(try decryptedText("d") == "pw\nuser: alice\n#label: Work\n#comment: note\n")

        let value = WithLabel(password: "pw", label: nil, comment: nil)
        try keychain.set(value, account: "w", label: "Work", comment: "c")
        #expect(try keychain.value(WithLabel.self, account: "w") == value)
        #expect(try keychain.item(account: "w")?.label == "Work")

        // A value's own label and comment are its own: stored beside the keychain's, never shown as them.
        let own = WithLabel(password: "pw", label: "~", comment: " spaced")
        try keychain.set(own, account: "o", label: "Given", comment: nil)
        #expect(try keychain.value(WithLabel.self, account: "o") == own)
        let item = try keychain.item(account: "o")
        #expect(item?.label == "Given" && item?.comment == nil)
        try keychain.set(own, account: "p")
        #expect(try keychain.item(account: "p")?.label == nil)
    }

    @Test func labelsAreShownExactlyAsGiven() throws {
        try keychain.set("pw", account: "t", label: "~", comment: "\\ back")
        let item = try keychain.item(account: "t")
        #expect(item?.label == "~" && item?.comment == "\\ back")
    }
}
