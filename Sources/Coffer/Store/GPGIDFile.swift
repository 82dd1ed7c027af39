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

extension GPGIDFile {
    /// Merges two versions of a `.gpg-id` that descend from `base` (empty when there is none), as sets
    /// of lines: a line one side added is in, a line one side removed is out, whatever the other side did
    /// elsewhere, so the merge never conflicts. The result keeps `ours`' order, then `theirs`' additions.
    ///
    /// Lines compare without their surrounding blanks; blank lines go.
    public static func merge(base: [UInt8], ours: [UInt8], theirs: [UInt8]) -> [UInt8] {
        func lines(_ bytes: [UInt8]) -> [String] {
            bytes.split(separator: UInt8(ascii: "\n")).map { line in
                String(
                    decoding: line.drop(while: isBlank).reversed().drop(while: isBlank).reversed(),
                    as: UTF8.self)
            }.filter { !$0.isEmpty }
        }
        let (baseLines, ourLines, theirLines) = (Set(lines(base)), lines(ours), lines(theirs))
        let (ourSet, theirSet) = (Set(ourLines), Set(theirLines))
        func kept(_ line: String) -> Bool {
            ourSet.contains(line) == baseLines.contains(line)
                ? theirSet.contains(line) : ourSet.contains(line)
        }
        var result: [String] = []
        for line in ourLines + theirLines where kept(line) && !result.contains(line) { result.append(line) }
        return Array(result.map { $0 + "\n" }.joined().utf8)
    }
}
