/// A shell-style pattern (`*`, `?`, `[...]`, `|` between alternatives), as `tree -P` matches names.
package struct GlobPattern: Sendable {
    private let alternatives: [[UInt8]]
    private let caseInsensitive: Bool

    /// Compiles `pattern`; with `caseInsensitive` ASCII letters match either case.
    package init(_ pattern: String, caseInsensitive: Bool = false) {
        self.caseInsensitive = caseInsensitive
        alternatives = pattern.split(separator: "|", omittingEmptySubsequences: false).map {
            caseInsensitive ? Array($0.utf8).map(Self.lowered) : Array($0.utf8)
        }
    }

    /// Whether `name` matches one of the alternatives.
    package func matches(_ name: String) -> Bool {
        let text = caseInsensitive ? Array(name.utf8).map(Self.lowered) : Array(name.utf8)
        return alternatives.contains { Self.match($0[...], text[...]) }
    }

    private static func lowered(_ byte: UInt8) -> UInt8 { (65...90).contains(byte) ? byte + 32 : byte }

    private static func match(_ pattern: ArraySlice<UInt8>, _ text: ArraySlice<UInt8>) -> Bool {
        var pattern = pattern
        var text = text
        while let head = pattern.first {
            switch head {
            case UInt8(ascii: "*"):
                pattern = pattern.dropFirst()
                if pattern.isEmpty { return true }
                while true {
                    if match(pattern, text) { return true }
                    if text.isEmpty { return false }
                    text = text.dropFirst()
                }
            case UInt8(ascii: "?"):
                guard !text.isEmpty else { return false }
                pattern = pattern.dropFirst()
                text = text.dropFirst()
            case UInt8(ascii: "["):
                guard let byte = text.first, let (matched, rest) = matchClass(pattern.dropFirst(), byte)
                else {
                    return false
                }
                guard matched else { return false }
                pattern = rest
                text = text.dropFirst()
            case UInt8(ascii: "\\") where pattern.count > 1:
                let literal = pattern[pattern.index(after: pattern.startIndex)]
                guard text.first == literal else { return false }
                pattern = pattern.dropFirst(2)
                text = text.dropFirst()
            default:
                guard text.first == head else { return false }
                pattern = pattern.dropFirst()
                text = text.dropFirst()
            }
        }
        return text.isEmpty
    }

    /// Matches `byte` against a bracket expression starting after `[`; returns the rest after `]`.
    private static func matchClass(_ pattern: ArraySlice<UInt8>, _ byte: UInt8) -> (Bool, ArraySlice<UInt8>)?
    {
        var rest = pattern
        var negated = false
        if let first = rest.first, first == UInt8(ascii: "!") || first == UInt8(ascii: "^") {
            negated = true
            rest = rest.dropFirst()
        }
        var matched = false
        var first = true
        while let current = rest.first {
            if current == UInt8(ascii: "]") && !first {
                return (matched != negated, rest.dropFirst())
            }
            first = false
            rest = rest.dropFirst()
            if rest.count >= 2, rest.first == UInt8(ascii: "-"),
                rest[rest.index(after: rest.startIndex)] != UInt8(ascii: "]")
            {
                let upper = rest[rest.index(after: rest.startIndex)]
                if current <= byte && byte <= upper { matched = true }
                rest = rest.dropFirst(2)
            } else if current == byte {
                matched = true
            }
        }
        return nil
    }
}
