/// Text from the repository (names, paths, user ids, commit subjects) as coffer's own messages print it:
/// unchanged when it is plain, else in double quotes with every byte that could drive a terminal or
/// forge a line escaped, as git quotes paths (`core.quotePath=false`).
///
/// Escaped are C0 control characters and DEL (`\n`, `\t`, ... or octal `\033`), `"` and `\`, the C1
/// control characters U+0080 to U+009F (a terminal may take U+009B for an escape), the bidirectional
/// controls U+061C, U+200E, U+200F, U+202A to U+202E and U+2066 to U+2069 (they reorder what is
/// shown), and bytes that are not UTF-8; each as the octal escapes of its bytes. Other text, letters
/// of every script included, is kept.
package enum Quoting {
    /// `text` quoted when it needs it.
    package static func quoted(_ text: String) -> String {
        quoted(bytes: Array(text.utf8))
    }

    /// `text` in double quotes whether it needs them or not, escaped as ``quoted(_:)`` escapes: for a
    /// user id in a line of other words.
    package static func inQuotes(_ text: String) -> String {
        let escaped = quoted(text)
        return escaped.hasPrefix("\"") && escaped != text ? escaped : "\"" + escaped + "\""
    }

    /// The bytes `bytes` (a name as the file system has it) quoted when they need it.
    package static func quoted(bytes: [UInt8]) -> String {
        var output: [UInt8] = []
        var needsQuotes = false
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte < 0x80 {
                if let escape = escape(ascii: byte) {
                    output += escape
                    needsQuotes = true
                } else {
                    output.append(byte)
                }
                index += 1
                continue
            }
            let length = sequenceLength(bytes, at: index)
            let sequence = Array(bytes[index..<(index + max(length, 1))])
            if length == 0 || isHidden(sequence) {
                output += sequence.flatMap(octal)
                needsQuotes = true
            } else {
                output += sequence
            }
            index += max(length, 1)
        }
        let text = String(decoding: output, as: UTF8.self)
        return needsQuotes ? "\"" + text + "\"" : text
    }

    /// The escape of a byte below 0x80 that cannot stand as it is, or `nil`.
    private static func escape(ascii byte: UInt8) -> [UInt8]? {
        switch byte {
        case 0x07: return Array("\\a".utf8)
        case 0x08: return Array("\\b".utf8)
        case 0x09: return Array("\\t".utf8)
        case 0x0a: return Array("\\n".utf8)
        case 0x0b: return Array("\\v".utf8)
        case 0x0c: return Array("\\f".utf8)
        case 0x0d: return Array("\\r".utf8)
        case UInt8(ascii: "\""): return Array("\\\"".utf8)
        case UInt8(ascii: "\\"): return Array("\\\\".utf8)
        case 0..<0x20, 0x7f: return octal(byte)
        default: return nil
        }
    }

    /// `\ooo`.
    private static func octal(_ byte: UInt8) -> [UInt8] {
        [UInt8(ascii: "\\"), 0x30 + (byte >> 6), 0x30 + ((byte >> 3) & 7), 0x30 + (byte & 7)]
    }

    /// The length of the well-formed UTF-8 sequence at `index` (2 to 4), or 0 when there is none.
    private static func sequenceLength(_ bytes: [UInt8], at index: Int) -> Int {
        let first = bytes[index]
        let (length, low, high): (Int, UInt8, UInt8)
        switch first {
        case 0xc2...0xdf: (length, low, high) = (2, 0x80, 0xbf)
        case 0xe0: (length, low, high) = (3, 0xa0, 0xbf)
        case 0xed: (length, low, high) = (3, 0x80, 0x9f)
        case 0xe1...0xef: (length, low, high) = (3, 0x80, 0xbf)
        case 0xf0: (length, low, high) = (4, 0x90, 0xbf)
        case 0xf1...0xf3: (length, low, high) = (4, 0x80, 0xbf)
        case 0xf4: (length, low, high) = (4, 0x80, 0x8f)
        default: return 0
        }
        guard index + length <= bytes.count, (low...high).contains(bytes[index + 1]) else { return 0 }
        for offset in 2..<max(length, 2) where !(0x80...0xbf).contains(bytes[index + offset]) { return 0 }
        return length
    }

    /// Whether a well-formed sequence is a C1 control or a bidirectional control.
    private static func isHidden(_ sequence: [UInt8]) -> Bool {
        var scalar: UInt32 = 0
        for (position, byte) in sequence.enumerated() {
            let bits = position == 0 ? UInt32(byte) & (0xff >> (sequence.count + 1)) : UInt32(byte & 0x3f)
            scalar = scalar << 6 | bits
        }
        switch scalar {
        case 0x80...0x9f, 0x61c, 0x200e, 0x200f, 0x202a...0x202e, 0x2066...0x2069: return true
        default: return false
        }
    }
}
