import Coffer

/// The lines pass's coreutils calls print (`mkdir -v`, `rm -v`, `mv -v`, `cp -v`) and pass's own lines for
/// `init`, spelled byte for byte as coreutils 9.1 spells them.
enum CoreutilsMessages {
    /// The line printed for a store event.
    static func line(for event: StoreEvent) -> String {
        switch event {
        case .createdFolder(let path):
            return "mkdir: created directory \(quote(path))"
        case .removedFile(let path):
            return "removed \(quote(path))"
        case .removedFolder(let path):
            return "removed directory \(quote(path))"
        case .renamed(let source, let destination):
            return "renamed \(quote(source)) -> \(quote(destination))"
        case .copied(let source, let destination):
            return "\(quote(source)) -> \(quote(destination))"
        case .reencrypted(let name, let keyIDs):
            return "\(name): reencrypting to \(keyIDs.joined(separator: " "))"
        case .initialized(let recipients, let subfolder):
            let folder = subfolder.isEmpty ? "" : " (\(subfolder))"
            return "Password store initialized for \(recipients.joined(separator: ", "))\(folder)"
        case .leftNarrow(let entry):
            let keys = entry.keys.joined(separator: ", ")
            return "Left \(Quoting.quoted(entry.name)) encrypted for its earlier recipients: "
                + (entry.writtenElsewhere
                    ? "it was not written for its folder (someone moved or copied it there), so \(keys) "
                        + "\(entry.keys.count == 1 ? "does" : "do") not get it"
                    : "\(keys) \(entry.keys.count == 1 ? "is" : "are") not accepted for its folder")
        }
    }

    /// Prints the line for `event` on standard output (a warning on standard error).
    static func print(_ event: StoreEvent) {
        if case .leftNarrow = event {
            standardError.line(line(for: event))
        } else {
            standardOutput.line(line(for: event))
        }
    }

    /// Quotes a file name as coreutils' `quoteaf` does (gnulib's shell-escape-always style) in the
    /// current locale: `'name'`, `"it's"` when that is enough, `'a'$'\n''b'` for control characters and
    /// bytes that are not printable characters of the locale.
    static func quote(_ text: String) -> String {
        String(decoding: quote(bytes: Array(text.utf8)), as: UTF8.self)
    }

    /// coreutils' and findutils' `quote` for names in error messages (gnulib's locale quoting style):
    /// the locale's quotation marks (`‘name’` in a UTF-8 locale, `'name'` otherwise), a backslash before
    /// a backslash and before the closing mark, C escapes for control characters (`\n`, `\t`, ...) and
    /// octal escapes (`\303`) for every other byte that is not part of a printable character of the
    /// locale.
    static func localeQuote(_ text: String) -> String {
        let utf8 = String(cString: nl_langinfo(nl_item(CODESET))) == "UTF-8"
        let (open, close) = utf8 ? (Array("\u{2018}".utf8), Array("\u{2019}".utf8)) : ([0x27], [0x27])
        let bytes = Array(text.utf8)
        var output = open
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if bytes[index...].starts(with: close) || byte == UInt8(ascii: "\\") {
                let length = byte == UInt8(ascii: "\\") ? 1 : close.count
                output += [UInt8(ascii: "\\")] + bytes[index..<(index + length)]
                index += length
                continue
            }
            if (7...13).contains(byte) {
                output += [UInt8(ascii: "\\"), Array("abtnvfr".utf8)[Int(byte) - 7]]
                index += 1
                continue
            }
            let (length, printable) = characterLength(bytes, at: index, multibyte: utf8)
            let end = index + max(length, 1)
            if printable && length > 0 {
                output += bytes[index..<end]
            } else {
                for escaped in bytes[index..<end] {
                    output +=
                        [UInt8(ascii: "\\")]
                        + [escaped >> 6, (escaped >> 3) & 7, escaped & 7].map {
                            UInt8(ascii: "0") + $0
                        }
                }
            }
            index = end
        }
        return String(decoding: output + close, as: UTF8.self)
    }

    /// ``quote(_:)`` over raw bytes; `multibyte` overrides the locale's answer (for tests).
    static func quote(bytes argument: [UInt8], multibyte: Bool? = nil) -> [UInt8] {
        var output: [UInt8] = [UInt8(ascii: "'")]
        var pendingEscapeEnd = false
        var sawSingleQuote = false
        var everyCharacterFitsDoubleQuotes = true
        let multibyte = multibyte ?? isMultibyteLocale

        var index = 0
        while index < argument.count {
            var byte = argument[index]
            var escaping = false
            var fitsDoubleQuotes = false

            func startEscape() {
                escaping = true
                if !pendingEscapeEnd {
                    output += Array("'$'".utf8)
                    pendingEscapeEnd = true
                }
                output.append(UInt8(ascii: "\\"))
            }
            func endEscape() {
                if pendingEscapeEnd && !escaping {
                    output += Array("''".utf8)
                    pendingEscapeEnd = false
                }
            }

            switch byte {
            case 7, 8, 9, 10, 11, 12, 13:
                startEscape()
                byte = Array("abtnvfr".utf8)[Int(byte) - 7]
            case UInt8(ascii: "{"), UInt8(ascii: "}"):
                if argument.count == 1 { fitsDoubleQuotes = true }
            case UInt8(ascii: "#"), UInt8(ascii: "~"):
                if index == 0 { fitsDoubleQuotes = true }
            case UInt8(ascii: " "):
                fitsDoubleQuotes = true
            case UInt8(ascii: "'"):
                sawSingleQuote = true
                fitsDoubleQuotes = true
                output += Array("'\\'".utf8)
                pendingEscapeEnd = false
            case UInt8(ascii: "!"), UInt8(ascii: "\""), UInt8(ascii: "$"), UInt8(ascii: "&"),
                UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: ";"),
                UInt8(ascii: "<"), UInt8(ascii: "="), UInt8(ascii: ">"), UInt8(ascii: "["),
                UInt8(ascii: "^"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "\\"),
                UInt8(ascii: "?"):
                break
            case UInt8(ascii: "%"), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: "-"),
                UInt8(ascii: "."), UInt8(ascii: "/"), UInt8(ascii: ":"), UInt8(ascii: "]"),
                UInt8(ascii: "_"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "a")...UInt8(ascii: "z"):
                fitsDoubleQuotes = true
            default:
                let (length, printable) = characterLength(argument, at: index, multibyte: multibyte)
                fitsDoubleQuotes = printable
                if length > 1 || !printable {
                    let limit = index + length
                    while true {
                        if !printable {
                            startEscape()
                            output.append(UInt8(ascii: "0") + (byte >> 6))
                            output.append(UInt8(ascii: "0") + ((byte >> 3) & 7))
                            byte = UInt8(ascii: "0") + (byte & 7)
                        }
                        if limit <= index + 1 { break }
                        endEscape()
                        output.append(byte)
                        index += 1
                        byte = argument[index]
                    }
                }
            }
            endEscape()
            output.append(byte)
            if !fitsDoubleQuotes { everyCharacterFitsDoubleQuotes = false }
            index += 1
        }
        if sawSingleQuote && everyCharacterFitsDoubleQuotes {
            return [UInt8(ascii: "\"")] + argument + [UInt8(ascii: "\"")]
        }
        output.append(UInt8(ascii: "'"))
        return output
    }

    /// Whether the locale is UTF-8 (its characters may take more than one byte), as bash decides what a
    /// character is.
    static var isUTF8Locale: Bool { isMultibyteLocale }

    /// Whether the locale's characters may take more than one byte (`MB_CUR_MAX > 1`).
    private static var isMultibyteLocale: Bool {
        #if canImport(Glibc)
            return __ctype_get_mb_cur_max() > 1
        #else
            return String(cString: nl_langinfo(nl_item(CODESET))) == "UTF-8"
        #endif
    }

    /// The length of the character at `index` and whether it is printable in the locale; a length of 0
    /// means an invalid sequence (one byte is escaped), as glibc's `mbrtowc` and `iswprint` decide in a
    /// UTF-8 locale.
    private static func characterLength(_ bytes: [UInt8], at index: Int, multibyte: Bool) -> (Int, Bool) {
        guard multibyte else { return (1, isprint(Int32(bytes[index])) != 0) }
        let lead = bytes[index]
        let (length, minimum): (Int, UInt32)
        switch lead {
        case 0x00...0x7f: return (1, isprint(Int32(lead)) != 0)
        case 0xc2...0xdf: (length, minimum) = (2, 0x80)
        case 0xe0...0xef: (length, minimum) = (3, 0x800)
        case 0xf0...0xf4: (length, minimum) = (4, 0x10000)
        default: return (0, false)
        }
        var value = UInt32(lead) & (0xff >> UInt32(length + 1))
        for offset in 1..<length {
            // A sequence cut short by the end of the name: glibc reports it incomplete (the rest escaped).
            guard index + offset < bytes.count else { return (bytes.count - index, false) }
            let byte = bytes[index + offset]
            guard byte & 0xc0 == 0x80 else { return (0, false) }
            value = value << 6 | UInt32(byte & 0x3f)
        }
        guard value >= minimum, value <= 0x10ffff, !(0xd800...0xdfff).contains(value),
            let scalar = Unicode.Scalar(value)
        else { return (0, false) }
        return (length, isPrintable(scalar))
    }

    /// glibc's `iswprint` in its UTF-8 locales: an assigned character that is neither a control nor a
    /// line or paragraph separator (spaces, format characters and private use are printable).
    private static func isPrintable(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .unassigned, .control, .surrogate, .lineSeparator, .paragraphSeparator: return false
        default: return true
        }
    }
}
