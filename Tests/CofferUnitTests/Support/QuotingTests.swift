import CofferTestSupport
import Testing

@testable import Coffer

/// ``Quoting``: plain text passes as it is; anything that could drive a terminal or forge a line is
/// escaped inside double quotes, and the escaped text holds no control byte at all.
@Suite("Quoting repository text for coffer's messages")
struct QuotingTests {
    @Test(arguments: [
        ("web/mail", "web/mail"), ("team/büro konto", "team/büro konto"), ("пароль", "пароль"),
        ("a\nb", "\"a\\nb\""), ("evil\u{1b}[31m", "\"evil\\033[31m\""), ("tab\there", "\"tab\\there\""),
        ("quote\"d", "\"quote\\\"d\""), ("back\\slash", "\"back\\\\slash\""), ("del\u{7f}", "\"del\\177\""),
        ("csi\u{9b}2J", "\"csi\\302\\2332J\""), ("rlo\u{202e}txt", "\"rlo\\342\\200\\256txt\""),
        ("bell\u{07}", "\"bell\\a\""), ("cr\r", "\"cr\\r\""),
    ])
    func knownCases(_ text: String, _ expected: String) {
        #expect(Quoting.quoted(text) == expected)
    }

    @Test func bytesThatAreNotUTF8AreEscaped() {
        #expect(Quoting.quoted(bytes: [0x61, 0xff, 0x62]) == "\"a\\377b\"")
        #expect(Quoting.quoted(bytes: [0xc3]) == "\"\\303\"")
        // An overlong encoding of '/' and a surrogate are not UTF-8 either.
        #expect(Quoting.quoted(bytes: [0xc0, 0xaf]) == "\"\\300\\257\"")
        #expect(Quoting.quoted(bytes: [0xed, 0xa0, 0x80]) == "\"\\355\\240\\200\"")
    }

    @Test func inQuotesAlwaysQuotesOnce() {
        #expect(Quoting.inQuotes("Alice <a@x>") == "\"Alice <a@x>\"")
        #expect(Quoting.inQuotes("Eve\u{1b}[2J") == "\"Eve\\033[2J\"")
        #expect(Quoting.inQuotes("\"quoted\"") == "\"\\\"quoted\\\"\"")
    }

    /// Random bytes: the result never holds a control byte (C0, DEL, C1 or a bidirectional control),
    /// and text that needs no quoting comes back as it was.
    @Test(arguments: 0..<20)
    func randomBytesNeverLeaveAControlCharacter(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        let bytes = (0..<Int.random(in: 0...40, using: &random)).map { _ in
            UInt8.random(in: 0...255, using: &random)
        }
        let quoted = Quoting.quoted(bytes: bytes)
        for scalar in quoted.unicodeScalars {
            #expect(scalar.value >= 0x20 && scalar.value != 0x7f && !(0x80...0x9f).contains(scalar.value))
            #expect(![0x61c, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e].contains(scalar.value))
        }
        if !quoted.hasPrefix("\"") { #expect(Array(quoted.utf8) == bytes) }
    }
}
