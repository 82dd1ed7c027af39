#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A one-time password key: an `otpauth://` URI (Google Authenticator's key URI format) as pass-otp
/// 1.2 stores it in an entry, and the codes it generates (RFC 4226 HOTP, RFC 6238 TOTP).
///
/// ```swift
/// let key = try OneTimePassword(uri: "otpauth://totp/Example:alice?secret=JBSWY3DPEHPK3PXP&issuer=Example")
/// let code = try key.code(at: Date())     // "123456"
/// ```
///
/// Parsing follows pass-otp: the URI needs a type (`totp` or `hotp`), an account name in its label, a
/// `secret` parameter and, for HOTP, a decimal `counter`; `digits`, `period` and `algorithm` are read
/// only when a code is made, as oathtool reads them (so a URI that pass-otp stores is always accepted
/// here). The secret is decoded as oathtool decodes base32: spaces ignored, any case, padding optional.
///
/// The counter of an HOTP URI is, as pass-otp keeps it, the counter of the last code used:
/// ``advanced()`` moves it on and ``code(at:)`` then gives the code of the new value.
/// `description` never shows the secret.
public struct OneTimePassword: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    /// Time-based (RFC 6238) or counter-based (RFC 4226).
    public enum Kind: String, Sendable {
        /// A code for each period of time (`otpauth://totp/...`).
        case totp
        /// A code for each value of a counter (`otpauth://hotp/...`).
        case hotp
    }

    /// The HMAC hash function.
    public enum Algorithm: String, Sendable, CaseIterable {
        /// HMAC-SHA-1, the default.
        case sha1 = "SHA1"
        /// HMAC-SHA-256.
        case sha256 = "SHA256"
        /// HMAC-SHA-512.
        case sha512 = "SHA512"
    }

    /// Why a URI is not a one-time password key, with the URI as read (backquotes and double quotes percent-encoded).
    ///
    /// The URI may hold the secret: `description` leaves it out.
    public enum ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        /// It is not of the form `otpauth://TYPE[/LABEL]?PARAMETERS`.
        case unparsable(uri: String)
        /// Its label names no account.
        case missingAccount(uri: String)
        /// It has no `secret` parameter.
        case missingSecret(uri: String)
        /// It is an HOTP URI without a decimal `counter`.
        case missingCounter(uri: String)

        /// What is wrong, without the URI.
        public var description: String {
            switch self {
            case .unparsable: return "not an otpauth://totp or otpauth://hotp URI"
            case .missingAccount: return "the otpauth URI names no account"
            case .missingSecret: return "the otpauth URI has no secret"
            case .missingCounter: return "the otpauth://hotp URI has no decimal counter"
            }
        }
    }

    /// Why no code can be made from a key, with the value at fault as written in the URI.
    public enum CodeError: Error, Sendable, Equatable {
        /// The secret is not base32.
        case invalidSecret
        /// `digits` is not a number.
        case invalidDigits(String)
        /// `digits` is a number other than 6 to 10.
        case unsupportedDigits(String)
        /// `period` is not a number of seconds.
        case invalidPeriod(String)
    }

    /// The URI as read, with backquotes and double quotes percent-encoded (as pass-otp keeps it).
    public let uri: String
    /// TOTP or HOTP.
    public let kind: Kind
    /// The label as written (`Issuer:account`), without percent-decoding.
    public let label: String
    /// The issuer: the `issuer` parameter, else the label's part before `:`; percent-decoded.
    public let issuer: String?
    /// The account name: the label's part after `:` (or the whole label); percent-decoded.
    public let account: String
    /// The base32 secret as written.
    public let secret: String
    /// The `digits` parameter as written.
    public let digitsParameter: String?
    /// The `period` parameter as written.
    public let periodParameter: String?
    /// The `algorithm` parameter as written.
    public let algorithmParameter: String?
    /// The `counter` parameter as written (decimal digits for an HOTP key).
    public let counterParameter: String?

    /// A URI as a message may show it: the value of every `secret=` parameter replaced by `<hidden>`
    /// (pass-otp prints it whole; the secret is the one thing the URI must not leak).
    public static func masked(_ uri: String) -> String {
        var result = ""
        var rest = Substring(uri)
        while let found = rest.firstRange(of: "secret=") {
            let start = found.lowerBound
            // Only a parameter: at the start of the query or after `&` (or `?`).
            let atParameter =
                start == rest.startIndex
                ? result.last.map { $0 == "?" || $0 == "&" } ?? false
                : ["?", "&"].contains(rest[rest.index(before: start)])
            result += rest[..<found.upperBound]
            rest = rest[found.upperBound...]
            guard atParameter else { continue }
            let end = rest.firstIndex { $0 == "&" || $0 == "#" } ?? rest.endIndex
            if end > rest.startIndex { result += "<hidden>" }
            rest = rest[end...]
        }
        return result + rest
    }

    /// The `otpauth://totp` URI pass-otp's `insert --secret` makes: the label `ISSUER:ACCOUNT` (either
    /// may be missing, not both), the secret without blanks, and the issuer again as a parameter;
    /// `utf8Locale` says how names are percent-encoded (as pass-otp's `urlencode` under the locale).
    public static func totpURI(issuer: String?, account: String?, secret: SecureBytes, utf8Locale: Bool)
        -> String
    {
        let encodedIssuer = issuer.map { URIText.encode($0, utf8Locale: utf8Locale) } ?? ""
        let encodedAccount = account.map { URIText.encode($0, utf8Locale: utf8Locale) } ?? ""
        // A secret is often shown in groups ("JBSW Y3DP ..."): the blanks are no part of it.
        var bytes = secret.withUnsafeBytes { $0.filter { $0 != 32 && $0 != 9 } }
        defer { wipeMemory(&bytes, count: bytes.count) }
        let separator = !encodedIssuer.isEmpty && !encodedAccount.isEmpty ? ":" : ""
        var uri =
            "otpauth://totp/\(encodedIssuer)\(separator)\(encodedAccount)?secret="
            + String(decoding: bytes, as: UTF8.self)
        if !encodedIssuer.isEmpty { uri += "&issuer=\(encodedIssuer)" }
        return uri
    }

    /// An entry's text with `uri` as its key, as pass-otp's `append` writes it: the lines read as `read -r`
    /// reads them (NUL bytes dropped, a last line without a newline kept), every `otpauth://` line
    /// replaced by `uri`, or `uri` added as a last line when there is none; `replaced` says which.
    public static func settingURI(_ uri: String, in contents: SecureBytes) -> (
        text: SecureBytes, replaced: Bool
    ) {
        var lines = contents.withUnsafeBytes { bytes -> [[UInt8]] in
            var pieces = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map {
                $0.filter { $0 != 0 }
            }
            if bytes.last == UInt8(ascii: "\n") || bytes.isEmpty { pieces.removeLast() }
            return pieces
        }
        defer {
            for index in lines.indices { wipeMemory(&lines[index], count: lines[index].count) }
        }
        let replacing = lines.contains { $0.starts(with: "otpauth://".utf8) }
        if replacing {
            for index in lines.indices where lines[index].starts(with: "otpauth://".utf8) {
                wipeMemory(&lines[index], count: lines[index].count)
                lines[index] = Array(uri.utf8)
            }
        } else {
            if lines.isEmpty { lines = [[]] }
            lines.append(Array(uri.utf8))
        }
        var text = Array(lines.joined(separator: [UInt8(ascii: "\n")])) + [UInt8(ascii: "\n")]
        defer { wipeMemory(&text, count: text.count) }
        return (SecureBytes(text), replacing)
    }

    /// Whether an entry's text holds an `otpauth://` line (NUL bytes dropped, as `read -r` reads it).
    public static func hasURILine(_ contents: SecureBytes) -> Bool {
        contents.withUnsafeBytes { bytes in
            bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).contains {
                $0.filter { $0 != 0 }.starts(with: "otpauth://".utf8)
            }
        }
    }

    /// Parses an `otpauth://` URI as pass-otp 1.2 does.
    ///
    /// - Throws: ``ParseError``, whose URI has its secret hidden (``masked(_:)``).
    public init(uri text: String) throws {
        let uri = text.replacing("`", with: "%60").replacing("\"", with: "%22")
        guard let parts = Self.split(uri) else { throw ParseError.unparsable(uri: Self.masked(uri)) }
        self.uri = uri
        kind = parts.kind
        label = parts.label
        var account = URIText.decode(parts.accountPart ?? "")
        var issuer: String?
        if account.isEmpty {
            account = URIText.decode(parts.issuerPart ?? "")
        } else {
            issuer = URIText.decode(parts.issuerPart ?? "")
        }
        guard !account.isEmpty else { throw ParseError.missingAccount(uri: Self.masked(uri)) }
        var values: [String: String] = [:]
        for parameter in Self.parameters(parts.query) {
            guard let equals = parameter.firstIndex(of: "="), equals != parameter.startIndex else { continue }
            let value = String(parameter[parameter.index(after: equals)...])
            guard !value.isEmpty else { continue }
            let key = String(parameter[..<equals])
            if key == "issuer" {
                issuer = URIText.decode(value)
            } else {
                values[key] = value
            }
        }
        guard let secret = values["secret"] else { throw ParseError.missingSecret(uri: Self.masked(uri)) }
        if kind == .hotp {
            guard let counter = values["counter"], counter.utf8.allSatisfy({ (48...57).contains($0) }) else {
                throw ParseError.missingCounter(uri: Self.masked(uri))
            }
        }
        self.account = account
        self.issuer = issuer
        self.secret = secret
        digitsParameter = values["digits"]
        periodParameter = values["period"]
        algorithmParameter = values["algorithm"]
        counterParameter = values["counter"]
    }

    /// The parts of `otpauth://(totp|hotp)(/(ISSUER)?(:(ACCOUNT))?)?\?QUERY`, where the label parts hold
    /// neither `:` nor `?` and the query is not empty.
    private static func split(_ uri: String) -> (
        kind: Kind, label: String, issuerPart: String?, accountPart: String?, query: String
    )? {
        let scalars = Array(uri.unicodeScalars)
        let scheme = Array("otpauth://".unicodeScalars)
        guard scalars.starts(with: scheme) else { return nil }
        var index = scheme.count
        let kind: Kind
        if scalars[index...].starts(with: "totp".unicodeScalars) {
            kind = .totp
        } else if scalars[index...].starts(with: "hotp".unicodeScalars) {
            kind = .hotp
        } else {
            return nil
        }
        index += 4
        func text(_ range: Range<Int>) -> String {
            var result = String.UnicodeScalarView()
            result.append(contentsOf: scalars[range])
            return String(result)
        }
        var issuerPart: String?
        var accountPart: String?
        var label = ""
        if index < scalars.count && scalars[index] == "/" {
            index += 1
            let start = index
            while index < scalars.count && scalars[index] != ":" && scalars[index] != "?" { index += 1 }
            if index > start { issuerPart = text(start..<index) }
            if index < scalars.count && scalars[index] == ":" {
                index += 1
                let accountStart = index
                while index < scalars.count && scalars[index] != ":" && scalars[index] != "?" { index += 1 }
                accountPart = text(accountStart..<index)
            }
            label = text(start..<index)
        }
        guard index < scalars.count, scalars[index] == "?", index + 1 < scalars.count else { return nil }
        return (kind, label, issuerPart, accountPart, text((index + 1)..<scalars.count))
    }

    /// The query's parameters as pass-otp reads them: its first line, as `echo` prints it, split at `&`.
    private static func parameters(_ query: String) -> [Substring] {
        var line = query[...]
        if let newline = line.firstIndex(of: "\n") { line = line[..<newline] }
        // `echo "$p"` takes a first word made only of its options (-n, -e, -E) as options.
        if line.count > 1, line.hasPrefix("-"), line.dropFirst().allSatisfy({ "neE".contains($0) }) {
            return []
        }
        return line.split(separator: "&", omittingEmptySubsequences: true)
    }

    // MARK: - Values

    /// The hash function: `SHA256` and `SHA512` in any case, else SHA-1 (as oathtool takes any other name).
    public var algorithm: Algorithm {
        switch algorithmParameter?.lowercased() {
        case "sha256": return .sha256
        case "sha512": return .sha512
        default: return .sha1
        }
    }

    /// The number of digits of a code: 6 by default; 6 to 10, written as C's `strtol` reads numbers.
    ///
    /// - Throws: ``CodeError/invalidDigits(_:)``, ``CodeError/invalidSecret`` or
    ///   ``CodeError/unsupportedDigits(_:)``.
    ///
    /// A digits parameter that is no number is reported before a secret that is not base32, and one out
    /// of range after it, as oathtool reports them.
    public var digits: Int {
        get throws {
            guard let text = digitsParameter else {
                _ = try key()
                return 6
            }
            guard let value = Self.cNumber(text) else { throw CodeError.invalidDigits(text) }
            _ = try key()
            guard (6...10).contains(value) else { throw CodeError.unsupportedDigits(text) }
            return value
        }
    }

    /// The length of a TOTP period in seconds: 30 by default, and for 0; at most 2³²−1 (larger values
    /// wrap, as in liboath).
    ///
    /// - Throws: ``CodeError/invalidPeriod(_:)`` when it is not a decimal number of seconds.
    public var period: Int {
        get throws {
            guard let text = periodParameter else { return 30 }
            let digits = text.drop(while: { $0 == " " || ("\t"..."\r").contains($0) })
            guard !digits.isEmpty, digits.utf8.allSatisfy({ (48...57).contains($0) }),
                let value = Int64(digits)
            else { throw CodeError.invalidPeriod(text) }
            let step = Int(UInt32(truncatingIfNeeded: value))
            return step == 0 ? 30 : step
        }
    }

    /// The counter of an HOTP key: the counter of the last code used (`nil` for TOTP).
    public var counter: Int64? {
        guard kind == .hotp, let counterParameter else { return nil }
        return Self.wrappingDecimal(counterParameter)
    }

    /// The key's bytes, decoded from ``secret`` as oathtool decodes base32, into a wiped buffer.
    ///
    /// - Throws: ``CodeError/invalidSecret``.
    package func key() throws -> SecureBytes {
        guard let key = Base32.decode(secret) else { throw CodeError.invalidSecret }
        return key
    }

    // MARK: - Codes

    /// The code for `date` (TOTP), or for the key's ``counter`` (HOTP, whatever the date).
    ///
    /// - Throws: ``CodeError`` when the secret, `digits` or `period` cannot be used.
    public func code(at date: Date) throws -> String {
        // oathtool's order: the number of digits, the secret, the range of digits, then the period.
        _ = try digits
        switch kind {
        case .hotp:
            return try code(counter: UInt64(bitPattern: counter ?? 0))
        case .totp:
            let seconds = Int64(date.timeIntervalSince1970.rounded(.down))
            return try code(counter: UInt64(bitPattern: seconds / Int64(try period)))
        }
    }

    /// The HOTP value of `counter` (RFC 4226) with the key's secret, algorithm and digits; for a TOTP key,
    /// `counter` is the number of periods since 1970.
    ///
    /// - Throws: ``CodeError`` when the secret or `digits` cannot be used.
    public func code(counter: UInt64) throws -> String {
        try code(counter: counter, algorithm: algorithm)
    }

    /// The HOTP value of `counter` with `algorithm` instead of the key's (pass-otp makes HOTP codes with
    /// SHA-1 whatever the URI says).
    package func code(counter: UInt64, algorithm: Algorithm) throws -> String {
        let digits = try digits
        let key = try key()
        let message = withUnsafeBytes(of: counter.bigEndian) { Array($0) }
        guard let mac = key.withUnsafeBytes({ Gcrypt.hmac(algorithm, key: $0, message: message) }) else {
            throw CofferError(.invalidArgument, "libgcrypt cannot compute HMAC-\(algorithm.rawValue)")
        }
        let value: UInt64 = mac.withUnsafeBytes { bytes in
            let offset = Int(bytes[bytes.count - 1] & 0x0f)
            return (UInt64(bytes[offset] & 0x7f) << 24) | (UInt64(bytes[offset + 1]) << 16)
                | (UInt64(bytes[offset + 2]) << 8) | UInt64(bytes[offset + 3])
        }
        var modulus: UInt64 = 1
        for _ in 0..<digits { modulus *= 10 }
        let text = String(value % modulus)
        return String(repeating: "0", count: digits - text.count) + text
    }

    /// The key with its HOTP counter moved on by one (as pass-otp rewrites the URI: `&counter=N` becomes
    /// `&counter=N+1`); a TOTP key is returned unchanged.
    public func advanced() -> OneTimePassword {
        guard kind == .hotp, let counter, counter < Int64.max else { return self }
        return (try? OneTimePassword(uri: replacingCounter(with: String(counter + 1)))) ?? self
    }

    /// The URI with every `counter` parameter set to `value`, so that a URI naming it twice moves on too.
    package func replacingCounter(with value: String) -> String {
        guard let question = uri.firstIndex(of: "?") else { return uri }
        let query = uri[uri.index(after: question)...].split(separator: "&", omittingEmptySubsequences: false)
        return String(uri[...question])
            + query.map { $0.hasPrefix("counter=") ? "counter=" + value : String($0) }.joined(separator: "&")
    }

    /// Whether ``advanced()`` can move the HOTP counter on: it cannot past `Int64.max`, nor from a
    /// counter written past it (pass-otp's arithmetic wraps such a one to a negative number, and moving
    /// on from there would give the codes of small counters again).
    public var canAdvance: Bool {
        // Only a counter read exactly: one past 64 bits wraps (as pass-otp's shell arithmetic does) and
        // would hand out old codes while looking higher.
        guard kind == .hotp, let counterParameter, let counter = Int64(counterParameter) else { return false }
        return counter >= 0 && counter < Int64.max
    }

    // MARK: - Entries

    /// The URI pass-otp uses in an entry's text: the first line whose first word (blanks skipped) starts
    /// with `otpauth://`, that word alone; `nil` when there is none.
    public static func uri(in contents: some Collection<UInt8>) -> String? {
        for line in contents.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true) {
            let isBlank = { (byte: UInt8) in byte == 32 || byte == 9 }
            let word = line.drop(while: isBlank).prefix { !isBlank($0) }
            if word.starts(with: "otpauth://".utf8) {
                return String(decoding: word.filter { $0 != 0 }, as: UTF8.self)
            }
        }
        return nil
    }

    /// Where the URI that ``uri(in:)`` finds lies in `contents` (text without NUL bytes).
    package static func uriRange(in contents: [UInt8]) -> Range<Int>? {
        let isBlank = { (byte: UInt8) in byte == 32 || byte == 9 }
        var start = 0
        while start < contents.count {
            let end = contents[start...].firstIndex(of: UInt8(ascii: "\n")) ?? contents.count
            let first = contents[start..<end].firstIndex { !isBlank($0) } ?? end
            let last = contents[first..<end].firstIndex(where: isBlank) ?? end
            if contents[first..<last].starts(with: "otpauth://".utf8) { return first..<last }
            start = end + 1
        }
        return nil
    }

    /// The entry's text with the URI pass-otp uses (see ``uri(in:)``: the first word of the first line
    /// that starts with `otpauth://`, blanks skipped) replaced by ``uri``; the rest of that line and every
    /// other line are kept (pass-otp writes the URI over every line starting with `otpauth://`, and over
    /// what follows it on the line). Final newlines are folded into one (as bash's command substitution
    /// does) and NUL bytes dropped, as pass-otp writes the entry back.
    public func replacingURIs(in contents: some Collection<UInt8>) -> [UInt8] {
        var text = contents.filter { $0 != 0 }
        defer { text.withUnsafeMutableBytes { wipeMemory($0.baseAddress, count: $0.count) } }
        while text.last == UInt8(ascii: "\n") { text.removeLast() }
        var lines = text.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map(
            Array.init)
        defer {
            for index in lines.indices {
                lines[index].withUnsafeMutableBytes { wipeMemory($0.baseAddress, count: $0.count) }
            }
        }
        let isBlank = { (byte: UInt8) in byte == 32 || byte == 9 }
        for index in lines.indices {
            let start = lines[index].firstIndex { !isBlank($0) } ?? lines[index].endIndex
            guard lines[index][start...].starts(with: "otpauth://".utf8) else { continue }
            let end = lines[index][start...].firstIndex(where: isBlank) ?? lines[index].endIndex
            var line = Array(lines[index][..<start]) + Array(uri.utf8) + Array(lines[index][end...])
            swap(&line, &lines[index])
            line.withUnsafeMutableBytes { wipeMemory($0.baseAddress, count: $0.count) }
            break
        }
        if lines.isEmpty || lines == [[]] { return [UInt8(ascii: "\n")] }
        return Array(lines.joined(separator: [UInt8(ascii: "\n")])) + [UInt8(ascii: "\n")]
    }

    // MARK: - Description

    /// The type, issuer and account; never the secret.
    public var description: String {
        "OneTimePassword(\(kind.rawValue), issuer: \(issuer.map { "\"\($0)\"" } ?? "nil"), account: \"\(account)\")"
    }

    /// Same as ``description``.
    public var debugDescription: String { description }

    // MARK: - Numbers

    /// A number as C's `strtol(text, &end, 0)` reads it when it must use the whole text: blanks, a sign,
    /// then decimal, `0` octal or `0x` hexadecimal digits; `nil` when any character is left over.
    static func cNumber(_ text: String) -> Int? {
        var bytes = Array(text.utf8)[...]
        bytes = bytes.drop(while: { $0 == 32 || (9...13).contains($0) })
        var negative = false
        if let sign = bytes.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
            negative = sign == UInt8(ascii: "-")
            bytes = bytes.dropFirst()
        }
        var radix = 10
        if bytes.starts(with: "0x".utf8) || bytes.starts(with: "0X".utf8), bytes.count > 2,
            hexValue(bytes[bytes.startIndex + 2]) != nil
        {
            radix = 16
            bytes = bytes.dropFirst(2)
        } else if bytes.first == UInt8(ascii: "0") {
            radix = 8
        }
        guard !bytes.isEmpty else { return text.isEmpty ? 0 : nil }
        var value = 0
        for byte in bytes {
            guard let digit = hexValue(byte), digit < radix else { return nil }
            value = min(value &* radix &+ digit, Int(Int32.max))
        }
        return negative ? -value : value
    }

    /// The value of a hexadecimal digit.
    static func hexValue(_ byte: UInt8) -> Int? {
        switch byte {
        case 48...57: return Int(byte - 48)
        case 65...70: return Int(byte - 55)
        case 97...102: return Int(byte - 87)
        default: return nil
        }
    }

    /// Decimal digits read as bash's arithmetic reads them, wrapping at 64 bits.
    static func wrappingDecimal(_ text: String) -> Int64 {
        text.utf8.reduce(Int64(0)) { $0 &* 10 &+ Int64($1 - 48) }
    }
}

/// pass-otp's `urlencode` and `urldecode`.
package enum URIText {
    /// `urldecode`: `+` is a space and `%` starts `\x`, then `printf %b` expands backslash escapes;
    /// the command substitution drops final newlines.
    package static func decode(_ text: String) -> String {
        let escaped = Array(text.replacing("+", with: " ").replacing("%", with: "\\x").utf8)
        var output: [UInt8] = []
        var index = 0
        func digits(_ start: Int, _ limit: Int, _ radix: Int) -> (value: UInt32, count: Int) {
            var value: UInt32 = 0
            var count = 0
            while count < limit, start + count < escaped.count,
                let digit = OneTimePassword.hexValue(escaped[start + count]), digit < radix
            {
                value = value * UInt32(radix) + UInt32(digit)
                count += 1
            }
            return (value, count)
        }
        scan: while index < escaped.count {
            let byte = escaped[index]
            guard byte == UInt8(ascii: "\\"), index + 1 < escaped.count else {
                output.append(byte)
                index += 1
                continue
            }
            let next = escaped[index + 1]
            index += 2
            switch next {
            case UInt8(ascii: "a"): output.append(7)
            case UInt8(ascii: "b"): output.append(8)
            case UInt8(ascii: "e"), UInt8(ascii: "E"): output.append(27)
            case UInt8(ascii: "f"): output.append(12)
            case UInt8(ascii: "n"): output.append(10)
            case UInt8(ascii: "r"): output.append(13)
            case UInt8(ascii: "t"): output.append(9)
            case UInt8(ascii: "v"): output.append(11)
            case UInt8(ascii: "\\"): output.append(UInt8(ascii: "\\"))
            case UInt8(ascii: "c"): break scan
            case UInt8(ascii: "0"):
                let octal = digits(index, 3, 8)
                output.append(UInt8(truncatingIfNeeded: octal.value))
                index += octal.count
            case UInt8(ascii: "1")...UInt8(ascii: "7"):
                let octal = digits(index - 1, 3, 8)
                output.append(UInt8(truncatingIfNeeded: octal.value))
                index += octal.count - 1
            case UInt8(ascii: "x"):
                let hex = digits(index, 2, 16)
                if hex.count == 0 {
                    output += [UInt8(ascii: "\\"), next]
                } else {
                    output.append(UInt8(hex.value))
                    index += hex.count
                }
            case UInt8(ascii: "u"), UInt8(ascii: "U"):
                let hex = digits(index, next == UInt8(ascii: "u") ? 4 : 8, 16)
                if hex.count == 0 {
                    output += [UInt8(ascii: "\\"), next]
                } else {
                    output += Array(String(Unicode.Scalar(hex.value).map(Character.init) ?? "?").utf8)
                    index += hex.count
                }
            default:
                output += [UInt8(ascii: "\\"), next]
            }
        }
        output.removeAll { $0 == 0 }
        while output.last == UInt8(ascii: "\n") { output.removeLast() }
        return String(decoding: output, as: UTF8.self)
    }

    /// `urlencode`: letters, digits and `.~_-` stay, a space is `+`, anything else `%XX` of its code
    /// point (in a UTF-8 locale) or of each byte.
    package static func encode(_ text: String, utf8Locale: Bool) -> String {
        var result = ""
        func isPlain(_ value: UInt32) -> Bool {
            (48...57).contains(value) || (65...90).contains(value) || (97...122).contains(value)
                || [46, 126, 95, 45].contains(value)
        }
        func percent(_ value: UInt32) {
            let hex = String(value, radix: 16, uppercase: true)
            result += "%" + (hex.count < 2 ? "0" + hex : hex)
        }
        if utf8Locale {
            for scalar in text.unicodeScalars {
                if isPlain(scalar.value) {
                    result.unicodeScalars.append(scalar)
                } else if scalar == " " {
                    result += "+"
                } else {
                    percent(scalar.value)
                }
            }
        } else {
            for byte in text.utf8 {
                if isPlain(UInt32(byte)) {
                    result.unicodeScalars.append(Unicode.Scalar(byte))
                } else if byte == 32 {
                    result += "+"
                } else {
                    percent(UInt32(byte))
                }
            }
        }
        return result
    }
}

/// Base32 (RFC 4648) decoding as oathtool does it (encoding: `Base32+Encoding.swift`): liboath removes spaces, upper-cases and adds the
/// padding a final group lacks, then gnulib decodes each group of eight characters.
package enum Base32 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    /// The bytes of `text`, or `nil` when oathtool would refuse it.
    package static func decode(_ text: String) -> SecureBytes? {
        var characters = text.utf8.filter { $0 != UInt8(ascii: " ") }.map { byte in
            (97...122).contains(byte) ? byte - 32 : byte
        }
        defer { characters.withUnsafeMutableBytes { wipeMemory($0.baseAddress, count: $0.count) } }
        let padding = [2: 6, 4: 4, 5: 3, 7: 1][characters.count % 8] ?? 0
        characters += Array(repeating: UInt8(ascii: "="), count: padding)
        guard characters.count % 8 == 0 else { return nil }
        let output = SecureByteSink(capacity: characters.count / 8 * 5 + 1)
        var values = [UInt8](repeating: 0, count: 8)
        var group = [UInt8](repeating: 0, count: 5)
        defer {
            values.withUnsafeMutableBytes { wipeMemory($0.baseAddress, count: $0.count) }
            group.withUnsafeMutableBytes { wipeMemory($0.baseAddress, count: $0.count) }
        }
        var start = 0
        while start < characters.count {
            let block = characters[start..<(start + 8)]
            start += 8
            // How many characters carry data: 2, 4, 5, 7 or 8, the rest being '='.
            let used = block.firstIndex(of: UInt8(ascii: "=")).map { $0 - block.startIndex } ?? 8
            guard [2, 4, 5, 7, 8].contains(used),
                block.dropFirst(used).allSatisfy({ $0 == UInt8(ascii: "=") })
            else { return nil }
            for (offset, character) in block.prefix(used).enumerated() {
                guard let value = alphabet.firstIndex(of: character) else { return nil }
                values[offset] = UInt8(value)
            }
            for offset in used..<8 { values[offset] = 0 }
            group[0] = values[0] << 3 | values[1] >> 2
            group[1] = values[1] << 6 | values[2] << 1 | values[3] >> 4
            group[2] = values[3] << 4 | values[4] >> 1
            group[3] = values[4] << 7 | values[5] << 2 | values[6] >> 3
            group[4] = values[6] << 5 | values[7]
            let count = [2: 1, 4: 2, 5: 3, 7: 4, 8: 5][used]!
            group.withUnsafeBytes { output.append($0.baseAddress!, length: count) }
        }
        return output.finish()
    }
}
