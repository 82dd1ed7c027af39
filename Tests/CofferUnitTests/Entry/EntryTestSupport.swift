import CofferTestSupport

/// Generates entry bytes that exercise the parser: fields in odd spellings, multi-line
/// blocks, otpauth lines, `\r\n`, tabs, blank lines, random and non-UTF-8 bytes, and a missing
/// final newline.
enum EntryInputGenerator {
    static let lineFragments: [String] = [
        "hunter2", "correct horse battery staple", "login: alice", "Login:alice", "LOGIN :  alice",
        "user:bob ", "email:\tcarol@example.com", "url: https://example.com/login?x=1",
        "url:https://example.com", "https://example.com", "otpauth://totp/Example:alice?secret=JBSWY3DP",
        "OTPAUTH://hotp/x?secret=A", "otpauth:/not-a-uri", "notes: |", "notes:|", "notes: |  ", "key: |",
        "  indented line", "    deeper line", "\tTabbed line", " ", "  ", "\t", "", "|", ":", "::", "key:",
        "key: value: with: colons", " key: leading blank", "key : ", "a.b.c: dotted", "password: in a field",
        "free text without a colon", "# comment", "---", "é: ü", "ключ: значение", "emoji: 🔑",
        "notes: |\n  one\n\n  two", "key: |\r\n  crlf block\r\n   more\r\n", "k:|\n\ttab block\n\t  deeper",
        "notes: |\n  \n  after empty", "a: |\n  x\nb: |\n  y",
    ]

    static let separators: [[UInt8]] = [[0x0A], [0x0A], [0x0A], [0x0D, 0x0A], [0x0D], [0x09], []]

    static func randomBytes(_ random: inout SeededRandom) -> [UInt8] {
        let count = Int.random(in: 0...12, using: &random)
        let alphabet: [UInt8] = [
            0x0A, 0x0D, 0x09, 0x20, 0x3A, 0x7C, 0x2E, 0x2F, 0x61, 0x4B, 0x00, 0x80, 0xC3, 0xFF,
        ]
        return (0..<count).map { _ in
            random.chance(0.5) ? random.pick(alphabet) : UInt8.random(in: 0...255, using: &random)
        }
    }

    static func bytes(_ random: inout SeededRandom) -> [UInt8] {
        let pieces = Int.random(in: 0...14, using: &random)
        var output: [UInt8] = []
        for index in 0..<pieces {
            if index > 0 { output += random.pick(separators) }
            switch Int.random(in: 0..<10, using: &random) {
            case 0: output += randomBytes(&random)
            case 1: output += [0xFF, 0xFE, 0xC3]
            default: output += Array(random.pick(lineFragments).utf8)
            }
        }
        if random.chance(0.6) { output += random.pick(separators) }
        return output
    }

    static let keys = [
        "login", "LOGIN", "url", "notes", "key", "password", "new", "a.b.c", "é", "User Name", "otpauth",
    ]

    static func value(_ random: inout SeededRandom) -> String {
        if random.chance(0.3) {
            return random.pick([
                "", "x", "|", "| ", "a b  ", "multi\nline", "\nlead", "trail\n", "a\n\nb", "\n", "  x", "x\r",
                "a\r\nb", "a\rb", "line\n  indented\n\tTab", "otpauth://totp/x", "key: value",
            ])
        }
        let characters: [Character] = [
            "a", "Z", "1", " ", " ", "\t", "\n", "\n", ":", "|", "é", "🔑", "-", "\r",
        ]
        let count = Int.random(in: 0...10, using: &random)
        return String((0..<count).map { _ in random.pick(characters) })
    }
}
