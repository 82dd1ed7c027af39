/// The decrypted text of one entry, in the format `pass` and its clients read.
///
/// Line 1 is the password. Each later line of the form `key: value` is a field; keys are read
/// case-insensitively and leniently (`key:value`, `KEY :  value`), and the first field with a
/// key wins. A field whose value is `|` followed by indented lines holds a multi-line value:
///
/// ```
/// hunter2
/// login: alice
/// url: https://example.com
/// notes: |
///   first line
///   second line
/// otpauth://totp/Example:alice?secret=JBSWY3DPEHPK3PXP&issuer=Example
/// anything else is free text
/// ```
///
/// A `Secret` keeps the exact bytes of every line, so `Secret(parsing: bytes).formatted()`
/// returns `bytes` unchanged for any input: text that is not UTF-8, `\r\n` line endings, a
/// missing final newline and free text all survive. Reading treats a `\r` before the line
/// break as part of the line ending, so ``password`` and field values never end with `\r`.
/// The mutating methods change only the lines they are about and write fields as
/// `key: value`.
///
/// `description` never shows the password or the field values.
public struct Secret: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    /// One field of an entry: a key and its value.
    public struct Field: Sendable, Hashable {
        /// The key as spelled in the entry, without the `:` and surrounding blanks.
        public var key: String
        /// The value, without its leading blanks; lines of a multi-line value are joined with `\n`.
        public var value: String

        /// Creates a field holding `value` under `key`.
        public init(key: String, value: String) {
            self.key = key
            self.value = value
        }
    }

    /// The lines of the entry without their `\n`; a `\r` before the `\n` stays in the line.
    var lines: [[UInt8]]
    /// Whether the last line is followed by `\n`. Always `false` when `lines` is empty.
    var endsWithNewline: Bool

    /// Creates a secret from the decrypted bytes of an entry.
    ///
    /// Parsing never fails: bytes that are not fields are kept as free text.
    public init(parsing bytes: [UInt8]) {
        var result: [[UInt8]] = []
        var start = 0
        for index in bytes.indices where bytes[index] == SecretSyntax.newline {
            result.append(Array(bytes[start..<index]))
            start = index + 1
        }
        if start < bytes.count {
            result.append(Array(bytes[start...]))
            endsWithNewline = false
        } else {
            endsWithNewline = !bytes.isEmpty
        }
        lines = result
    }

    /// Creates a secret from the text of an entry.
    ///
    /// The same as `init(parsing: Array(text.utf8))`.
    public init(parsing text: String) {
        self.init(parsing: Array(text.utf8))
    }

    /// Creates a new entry with `password` on line 1, then `fields`, `otpauthURIs` and `notes`.
    ///
    /// Fields are written as `key: value` in the order given (a key may repeat); a value that
    /// contains a line break is written in the multi-line form. `notes` is appended verbatim, so
    /// lines in it that look like `key: value` read back as fields. The entry ends with a newline.
    ///
    /// - Throws: ``CofferError`` with code `format` when the password contains a line break, a
    ///   key is empty, contains `:` or a line break, or starts or ends with a blank, a value
    ///   starts with a blank or has a `\r` at the end of a line, or a URI does not start with
    ///   `otpauth://` or spans lines.
    public init(
        password: String,
        fields: [(key: String, value: String)] = [],
        otpauthURIs: [String] = [],
        notes: String = ""
    ) throws {
        try Self.checkPassword(Array(password.utf8))
        var tail: [[UInt8]] = []
        for uri in otpauthURIs {
            let bytes = Array(uri.utf8)
            guard SecretSyntax.isOTPAuthURI(bytes[...]), !bytes.contains(SecretSyntax.newline),
                bytes.last != SecretSyntax.carriageReturn
            else {
                throw CofferError(
                    .format, "An otpauth URI must start with \"otpauth://\" and fit on one line.")
            }
            tail.append(bytes)
        }
        if !notes.isEmpty {
            let noteLines = Secret(parsing: Array(notes.utf8)).lines
            tail.append(contentsOf: noteLines)
        }
        var body: [[UInt8]] = [Array(password.utf8)]
        for (index, field) in fields.enumerated() {
            try Self.checkKey(field.key)
            try Self.checkValue(field.value)
            let following = index == fields.count - 1 ? tail[...] : []
            body += SecretSyntax.renderField(
                key: Array(field.key.utf8),
                value: Array(field.value.utf8),
                indentation: SecretSyntax.safeIndentation(before: following),
                lineEnding: []
            )
        }
        lines = body + tail
        endsWithNewline = true
    }

    /// Creates a secret from lines that are already known to be well formed.
    init(lines: [[UInt8]], endsWithNewline: Bool) {
        self.lines = lines
        self.endsWithNewline = endsWithNewline && !lines.isEmpty
    }

    // MARK: Reading

    /// The password: line 1 without its line ending, decoded as UTF-8.
    ///
    /// Bytes that are not UTF-8 appear as U+FFFD; use ``passwordBytes`` for the exact bytes.
    /// Empty when the entry is empty.
    public var password: String {
        String(decoding: passwordBytes, as: UTF8.self)
    }

    /// The exact bytes of line 1 without its line ending (`\n` or `\r\n`).
    public var passwordBytes: [UInt8] {
        guard let first = lines.first else { return [] }
        return Array(SecretSyntax.content(first))
    }

    /// The fields on lines 2 and later, in the order they appear.
    ///
    /// Lines that start with a URI such as `otpauth://`, indented lines outside a multi-line
    /// value, and lines without a `:` are free text and not listed.
    public var fields: [Field] {
        fieldSpans().map { Field(key: $0.keyString, value: $0.valueString) }
    }

    /// The fields grouped by key, as a script reads them: each key once (ignoring case, spelled as it
    /// first appears), in the order keys first appear, with every value it has, in order.
    public var groupedFields: [(key: String, values: [String])] {
        var order: [String] = []
        var groups: [String: (key: String, values: [String])] = [:]
        for field in fields {
            let folded = field.key.lowercased()
            if groups[folded] == nil {
                order.append(folded)
                groups[folded] = (field.key, [])
            }
            groups[folded]?.values.append(field.value)
        }
        return order.compactMap { groups[$0] }
    }

    /// The value of the first field whose key equals `key`, ignoring case, or `nil` when there is none.
    ///
    /// The lines of a multi-line value are joined with `\n`.
    public func field(_ key: String) -> String? {
        let wanted = key.lowercased()
        return fieldSpans().first { $0.keyString.lowercased() == wanted }?.valueString
    }

    /// The exact bytes of the first field whose key equals `key`, ignoring case, or `nil` when there is
    /// none.
    ///
    /// As ``field(_:)``, but bytes that are not UTF-8 are kept as they are. A key that is not UTF-8
    /// never matches.
    public func fieldBytes(_ key: String) -> [UInt8]? {
        let wanted = key.lowercased()
        return fieldSpans().first { span in
            String(validating: span.key, as: UTF8.self)?.lowercased() == wanted
        }?.valueBytes
    }

    /// The lines that start with `otpauth://` (any case), line 1 included, in order.
    public var otpauthURIs: [String] {
        lines.compactMap { line in
            let content = SecretSyntax.content(line)
            return SecretSyntax.isOTPAuthURI(content) ? String(decoding: content, as: UTF8.self) : nil
        }
    }

    /// The entry's one-time password key: the `otpauth://` URI pass-otp uses (the first line whose first
    /// word starts with `otpauth://`), parsed; `nil` when the entry has none.
    ///
    /// - Throws: ``OneTimePassword/ParseError`` when that URI is malformed.
    public var oneTimePassword: OneTimePassword? {
        get throws {
            var bytes = formatted()
            defer { bytes.withUnsafeMutableBytes { wipeMemory($0.baseAddress, count: $0.count) } }
            guard let uri = OneTimePassword.uri(in: bytes) else { return nil }
            return try OneTimePassword(uri: uri)
        }
    }

    /// The entry's bytes, exactly as parsed when nothing was changed.
    public func formatted() -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(lines.reduce(lines.count) { $0 + $1.count })
        for (index, line) in lines.enumerated() {
            if index > 0 { output.append(SecretSyntax.newline) }
            output += line
        }
        if endsWithNewline { output.append(SecretSyntax.newline) }
        return output
    }

    /// Two secrets are equal when their bytes are equal.
    public static func == (lhs: Secret, rhs: Secret) -> Bool {
        lhs.formatted() == rhs.formatted()
    }

    /// A summary that shows neither the password nor the values.
    public var description: String {
        let fieldCount = fieldSpans().count
        let lineWord = lines.count == 1 ? "line" : "lines"
        let fieldWord = fieldCount == 1 ? "field" : "fields"
        return "Secret(\(lines.count) \(lineWord), \(fieldCount) \(fieldWord))"
    }

    /// A summary that shows neither the password nor the values.
    public var debugDescription: String { description }

    // MARK: Changing

    /// Replaces line 1 with `password`, keeping every other byte of the entry.
    ///
    /// An empty entry becomes `password` followed by a newline. A `\r\n` line ending on line 1
    /// is kept.
    ///
    /// - Throws: ``CofferError`` with code `format` when `password` contains `\n` or ends with `\r`.
    public mutating func setPassword(_ password: String) throws {
        try setPassword(bytes: Array(password.utf8))
    }

    /// Replaces line 1 with `bytes`, keeping every other byte of the entry.
    ///
    /// - Throws: ``CofferError`` with code `format` when `bytes` contains `\n` or ends with `\r`.
    public mutating func setPassword(bytes: [UInt8]) throws {
        try Self.checkPassword(bytes)
        guard let first = lines.first else {
            lines = [bytes]
            endsWithNewline = true
            return
        }
        lines[0] = bytes + SecretSyntax.lineEnding(of: first)
    }

    /// Sets the first field whose key equals `key` (ignoring case) to `value`, or appends `key: value`.
    ///
    /// A field found is rewritten in place under its existing spelling of the key; the lines
    /// around it stay byte-identical. Otherwise the field is appended at the end (an empty entry
    /// first gets an empty password line). A value with a line break, or the value `|`, is
    /// written in the multi-line form.
    ///
    /// - Throws: ``CofferError`` with code `format` when the key is empty, contains `:` or a line
    ///   break, or starts or ends with a blank, or when the value starts with a blank or has a
    ///   `\r` at the end of a line. Nothing changes then.
    public mutating func setField(_ key: String, _ value: String) throws {
        try Self.checkKey(key)
        try Self.checkValue(value)
        let wanted = key.lowercased()
        if let span = fieldSpans().first(where: { $0.keyString.lowercased() == wanted }) {
            let following = lines[span.range.upperBound...]
            lines.replaceSubrange(
                span.range,
                with: SecretSyntax.renderField(
                    key: span.key,
                    value: Array(value.utf8),
                    indentation: SecretSyntax.safeIndentation(before: following),
                    lineEnding: SecretSyntax.lineEnding(of: lines[span.range.lowerBound])
                )
            )
            return
        }
        let firstLineIsTerminated = lines.count > 1 || endsWithNewline
        let lineEnding = firstLineIsTerminated ? SecretSyntax.lineEnding(of: lines[0]) : []
        if lines.isEmpty { lines = [[]] }
        lines += SecretSyntax.renderField(
            key: Array(key.utf8),
            value: Array(value.utf8),
            indentation: SecretSyntax.defaultIndentation,
            lineEnding: lineEnding
        )
        endsWithNewline = true
    }

    /// Removes every field whose key equals `key` (ignoring case), multi-line values included.
    ///
    /// Other lines keep their bytes, except that a multi-line field just before a removed one is
    /// re-indented when the removal would otherwise join indented free text to its value.
    ///
    /// - Returns: Whether a field was removed.
    @discardableResult
    public mutating func removeField(_ key: String) -> Bool {
        let wanted = key.lowercased()
        var removed = false
        while true {
            let spans = fieldSpans()
            guard let index = spans.firstIndex(where: { $0.keyString.lowercased() == wanted }) else {
                return removed
            }
            removed = true
            lines.removeSubrange(spans[index].range)
            guard index > 0 else { continue }
            let previous = spans[index - 1]
            let changed = fieldSpans().first { $0.range.lowerBound == previous.range.lowerBound }
            let moved = changed?.valueLines != previous.valueLines || changed?.range != previous.range
            if moved, SecretSyntax.valueProblem(previous.valueBytes) == nil {
                lines.replaceSubrange(
                    previous.range,
                    with: SecretSyntax.renderField(
                        key: previous.key,
                        value: previous.valueBytes,
                        indentation: SecretSyntax.safeIndentation(
                            before: lines[previous.range.upperBound...]),
                        lineEnding: SecretSyntax.lineEnding(of: lines[previous.range.lowerBound]),
                        forceBlock: true
                    )
                )
            }
        }
    }

    // MARK: Checks

    /// Throws unless `bytes` can be line 1.
    static func checkPassword(_ bytes: [UInt8]) throws {
        if let problem = SecretSyntax.passwordProblem(bytes) {
            throw CofferError(.format, problem)
        }
    }

    /// Throws unless `key` can be written as a field key.
    static func checkKey(_ key: String) throws {
        if let problem = SecretSyntax.keyProblem(key) {
            throw CofferError(.format, problem)
        }
    }

    /// Throws unless `value` can be written as a field value and read back unchanged.
    static func checkValue(_ value: String) throws {
        if let problem = SecretSyntax.valueProblem(Array(value.utf8)) {
            throw CofferError(.format, problem)
        }
    }

    /// The fields on lines 2 and later with the lines they occupy.
    func fieldSpans() -> [SecretSyntax.FieldSpan] {
        SecretSyntax.fieldSpans(in: lines)
    }
}
