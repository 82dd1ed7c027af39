import CofferTestSupport
import Testing

@testable import Coffer

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Types the Codable tests encode.
enum EntryFixtures {
    struct Login: Codable, Equatable {
        var password: String
        var login: String
        var url: URL?
        var port: Int
        var admin: Bool
    }

    struct Address: Codable, Equatable {
        var city: String
        var zip: String?
        var geo: Geo?
    }

    struct Geo: Codable, Equatable {
        var latitude: Double
        var longitude: Double
    }

    enum Kind: String, Codable, Equatable {
        case personal, work
    }

    struct Everything: Codable, Equatable {
        var password: String
        var userName: String
        var address: Address
        var tags: [String]
        var ports: [Int]
        var nickname: String?
        var missing: String?
        var created: Date
        var avatar: Data
        var homepage: URL
        var enabled: Bool
        var count: Int
        var big: UInt64
        var small: Int8
        var ratio: Double
        var fraction: Float
        var kind: Kind
        var id: UUID
        var extra: [String: String]
        var notes: String
    }

    static let everything = Everything(
        password: "hunter2",
        userName: "alice",
        address: Address(city: "Paris", zip: "75001", geo: Geo(latitude: 48.8566, longitude: 2.3522)),
        tags: ["work", "mail", "work"],
        ports: [22, 443],
        nickname: "al",
        missing: nil,
        created: Date(timeIntervalSince1970: 1_714_564_800),
        avatar: Data([0, 1, 2, 253, 254, 255]),
        homepage: URL(string: "https://example.com/a?b=c#d")!,
        enabled: true,
        count: -42,
        big: UInt64.max,
        small: Int8.min,
        ratio: 0.1,
        fraction: 1.25,
        kind: .work,
        id: UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!,
        extra: ["b": "2", "a": "1"],
        notes: "line one\n  indented\n\nlast"
    )

    struct Wrapper<Value: Codable & Equatable>: Codable, Equatable {
        var value: Value
    }

    struct OptionalWrapper<Value: Codable & Equatable>: Codable, Equatable {
        var value: Value?
    }

    struct NoPassword: Codable, Equatable {
        var login: String
    }

    struct CustomKeys: Codable, Equatable {
        var secret: String
        var user: String
        enum CodingKeys: String, CodingKey {
            case secret = "pass"
            case user = "Login"
        }
    }

    struct Clash: Codable, Equatable {
        var flat: String
        var nested: [String: String]
        enum CodingKeys: String, CodingKey {
            case flat = "a.b"
            case nested = "a"
        }
    }

    struct Pair: Codable, Equatable {
        var name: String
    }

    struct Empty: Codable, Equatable {}

    /// Encodes its value twice under one key, as a faulty `encode(to:)` might.
    struct Twice: Encodable {
        var value: String
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: SecretCodingKey.self)
            try container.encode(value, forKey: SecretCodingKey(stringValue: "a"))
            try container.encode(value, forKey: SecretCodingKey(stringValue: "a"))
        }
    }
}

@Suite("SecretEncoder and SecretDecoder")
struct EntryCodableTests {
    typealias Fixtures = EntryFixtures

    private func text<T: Encodable>(_ value: T, encoder: SecretEncoder = SecretEncoder()) throws -> String {
        String(decoding: try encoder.encodeBytes(value), as: UTF8.self)
    }

    private func roundTrip<T: Codable & Equatable>(_ value: T) throws -> T {
        try SecretDecoder().decode(T.self, from: try SecretEncoder().encode(value))
    }

    @Test func writesTheFormatPassClientsRead() throws {
        let login = Fixtures.Login(
            password: "hunter2", login: "alice", url: URL(string: "https://example.com"), port: 8443,
            admin: false
        )
        #expect(
            try text(login) == """
                hunter2
                login: alice
                url: https://example.com
                port: 8443
                admin: false

                """
        )
        #expect(try roundTrip(login) == login)
        let secret = try SecretEncoder().encode(login)
        #expect(secret.password == "hunter2")
        #expect(secret.field("login") == "alice")
    }

    @Test func roundTripsEveryKindOfValue() throws {
        let value = Fixtures.everything
        #expect(try roundTrip(value) == value)
        #expect(
            try text(value)
                == """
                hunter2
                userName: alice
                address.city: Paris
                address.zip: 75001
                address.geo.latitude: 48.8566
                address.geo.longitude: 2.3522
                tags: work
                tags: mail
                tags: work
                ports: 22
                ports: 443
                nickname: al
                created: 2024-05-01T12:00:00Z
                avatar: AAEC/f7/
                homepage: https://example.com/a?b=c#d
                enabled: true
                count: -42
                big: 18446744073709551615
                small: -128
                ratio: 0.1
                fraction: 1.25
                kind: work
                id: E621E1F8-C36C-495A-93FC-0C247A3E6E5F
                extra.a: 1
                extra.b: 2
                notes: |
                  line one
                    indented

                  last

                """.replacing("\n\n  last", with: "\n  \n  last")
        )
    }

    @Test func optionalsAreOmittedWhenNil() throws {
        let absent = Fixtures.Login(password: "p", login: "a", url: nil, port: 1, admin: true)
        #expect(try text(absent) == "p\nlogin: a\nport: 1\nadmin: true\n")
        #expect(try roundTrip(absent) == absent)
        let empty = Fixtures.OptionalWrapper<String>(value: "")
        #expect(try text(empty) == "\nvalue:\n")
        #expect(try roundTrip(empty) == empty)
        #expect(try roundTrip(Fixtures.OptionalWrapper<[String]>(value: nil)).value == nil)
        #expect(try roundTrip(Fixtures.OptionalWrapper<[String]>(value: ["x"])).value == ["x"])
        #expect(try roundTrip(Fixtures.OptionalWrapper<Fixtures.Address>(value: nil)).value == nil)
    }

    @Test func nonOptionalEmptyValuesRoundTrip() throws {
        #expect(try roundTrip(Fixtures.Wrapper<[String]>(value: [])) == Fixtures.Wrapper(value: []))
        #expect(try roundTrip(Fixtures.Wrapper<Data>(value: Data())) == Fixtures.Wrapper(value: Data()))
        #expect(try roundTrip(Fixtures.Wrapper<[String: String]>(value: [:])) == Fixtures.Wrapper(value: [:]))
        #expect(try roundTrip(Fixtures.Wrapper<String>(value: "")) == Fixtures.Wrapper(value: ""))
    }

    @Test func stringsThatNeedCareRoundTrip() throws {
        for value in [
            "", "|", "| ", "trailing  ", "a\nb", "\n", "\nleading newline", "trailing newline\n", "a\n\n\nb",
            "x\n  indented\n\ttab", "a\rb", "key: value", "otpauth://totp/x", "é🔑",
            "password\nlooking: field",
        ] {
            let wrapped = Fixtures.Wrapper(value: value)
            #expect(try roundTrip(wrapped) == wrapped, "\(value.debugDescription)")
        }
        #expect(try text(Fixtures.Wrapper(value: "|")) == "\nvalue: |\n  |\n")
        #expect(try text(Fixtures.Wrapper(value: "a\nb")) == "\nvalue: |\n  a\n  b\n")
    }

    @Test func numbersRoundTripExactly() throws {
        for value in [
            0.0, -0.0, 0.1, 1e-300, 1e300, .pi, -.infinity, .infinity, Double.leastNonzeroMagnitude,
        ] {
            let decoded = try roundTrip(Fixtures.Wrapper(value: value)).value
            #expect(decoded == value && decoded.sign == value.sign)
        }
        #expect(try roundTrip(Fixtures.Wrapper(value: Double.nan)).value.isNaN)
        #expect(try roundTrip(Fixtures.Wrapper(value: Float(0.1))).value == Float(0.1))
        #expect(try roundTrip(Fixtures.Wrapper(value: Int.min)).value == Int.min)
        #expect(try roundTrip(Fixtures.Wrapper(value: Int64.max)).value == Int64.max)
        #expect(try roundTrip(Fixtures.Wrapper(value: UInt8.max)).value == UInt8.max)
    }

    @Test func datesRoundTripExactly() throws {
        var random = SeededRandom(seed: 3)
        var dates = [
            Date(timeIntervalSinceReferenceDate: 0), Date(timeIntervalSince1970: 0),
            Date(timeIntervalSince1970: -1.5), Date(timeIntervalSinceReferenceDate: 736_000_000.123),
            Date(timeIntervalSinceReferenceDate: 0.000_000_1), Date.distantPast, Date.distantFuture,
        ]
        for _ in 0..<500 {
            dates.append(
                Date(timeIntervalSinceReferenceDate: Double.random(in: -3e10...2e11, using: &random)))
        }
        for date in dates {
            #expect(
                try roundTrip(Fixtures.Wrapper(value: date)).value == date,
                "\(date.timeIntervalSinceReferenceDate)")
        }
        #expect(
            try text(Fixtures.Wrapper(value: Date(timeIntervalSince1970: 1.25)))
                == "\nvalue: 1970-01-01T00:00:01.25Z\n")
    }

    @Test func dataRoundTrips() throws {
        var random = SeededRandom(seed: 5)
        for count in 0..<40 {
            let data = Data((0..<count).map { _ in UInt8.random(in: 0...255, using: &random) })
            #expect(try roundTrip(Fixtures.Wrapper(value: data)).value == data)
        }
    }

    @Test func dictionariesAreSortedAndTheirPasswordIsLineOne() throws {
        let dictionary = ["username": "alice", "password": "s3cret", "server": "imap.example.com"]
        #expect(try text(dictionary) == "s3cret\nserver: imap.example.com\nusername: alice\n")
        #expect(
            try SecretDecoder().decode([String: String].self, from: SecretEncoder().encode(dictionary))
                == dictionary)

        let dotted = ["com.example.app": "token", "plain": "x"]
        #expect(try text(dotted) == "\n\"com.example.app\": token\nplain: x\n")
        // Written by hand (or by earlier versions) without quotes, a dotted key still reads as one key.
        #expect(
            try SecretDecoder().decode(
                [String: String].self, from: Array("\ncom.example.app: token\nplain: x\n".utf8))
                == dotted)
        #expect(
            try SecretDecoder().decode([String: String].self, from: SecretEncoder().encode(dotted)) == dotted)

        let numbers = ["b": 2, "a": 1]
        #expect(
            try SecretDecoder().decode([String: Int].self, from: SecretEncoder().encode(numbers)) == numbers)

        let nested = [
            "home": Fixtures.Address(city: "Paris", zip: nil, geo: nil), "work": .init(city: "Lyon"),
        ]
        #expect(try text(nested) == "\nhome.city: Paris\nwork.city: Lyon\n")
        #expect(try roundTrip(Fixtures.Wrapper(value: nested)).value == nested)
    }

    @Test func keysAreWrittenAsSpelledAndReadIgnoringCase() throws {
        let everything = Fixtures.everything
        #expect(try text(everything).contains("\nuserName: alice\n"))
        var secret = try SecretEncoder().encode(everything)
        secret.removeField("username")
        try secret.setField("USERNAME", "bob")
        #expect(try SecretDecoder().decode(Fixtures.Everything.self, from: secret).userName == "bob")

        let custom = Fixtures.CustomKeys(secret: "pw", user: "alice")
        let encoder = SecretEncoder(passwordKey: "pass")
        #expect(try text(custom, encoder: encoder) == "pw\nLogin: alice\n")
        let decoded = try SecretDecoder(passwordKey: "pass").decode(
            Fixtures.CustomKeys.self, from: Array("pw\nlogin:alice\n".utf8)
        )
        #expect(decoded == custom)
    }

    @Test func decodingIgnoresWhatItDoesNotKnow() throws {
        let edited = Array(
            """
            hunter2
            Login :  alice
            url:https://example.com
            otpauth://totp/Example:alice?secret=JBSWY3DP
            security question: first pet
            notes: |
              called Rex
            PORT: 8443
            Admin: yes
            # admin: false
            ADMIN: no
            free text at the end
            """.utf8
        )
        let login = try SecretDecoder().decode(Fixtures.Login.self, from: edited)
        #expect(
            login
                == Fixtures.Login(
                    password: "hunter2", login: "alice", url: URL(string: "https://example.com"), port: 8443,
                    admin: true))
    }

    @Test func anEntryWithoutAPasswordPropertyKeepsLineOneEmpty() throws {
        #expect(try text(Fixtures.NoPassword(login: "a")) == "\nlogin: a\n")
        let decoded = try SecretDecoder().decode(
            Fixtures.NoPassword.self, from: Array("ignored\nlogin: a\n".utf8))
        #expect(decoded.login == "a")
    }

    @Test func aTopLevelSingleValueIsThePassword() throws {
        #expect(try text("hunter2") == "hunter2\n")
        #expect(try SecretDecoder().decode(String.self, from: Array("hunter2\nlogin: x\n".utf8)) == "hunter2")
        #expect(try SecretDecoder().decode(Int.self, from: Array("42".utf8)) == 42)
    }

    @Test func encodedStringsEitherRoundTripOrThrow() throws {
        var random = SeededRandom(seed: 17)
        var thrown = 0
        for _ in 0..<1_000 {
            let value = EntryInputGenerator.value(&random)
            let password = EntryInputGenerator.value(&random)
            let key = random.pick(["key", "a.b", " key", "k:y", "", "Key", "é"])
            let dictionary = [key: value, "password": password]
            do {
                let secret = try SecretEncoder().encode(dictionary)
                let decoded = try SecretDecoder().decode([String: String].self, from: secret.formatted())
                #expect(decoded == dictionary, "\(dictionary)")
            } catch is EncodingError {
                thrown += 1
            }
        }
        #expect(thrown > 0 && thrown < 1_000)
    }
}

@Suite("SecretEncoder and SecretDecoder errors")
struct EntryCodableErrorTests {
    typealias Fixtures = EntryFixtures

    private func encodingMessage<T: Encodable>(_ value: T) -> String? {
        do {
            _ = try SecretEncoder().encode(value)
            Issue.record("encoding \(value) did not throw")
            return nil
        } catch EncodingError.invalidValue(_, let context) {
            return context.debugDescription
        } catch {
            Issue.record("unexpected error \(error)")
            return nil
        }
    }

    private func decodingError<T: Decodable>(_ type: T.Type, _ text: String) -> DecodingError? {
        do {
            _ = try SecretDecoder().decode(type, from: Array(text.utf8))
            Issue.record("decoding \(text.debugDescription) did not throw")
            return nil
        } catch let error as DecodingError {
            return error
        } catch {
            Issue.record("unexpected error \(error)")
            return nil
        }
    }

    @Test func whatCannotBeWritten() {
        #expect(
            encodingMessage(["password": "two\nlines"])
                == "Cannot encode the password (line 1): A password cannot contain a line break.")
        #expect(
            encodingMessage(Fixtures.Login(password: "cr\r", login: "a", url: nil, port: 1, admin: true))
                == "Cannot encode the password (line 1): A password cannot end with a carriage return.")
        #expect(
            encodingMessage(Fixtures.Wrapper(value: Date(timeIntervalSince1970: 1e12)))
                == "Cannot encode Date \"value\": only dates in the years 0 to 9999 can be written.")
        #expect(
            encodingMessage(["password": ""])
                == "Cannot encode an empty password from an optional or a dictionary: an empty line 1 reads "
                + "back as no password (nil).")
        #expect(
            encodingMessage(["password": nil] as [String: String?])
                == "Cannot encode a nil password (line 1) from a dictionary or a nested optional: an empty "
                + "line 1 reads back as no password.")
        #expect(
            encodingMessage(Fixtures.Empty() as Fixtures.Empty?)
                == "Cannot encode Optional<Empty>: the value writes nothing (an empty line 1 and no fields), so "
                + "it would read back as nil.")
        #expect(
            encodingMessage(Fixtures.Twice(value: "a"))
                == "Cannot encode two values under the field key \"a\" (or one inside the other).")
    }

    @Test func missingAndMalformedFields() {
        guard case .keyNotFound(let key, let context)? = decodingError(Fixtures.Login.self, "pw\nlogin: a\n")
        else {
            Issue.record("expected keyNotFound")
            return
        }
        #expect(key.stringValue == "port")
        #expect(context.debugDescription == "The entry has no field \"port\".")

        guard
            case .dataCorrupted(let bad)? = decodingError(
                Fixtures.Login.self, "pw\nlogin: a\nport: eighty\nadmin: no\n")
        else {
            Issue.record("expected dataCorrupted")
            return
        }
        #expect(bad.codingPath.map(\.stringValue) == ["port"])
        #expect(
            bad.debugDescription.hasPrefix(
                "The field \"port\" does not hold a valid Int: expected a whole number"))

        guard
            case .keyNotFound(let nestedKey, _)? = decodingError(
                Fixtures.Wrapper<Fixtures.Address>.self, "pw\n")
        else {
            Issue.record("expected keyNotFound for the missing object")
            return
        }
        // The whole object is missing: the error names it, not its first property.
        #expect(nestedKey.stringValue == "value")

        #expect(decodingError(Fixtures.Wrapper<Date>.self, "\nvalue: yesterday\n") != nil)
        #expect(decodingError(Fixtures.Wrapper<Data>.self, "\nvalue: not base64!\n") != nil)
        #expect(decodingError(Fixtures.Wrapper<Bool>.self, "\nvalue: maybe\n") != nil)
        #expect(decodingError(Fixtures.Wrapper<UInt8>.self, "\nvalue: 256\n") != nil)
        #expect(decodingError(Fixtures.Wrapper<Fixtures.Kind>.self, "\nvalue: other\n") != nil)
        guard
            case .typeMismatch(_, let mismatch)? = decodingError(
                Fixtures.Wrapper<[Fixtures.Pair]>.self, "\nvalue: x\n"
            )
        else {
            Issue.record("expected typeMismatch")
            return
        }
        #expect(
            mismatch.debugDescription
                == "Expected an object at \"value (value 1)\" but found the text of a field; the fields of "
                + "an array's objects are written under its indexes (key.0.field).")
    }
}
