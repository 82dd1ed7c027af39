#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A type whose values the Codable encoding stores as the text of one field.
protocol SecretScalar {
    /// The field text, or `nil` when the value has no text form (a date outside years 0–9999).
    func secretText() -> String?
    /// The value a field's text stands for, or `nil` when the text is not valid.
    static func parseSecretText(_ text: String) -> Self?
    /// What a valid text looks like, for error messages.
    static var secretTextExample: String { get }
}

extension SecretScalar {
    /// `text` without leading and trailing spaces and tabs.
    static func trimmingBlanks(_ text: String) -> Substring {
        var trimmed = text[...]
        while let first = trimmed.first, first == " " || first == "\t" { trimmed.removeFirst() }
        while let last = trimmed.last, last == " " || last == "\t" { trimmed.removeLast() }
        return trimmed
    }
}

extension String: SecretScalar {
    func secretText() -> String? { self }
    static func parseSecretText(_ text: String) -> String? { text }
    static var secretTextExample: String { "text" }
}

extension Bool: SecretScalar {
    func secretText() -> String? { self ? "true" : "false" }

    static func parseSecretText(_ text: String) -> Bool? {
        switch trimmingBlanks(text).lowercased() {
        case "true", "yes", "on", "1": true
        case "false", "no", "off", "0": false
        default: nil
        }
    }

    static var secretTextExample: String { "true or false" }
}

extension SecretScalar where Self: FixedWidthInteger {
    func secretText() -> String? { String(self) }
    static func parseSecretText(_ text: String) -> Self? { Self(trimmingBlanks(text), radix: 10) }
    static var secretTextExample: String { "a whole number from \(Self.min) to \(Self.max)" }
}

extension Int: SecretScalar {}
extension Int8: SecretScalar {}
extension Int16: SecretScalar {}
extension Int32: SecretScalar {}
extension Int64: SecretScalar {}
extension UInt: SecretScalar {}
extension UInt8: SecretScalar {}
extension UInt16: SecretScalar {}
extension UInt32: SecretScalar {}
extension UInt64: SecretScalar {}

extension SecretScalar where Self: BinaryFloatingPoint & LosslessStringConvertible {
    func secretText() -> String? { description }
    static func parseSecretText(_ text: String) -> Self? { Self(String(trimmingBlanks(text))) }
    static var secretTextExample: String { "a number such as 1.5" }
}

extension Double: SecretScalar {}
extension Float: SecretScalar {}

extension Date: SecretScalar {
    func secretText() -> String? { SecretDateFormat.string(from: self) }
    static func parseSecretText(_ text: String) -> Date? {
        SecretDateFormat.date(from: String(trimmingBlanks(text)))
    }
    static var secretTextExample: String { "an ISO 8601 date such as 2024-05-01T12:00:00Z" }
}

extension Data: SecretScalar {
    func secretText() -> String? { SecretBase64.encode(self) }
    static func parseSecretText(_ text: String) -> Data? {
        SecretBase64.decode(trimmingBlanks(text)).map { Data($0) }
    }
    static var secretTextExample: String { "base64 such as aGVsbG8=" }
}

extension URL: SecretScalar {
    func secretText() -> String? { absoluteString }
    static func parseSecretText(_ text: String) -> URL? { URL(string: String(trimmingBlanks(text))) }
    static var secretTextExample: String { "a URL such as https://example.com" }
}

extension Decimal: SecretScalar {
    func secretText() -> String? { isNaN ? "NaN" : description }
    static func parseSecretText(_ text: String) -> Decimal? {
        let trimmed = String(trimmingBlanks(text))
        if trimmed == "NaN" { return .nan }
        guard let first = trimmed.unicodeScalars.first,
            first == "-" || ("0"..."9").contains(first) || first == "."
        else { return nil }
        return Decimal(string: trimmed, locale: nil)
    }
    static var secretTextExample: String { "a decimal number such as 12.34" }
}

/// Standard base64 (RFC 4648 section 4) with `=` padding.
package enum SecretBase64 {
    private static let alphabet = Array(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, character) in alphabet.enumerated() { table[Int(character)] = UInt8(index) }
        return table
    }()

    /// The base64 text of `bytes`, padded with `=` to a multiple of four characters.
    package static func encode(_ bytes: some Collection<UInt8>) -> String {
        let input = Array(bytes)
        var output: [UInt8] = []
        output.reserveCapacity((input.count + 2) / 3 * 4)
        var index = 0
        while index < input.count {
            let remaining = input.count - index
            let first = UInt32(input[index])
            let second = remaining > 1 ? UInt32(input[index + 1]) : 0
            let third = remaining > 2 ? UInt32(input[index + 2]) : 0
            let group = first << 16 | second << 8 | third
            output.append(alphabet[Int(group >> 18 & 0x3F)])
            output.append(alphabet[Int(group >> 12 & 0x3F)])
            output.append(remaining > 1 ? alphabet[Int(group >> 6 & 0x3F)] : UInt8(ascii: "="))
            output.append(remaining > 2 ? alphabet[Int(group & 0x3F)] : UInt8(ascii: "="))
            index += 3
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// The bytes `text` stands for, or `nil` when it is not base64.
    ///
    /// Padding may be left out; anything outside the alphabet makes the text invalid.
    package static func decode(_ text: some StringProtocol) -> [UInt8]? {
        var characters = Array(text.utf8)
        var padding = 0
        while characters.last == UInt8(ascii: "=") {
            characters.removeLast()
            padding += 1
        }
        guard padding <= 2, padding == 0 || (characters.count + padding) % 4 == 0,
            characters.count % 4 != 1
        else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(characters.count * 3 / 4)
        var group: UInt32 = 0
        var bits = 0
        for character in characters {
            let value = values[Int(character)]
            guard value != 0xFF else { return nil }
            group = group << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: group >> UInt32(bits)))
                group &= (1 << UInt32(bits)) - 1
            }
        }
        return output
    }
}

/// ISO 8601 date-times in UTC (`2024-05-01T12:00:00Z`), with as many fractional digits as it
/// takes to read the same `Date` back.
enum SecretDateFormat {
    private static let secondsPerDay = 86_400
    /// Seconds from 1970-01-01 to 2001-01-01, the reference date of `Date`.
    private static let referenceOffset = 978_307_200
    /// Days from 0000-01-01 to 1970-01-01 in the proleptic Gregorian calendar.
    private static let daysBefore1970 = 719_528
    private static let daysPer400Years = 146_097
    private static let earliest = -daysBefore1970 * secondsPerDay
    private static let latest = (daysSince1970(year: 10_000, month: 1, day: 1)) * secondsPerDay - 1

    /// The text of `date`, or `nil` when its year is outside 0–9999.
    static func string(from date: Date) -> String? {
        let interval = date.timeIntervalSinceReferenceDate
        guard interval.isFinite else { return nil }
        let whole = interval.rounded(.down)
        guard whole >= Double(earliest - referenceOffset), whole <= Double(latest - referenceOffset) else {
            return nil
        }
        let seconds = Int(whole) + referenceOffset
        let days = floorDivide(seconds, secondsPerDay)
        let secondOfDay = seconds - days * secondsPerDay
        let (year, month, day) = civilDate(daysSince1970: days)
        var text = padded(year, 4) + "-" + padded(month, 2) + "-" + padded(day, 2) + "T"
        text += padded(secondOfDay / 3600, 2) + ":" + padded(secondOfDay / 60 % 60, 2) + ":"
        text += padded(secondOfDay % 60, 2)
        let fraction = interval - whole
        if fraction > 0 { text += "." + fractionDigits(fraction, whole: whole, interval: interval) }
        return text + "Z"
    }

    /// The date `text` stands for, or `nil` when it is not an ISO 8601 date-time.
    ///
    /// Accepts `YYYY-MM-DD`, optionally followed by `T` (or a space) and `HH:MM[:SS[.fraction]]`,
    /// then `Z`, `+HH:MM`, `+HHMM`, `+HH` or nothing (UTC).
    static func date(from text: String) -> Date? {
        var scanner = DateScanner(Array(text.utf8))
        guard let year = scanner.number(digits: 4), scanner.skip("-"),
            let month = scanner.number(digits: 2), (1...12).contains(month), scanner.skip("-"),
            let day = scanner.number(digits: 2), (1...daysInMonth(month, year: year)).contains(day)
        else { return nil }
        var seconds = daysSince1970(year: year, month: month, day: day) * secondsPerDay
        var fraction = 0.0
        if scanner.skip("T") || scanner.skip("t") || scanner.skip(" ") {
            guard let hour = scanner.number(digits: 2), (0...23).contains(hour), scanner.skip(":"),
                let minute = scanner.number(digits: 2), (0...59).contains(minute)
            else { return nil }
            var second = 0
            if scanner.skip(":") {
                guard let value = scanner.number(digits: 2), (0...59).contains(value) else { return nil }
                second = value
                if scanner.skip(".") || scanner.skip(",") {
                    let digits = scanner.digits()
                    guard !digits.isEmpty, let value = Double("0." + digits) else { return nil }
                    fraction = value
                }
            }
            seconds += hour * 3600 + minute * 60 + second
            guard let offset = scanner.zoneOffset() else { return nil }
            seconds -= offset
        }
        guard scanner.isAtEnd else { return nil }
        return Date(timeIntervalSinceReferenceDate: Double(seconds - referenceOffset) + fraction)
    }

    /// The shortest decimal digits `d` such that `whole + 0.d` reads back as `interval`.
    private static func fractionDigits(_ fraction: Double, whole: Double, interval: Double) -> String {
        var scale: UInt64 = 1
        var best = ""
        for count in 1...17 {
            scale *= 10
            let scaled = (fraction * Double(scale)).rounded()
            guard scaled < Double(scale) else { continue }
            var digits = String(UInt64(scaled))
            digits = String(repeating: "0", count: count - digits.count) + digits
            best = digits
            if let value = Double("0." + digits), whole + value == interval { break }
        }
        while best.count > 1, best.hasSuffix("0") { best.removeLast() }
        return best.isEmpty ? "0" : best
    }

    private static func padded(_ number: Int, _ width: Int) -> String {
        let digits = String(number)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    private static func floorDivide(_ dividend: Int, _ divisor: Int) -> Int {
        let quotient = dividend / divisor
        return dividend % divisor < 0 ? quotient - 1 : quotient
    }

    private static func isLeapYear(_ year: Int) -> Bool {
        year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    }

    private static func daysInMonth(_ month: Int, year: Int) -> Int {
        switch month {
        case 2: isLeapYear(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 to the given date (year 0 or later).
    static func daysSince1970(year: Int, month: Int, day: Int) -> Int {
        var days = year / 400 * daysPer400Years
        for earlierYear in (year - year % 400)..<year { days += isLeapYear(earlierYear) ? 366 : 365 }
        for earlierMonth in 1..<month { days += daysInMonth(earlierMonth, year: year) }
        return days + day - 1 - daysBefore1970
    }

    /// The year, month and day a number of days after 1970-01-01 falls on (year 0 or later).
    static func civilDate(daysSince1970: Int) -> (year: Int, month: Int, day: Int) {
        var days = daysSince1970 + daysBefore1970
        var year = days / daysPer400Years * 400
        days %= daysPer400Years
        while days >= (isLeapYear(year) ? 366 : 365) {
            days -= isLeapYear(year) ? 366 : 365
            year += 1
        }
        var month = 1
        while days >= daysInMonth(month, year: year) {
            days -= daysInMonth(month, year: year)
            month += 1
        }
        return (year, month, days + 1)
    }

    /// Reads a date-time's bytes from left to right.
    private struct DateScanner {
        let bytes: [UInt8]
        var index = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var isAtEnd: Bool { index == bytes.count }

        mutating func skip(_ character: Unicode.Scalar) -> Bool {
            guard index < bytes.count, bytes[index] == UInt8(ascii: character) else { return false }
            index += 1
            return true
        }

        mutating func number(digits count: Int) -> Int? {
            guard index + count <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[index..<index + count] {
                guard (0x30...0x39).contains(byte) else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            index += count
            return value
        }

        mutating func digits() -> String {
            let start = index
            while index < bytes.count, (0x30...0x39).contains(bytes[index]) { index += 1 }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }

        /// The zone's offset from UTC in seconds: 0 for `Z` or no zone, `nil` when malformed.
        mutating func zoneOffset() -> Int? {
            if skip("Z") || skip("z") || isAtEnd { return 0 }
            let sign: Int
            if skip("+") {
                sign = 1
            } else if skip("-") {
                sign = -1
            } else {
                return nil
            }
            guard let hours = number(digits: 2), hours <= 23 else { return nil }
            var minutes = 0
            if !isAtEnd {
                _ = skip(":")
                guard let value = number(digits: 2), value <= 59 else { return nil }
                minutes = value
            }
            return sign * (hours * 3600 + minutes * 60)
        }
    }
}
