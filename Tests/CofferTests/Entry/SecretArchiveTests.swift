import CofferTestSupport
import Testing

@testable import Coffer

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Types for the archive format's tests.
enum ArchiveFixtures {
    struct Server: Codable, Equatable {
        var host: String
        var port: Int
    }

    enum Auth: Codable, Equatable {
        case none
        case password(String)
        case key(name: String, data: Data)
    }

    struct Deployment: Codable, Equatable {
        var password: String
        var servers: [Server]
        var matrix: [[Int]]
        var byID: [Int: String]
        var auth: Auth
        var fallback: Auth?
        var nickname: String??
        var tags: [String?]
        var empty: [String]
        var none: [String: Server]
        var nothing: ArchiveFixtures.Nothing
        var price: Decimal
    }

    struct Nothing: Codable, Equatable {}

    struct Wrapper<Value: Codable & Equatable>: Codable, Equatable {
        var value: Value
    }

    struct Optional2<Value: Codable & Equatable>: Codable, Equatable {
        var value: Value??
    }

    static let deployment = Deployment(
        password: "hunter2",
        servers: [Server(host: "h1", port: 22), Server(host: "h2", port: 2222)],
        matrix: [[1, 2], [], [3]],
        byID: [10: "ten", 2: "two", -1: "minus one"],
        auth: .key(name: "deploy", data: Data([1, 2, 3])),
        fallback: Auth.none,
        nickname: .some(nil),
        tags: ["a", nil, "~"],
        empty: [],
        none: [:],
        nothing: Nothing(),
        price: Decimal(string: "12.34")!
    )
}

@Suite("The Codable archive format")
struct SecretArchiveTests {
    typealias Fixtures = ArchiveFixtures

    private func text<T: Encodable>(_ value: T) throws -> String {
        String(decoding: try SecretEncoder().encodeBytes(value), as: UTF8.self)
    }

    private func decode<T: Decodable>(_ type: T.Type, _ text: String) throws -> T {
        try SecretDecoder().decode(type, from: Array(text.utf8))
    }

    private func roundTrip<T: Codable & Equatable>(_ value: T) throws -> T {
        try SecretDecoder().decode(T.self, from: try SecretEncoder().encode(value))
    }

    @Test func everyShapeIsWrittenAsDocumented() throws {
        let value = Fixtures.deployment
        #expect(
            try text(value) == """
                hunter2
                servers.0.host: h1
                servers.0.port: 22
                servers.1.host: h2
                servers.1.port: 2222
                matrix.0: 1
                matrix.0: 2
                matrix.1: []
                matrix.2: 3
                byID.-1: minus one
                byID.2: two
                byID.10: ten
                auth.key.name: deploy
                auth.key.data: AQID
                fallback.none: {}
                nickname: ~
                tags.0: a
                tags.1: ~
                tags.2: \\~
                empty: []
                none: {}
                nothing: {}
                price: 12.34

                """)
        #expect(try roundTrip(value) == value)
    }

    /// The example of coffer-store(5), THE CODABLE ARCHIVE.
    struct ManPageLogin: Codable, Equatable {
        enum Auth: Codable, Equatable {
            case none
            case key(name: String)
        }
        var password: String
        var login: String
        var url: URL?
        var created: Date
        var tags: [String]
        var servers: [Fixtures.Server]
        var extra: [String: String]
        var auth: Auth
        var backup: [String]?
    }

    @Test func theManPageExample() throws {
        let login = ManPageLogin(
            password: "hunter2", login: "alice", url: URL(string: "https://example.com"),
            created: Date(timeIntervalSince1970: 1_714_564_800), tags: ["work", "mail"],
            servers: [.init(host: "h1", port: 22), .init(host: "h2", port: 2222)],
            extra: ["github.com": "token"],
            auth: .key(name: "deploy"), backup: [])
        #expect(
            try text(login) == """
                hunter2
                login: alice
                url: https://example.com
                created: 2024-05-01T12:00:00Z
                tags: work
                tags: mail
                servers.0.host: h1
                servers.0.port: 22
                servers.1.host: h2
                servers.1.port: 2222
                extra."github.com": token
                auth.key.name: deploy
                backup: []

                """)
        #expect(try roundTrip(login) == login)
        #expect(try text(Fixtures.Wrapper(value: " leading space")) == "\nvalue: \\ leading space\n")
        #expect(try text(Fixtures.Wrapper(value: "Windows line\r")) == "\nvalue: \\\"Windows line\\r\"\n")
    }

    @Test func enumsWithAndWithoutAssociatedValues() throws {
        #expect(
            try text(Fixtures.Wrapper(value: Fixtures.Auth.password("pw"))) == "\nvalue.password._0: pw\n")
        #expect(try text(Fixtures.Wrapper(value: Fixtures.Auth.none)) == "\nvalue.none: {}\n")
        for auth in [Fixtures.Auth.none, .password(""), .password("~"), .key(name: "", data: Data())] {
            #expect(try roundTrip(Fixtures.Wrapper(value: auth)).value == auth)
            #expect(try roundTrip(Fixtures.Wrapper(value: [auth, auth])).value == [auth, auth])
        }
        // At the top level an enum's case is the first key.
        #expect(try text(Fixtures.Auth.password("pw")) == "\npassword._0: pw\n")
        #expect(try roundTrip(Fixtures.Auth.password("pw")) == .password("pw"))
    }

    @Test func nestedOptionalsKeepTheirInnerNil() throws {
        let cases: [Fixtures.Optional2<String>] = [
            .init(value: nil), .init(value: .some(nil)), .init(value: "x"),
        ]
        #expect(try cases.map(text) == ["\n", "\nvalue: ~\n", "\nvalue: x\n"])
        for value in cases { #expect(try roundTrip(value) == value) }
        let arrays: [Fixtures.Optional2<[Int]>] = [
            .init(value: nil), .init(value: .some(nil)), .init(value: []),
        ]
        for value in arrays { #expect(try roundTrip(value) == value) }
    }

    @Test func emptyContainersAreNotAbsent() throws {
        #expect(try text(Fixtures.Wrapper<[Int]?>(value: [])) == "\nvalue: []\n")
        #expect(try roundTrip(Fixtures.Wrapper<[Int]?>(value: [])).value == [])
        #expect(try roundTrip(Fixtures.Wrapper<[Int]?>(value: nil)).value == nil)
        #expect(try text(Fixtures.Wrapper<[String: Int]?>(value: [:])) == "\nvalue: {}\n")
        #expect(try roundTrip(Fixtures.Wrapper<[String: Int]?>(value: [:])).value == [:])
        #expect(try roundTrip(Fixtures.Wrapper<Fixtures.Nothing?>(value: .init())).value == .init())
        #expect(try roundTrip(Fixtures.Wrapper<Fixtures.Nothing?>(value: nil)).value == nil)
        #expect(try roundTrip(Fixtures.Wrapper<[[String]]>(value: [[], [""], []])).value == [[], [""], []])
        #expect(try text(Fixtures.Wrapper<[[String]]>(value: [[], [""]])) == "\nvalue.0: []\nvalue.1:\n")
        #expect(try roundTrip(Fixtures.Wrapper<String?>(value: "")).value == "")
        // At the top level nothing is ever absent: an empty struct, dictionary or array is an empty entry.
        #expect(try text(Fixtures.Nothing()) == "\n")
        #expect(try roundTrip(Fixtures.Nothing()) == Fixtures.Nothing())
        #expect(try roundTrip([String: Int]()) == [:])
        #expect(try roundTrip([Int]()) == [])
    }

    @Test func topLevelArraysAndDictionariesWithIntKeys() throws {
        #expect(try text(["a", "b"]) == "\n0: a\n1: b\n")
        #expect(try roundTrip(["a", "b"]) == ["a", "b"])
        #expect(try roundTrip([[1], [2, 3]]) == [[1], [2, 3]])
        #expect(try text([3: "c", 1: "a"]) == "\n1: a\n3: c\n")
        #expect(try roundTrip([3: "c", 1: "a"]) == [3: "c", 1: "a"])
        let servers = [Fixtures.Server(host: "h", port: 1)]
        #expect(try text(servers) == "\n0.host: h\n0.port: 1\n")
        #expect(try roundTrip(servers) == servers)
    }

    @Test func keysThatCollideWithTheSyntaxAreQuoted() throws {
        let dictionary = [
            "a.b": "dot", "a:b": "colon", "": "empty", " lead": "blank", "trail\t": "tab", "#x": "hash",
            "q\"uote": "quote", "back\\slash": "backslash", "line\nbreak": "newline", "cr\r": "return",
            "password": "pw", "Password": "capital", "0": "zero", "é.ü": "unicode", "x": "plain",
        ]
        #expect(
            try text(dictionary) == """
                pw
                "": empty
                " lead": blank
                "#x": hash
                0: zero
                Password: capital
                "a.b": dot
                "a\\u003Ab": colon
                "back\\\\slash": backslash
                "cr\\r": return
                "line\\nbreak": newline
                "q\\"uote": quote
                "trail\\t": tab
                x: plain
                "é.ü": unicode

                """)
        #expect(try roundTrip(dictionary) == dictionary)
        let nested = ["github.com": ["api.v2": Fixtures.Server(host: "h", port: 1)]]
        #expect(
            try text(nested) == "\n\"github.com\".\"api.v2\".host: h\n\"github.com\".\"api.v2\".port: 1\n")
        #expect(try roundTrip(nested) == nested)
        // Keys that differ only in case are different keys.
        #expect(try roundTrip(["Login": "a", "login": "b"]) == ["Login": "a", "login": "b"])
    }

    @Test func valuesThatCollideWithTheSyntaxAreEscaped() throws {
        let cases: [(String, String)] = [
            ("~", "\\~"), ("[]", "\\[]"), ("{}", "\\{}"), ("\\~", "\\\\~"), (" lead", "\\ lead"),
            ("\tTab", "\\\tTab"), ("\\ x", "\\\\ x"), ("\\\"q\"", "\\\\\"q\""), ("\"q\"", "\"q\""),
            ("\\x", "\\x"), ("\\", "\\"), ("cr\r", "\\\"cr\\r\""), ("a\r\nb", "\\\"a\\r\\nb\""),
            ("a\rb", "a\rb"), ("", ""), ("~~", "~~"), ("[ ]", "[ ]"),
        ]
        for (value, written) in cases {
            let expected = written.isEmpty ? "\nvalue:\n" : "\nvalue: \(written)\n"
            #expect(try text(Fixtures.Wrapper(value: value)) == expected, "\(value.debugDescription)")
            #expect(try roundTrip(Fixtures.Wrapper(value: value)).value == value, "\(value.debugDescription)")
            #expect(try roundTrip(Fixtures.Wrapper(value: [value, value])).value == [value, value])
            #expect(try roundTrip(Fixtures.Wrapper<String?>(value: value)).value == value)
        }
        #expect(try text(Fixtures.Wrapper(value: " a\nb")) == "\nvalue: |\n  \\ a\n  b\n")
        #expect(try roundTrip(Fixtures.Wrapper(value: " a\n b\n")).value == " a\n b\n")
        // Line 1 is the password exactly as it is, whatever it looks like.
        #expect(try text(["password": " ~ "]) == " ~ \n")
        #expect(try roundTrip(["password": "~"]) == ["password": "~"])
    }

    @Test func aPasswordThatIsNotASingleValueIsWrittenAsFields() throws {
        #expect(try text(["password": ["a", "b"]]) == "\npassword: a\npassword: b\n")
        #expect(try roundTrip(["password": ["a", "b"]]) == ["password": ["a", "b"]])
        #expect(try roundTrip(["password": [String]()]) == ["password": []])
        #expect(
            try roundTrip(Fixtures.Wrapper(value: ["password": "nested"])).value == ["password": "nested"])
    }

    @Test func veryDeepNestingRoundTrips() throws {
        var value = Fixtures.Wrapper<[[[[[[[[String]]]]]]]]>(value: [[[[[[[["deep"]]]]]]]])
        #expect(try text(value) == "\nvalue.0.0.0.0.0.0.0: deep\n")
        #expect(try roundTrip(value) == value)
        value.value[0][0][0][0].append([])
        #expect(try roundTrip(value) == value)
    }

    @Test func handEditedEntriesDecode() throws {
        let edited = """
            hunter2
            # deployment notes, written by hand

            servers . 0 . host :   h1
            servers.0.port:22
            servers.1.host: h2
            servers.1.port: 2222
            servers.note: ignored, not an index
            matrix.0: 1
            matrix.0: 2
            matrix.1: []
            matrix.2: 3
            byID.-1: minus one
            byID.2: two
            byID.10: ten
            auth.key.name: deploy
            auth.key.data:   AQID
            fallback.none: {}
            nickname: ~
            tags.0: a
            tags.1: ~
            tags.2: \\~
            empty: []
            none: {}
            nothing: {}
            price:  12.34
            unknown: field
            otpauth://totp/Example:alice?secret=JBSWY3DP
            free text at the end
            """
        #expect(try decode(Fixtures.Deployment.self, edited) == Fixtures.deployment)
        // Arrays written one field per element, with a [] left behind, gaps in indexes.
        #expect(try decode(Fixtures.Wrapper<[String]>.self, "\nvalue: []\nvalue: added\n").value == ["added"])
        #expect(
            try decode(Fixtures.Wrapper<[String]>.self, "\nvalue.3: c\nvalue.1: a\n").value == ["a", "c"])
        #expect(try decode(Fixtures.Wrapper<[Int]>.self, "\nVALUE: 1\nVALUE : 2\n").value == [1, 2])
        #expect(try decode(Fixtures.Wrapper<[Int]>.self, "\nVALUE: 1\nvalue : 2\n").value == [2])
        // A key spelled exactly wins over one that differs in case; otherwise case is ignored.
        #expect(try decode(Fixtures.Wrapper<Int>.self, "\nVALUE: 1\nvalue: 2\n").value == 2)
        #expect(try decode(Fixtures.Wrapper<Int>.self, "\nVALUE: 1\nValue: 2\n").value == 1)
        // ~ where nil is not possible is the text ~.
        #expect(try decode(Fixtures.Wrapper<String>.self, "\nvalue: ~\n").value == "~")
        #expect(try decode(Fixtures.Wrapper<String?>.self, "\nvalue: ~ \n").value == nil)
        // Markers written with trailing blanks, and CRLF line endings.
        #expect(try decode(Fixtures.Wrapper<[Int]?>.self, "\r\nvalue: [] \r\n").value == [])
    }

    private func message<T: Decodable>(_ type: T.Type, _ text: String) -> String? {
        let error: DecodingError
        do {
            _ = try SecretDecoder().decode(type, from: Array(text.utf8))
            return nil
        } catch let thrown as DecodingError {
            error = thrown
        } catch {
            return "\(error)"
        }
        switch error {
        case .dataCorrupted(let context), .keyNotFound(_, let context), .typeMismatch(_, let context),
            .valueNotFound(_, let context):
            return context.debugDescription
        @unknown default:
            return nil
        }
    }

    @Test func decodingErrorsNameTheField() {
        typealias Servers = Fixtures.Wrapper<[Fixtures.Server]>
        #expect(
            message(Servers.self, "\nvalue.0.host: h\nvalue.0.port: x\n")
                == "The field \"value.0.port\" does not hold a valid Int: expected a whole number from "
                + "-9223372036854775808 to 9223372036854775807.")
        #expect(message(Servers.self, "\nvalue.0.host: h\n") == "The entry has no field \"value.0.port\".")
        #expect(
            message(Fixtures.Wrapper<[Int]>.self, "\nvalue: 1\nvalue: two\n")
                == "The field \"value (value 2)\" does not hold a valid Int: expected a whole number from "
                + "-9223372036854775808 to 9223372036854775807.")
        #expect(
            message(Fixtures.Wrapper<[String: Int]>.self, "\nvalue.\"a.b\": x\n")
                == "The field \"value.\"a.b\"\" does not hold a valid Int: expected a whole number from "
                + "-9223372036854775808 to 9223372036854775807.")
        #expect(
            message(Fixtures.Wrapper<Decimal>.self, "\nvalue: twelve\n")
                == "The field \"value\" does not hold a valid Decimal: expected a decimal number such as 12.34."
        )
        #expect(
            message(Fixtures.Wrapper<[[Int]]>.self, "\nvalue: 1\n")
                == "Expected an array at \"value (value 1)\" but found the text of a field; the fields of an "
                + "array's arrays are written under its indexes (key.0.field).")
        #expect(throws: DecodingError.self) {
            try decode(Fixtures.Wrapper<Fixtures.Auth>.self, "\nvalue.other: {}\n")
        }
        #expect(
            (try? decode(Servers.self, "\nVALUE.0.HOST: h\nVALUE.0.PORT: 1\n").value) == [
                .init(host: "h", port: 1)
            ])
        #expect(
            message(Fixtures.Wrapper<URL>.self, "\nvalue:\n")
                == "The field \"value\" does not hold a valid URL: expected a URL such as https://example.com."
        )
        #expect(
            message(Int.self, "x\n") == "The field \"password (line 1)\" does not hold a valid Int: expected "
                + "a whole number from -9223372036854775808 to 9223372036854775807.")
    }

    @Test func decimalsRoundTripExactly() throws {
        for text in ["0", "-0.000000001", "123456789012345678901234567890.12345678", "1e100", "-42"] {
            let decimal = Decimal(string: text)!
            #expect(try roundTrip(Fixtures.Wrapper(value: decimal)).value == decimal, "\(text)")
        }
        #expect(try roundTrip(Fixtures.Wrapper(value: Decimal.nan)).value.isNaN)
    }
}
