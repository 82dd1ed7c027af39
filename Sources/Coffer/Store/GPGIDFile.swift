/// The `.gpg-id` format: one recipient a line, `#` starts a comment, blank lines and surrounding
/// blanks ignored, as pass reads it.
public enum GPGIDFile {
    /// The recipients listed in the bytes of a `.gpg-id` file, in order.
    public static func parse(_ bytes: [UInt8]) -> [String] {
        bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true).compactMap { line in
            let content = line.prefix { $0 != UInt8(ascii: "#") }
            let id = content.drop(while: isBlank).reversed().drop(while: isBlank).reversed()
            return id.isEmpty ? nil : String(decoding: id, as: UTF8.self)
        }
    }

    private static func isBlank(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r")
    }
}
