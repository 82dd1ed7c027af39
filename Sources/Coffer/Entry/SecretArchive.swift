/// How the Codable archive spells keys and values inside pass's field syntax (coffer-store(5)).
///
/// A field key is a path of components joined with `.`; an array element's component is its index
/// (`servers.0.host`). A component that is empty, starts with `#`, starts or ends with a blank, or holds
/// `.`, `"`, `\`, `:` or a control character is written in double quotes with backslash escapes
/// (`extra."github.com"`); every other component is written as it is.
///
/// A value is written as it is, except:
/// - `~`, `[]` and `{}` stand for nil, an empty array and an empty object;
/// - a text that, after any leading backslashes, is one of those three (blanks after it allowed), starts
///   with a blank, or (when it has leading backslashes) starts with `"`, gets one more leading backslash;
/// - a text with a carriage return at the end of a line is written as `\` and a quoted string.
enum SecretArchive {
    static let nilMarker = "~"
    static let emptyArrayMarker = "[]"
    static let emptyObjectMarker = "{}"

    // MARK: - Keys

    /// The spelling of one key component.
    static func quotedComponent(_ component: String) -> String {
        guard componentNeedsQuotes(component) else { return component }
        return quoted(component, escapingColon: true)
    }

    /// The field key of a path of components.
    static func key(_ components: [String]) -> String {
        components.map(quotedComponent).joined(separator: ".")
    }

    private static func componentNeedsQuotes(_ component: String) -> Bool {
        guard let first = component.unicodeScalars.first, let last = component.unicodeScalars.last else {
            return true
        }
        if first == "#" || first == " " || first == "\t" || last == " " || last == "\t" { return true }
        return component.unicodeScalars.contains { scalar in
            scalar == "." || scalar == "\"" || scalar == "\\" || scalar == ":" || scalar.value < 0x20
                || scalar.value == 0x7F
        }
    }

    /// The components of a field key as written, or read by hand: blanks around components are
    /// ignored, a component in double quotes is unescaped, and a malformed one is taken as written.
    static func components(of key: String) -> [String] {
        let scalars = Array(key.unicodeScalars)
        var result: [String] = []
        var index = 0
        func isBlank(_ scalar: Unicode.Scalar) -> Bool { scalar == " " || scalar == "\t" }
        while true {
            while index < scalars.count, isBlank(scalars[index]) { index += 1 }
            let start = index
            if index < scalars.count, scalars[index] == "\"",
                let (text, end) = parseQuoted(scalars, from: index, colonEscaped: true)
            {
                var after = end
                while after < scalars.count, isBlank(scalars[after]) { after += 1 }
                if after == scalars.count || scalars[after] == "." {
                    result.append(text)
                    index = after
                    if index == scalars.count { return result }
                    index += 1
                    continue
                }
            }
            index = start
            while index < scalars.count, scalars[index] != "." { index += 1 }
            var end = index
            while end > start, isBlank(scalars[end - 1]) { end -= 1 }
            var component = String.UnicodeScalarView()
            component.append(contentsOf: scalars[start..<end])
            result.append(String(component))
            if index == scalars.count { return result }
            index += 1
        }
    }

    // MARK: - Values

    static func isBlank(_ scalar: Unicode.Scalar?) -> Bool { scalar == " " || scalar == "\t" }

    static func isMarker(_ text: Substring) -> Bool {
        text == nilMarker || text == emptyArrayMarker || text == emptyObjectMarker
    }

    /// Whether `rest`, what follows `count` leading backslashes, makes the text need one more: it is a
    /// marker (blanks after it allowed, as the reader allows them), starts with a blank, or, after a
    /// backslash, with `"`.
    private static func isSpecial(_ rest: Substring, afterBackslashes count: Int) -> Bool {
        var trimmed = rest
        while isBlank(trimmed.unicodeScalars.last) { trimmed = trimmed.dropLast() }
        return isMarker(trimmed) || isBlank(rest.unicodeScalars.first) || (count > 0 && rest.hasPrefix("\""))
    }

    /// The field text for the value `text`.
    static func escapedValue(_ text: String) -> String {
        let bytes = Array(text.utf8)
        for (index, byte) in bytes.enumerated() where byte == SecretSyntax.carriageReturn {
            if index + 1 == bytes.count || bytes[index + 1] == SecretSyntax.newline {
                return "\\" + quoted(text, escapingColon: false)
            }
        }
        let rest = text.drop { $0 == "\\" }
        let count = text.count - rest.count
        return isSpecial(rest, afterBackslashes: count) ? "\\" + text : text
    }

    /// The value a field text written by ``escapedValue(_:)`` stands for (markers are not looked at).
    static func unescapedValue(_ written: String) -> String {
        guard written.hasPrefix("\\") else { return written }
        let rest = written.drop { $0 == "\\" }
        let count = written.count - rest.count
        if count == 1, rest.hasPrefix("\"") {
            let scalars = Array(rest.unicodeScalars)
            if let (text, end) = parseQuoted(scalars, from: 0, colonEscaped: false), end == scalars.count {
                return text
            }
        }
        return isSpecial(rest, afterBackslashes: count) ? String(written.dropFirst()) : written
    }

    /// Whether a field text is the marker `marker`, blanks after it allowed.
    static func isMarker(_ written: String, _ marker: String) -> Bool {
        var trimmed = written[...]
        while isBlank(trimmed.unicodeScalars.last) { trimmed = trimmed.dropLast() }
        return trimmed == marker
    }

    // MARK: - Quoted strings

    /// `text` in double quotes, with `"`, `\` and control characters (and `:` when asked) escaped.
    static func quoted(_ text: String, escapingColon: Bool) -> String {
        var output = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case ":" where escapingColon: output += "\\u003A"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    let hex = String(scalar.value, radix: 16, uppercase: true)
                    output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    output.unicodeScalars.append(scalar)
                }
            }
        }
        return output + "\""
    }

    /// The text of the quoted string starting at `start` and the index after its closing quote, or `nil`.
    ///
    /// The escapes are JSON's: `\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t` and `\uXXXX` (surrogate pairs
    /// joined). Inside a quoted key (`colonEscaped`) a raw `:` cannot appear, since it ends the key.
    static func parseQuoted(_ scalars: [Unicode.Scalar], from start: Int, colonEscaped: Bool) -> (
        String, Int
    )? {
        guard start < scalars.count, scalars[start] == "\"" else { return nil }
        var output = String.UnicodeScalarView()
        var index = start + 1
        func hex4(_ at: Int) -> UInt32? {
            guard at + 4 <= scalars.count else { return nil }
            var value: UInt32 = 0
            for scalar in scalars[at..<at + 4] {
                guard let digit = Int(String(scalar), radix: 16) else { return nil }
                value = value << 4 | UInt32(digit)
            }
            return value
        }
        while index < scalars.count {
            let scalar = scalars[index]
            switch scalar {
            case "\"":
                return (String(output), index + 1)
            case "\\":
                guard index + 1 < scalars.count else { return nil }
                let escape = scalars[index + 1]
                index += 2
                switch escape {
                case "\"", "\\", "/": output.append(escape)
                case "b": output.append("\u{08}")
                case "f": output.append("\u{0C}")
                case "n": output.append("\n")
                case "r": output.append("\r")
                case "t": output.append("\t")
                case "u":
                    guard var value = hex4(index) else { return nil }
                    index += 4
                    if (0xD800..<0xDC00).contains(value) {
                        guard index + 1 < scalars.count, scalars[index] == "\\", scalars[index + 1] == "u",
                            let low = hex4(index + 2), (0xDC00..<0xE000).contains(low)
                        else { return nil }
                        index += 6
                        value = 0x10000 + (value - 0xD800) << 10 + (low - 0xDC00)
                    }
                    guard let decoded = Unicode.Scalar(value) else { return nil }
                    output.append(decoded)
                default:
                    return nil
                }
            default:
                if scalar.value < 0x20 || (colonEscaped && scalar == ":") { return nil }
                output.append(scalar)
                index += 1
            }
        }
        return nil
    }
}

/// Marks `Optional`, so the archive can tell a nested optional's inner `nil` from an absent value.
protocol SecretOptional {
    /// Whether the value is `nil`.
    var isSecretNil: Bool { get }
}

extension Optional: SecretOptional {
    var isSecretNil: Bool { self == nil }
}

/// The fields of an entry as a tree of key components, for decoding.
final class SecretFieldNode {
    /// The texts of the fields whose key ends at this node, in order, as written.
    var lines: [String] = []
    /// The components below this node, in the order they first appear.
    private(set) var childNames: [String] = []
    private var childrenByName: [String: SecretFieldNode] = [:]

    /// The tree of `fields`; fields whose key starts with `#` are comments and left out.
    init(fields: [Secret.Field]) {
        for field in fields where !field.key.hasPrefix("#") {
            var node = self
            for component in SecretArchive.components(of: field.key) {
                node = node.makeChild(component)
            }
            node.lines.append(field.value)
        }
    }

    private init() {}

    private func makeChild(_ name: String) -> SecretFieldNode {
        if let existing = childrenByName[name] { return existing }
        let node = SecretFieldNode()
        childrenByName[name] = node
        childNames.append(name)
        return node
    }

    /// The child spelled exactly `name`, else the first whose spelling differs only in case and is not
    /// `isOwnKey` (the exact spelling of another key the reader asks for, whose field it is).
    ///
    /// An exact child is used even when it is the nil marker `~`, so an explicit `nil` never reads a
    /// neighbour's value.
    func child(_ name: String, isOwnKey: (String) -> Bool = { _ in false }) -> SecretFieldNode? {
        if let exact = childrenByName[name] { return exact }
        let lowercased = name.lowercased()
        return childNames.first { $0.lowercased() == lowercased && !isOwnKey($0) }.flatMap {
            childrenByName[$0]
        }
    }

    /// The child spelled exactly `name`.
    func exactChild(_ name: String) -> SecretFieldNode? { childrenByName[name] }

    /// Whether a field's key is this node's or starts with it.
    var hasContent: Bool { !lines.isEmpty || !childNames.isEmpty }

    /// Whether the node is the nil marker `~` alone.
    var isNil: Bool {
        childNames.isEmpty && lines.first.map { SecretArchive.isMarker($0, SecretArchive.nilMarker) } == true
    }

    /// The children whose component is a whole number, by number (the first spelling of a number wins).
    var indexedChildren: [SecretFieldNode] {
        var byIndex: [Int: SecretFieldNode] = [:]
        for name in childNames where !name.isEmpty && name.utf8.allSatisfy({ (0x30...0x39).contains($0) }) {
            guard let index = Int(name), byIndex[index] == nil else { continue }
            byIndex[index] = childrenByName[name]
        }
        return byIndex.keys.sorted().compactMap { byIndex[$0] }
    }

    /// Every node below this one that has lines, keyed by its components joined with `.`, for dictionaries
    /// of single values read from hand-written dotted keys (`github.com: token`).
    func flattened() -> [(key: String, node: SecretFieldNode)] {
        var result: [(key: String, node: SecretFieldNode)] = []
        for name in childNames {
            guard let child = childrenByName[name] else { continue }
            if !child.lines.isEmpty { result.append((name, child)) }
            for (key, node) in child.flattened() { result.append((name + "." + key, node)) }
        }
        return result
    }
}
