import Coffer

/// `grep --color=always [-iEFwvcn] PATTERN` over one plaintext, in the process: glibc's `regcomp` and
/// `regexec` (the regex engine GNU grep's own follows) instead of one `grep` process per entry.
///
/// It takes only what it can answer byte for byte as GNU grep does and declines the rest, for which the
/// caller runs grep itself: any other option or a second operand, `GREP_COLOR(S)` or `GREP_OPTIONS` in the
/// environment, patterns grep would warn about or read differently (repetition at the start of an
/// expression, intervals, unknown escapes, equivalence classes, a newline), bracket ranges outside the C
/// collation, and plaintexts grep would call binary (a NUL byte, text that is not valid in the locale's
/// encoding) or that ignoring case or matching words would have to read beyond ASCII.
struct InProcessGrep: Sendable {
    private enum Syntax: Sendable {
        case basic, extended, fixed
    }

    private let pattern: [UInt8]
    private let syntax: Syntax
    private let ignoreCase: Bool
    private let words: Bool
    private let invert: Bool
    private let count: Bool
    private let lineNumbers: Bool
    /// Whether the locale's text is UTF-8 (otherwise only ASCII plaintexts are taken).
    private let utf8: Bool

    /// grep's output and exit status for one plaintext.
    struct Result {
        /// What grep would print on standard output.
        var output: [UInt8]
        /// grep's status: 0 when a line was selected, 1 when none was.
        var status: Int32
    }

    /// The matcher for grep's `arguments`, or `nil` when grep itself has to run.
    init?(_ arguments: [String], environment: [String: String]) {
        for name in ["GREP_COLOR", "GREP_COLORS", "GREP_OPTIONS"] where environment[name] != nil {
            return nil
        }
        var syntax: Syntax?
        var flags = Set<UInt8>()
        var operands: [String] = []
        var optionsEnded = false
        for argument in arguments {
            let bytes = Array(argument.utf8)
            if optionsEnded || bytes.count < 2 || bytes[0] != UInt8(ascii: "-") {
                operands.append(argument)
                if environment["POSIXLY_CORRECT"] != nil { optionsEnded = true }
                continue
            }
            if argument == "--" {
                optionsEnded = true
                continue
            }
            for letter in bytes.dropFirst() {
                switch letter {
                case UInt8(ascii: "E"), UInt8(ascii: "F"):
                    let chosen: Syntax = letter == UInt8(ascii: "E") ? .extended : .fixed
                    // grep refuses two different matchers.
                    if let syntax, syntax != chosen { return nil }
                    syntax = chosen
                case UInt8(ascii: "i"), UInt8(ascii: "w"), UInt8(ascii: "v"), UInt8(ascii: "c"),
                    UInt8(ascii: "n"):
                    flags.insert(letter)
                default:
                    return nil
                }
            }
        }
        guard operands.count == 1 else { return nil }
        let pattern = Array(operands[0].utf8)
        // grep gives up at once on `-v ''` (no line can be selected) and prints nothing, not even a count.
        if pattern.isEmpty && flags.contains(UInt8(ascii: "v")) { return nil }
        let codeset = String(cString: nl_langinfo(nl_item(CODESET)))
        let utf8 = codeset == "UTF-8" || codeset == "utf8"
        let ascii = pattern.allSatisfy { $0 < 0x80 }
        guard !pattern.contains(UInt8(ascii: "\n")), ascii || (utf8 && !flags.contains(UInt8(ascii: "i")))
        else {
            return nil
        }
        let resolved = syntax ?? .basic
        if resolved != .fixed {
            guard Self.isPlain(pattern, extended: resolved == .extended) else { return nil }
            // With a back-reference grep decides `-w` by its search loop alone; that is left to grep.
            if flags.contains(UInt8(ascii: "w")),
                zip(pattern, pattern.dropFirst()).contains(where: {
                    $0 == UInt8(ascii: "\\") && (49...57).contains($1)
                })
            {
                return nil
            }
            if pattern.contains(UInt8(ascii: "[")) && !Self.collatesBytewise { return nil }
        }
        self.pattern = pattern
        self.syntax = resolved
        ignoreCase = flags.contains(UInt8(ascii: "i"))
        words = flags.contains(UInt8(ascii: "w"))
        invert = flags.contains(UInt8(ascii: "v"))
        count = flags.contains(UInt8(ascii: "c"))
        lineNumbers = flags.contains(UInt8(ascii: "n"))
        self.utf8 = utf8
    }

    /// Whether ranges in brackets mean what they mean in the C locale (byte order).
    private static var collatesBytewise: Bool {
        guard let name = setlocale(LC_COLLATE, nil) else { return true }
        return ["C", "POSIX", "C.UTF-8", "C.utf8"].contains(String(cString: name))
    }

    /// Whether a `-G` or `-E` pattern stays within what grep and glibc's regex read alike, with no warning
    /// from grep: no repetition at the start of an expression or of an anchor (`^`, `$`, `\<`, `\>`,
    /// `\b`, `\B`), no interval, only the escapes both know, bracket expressions closed and holding only
    /// the usual `[:classes:]`.
    private static func isPlain(_ pattern: [UInt8], extended: Bool) -> Bool {
        let escapes = Set(".*[]^$\\wWsSbB<>123456789()|+?".utf8)
        let anchors = Set("<>bB".utf8)
        var index = 0
        // Whether the item before could not be repeated: nothing (the start of an expression) or an anchor.
        var unrepeatable = true
        while index < pattern.count {
            let byte = pattern[index]
            let next: UInt8? = index + 1 < pattern.count ? pattern[index + 1] : nil
            let repetition =
                extended
                ? Set("*+?{".utf8).contains(byte)
                : byte == UInt8(ascii: "*")
                    || (byte == UInt8(ascii: "\\") && next.map { Set("+?{".utf8).contains($0) } == true)
            if repetition && unrepeatable { return false }
            if byte == UInt8(ascii: "{") && extended { return false }
            switch byte {
            case UInt8(ascii: "\\"):
                guard let next, escapes.contains(next) else { return false }
                // In a basic expression `\(` and `\|` start an expression; in either, `\<` and the like are
                // anchors.
                unrepeatable =
                    anchors.contains(next)
                    || (!extended && (next == UInt8(ascii: "(") || next == UInt8(ascii: "|")))
                index += 2
                continue
            case UInt8(ascii: "^"), UInt8(ascii: "$"):
                unrepeatable = true
            case UInt8(ascii: "("), UInt8(ascii: "|"):
                unrepeatable = extended
            case UInt8(ascii: "["):
                guard let close = bracketEnd(pattern, from: index) else { return false }
                index = close + 1
                unrepeatable = false
                continue
            default:
                unrepeatable = false
            }
            index += 1
        }
        return true
    }

    /// The index of the `]` closing the bracket expression that starts at `start`, or `nil` when it is not
    /// closed or holds something other than the usual `[:classes:]` (`[=a=]`, `[.a.]`, unknown classes), or
    /// is `[:class:]` without the outer brackets (which grep refuses).
    private static func bracketEnd(_ pattern: [UInt8], from start: Int) -> Int? {
        let classes: Set<[UInt8]> = Set(
            [
                "alpha", "digit", "alnum", "upper", "lower", "space", "blank", "punct", "print", "graph",
                "cntrl",
                "xdigit",
            ].map { Array($0.utf8) })
        var cursor = start + 1
        if cursor < pattern.count && pattern[cursor] == UInt8(ascii: "^") { cursor += 1 }
        let contentStart = cursor
        if cursor < pattern.count && pattern[cursor] == UInt8(ascii: "]") { cursor += 1 }
        while cursor < pattern.count && pattern[cursor] != UInt8(ascii: "]") {
            if pattern[cursor] == UInt8(ascii: "["), cursor + 1 < pattern.count {
                let kind = pattern[cursor + 1]
                if kind == UInt8(ascii: "=") || kind == UInt8(ascii: ".") { return nil }
                if kind == UInt8(ascii: ":") {
                    guard
                        let close = find(
                            [UInt8(ascii: ":"), UInt8(ascii: "]")], in: pattern, from: cursor + 2),
                        classes.contains(Array(pattern[(cursor + 2)..<close]))
                    else { return nil }
                    cursor = close + 2
                    continue
                }
            }
            cursor += 1
        }
        guard cursor < pattern.count else { return nil }
        let content = pattern[contentStart..<cursor]
        if content.first == UInt8(ascii: ":") && content.last == UInt8(ascii: ":") { return nil }
        return cursor
    }

    private static func find(_ needle: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        guard start <= bytes.count - needle.count else { return nil }
        return (start...(bytes.count - needle.count)).first {
            Array(bytes[$0..<($0 + needle.count)]) == needle
        }
    }

    /// grep's answer for `text`, or `nil` when grep itself has to read it.
    func search(_ text: SecureBytes) -> Result? {
        text.withUnsafeBytes { raw -> Result? in
            let bytes = UnsafeBufferPointer(
                start: raw.baseAddress?.assumingMemoryBound(to: UInt8.self), count: raw.count)
            guard !bytes.contains(0) else { return nil }
            let ascii = bytes.allSatisfy { $0 < 0x80 }
            if !ascii {
                guard utf8, !ignoreCase, !words, TextBytes.isValidUTF8(bytes) else { return nil }
            }
            guard let regex = Regex(pattern, syntax: syntax, ignoreCase: ignoreCase) else { return nil }
            var selector: Regex?
            if words {
                guard let wrapped = Regex(pattern, syntax: syntax, ignoreCase: ignoreCase, asWord: true)
                else {
                    return nil
                }
                selector = wrapped
            }
            return search(bytes, regex, selector: selector)
        }
    }

    /// Each line is selected by `selector` when there is one (for `-w`: the pattern between non-word
    /// characters or the line's ends, as grep's own matcher decides a line), else by `regex`; matches are
    /// coloured by grep's search loop.
    private func search(_ bytes: UnsafeBufferPointer<UInt8>, _ regex: Regex, selector: Regex?) -> Result {
        var output: [UInt8] = []
        var selected = 0
        var lineNumber = 0
        var start = 0
        // One line at a time, in a NUL-terminated copy that is wiped afterwards.
        var line = [CChar](repeating: 0, count: 256)
        func wipe() { line.withUnsafeMutableBytes { wipeMemory($0.baseAddress, count: $0.count) } }
        defer { wipe() }
        while start < bytes.count {
            let end = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count
            lineNumber += 1
            let length = end - start
            if line.count < length + 1 {
                wipe()
                line = [CChar](repeating: 0, count: length + 1)
            }
            for offset in 0..<length { line[offset] = CChar(bitPattern: bytes[start + offset]) }
            line[length] = 0
            let found = line.withUnsafeBufferPointer { line in
                if let selector {
                    return selector.search(line.baseAddress!, from: 0, to: length, notEndOfLine: false) != nil
                }
                return firstMatch(line.baseAddress!, length: length, from: 0, regex) != nil
            }
            if found != invert {
                selected += 1
                if !count {
                    if lineNumbers {
                        output += Self.green + Array(String(lineNumber).utf8) + Self.end + Self.separator
                    }
                    if invert {
                        output += bytes[start..<end]
                    } else {
                        line.withUnsafeBufferPointer {
                            colour($0.baseAddress!, length: length, regex, into: &output)
                        }
                    }
                    output.append(UInt8(ascii: "\n"))
                }
            }
            start = end + 1
        }
        if count { output += Array("\(selected)\n".utf8) }
        return Result(output: output, status: selected > 0 ? 0 : 1)
    }

    private static let red = Array("\u{1b}[01;31m\u{1b}[K".utf8)
    private static let green = Array("\u{1b}[32m\u{1b}[K".utf8)
    private static let end = Array("\u{1b}[m\u{1b}[K".utf8)
    private static let separator = Array("\u{1b}[36m\u{1b}[K:\u{1b}[m\u{1b}[K".utf8)

    /// The line with each match coloured, as grep's `print_line_middle` prints it: empty matches move one
    /// byte on and colour nothing.
    private func colour(_ line: UnsafePointer<CChar>, length: Int, _ regex: Regex, into output: inout [UInt8])
    {
        let raw = UnsafeRawPointer(line).assumingMemoryBound(to: UInt8.self)
        var printed = 0
        var cursor = 0
        while cursor < length,
            let (matchStart, matchEnd) = firstMatch(line, length: length, from: cursor, regex)
        {
            if matchStart == length { break }
            if matchEnd == matchStart {
                cursor = matchStart + 1
                continue
            }
            output += UnsafeBufferPointer(start: raw + printed, count: matchStart - printed)
            output += Self.red
            output += UnsafeBufferPointer(start: raw + matchStart, count: matchEnd - matchStart)
            output += Self.end
            printed = matchEnd
            cursor = matchEnd
        }
        output += UnsafeBufferPointer(start: raw + printed, count: length - printed)
    }

    /// The first match at or after `from` (for `-w`, the first that stands as a word, found as grep looks
    /// for it: a shorter match at the same place, then further on).
    private func firstMatch(_ line: UnsafePointer<CChar>, length: Int, from: Int, _ regex: Regex) -> (
        Int, Int
    )? {
        guard var (start, end) = regex.search(line, from: from, to: length, notEndOfLine: false) else {
            return nil
        }
        guard words else { return (start, end) }
        let raw = UnsafeRawPointer(line).assumingMemoryBound(to: UInt8.self)
        func isWordByte(_ position: Int) -> Bool {
            guard position >= 0 && position < length else { return false }
            let byte = raw[position]
            return byte == UInt8(ascii: "_") || isalnum(Int32(byte)) != 0
        }
        while true {
            if !isWordByte(end) && !isWordByte(start - 1) { return (start, end) }
            if end > start, let shorter = regex.search(line, from: start, to: end - 1, notEndOfLine: true),
                shorter.0 == start, shorter.1 > start
            {
                end = shorter.1
                continue
            }
            guard start < length,
                let next = regex.search(line, from: start + 1, to: length, notEndOfLine: false)
            else { return nil }
            (start, end) = next
        }
    }

    /// A compiled `regex_t`, freed with the value.
    private final class Regex {
        private var compiled = regex_t()

        /// Compiles `pattern`; `asWord` wraps it as grep's `-w` line test: between the line's start or a
        /// non-word character and a non-word character or the line's end.
        init?(_ pattern: [UInt8], syntax: Syntax, ignoreCase: Bool, asWord: Bool = false) {
            var source = pattern
            if syntax == .fixed {
                // A fixed string as a basic expression with every special character escaped.
                source = pattern.flatMap { byte in
                    Set(".[]*^$\\".utf8).contains(byte) ? [UInt8(ascii: "\\"), byte] : [byte]
                }
            }
            if asWord {
                source =
                    syntax == .extended
                    ? Array("(^|[^[:alnum:]_])(".utf8) + source + Array(")([^[:alnum:]_]|$)".utf8)
                    : Array("\\(^\\|[^[:alnum:]_]\\)\\(".utf8) + source
                        + Array("\\)\\([^[:alnum:]_]\\|$\\)".utf8)
            }
            var flags = syntax == .extended ? REG_EXTENDED : 0
            if ignoreCase { flags |= REG_ICASE }
            let text = source.map { CChar(bitPattern: $0) } + [0]
            guard regcomp(&compiled, text, flags) == 0 else { return nil }
        }

        deinit { regfree(&compiled) }

        /// The leftmost-longest match within `from..<to` of the line (the bytes before `from` still count
        /// as context), as offsets in the line.
        func search(_ line: UnsafePointer<CChar>, from: Int, to: Int, notEndOfLine: Bool) -> (Int, Int)? {
            var match = regmatch_t()
            match.rm_so = regoff_t(from)
            match.rm_eo = regoff_t(to)
            let flags = REG_STARTEND | (notEndOfLine ? REG_NOTEOL : 0)
            guard regexec(&compiled, line, 1, &match, flags) == 0 else { return nil }
            return (Int(match.rm_so), Int(match.rm_eo))
        }
    }
}
