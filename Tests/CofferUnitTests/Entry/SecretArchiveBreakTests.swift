import CofferTestSupport
import Testing

@testable import Coffer

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Values built to collide with the archive's syntax, as a user could write them.
@Suite("The Codable archive against values that collide with its syntax")
struct SecretArchiveBreakTests {
    struct OddKeys: Codable, Equatable {
        var empty: String
        var dot: String
        var dotted: [String: String]
        var hash: Int
        var password: String
        var zero: [String]
        var colon: String?
        enum CodingKeys: String, CodingKey {
            case empty = ""
            case dot = "."
            case dotted = "a.b"
            case hash = "#"
            case password = "Password"
            case zero = "0"
            case colon = "url:"
        }
    }

    class Base: Codable {
        var id: Int
        init(id: Int) { self.id = id }
    }

    final class Derived: Base, @unchecked Sendable {
        var name: String
        init(id: Int, name: String) {
            self.name = name
            super.init(id: id)
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

    private func text<T: Encodable>(_ value: T) throws -> String {
        String(decoding: try SecretEncoder().encodeBytes(value), as: UTF8.self)
    }

    private func roundTrip<T: Codable>(_ value: T) throws -> T {
        try SecretDecoder().decode(T.self, from: try SecretEncoder().encode(value))
    }

    @Test func codingKeysThatAreSyntax() throws {
        let value = OddKeys(
            empty: "e", dot: "d", dotted: ["c.d": "x", "": "y"], hash: 1, password: "field, not line 1",
            zero: ["z"], colon: "https://example.com")
        #expect(
            try text(value) == """

                "": e
                ".": d
                "a.b".\"\": y
                "a.b"."c.d": x
                "#": 1
                Password: field, not line 1
                0: z
                "url\\u003A": https://example.com

                """)
        #expect(try roundTrip(value) == value)
    }

    @Test func superEncoderAndInheritance() throws {
        let value = Derived(id: 7, name: "n")
        #expect(try text(value) == "\nname: n\nsuper.id: 7\n")
        let decoded = try roundTrip(value)
        #expect(decoded.id == 7 && decoded.name == "n")
    }

    @Test func nilsInDictionariesAndArraysOfOptionals() throws {
        let dictionary: [String: String?] = ["a": nil, "b": "~", "c": ""]
        #expect(try text(dictionary) == "\na: ~\nb: \\~\nc:\n")
        #expect(try roundTrip(dictionary) == dictionary)
        let nested: [[String?]?] = [nil, [nil], [], ["x"]]
        #expect(try roundTrip(nested) == nested)
        // The inner nil of a nested optional inside an array reads back as nil, as with JSON.
        #expect(try roundTrip([String??.some(nil)]) == [String??.none])
    }

    @Test func aHandEditedKeyWithBrokenQuotesIsReadAsWritten() throws {
        let decoded = try SecretDecoder().decode(
            [String: String].self, from: Array("\n\"open: a\n\"x\"y: b\n\"ok\" . \"k\": c\n".utf8))
        #expect(decoded == ["\"open": "a", "\"x\"y": "b", "ok.k": "c"])
    }

    @Test func veryLongAndVeryDeepValues() throws {
        let long = String(repeating: "x", count: 100_000)
        #expect(try roundTrip(["k": long]) == ["k": long])
        indirect enum Chain: Codable, Equatable {
            case end
            case next(Chain)
        }
        var chain = Chain.end
        for _ in 0..<200 { chain = .next(chain) }
        #expect(try roundTrip(chain) == chain)
        #expect(try text(Chain.next(.end)) == "\nnext._0.end: {}\n")
    }
}
