/// The `.gpg-id` format: one recipient a line, `#` starts a comment, blank lines and surrounding
/// blanks ignored, as pass reads it.
package enum GPGIDFile {
    /// The recipients listed in the bytes of a `.gpg-id` file, in order.
    package static func parse(_ bytes: [UInt8]) -> [String] {
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
    /// Merges two versions of a `.gpg-id` that descend from `base` (empty when there is none) by who can
    /// read: every line stands for the keys `keys` gives for it (`nil` when it names no key this keyring
    /// knows: the line then stands for itself), and a key one side added is in, a key one side removed is
    /// out, whatever the other side did elsewhere, so the merge never conflicts and a recipient removed
    /// on one side stays removed even when the other side names it differently.
    ///
    /// The result keeps `ours`' lines, then `theirs`' additions; a line that stands for some kept and
    /// some removed keys is replaced by `name` of each kept key. Blank lines and comments go.
    package static func merge(
        base: [UInt8], ours: [UInt8], theirs: [UInt8], keys: (String) -> [String]?, name: (String) -> String
    ) -> [UInt8] {
        func members(_ bytes: [UInt8]) -> [(line: String, keys: [String])] {
            parse(bytes).map { line in (line, keys(line) ?? ["line:" + line]) }
        }
        let (baseMembers, ourMembers, theirMembers) = (members(base), members(ours), members(theirs))
        let (inBase, inOurs, inTheirs) = (
            Set(baseMembers.flatMap(\.keys)), Set(ourMembers.flatMap(\.keys)),
            Set(theirMembers.flatMap(\.keys))
        )
        func kept(_ key: String) -> Bool {
            inOurs.contains(key) == inBase.contains(key) ? inTheirs.contains(key) : inOurs.contains(key)
        }
        var lines: [String] = []
        var covered = Set<String>()
        for member in ourMembers + theirMembers {
            let wanted = member.keys.filter { kept($0) && !covered.contains($0) }
            guard !wanted.isEmpty else { continue }
            if wanted.count == member.keys.count {
                if !lines.contains(member.line) { lines.append(member.line) }
            } else {
                for key in wanted where !key.hasPrefix("line:") { lines.append(name(key)) }
            }
            covered.formUnion(member.keys.filter(kept))
        }
        return Array(lines.map { $0 + "\n" }.joined().utf8)
    }
}
