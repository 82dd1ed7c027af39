/// A `tree -P` pattern (with `--ignore-case` when asked), the one matcher of names in coffer, matched as tree 2.1 matches it: `*` never crosses a `/`,
/// `?`, `[...]` (with `^` to negate, `a-z` ranges and `\` escapes), `|` between alternatives, and a
/// malformed pattern (an unterminated `[`, a `|` at either end) counts as a match.
package struct TreePattern: Sendable {
    private let pattern: [UInt8]
    private let ignoreCase: Bool
    /// For `*a*|*b*` (what `pass find a b` asks for): `a` and `b`, folded when the case is ignored. On a
    /// name without `/`, such a pattern matches exactly when one of them is in it.
    private let substrings: [[UInt8]]?

    /// Compiles `pattern`; `quickSubstrings: false` always runs the full matcher (for tests).
    package init(_ pattern: [UInt8], ignoreCase: Bool, quickSubstrings: Bool = true) {
        self.pattern = pattern
        self.ignoreCase = ignoreCase
        let special = Set("[]*?\\/|".utf8)
        var literals: [[UInt8]] = []
        for alternative in pattern.split(separator: UInt8(ascii: "|"), omittingEmptySubsequences: false) {
            let literal = alternative.dropFirst().dropLast()
            guard alternative.count > 2, alternative.first == UInt8(ascii: "*"),
                alternative.last == UInt8(ascii: "*"), !literal.contains(where: special.contains)
            else {
                literals = []
                break
            }
            literals.append(literal.map { ignoreCase ? Self.folded($0) : $0 })
        }
        substrings = literals.isEmpty || !quickSubstrings ? nil : literals
    }

    /// Whether `name` (a file name, or a relative path for folders) matches.
    package func matches(_ name: [UInt8], isDirectory: Bool) -> Bool {
        if let substrings, !name.contains(UInt8(ascii: "/")) {
            return substrings.contains { Self.contains(name, $0, ignoreCase: ignoreCase) }
        }
        return Self.match(name[...], pattern[...], isDirectory: isDirectory, ignoreCase: ignoreCase) != 0
    }

    /// Whether the pattern takes the quick way for names without `/`.
    package var isSubstringSearch: Bool { substrings != nil }

    /// `byte` with A-Z folded to a-z, as the matcher compares bytes when the case is ignored.
    private static func folded(_ byte: UInt8) -> UInt8 { (65...90).contains(byte) ? byte + 32 : byte }

    /// Whether `needle` (already folded when the case is ignored) occurs in `text`.
    private static func contains(_ text: [UInt8], _ needle: [UInt8], ignoreCase: Bool) -> Bool {
        guard needle.count <= text.count else { return false }
        return text.withUnsafeBufferPointer { text in
            needle.withUnsafeBufferPointer { needle in
                var start = 0
                while start + needle.count <= text.count {
                    var offset = 0
                    while offset < needle.count {
                        let byte = text[start + offset]
                        if (ignoreCase ? folded(byte) : byte) != needle[offset] { break }
                        offset += 1
                    }
                    if offset == needle.count { return true }
                    start += 1
                }
                return false
            }
        }
    }

    /// 1 on a match, 0 on a mismatch, -1 on a malformed pattern.
    private static func match(
        _ text: ArraySlice<UInt8>, _ pattern: ArraySlice<UInt8>, isDirectory: Bool, ignoreCase: Bool
    ) -> Int {
        if let bar = pattern.firstIndex(of: UInt8(ascii: "|")) {
            if bar == pattern.startIndex || bar == pattern.endIndex - 1 { return -1 }
            let left = match(text, pattern[..<bar], isDirectory: isDirectory, ignoreCase: ignoreCase)
            if left != 0 { return left }
            return match(text, pattern[(bar + 1)...], isDirectory: isDirectory, ignoreCase: ignoreCase)
        }
        func lower(_ byte: UInt8) -> UInt8 {
            ignoreCase && (65...90).contains(byte) ? byte + 32 : byte
        }
        // Reading past the end gives NUL, as the C strings tree works on do.
        func at(_ slice: ArraySlice<UInt8>, _ index: Int) -> UInt8 {
            index < slice.endIndex ? slice[index] : 0
        }
        var buffer = text.startIndex
        var cursor = pattern.startIndex
        var result = 1
        var previous: UInt8 = 0
        while at(pattern, cursor) != 0 && result != 0 {
            switch pattern[cursor] {
            case UInt8(ascii: "["):
                cursor += 1
                let setValue: Int
                if at(pattern, cursor) != UInt8(ascii: "^") {
                    setValue = 1
                    result = 0
                } else {
                    cursor += 1
                    setValue = 0
                }
                let current = lower(at(text, buffer))
                while at(pattern, cursor) != UInt8(ascii: "]") {
                    if at(pattern, cursor) == UInt8(ascii: "\\") { cursor += 1 }
                    if at(pattern, cursor) == 0 { return -1 }
                    if at(pattern, cursor + 1) == UInt8(ascii: "-") {
                        let low = at(pattern, cursor)
                        cursor += 2
                        if at(pattern, cursor) == UInt8(ascii: "\\") { cursor += 1 }
                        if current >= lower(low) && current <= lower(at(pattern, cursor)) {
                            result = setValue
                        }
                        if at(pattern, cursor) == 0 { cursor -= 1 }
                    } else if current == lower(at(pattern, cursor)) {
                        result = setValue
                    }
                    cursor += 1
                }
                buffer += 1
            case UInt8(ascii: "*"):
                cursor += 1
                if at(pattern, cursor) == 0 {
                    return text[min(buffer, text.endIndex)...].contains(UInt8(ascii: "/")) ? 0 : 1
                }
                result = 0
                let rest = pattern[cursor...]
                if at(pattern, cursor) == UInt8(ascii: "*") {
                    cursor += 1
                    if at(pattern, cursor) == 0 { return 1 }
                    let afterStars = pattern[cursor...]
                    while at(text, buffer) != 0 {
                        result = match(
                            text[buffer...], afterStars, isDirectory: isDirectory, ignoreCase: ignoreCase)
                        if result != 0 { break }
                        if previous == UInt8(ascii: "/") && at(pattern, cursor) == UInt8(ascii: "/")
                            && at(pattern, cursor + 1) != 0
                        {
                            result = match(
                                text[buffer...], pattern[(cursor + 1)...], isDirectory: isDirectory,
                                ignoreCase: ignoreCase)
                            if result != 0 { return result }
                        }
                        buffer += 1
                        while at(text, buffer) != 0 && at(text, buffer) != UInt8(ascii: "/") { buffer += 1 }
                    }
                    if result == 0 && (at(text, buffer) == 0 || at(text, buffer) == UInt8(ascii: "/")) {
                        result = match(
                            text[min(buffer, text.endIndex)...], afterStars, isDirectory: isDirectory,
                            ignoreCase: ignoreCase)
                    }
                    return result
                }
                while at(text, buffer) != 0 {
                    result = match(text[buffer...], rest, isDirectory: isDirectory, ignoreCase: ignoreCase)
                    buffer += 1
                    if result != 0 { break }
                    if at(text, buffer) == UInt8(ascii: "/") { break }
                }
                if result == 0 && (at(text, buffer) == 0 || at(text, buffer) == UInt8(ascii: "/")) {
                    result = match(
                        text[min(buffer, text.endIndex)...], rest, isDirectory: isDirectory,
                        ignoreCase: ignoreCase)
                }
                return result
            case UInt8(ascii: "?"):
                if at(text, buffer) == 0 { return 0 }
                buffer += 1
            case UInt8(ascii: "/"):
                if at(pattern, cursor + 1) == 0 && at(text, buffer) == 0 { return isDirectory ? 1 : 0 }
                result = at(text, buffer) == UInt8(ascii: "/") ? 1 : 0
                buffer += 1
            case UInt8(ascii: "\\"):
                cursor += 1
                result = lower(at(text, buffer)) == lower(at(pattern, cursor)) ? 1 : 0
                buffer += 1
            default:
                result = lower(at(text, buffer)) == lower(at(pattern, cursor)) ? 1 : 0
                buffer += 1
            }
            previous = at(pattern, cursor)
            cursor += 1
            if result < 1 { return result }
        }
        return at(text, buffer) == 0 ? result : 0
    }
}

extension TreePattern {
    /// What pass's `find TERM...` searches for: `*TERM1*|*TERM2*...`, ignoring case.
    package static func search(_ terms: [String]) -> TreePattern {
        TreePattern(Array(terms.map { "*" + $0 + "*" }.joined(separator: "|").utf8), ignoreCase: true)
    }
}
