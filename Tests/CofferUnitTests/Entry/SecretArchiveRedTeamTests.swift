import Testing

@testable import Coffer

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The Codable archive's answers to a red-team review: errors that could carry a password, keys that
/// differ only in case, missing containers and class hierarchies.
@Suite("The Codable archive: red-team regressions")
struct SecretArchiveRedTeamTests {
    struct Login: Codable, Equatable {
        var password: String
        var login: String
    }

    /// Everything a program could print or log about `error`.
    private func printed(_ error: any Error) -> [String] {
        var texts = ["\(error)", String(reflecting: error)]
        if case EncodingError.invalidValue(let value, let context) = error {
            texts += ["\(value)", String(reflecting: value), context.debugDescription]
        }
        return texts
    }

    private func roundTrip<T: Codable>(_ value: T) throws -> T {
        try SecretDecoder().decode(T.self, from: Secret(parsing: SecretEncoder().encode(value).formatted()))
    }

    // MARK: F1: no value in encoding errors

    @Test func encodingErrorsNeverCarryThePassword() throws {
        let failures: [() throws -> Void] = [
            { _ = try SecretEncoder().encode(Login(password: "hunter2-TOPSECRET\nsecond line", login: "a")) },
            { _ = try SecretEncoder().encode("TOPSECRET\r") },
            { _ = try SecretEncoder().encode(["password": "TOPSECRET\n"]) },
            { _ = try SecretEncoder().encode(Optional(["password": ""])) },
        ]
        for failure in failures {
            do {
                try failure()
                Issue.record("encoded a password that cannot be line 1")
            } catch {
                for text in printed(error) {
                    #expect(!text.contains("TOPSECRET"), "\(text)")
                }
                #expect(error is EncodingError)
                #expect("\(error)".contains("password"), "the error names the field")
            }
        }
    }

    @Test func encodingErrorsNameTheFieldButNotTheValue() throws {
        struct Twice: Encodable {
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: SecretCodingKey.self)
                try container.encode("TOPSECRET-1", forKey: SecretCodingKey(stringValue: "key"))
                try container.encode("TOPSECRET-2", forKey: SecretCodingKey(stringValue: "key"))
            }
        }
        struct Old: Encodable { var password = "pw"; var when = Date(timeIntervalSince1970: -70_000_000_000) }
        for value in [Twice() as any Encodable, Old()] {
            do {
                _ = try SecretEncoder().encode(value)
                Issue.record("encoded \(type(of: value))")
            } catch {
                for text in printed(error) { #expect(!text.contains("TOPSECRET")) }
                #expect(!"\(error)".contains("1967"))
            }
        }
    }

    // MARK: F8: keys that differ only in case

    struct CaseCollision: Codable, Equatable {
        var password = "pw"
        var name: String?
        var Name: String
    }

    struct CaseCollisionNested: Codable, Equatable {
        var password = "pw"
        var url: String?
        var URL: [String: String]
    }

    struct Deep: Codable, Equatable {
        var password: String
        var list: [DB]
        struct DB: Codable, Equatable {
            var password: String
            var Password: String?
        }
    }

    @Test func aNilPropertyNeverReadsAFieldOfAnotherPropertySpelledInAnotherCase() throws {
        let value = CaseCollision(name: nil, Name: "Bob")
        #expect(try roundTrip(value) == value)
        let nested = CaseCollisionNested(url: nil, URL: ["a": "b"])
        #expect(try roundTrip(nested) == nested)
        let deep = Deep(password: "top", list: [.init(password: "", Password: nil)])
        #expect(try roundTrip(deep) == deep)
        // An explicit nil is read as nil, never from a neighbour.
        let explicit = try SecretDecoder().decode(
            CaseCollision.self, from: Array("pw\nname: ~\nName: Bob\n".utf8))
        #expect(explicit == CaseCollision(name: nil, Name: "Bob"))
    }

    @Test func aKeyInAnotherCaseIsStillReadWhenTheTypeHasNoKeySpelledSo() throws {
        let decoded = try SecretDecoder().decode(Login.self, from: Array("pw\nLOGIN: alice\n".utf8))
        #expect(decoded == Login(password: "pw", login: "alice"))
        let both = try SecretDecoder().decode(
            CaseCollision.self, from: Array("pw\nNAME: x\nName: Bob\n".utf8))
        #expect(both == CaseCollision(name: "x", Name: "Bob"))
    }

    // MARK: F9: missing containers

    struct Required: Codable, Equatable {
        var password: String
        var tags: [String]
        var extra: [String: String]
        var inner: Inner
        var optionalInner: Inner?
        struct Inner: Codable, Equatable { var note: String? }
    }

    @Test func missingRequiredContainersThrowKeyNotFound() throws {
        for (name, text) in [
            ("tags", "pw\nextra.a: b\ninner: {}\n"), ("extra", "pw\ntags: a\ninner: {}\n"),
            ("inner", "pw\ntags: a\nextra.a: b\n"),
        ] {
            #expect {
                _ = try SecretDecoder().decode(Required.self, from: Array(text.utf8))
            } throws: { error in
                guard case DecodingError.keyNotFound(let key, let context) = error else { return false }
                return key.stringValue == name && context.debugDescription.contains("\"\(name)\"")
            }
        }
        let empty = try SecretDecoder().decode(
            Required.self, from: Array("pw\ntags: []\nextra: {}\ninner: {}\n".utf8))
        #expect(empty == Required(password: "pw", tags: [], extra: [:], inner: .init(), optionalInner: nil))
        let value = Required(
            password: "pw", tags: [], extra: [:], inner: .init(note: nil), optionalInner: .init())
        #expect(try roundTrip(value) == value)
    }

    @Test func aTypeThatAsksForNilStillDecodesFromAnAbsentField() throws {
        /// A wrapper that decodes a missing field as its default, as property wrappers for defaults do.
        struct Defaulted: Codable, Equatable {
            var tags: [String]
            init(tags: [String]) { self.tags = tags }
            init(from decoder: any Decoder) throws {
                let container = try decoder.singleValueContainer()
                tags = container.decodeNil() ? ["default"] : try container.decode([String].self)
            }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.singleValueContainer()
                try container.encode(tags)
            }
        }
        struct Holder: Codable, Equatable { var password: String; var tags: Defaulted }
        let decoded = try SecretDecoder().decode(Holder.self, from: Array("pw\n".utf8))
        #expect(decoded == Holder(password: "pw", tags: Defaulted(tags: ["default"])))
    }

    // MARK: F10: class hierarchies

    class Base: Codable {
        var password: String
        var id: Int
        init(password: String, id: Int) {
            self.password = password
            self.id = id
        }
    }

    final class Derived: Base, @unchecked Sendable {
        var name: String
        init(password: String, id: Int, name: String) {
            self.name = name
            super.init(password: password, id: id)
        }
        enum CodingKeys: String, CodingKey { case name }
        required init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            name = try container.decode(String.self, forKey: .name)
            try super.init(from: container.superDecoder())
        }
        override func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(name, forKey: .name)
            try super.encode(to: container.superEncoder())
        }
    }

    /// A base class that holds nothing but the password.
    class PasswordOnly: Codable {
        var password: String
        init(password: String) { self.password = password }
    }

    final class WithPasswordOnlyBase: PasswordOnly, @unchecked Sendable {
        var login: String
        init(password: String, login: String) {
            self.login = login
            super.init(password: password)
        }
        enum CodingKeys: String, CodingKey { case login }
        required init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            login = try container.decode(String.self, forKey: .login)
            try super.init(from: container.superDecoder())
        }
        override func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(login, forKey: .login)
            try super.encode(to: container.superEncoder())
        }
    }

    @Test func aBaseClassPasswordIsLine1() throws {
        let value = Derived(password: "hunter2", id: 1, name: "n")
        let secret = try SecretEncoder().encode(value)
        #expect(secret.password == "hunter2")
        #expect(String(decoding: secret.formatted(), as: UTF8.self) == "hunter2\nname: n\nsuper.id: 1\n")
        let back = try roundTrip(value)
        #expect(back.password == "hunter2" && back.id == 1 && back.name == "n")

        let only = WithPasswordOnlyBase(password: "pw", login: "alice")
        let onlySecret = try SecretEncoder().encode(only)
        #expect(String(decoding: onlySecret.formatted(), as: UTF8.self) == "pw\nlogin: alice\n")
        let onlyBack = try roundTrip(only)
        #expect(onlyBack.password == "pw" && onlyBack.login == "alice")
    }

    @Test func aNestedContainerNamedPasswordStaysAField() throws {
        struct Holder: Codable, Equatable {
            var password: String
            var inner: Inner
            struct Inner: Codable, Equatable { var password: String }
        }
        let value = Holder(password: "top", inner: .init(password: "inner"))
        #expect(
            String(decoding: try SecretEncoder().encodeBytes(value), as: UTF8.self)
                == "top\ninner.password: inner\n")
        #expect(try roundTrip(value) == value)
    }
}

/// F14: 128-bit integers are single values like the other integers.
@Suite("The Codable archive: 128-bit integers")
struct SecretArchiveInt128Tests {
    struct Big: Codable, Equatable {
        var password = "pw"
        var n: Int128
        var u: UInt128
        var list: [Int128]
        var maybe: UInt128?
    }

    @Test func int128AndUInt128RoundTrip() throws {
        let value = Big(n: .min, u: .max, list: [0, -1, .max], maybe: 7)
        let text = String(decoding: try SecretEncoder().encodeBytes(value), as: UTF8.self)
        #expect(
            text
                == "pw\nn: \(Int128.min)\nu: \(UInt128.max)\nlist: 0\nlist: -1\nlist: \(Int128.max)\nmaybe: 7\n"
        )
        #expect(try SecretDecoder().decode(Big.self, from: Array(text.utf8)) == value)
        #expect(try SecretDecoder().decode(Int128.self, from: try SecretEncoder().encode(Int128(-5))) == -5)
        #expect {
            _ = try SecretDecoder().decode(Big.self, from: Array("pw\nn: x\nu: 1\nlist: []\n".utf8))
        } throws: { error in
            guard case DecodingError.dataCorrupted(let context) = error else { return false }
            return context.debugDescription.contains("\"n\"")
        }
    }
}
