/// The byte-level rules of the entry format, shared by `Secret` and the Codable encoding.
///
/// A line's content is the line without a trailing `\r`. From line 2 on, a line is a field
/// when it does not start with a blank, does not start with a URI (`scheme://`), and has a
/// non-empty key before its first `:`. The key loses trailing blanks and the value leading
/// blanks. A field whose value is `|` (blanks around it allowed) followed by indented lines
/// is a multi-line field: the indentation of the first indented line is the prefix; every
/// following line that starts with the prefix belongs to the value (without the prefix), and
/// blank lines between such lines are empty lines of the value.
enum SecretSyntax {
    static let newline: UInt8 = 0x0A
    static let carriageReturn: UInt8 = 0x0D
    static let space: UInt8 = 0x20
    static let tab: UInt8 = 0x09
    static let colon: UInt8 = 0x3A
    static let slash: UInt8 = 0x2F
    static let pipe: UInt8 = 0x7C
    /// The indentation written before the lines of a multi-line value.
    static let defaultIndentation: [UInt8] = [space, space]

    /// A field and the lines it occupies.
    struct FieldSpan {
        /// The key's bytes as spelled in the entry.
        var key: [UInt8]
        /// The value's lines (one for a single-line field).
        var valueLines: [[UInt8]]
        /// The indices of the lines the field occupies in the entry.
        var range: Range<Int>

        var keyString: String { String(decoding: key, as: UTF8.self) }

        var valueBytes: [UInt8] {
            var bytes: [UInt8] = []
            for (index, line) in valueLines.enumerated() {
                if index > 0 { bytes.append(SecretSyntax.newline) }
                bytes += line
            }
            return bytes
        }

        var valueString: String { String(decoding: valueBytes, as: UTF8.self) }
    }

    static func isBlank(_ byte: UInt8) -> Bool {
        byte == space || byte == tab
    }

    /// The line without a trailing `\r`.
    static func content(_ line: [UInt8]) -> ArraySlice<UInt8> {
        line.last == carriageReturn ? line.dropLast() : line[...]
    }

    /// `[\r]` when the line ends with `\r`, else `[]`.
    static func lineEnding(of line: [UInt8]) -> [UInt8] {
        line.last == carriageReturn ? [carriageReturn] : []
    }

    /// Whether `content` starts with `otpauth://`, ignoring the case of the scheme.
    static func isOTPAuthURI(_ content: ArraySlice<UInt8>) -> Bool {
        let scheme = Array("otpauth://".utf8)
        guard content.count >= scheme.count else { return false }
        return zip(content.prefix(scheme.count), scheme).allSatisfy { lowercased($0) == $1 }
    }

    /// Whether `content` starts with `scheme://`, as a bare URI line does.
    static func startsWithURI(_ content: ArraySlice<UInt8>) -> Bool {
        guard let first = content.first, isASCIILetter(first) else { return false }
        var index = content.startIndex + 1
        while index < content.endIndex, isSchemeCharacter(content[index]) { index += 1 }
        return content[index...].starts(with: [colon, slash, slash])
    }

    /// The key and value of a field line's content, or `nil` when the line is not a field.
    static func fieldParts(
        _ content: ArraySlice<UInt8>
    ) -> (key: ArraySlice<UInt8>, value: ArraySlice<UInt8>)? {
        guard let first = content.first, !isBlank(first), !startsWithURI(content),
            let colonIndex = content.firstIndex(of: colon)
        else { return nil }
        var keyEnd = colonIndex
        while keyEnd > content.startIndex, isBlank(content[keyEnd - 1]) { keyEnd -= 1 }
        guard keyEnd > content.startIndex else { return nil }
        var valueStart = colonIndex + 1
        while valueStart < content.endIndex, isBlank(content[valueStart]) { valueStart += 1 }
        return (content[content.startIndex..<keyEnd], content[valueStart...])
    }

    /// Whether a field's value (leading blanks already removed) opens a multi-line value.
    static func isBlockMarker(_ value: ArraySlice<UInt8>) -> Bool {
        var trimmed = value
        while let last = trimmed.last, isBlank(last) { trimmed.removeLast() }
        return trimmed.elementsEqual([pipe])
    }

    /// The fields of an entry's lines, line 1 excepted.
    static func fieldSpans(in lines: [[UInt8]]) -> [FieldSpan] {
        var spans: [FieldSpan] = []
        var index = 1
        while index < lines.count {
            guard let parts = fieldParts(content(lines[index])) else {
                index += 1
                continue
            }
            if isBlockMarker(parts.value), let block = blockLines(in: lines, after: index) {
                spans.append(
                    FieldSpan(key: Array(parts.key), valueLines: block.values, range: index..<block.end))
                index = block.end
            } else {
                spans.append(
                    FieldSpan(
                        key: Array(parts.key), valueLines: [Array(parts.value)], range: index..<index + 1)
                )
                index += 1
            }
        }
        return spans
    }

    /// The lines of the multi-line value opened on line `header`, and the index after its last line.
    ///
    /// `nil` when no indented line follows, so the value is the text `|` itself.
    static func blockLines(in lines: [[UInt8]], after header: Int) -> (values: [[UInt8]], end: Int)? {
        var prefix: ArraySlice<UInt8>?
        for line in lines[(header + 1)...] {
            let content = content(line)
            guard let first = content.first else { continue }
            if isBlank(first) { prefix = content.prefix(while: isBlank) }
            break
        }
        guard let prefix else { return nil }
        var values: [[UInt8]] = []
        var pendingBlankLines = 0
        var end = header + 1
        for index in (header + 1)..<lines.count {
            let content = content(lines[index])
            if content.starts(with: prefix) {
                values += Array(repeating: [], count: pendingBlankLines)
                pendingBlankLines = 0
                values.append(Array(content.dropFirst(prefix.count)))
                end = index + 1
            } else if content.allSatisfy(isBlank) {
                pendingBlankLines += 1
            } else {
                break
            }
        }
        return (values, end)
    }

    /// An indentation for a multi-line value that none of the indented or blank lines right
    /// after it starts with, so the value cannot take them in.
    static func safeIndentation(before following: ArraySlice<[UInt8]>) -> [UInt8] {
        var widest = 0
        for line in following {
            let content = content(line)
            if let first = content.first, !isBlank(first) { break }
            widest = max(widest, content.prefix(while: { $0 == space }).count)
        }
        return Array(repeating: space, count: max(defaultIndentation.count, widest + 1))
    }

    /// Whether `value` must be written in the multi-line form.
    static func needsBlock(_ value: [UInt8]) -> Bool {
        value.contains(newline) || isBlockMarker(value[...])
    }

    /// The lines of a field, `key: value` or the multi-line form, each followed by `lineEnding`.
    static func renderField(
        key: [UInt8],
        value: [UInt8],
        indentation: [UInt8],
        lineEnding: [UInt8],
        forceBlock: Bool = false
    ) -> [[UInt8]] {
        if forceBlock || needsBlock(value) {
            var lines: [[UInt8]] = [key + [colon, space, pipe] + lineEnding]
            for line in value.split(separator: newline, omittingEmptySubsequences: false) {
                lines.append(indentation + line + lineEnding)
            }
            return lines
        }
        if value.isEmpty { return [key + [colon] + lineEnding] }
        return [key + [colon, space] + value + lineEnding]
    }

    /// Why `bytes` cannot be line 1, or `nil` when it can.
    static func passwordProblem(_ bytes: [UInt8]) -> String? {
        if bytes.contains(newline) { return "A password cannot contain a line break." }
        if bytes.last == carriageReturn { return "A password cannot end with a carriage return." }
        return nil
    }

    /// Why `key` cannot be a field key, or `nil` when it can.
    static func keyProblem(_ key: String) -> String? {
        let bytes = Array(key.utf8)
        guard let first = bytes.first, let last = bytes.last else { return "A field key cannot be empty." }
        if bytes.contains(colon) { return "The field key \"\(key)\" cannot contain ':'." }
        if bytes.contains(newline) || bytes.contains(carriageReturn) {
            return "A field key cannot contain a line break."
        }
        if isBlank(first) || isBlank(last) {
            return "The field key \"\(key)\" cannot start or end with a space or a tab."
        }
        return nil
    }

    /// Why `value` cannot be written as a field value and read back unchanged, or `nil`.
    static func valueProblem(_ value: [UInt8]) -> String? {
        if let first = value.first, isBlank(first) {
            return "A field value cannot start with a space or a tab."
        }
        for line in value.split(separator: newline, omittingEmptySubsequences: false)
        where line.last == carriageReturn {
            return "A field value cannot have a carriage return at the end of a line."
        }
        return nil
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        (0x41...0x5A).contains(byte) ? byte + 0x20 : byte
    }

    private static func isASCIILetter(_ byte: UInt8) -> Bool {
        (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
    }

    private static func isSchemeCharacter(_ byte: UInt8) -> Bool {
        isASCIILetter(byte) || (0x30...0x39).contains(byte) || byte == 0x2B || byte == 0x2D || byte == 0x2E
    }
}
