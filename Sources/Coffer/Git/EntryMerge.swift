/// A three-way merge of decrypted entries, for `sync` and the git merge driver.
///
/// When the two sides changed separate lines, the entry merges line by line and stays exactly as the
/// sides wrote it (order, line endings, text a person added). Otherwise it is taken apart into its
/// password line, its fields (by key, case-insensitively, repeated keys by occurrence) and its free
/// text, and each part merges on its own: a side that left a field as it was in the common ancestor
/// takes the other side's version; free text merges line-wise. The result follows the layout of
/// `ours`, with fields only `theirs` added after `ours`' last field. When both sides changed the same
/// field (or overlapping free text) differently, the result keeps both between conflict markers, which
/// stay inside the encrypted entry until a person resolves them with `coffer edit`. Line 1 stays a
/// password even then: when both sides changed it, it is `ours`, and the conflict follows it.
///
/// Only text merges: an entry whose base or either side is not valid UTF-8, or holds a NUL byte (a
/// key file, a keystore), takes the side that changed, and when both changed it cannot be merged.
/// An HOTP key whose two sides differ only in their counter takes the greater counter, so that no
/// code is handed out twice.
package enum EntryMerge {
    /// The merged text and whether it holds conflicts.
    package struct Result: Sendable, Equatable {
        /// The merged entry: `ours` when it cannot be merged.
        package let bytes: [UInt8]
        /// Whether conflict markers were written.
        package let hasConflicts: Bool
        /// Whether the entry is not text and both sides changed it: nothing was merged.
        package var isUnmergeable = false
    }

    /// The marker lines, as git writes them.
    static let oursMarker = Array("<<<<<<< ours".utf8)
    static let separator = Array("=======".utf8)
    static let theirsMarker = Array(">>>>>>> theirs".utf8)

    /// Merges `ours` and `theirs`, both descended from `base` (empty when there is none).
    package static func merge(base: [UInt8], ours: [UInt8], theirs: [UInt8]) -> Result {
        if ours == theirs || theirs == base { return Result(bytes: ours, hasConflicts: false) }
        if ours == base { return Result(bytes: theirs, hasConflicts: false) }
        guard isText(base), isText(ours), isText(theirs) else {
            return Result(bytes: ours, hasConflicts: false, isUnmergeable: true)
        }
        var base = base
        var ours = ours
        var theirs = theirs
        defer {
            wipeMemory(&base, count: base.count)
            wipeMemory(&ours, count: ours.count)
            wipeMemory(&theirs, count: theirs.count)
        }
        takeGreaterCounter(&base, &ours, &theirs)
        if ours == theirs || theirs == base { return Result(bytes: ours, hasConflicts: false) }
        if ours == base { return Result(bytes: theirs, hasConflicts: false) }
        // Lines keep their `\r`; the text after the last `\n` is a last (possibly empty) line.
        func split(_ bytes: [UInt8]) -> [[UInt8]] {
            bytes.split(separator: SecretSyntax.newline, omittingEmptySubsequences: false).map(Array.init)
        }
        let byLine = mergeLines(base: split(base), ours: split(ours), theirs: split(theirs))
        if !byLine.hasConflicts { return Result(bytes: joined(byLine.lines), hasConflicts: false) }
        return mergeFields(base: base, ours: ours, theirs: theirs)
    }

    /// The field-by-field merge, laid out as `ours` is.
    private static func mergeFields(base: [UInt8], ours: [UInt8], theirs: [UInt8]) -> Result {
        let baseParts = Parts(Secret(parsing: base))
        let ourParts = Parts(Secret(parsing: ours))
        let theirParts = Parts(Secret(parsing: theirs))
        var conflicts = false

        func take(_ base: [[UInt8]]?, _ ours: [[UInt8]]?, _ theirs: [[UInt8]]?) -> [[UInt8]] {
            if ours == theirs || theirs == base { return ours ?? [] }
            if ours == base { return theirs ?? [] }
            conflicts = true
            return [oursMarker] + (ours ?? []) + [separator] + (theirs ?? []) + [theirsMarker]
        }

        // Line 1 stays a password whatever happens: tools read it as one. When both sides changed it, it
        // is ours, and the conflict that keeps both follows it.
        var output = take(baseParts.password, ourParts.password, theirParts.password)
        if output.first == oursMarker, let password = ourParts.password { output = password + output }
        let text = mergeLines(base: baseParts.freeText, ours: ourParts.freeText, theirs: theirParts.freeText)
        conflicts = conflicts || text.hasConflicts
        // Fields only the other side (or only the base) has go after our last field.
        var added: [String] = []
        for key in theirParts.fieldOrder + baseParts.fieldOrder
        where ourParts.fields[key] == nil && !added.contains(key) {
            added.append(key)
        }
        let lastField = ourParts.layout.lastIndex { if case .field = $0 { true } else { false } }
        var wroteText = false
        func writeAdded() {
            for key in added {
                output += take(baseParts.fields[key], nil, theirParts.fields[key])
            }
            added = []
        }
        for (position, item) in ourParts.layout.enumerated() {
            switch item {
            case .field(let key):
                output += take(baseParts.fields[key], ourParts.fields[key], theirParts.fields[key])
            case .text:
                // The merged free text stands where ours' free text starts.
                if !wroteText { output += text.lines }
                wroteText = true
            }
            if position == lastField { writeAdded() }
        }
        writeAdded()
        if !wroteText { output += text.lines }
        let endsWithNewline = ours.last == SecretSyntax.newline || ours.isEmpty
        return Result(
            bytes: joined(output + (output.isEmpty || !endsWithNewline ? [] : [[]])), hasConflicts: conflicts)
    }

    /// Whether `bytes` is text that merges line by line: valid UTF-8 without a NUL byte.
    package static func isText(_ bytes: [UInt8]) -> Bool {
        !bytes.contains(0) && TextBytes.isValidUTF8(bytes)
    }

    /// When both sides hold an HOTP key (the URI `otp` uses) that differs only in its counter, gives the
    /// side with the smaller counter the other's URI, and the base too when it holds the same key: a
    /// counter only moves on, and the change elsewhere in the entry merges as if the counter had not.
    static func takeGreaterCounter(_ base: inout [UInt8], _ ours: inout [UInt8], _ theirs: inout [UInt8]) {
        func key(_ bytes: [UInt8]) -> (range: Range<Int>, key: OneTimePassword)? {
            guard let range = OneTimePassword.uriRange(in: bytes),
                let key = try? OneTimePassword(uri: String(decoding: bytes[range], as: UTF8.self)),
                key.kind == .hotp, key.canAdvance, let counter = key.counterParameter,
                // Only a counter `otp` reads as written: one past 64 bits wraps there to a small one.
                Int64(counter) == key.counter
            else { return nil }
            return (range, key)
        }
        guard let our = key(ours), let their = key(theirs), let ourCounter = our.key.counter,
            let theirCounter = their.key.counter,
            our.key.replacingCounter(with: "") == their.key.replacingCounter(with: "")
        else { return }
        let greater = ourCounter < theirCounter ? Array(theirs[their.range]) : Array(ours[our.range])
        ours.replaceSubrange(our.range, with: greater)
        theirs.replaceSubrange(their.range, with: greater)
        if let old = key(base), old.key.replacingCounter(with: "") == our.key.replacingCounter(with: "") {
            base.replaceSubrange(old.range, with: greater)
        }
    }

    /// Lines joined with `\n`.
    private static func joined(_ lines: [[UInt8]]) -> [UInt8] {
        var bytes: [UInt8] = []
        for (index, line) in lines.enumerated() {
            if index > 0 { bytes.append(SecretSyntax.newline) }
            bytes += line
        }
        return bytes
    }

    /// Whether decrypted entry text holds conflict markers left by a merge.
    ///
    /// Generic over the bytes so that a caller can scan a ``SecureBytes`` in place, without a copy.
    package static func containsConflict<Bytes: BidirectionalCollection>(_ bytes: Bytes) -> Bool
    where Bytes.Element == UInt8 {
        var sawOurs = false
        var sawSeparator = false
        for rawLine in bytes.split(separator: 10, omittingEmptySubsequences: false) {
            let line = rawLine.last == 13 ? rawLine.dropLast() : rawLine[...]
            if line.starts(with: "<<<<<<< ".utf8) || line.elementsEqual("<<<<<<<".utf8) {
                sawOurs = true
            } else if sawOurs && line.elementsEqual(separator) {
                sawSeparator = true
            } else if sawSeparator && line.starts(with: ">>>>>>>".utf8) {
                return true
            }
        }
        return false
    }

    /// An entry taken apart for merging; lines keep their `\r`.
    private struct Parts {
        /// A line or field of the entry after its first line, in order.
        enum Item {
            case field(String)
            case text
        }

        var password: [[UInt8]]?
        var fields: [String: [[UInt8]]] = [:]
        var fieldOrder: [String] = []
        var freeText: [[UInt8]] = []
        var layout: [Item] = []

        init(_ secret: Secret) {
            let lines = secret.lines
            password = lines.isEmpty ? nil : [lines[0]]
            var occurrences: [String: Int] = [:]
            var spans: [Int: SecretSyntax.FieldSpan] = [:]
            for span in SecretSyntax.fieldSpans(in: lines) { spans[span.range.lowerBound] = span }
            var index = 1
            while index < lines.count {
                guard let span = spans[index] else {
                    freeText.append(lines[index])
                    layout.append(.text)
                    index += 1
                    continue
                }
                let name = span.keyString.lowercased()
                let occurrence = occurrences[name, default: 0]
                occurrences[name] = occurrence + 1
                let key = occurrence == 0 ? name : "\(name)#\(occurrence)"
                fields[key] = Array(lines[span.range])
                fieldOrder.append(key)
                layout.append(.field(key))
                index = span.range.upperBound
            }
        }
    }

    /// A line-wise three-way merge: changes to separate stretches of the base both apply.
    static func mergeLines(
        base: [[UInt8]], ours: [[UInt8]], theirs: [[UInt8]]
    ) -> (lines: [[UInt8]], hasConflicts: Bool) {
        if ours == theirs || theirs == base { return (ours, false) }
        if ours == base { return (theirs, false) }
        let ourHunks = hunks(from: base, to: ours)
        let theirHunks = hunks(from: base, to: theirs)
        for mine in ourHunks {
            for other in theirHunks where mine.touches(other) && mine != other {
                return ([oursMarker] + ours + [separator] + theirs + [theirsMarker], true)
            }
        }
        var all = ourHunks
        for hunk in theirHunks where !all.contains(hunk) { all.append(hunk) }
        all.sort { $0.range.lowerBound < $1.range.lowerBound }
        var result: [[UInt8]] = []
        var position = 0
        for hunk in all {
            result += base[position..<hunk.range.lowerBound]
            result += hunk.replacement
            position = hunk.range.upperBound
        }
        result += base[position...]
        return (result, false)
    }

    /// A replacement of `base[range]` by `replacement`.
    struct Hunk: Equatable {
        var range: Range<Int>
        var replacement: [[UInt8]]

        /// Whether two hunks change the same or adjacent base lines, or insert at the same place.
        func touches(_ other: Hunk) -> Bool {
            range.lowerBound <= other.range.upperBound && other.range.lowerBound <= range.upperBound
        }
    }

    /// The hunks that turn `base` into `changed`, from a longest common subsequence.
    static func hunks(from base: [[UInt8]], to changed: [[UInt8]]) -> [Hunk] {
        let rows = base.count
        let columns = changed.count
        var table = [[Int]](repeating: [Int](repeating: 0, count: columns + 1), count: rows + 1)
        for row in stride(from: rows - 1, through: 0, by: -1) {
            for column in stride(from: columns - 1, through: 0, by: -1) {
                table[row][column] =
                    base[row] == changed[column]
                    ? table[row + 1][column + 1] + 1 : max(table[row + 1][column], table[row][column + 1])
            }
        }
        var hunks: [Hunk] = []
        var row = 0
        var column = 0
        var current: Hunk?
        while row < rows || column < columns {
            if row < rows && column < columns && base[row] == changed[column] {
                if let hunk = current { hunks.append(hunk) }
                current = nil
                row += 1
                column += 1
            } else if column < columns && (row == rows || table[row][column + 1] >= table[row + 1][column]) {
                if current == nil { current = Hunk(range: row..<row, replacement: []) }
                current?.replacement.append(changed[column])
                column += 1
            } else {
                let start = current?.range.lowerBound ?? row
                if current == nil { current = Hunk(range: row..<row, replacement: []) }
                current?.range = start..<(row + 1)
                row += 1
            }
        }
        if let hunk = current { hunks.append(hunk) }
        return hunks
    }
}
