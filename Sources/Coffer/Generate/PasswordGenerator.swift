#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Generates passwords from the system's cryptographically secure random source, as
/// `tr -dc SET < /dev/urandom | head -c LENGTH` does in pass, without its processes.
public struct PasswordGenerator: Sendable {
    /// The bytes a password may contain.
    public let characterSet: [UInt8]

    /// pass's default set, `[:punct:][:alnum:]`.
    public static let defaultCharacterSet = "[:punct:][:alnum:]"
    /// pass's set for `--no-symbols`, `[:alnum:]`.
    public static let noSymbolsCharacterSet = "[:alnum:]"

    /// A generator for the characters of `set`, written in `tr` syntax (`[:alnum:]`, `a-z`, `\n`, `\\`).
    ///
    /// - Throws: ``CofferError/Code/invalidArgument`` when the set is malformed or empty, or holds control
    ///   characters (a newline, a tab, NUL): a password is line 1 of its entry, and such a character would
    ///   cut it short or forge more lines.
    public init(characterSet set: String) throws {
        let bytes = try Self.expand(set)
        guard !bytes.isEmpty else {
            throw CofferError(.invalidArgument, "the character set \"\(set)\" contains no characters")
        }
        guard bytes.allSatisfy({ $0 >= 0x20 && $0 != 0x7f }) else {
            throw CofferError(
                .invalidArgument,
                "the character set \(Quoting.quoted(set)) holds control characters; a password is one line")
        }
        characterSet = bytes
    }

    /// A password of `length` characters, each drawn uniformly from the set.
    public func generate(length: Int) -> SecureBytes {
        var member = [Bool](repeating: false, count: 256)
        for byte in characterSet { member[Int(byte)] = true }
        let sink = SecureByteSink(capacity: max(length, 16))
        var random = [UInt8](repeating: 0, count: 256)
        while sink.count < length {
            Self.fillRandom(&random)
            for byte in random where member[Int(byte)] && sink.count < length {
                withUnsafeBytes(of: byte) { sink.append($0.baseAddress!, length: 1) }
            }
        }
        wipeMemory(&random, count: random.count)
        return sink.finish()
    }

    private static func fillRandom(_ buffer: inout [UInt8]) {
        buffer.withUnsafeMutableBytes { raw in
            #if canImport(Glibc)
                // getentropy(3) reads the kernel CSPRNG (getrandom) in blocks of at most 256 bytes.
                var filled = 0
                while filled < raw.count {
                    let chunk = min(256, raw.count - filled)
                    if getentropy(raw.baseAddress! + filled, chunk) == 0 { filled += chunk }
                }
            #else
                arc4random_buf(raw.baseAddress!, raw.count)
            #endif
        }
    }

    /// Expands a `tr` set into its bytes, in the C locale.
    static func expand(_ set: String) throws -> [UInt8] {
        let input = Array(set.utf8)
        var result: [UInt8] = []
        var index = 0
        func escaped(at position: inout Int) -> UInt8 {
            // `position` is at the backslash.
            guard position + 1 < input.count else {
                position += 1
                return UInt8(ascii: "\\")
            }
            let next = input[position + 1]
            let simple: [UInt8: UInt8] = [
                UInt8(ascii: "a"): 7, UInt8(ascii: "b"): 8, UInt8(ascii: "f"): 12, UInt8(ascii: "n"): 10,
                UInt8(ascii: "r"): 13, UInt8(ascii: "t"): 9, UInt8(ascii: "v"): 11,
            ]
            if let value = simple[next] {
                position += 2
                return value
            }
            if (48...55).contains(next) {
                var value = 0
                var digits = 0
                var cursor = position + 1
                while cursor < input.count, digits < 3, (48...55).contains(input[cursor]),
                    value * 8 + Int(input[cursor] - 48) < 256
                {
                    value = value * 8 + Int(input[cursor] - 48)
                    digits += 1
                    cursor += 1
                }
                position = cursor
                return UInt8(value)
            }
            position += 2
            return next
        }
        while index < input.count {
            if input[index] == UInt8(ascii: "["), index + 1 < input.count,
                input[index + 1] == UInt8(ascii: ":")
            {
                if let end = findClassEnd(input, from: index + 2) {
                    let name = String(decoding: input[(index + 2)..<end], as: UTF8.self)
                    guard let members = characterClass(name) else {
                        throw CofferError(.invalidArgument, "invalid character class '\(name)'")
                    }
                    result += members
                    index = end + 2
                    continue
                }
            }
            if input[index] == UInt8(ascii: "["), index + 1 < input.count,
                input[index + 1] == UInt8(ascii: "="),
                index + 3 < input.count, input[index + 3] == UInt8(ascii: "="), index + 4 < input.count,
                input[index + 4] == UInt8(ascii: "]")
            {
                result.append(input[index + 2])
                index += 5
                continue
            }
            // One character, written as itself or as a backslash escape.
            func character(at position: inout Int) -> UInt8 {
                if input[position] == UInt8(ascii: "\\") { return escaped(at: &position) }
                position += 1
                return input[position - 1]
            }
            let low = character(at: &index)
            if index + 1 < input.count, input[index] == UInt8(ascii: "-") {
                var cursor = index + 1
                let high = character(at: &cursor)
                guard low <= high else {
                    throw CofferError(
                        .invalidArgument,
                        "range-endpoints of '\(Character(Unicode.Scalar(low)))-\(Character(Unicode.Scalar(high)))' are in reverse collating sequence order"
                    )
                }
                result += Array(low...high)
                index = cursor
                continue
            }
            result.append(low)
        }
        var seen = Set<UInt8>()
        return result.filter { seen.insert($0).inserted }
    }

    private static func findClassEnd(_ input: [UInt8], from start: Int) -> Int? {
        var index = start
        while index + 1 < input.count {
            if input[index] == UInt8(ascii: ":") && input[index + 1] == UInt8(ascii: "]") { return index }
            index += 1
        }
        return nil
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (48...57).contains(byte) || (65...90).contains(byte) || (97...122).contains(byte)
    }

    private static func characterClass(_ name: String) -> [UInt8]? {
        let ascii = Array(UInt8(0)...UInt8(127))
        let test: (UInt8) -> Bool
        switch name {
        case "alnum": test = { Self.isAlphanumeric($0) }
        case "alpha": test = { (65...90).contains($0) || (97...122).contains($0) }
        case "blank": test = { $0 == 32 || $0 == 9 }
        case "cntrl": test = { $0 < 32 || $0 == 127 }
        case "digit": test = { (48...57).contains($0) }
        case "graph": test = { (33...126).contains($0) }
        case "lower": test = { (97...122).contains($0) }
        case "print": test = { (32...126).contains($0) }
        case "punct": test = { (33...126).contains($0) && !Self.isAlphanumeric($0) }
        case "space": test = { $0 == 32 || (9...13).contains($0) }
        case "upper": test = { (65...90).contains($0) }
        case "xdigit": test = { (48...57).contains($0) || (65...70).contains($0) || (97...102).contains($0) }
        default: return nil
        }
        return ascii.filter(test)
    }
}
