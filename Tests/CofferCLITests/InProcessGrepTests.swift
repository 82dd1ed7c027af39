import Coffer
import CofferTestSupport
import Testing

@testable import CofferCLI

/// The in-process grep against GNU grep itself: seeded patterns, options and texts, every case it takes
/// compared byte for byte (output and status) with `grep --color=always` on the same text.
@Suite("In-process grep agrees with GNU grep")
struct InProcessGrepTests {
    private static let tokens = [
        "a", "b", "A", "_", " ", "-", "1", "ab", "x", ".", "*", "^", "$", "[ab]", "[^a]", "[a-c]", "[]a]",
        "[[:digit:]]", "[[:space:]]", "[:alpha:]", "\\w", "\\W", "\\b", "\\<", "\\>", "\\.", "\\(a\\)", "(a)",
        "a|b", "a\\|b", "+", "?", "\\+", "\\?", "\\1", "{2}", "\\{2\\}", "\\s", "\\x", "[[=a=]]", "|", "()",
        "\\", "é", "[",
    ]
    private static let options = [
        "-i", "-E", "-F", "-w", "-v", "-c", "-n", "-in", "-wv", "-Ec", "-o", "-x", "--",
    ]
    private static let characters = Array("aAbB_ -1.x\t*[]()|\\".utf8)

    /// One generated case: grep's arguments and the text.
    private static func generate(_ random: inout SeededRandom) -> (arguments: [String], text: [UInt8]) {
        let pattern = (0..<Int.random(in: 0...4, using: &random)).map { _ in random.pick(tokens) }.joined()
        var arguments = (0..<Int.random(in: 0...3, using: &random)).map { _ in random.pick(options) }
        arguments.insert(pattern, at: Int.random(in: 0...arguments.count, using: &random))
        if pattern.hasPrefix("-") && !arguments.contains("--") { arguments.insert("--", at: 0) }
        var text: [UInt8] = []
        for _ in 0..<Int.random(in: 0...5, using: &random) {
            text += (0..<Int.random(in: 0...12, using: &random)).map { _ in random.pick(characters) }
            text.append(UInt8(ascii: "\n"))
        }
        if random.chance(0.3) {
            text += (0..<Int.random(in: 1...6, using: &random)).map { _ in random.pick(characters) }
        }
        if random.chance(0.05) { text += Array("é".utf8) }
        return (arguments, text)
    }

    @Test("seeded patterns, options and texts in the C locale")
    func agrees() throws {
        var random = SeededRandom(seed: 20_261_201)
        var taken = 0
        // `COFFER_GREP_CASES` runs more (a soak); the seed stays the same, so the first 1,500 are always these.
        let total = getenv("COFFER_GREP_CASES").flatMap { Int(String(cString: $0)) } ?? 1500
        for index in 0..<total {
            let (arguments, text) = Self.generate(&random)
            guard let matcher = InProcessGrep(arguments, environment: [:]),
                let result = matcher.search(SecureBytes(text))
            else { continue }
            taken += 1
            let grep = try ChildProcess(
                ["/bin/sh", "-c", "exec grep --color=always \"$@\"", "grep"] + arguments,
                environment: ["LC_ALL=C", "PATH=/usr/bin:/bin"]
            ).run(input: text)
            let shown =
                "case \(index): grep \(arguments) on \(String(decoding: text, as: UTF8.self).debugDescription)"
            #expect(grep.standardError.isEmpty, "\(shown): grep said \(grep.errorText)")
            #expect(result.status == grep.status, "\(shown)")
            #expect(
                String(decoding: result.output, as: UTF8.self)
                    == String(decoding: grep.standardOutput, as: UTF8.self),
                "\(shown)")
        }
        // Most cases are the common options: the comparison has to have covered them.
        #expect(taken > total / 3, "only \(taken) of \(total) cases ran in the process")
        print("in-process grep: \(taken) of \(total) cases compared with grep")
    }

    @Test("what it declines: other options, colour settings, binary text, warnings grep would print")
    func declines() {
        #expect(InProcessGrep(["-A1", "x"], environment: [:]) == nil)
        #expect(InProcessGrep(["x", "file"], environment: [:]) == nil)
        #expect(InProcessGrep(["-E", "-F", "x"], environment: [:]) == nil)
        #expect(InProcessGrep(["x"], environment: ["GREP_COLORS": "mt=01;32"]) == nil)
        #expect(InProcessGrep(["*x"], environment: [:]) == nil)
        #expect(InProcessGrep(["a\\x"], environment: [:]) == nil)
        #expect(InProcessGrep(["[:space:]"], environment: [:]) == nil)
        #expect(InProcessGrep(["-E", "a{2}"], environment: [:]) == nil)
        #expect(InProcessGrep(["a\nb"], environment: [:]) == nil)
        let plain = InProcessGrep(["-i", "pass"], environment: [:])
        #expect(plain != nil)
        #expect(plain?.search(SecureBytes([0x70, 0, 0x61])) == nil)
        #expect(plain?.search(SecureBytes(Array("pass\n".utf8)))?.status == 0)
    }
}
