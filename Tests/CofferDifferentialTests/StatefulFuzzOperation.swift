import CofferTestSupport

/// One command of a fuzzed sequence, run the same way by pass and by coffer.
struct FuzzOperation: Sendable, Equatable {
    /// The arguments after the program name; `$K1`, `$K2`, `$K3` stand for the test keys' fingerprints.
    var arguments: [String]
    /// Standard input (a pipe; empty means end of file at once).
    var input: [UInt8] = []
    /// Variables set (a value, with `$SANDBOX` expanded) or removed (`nil`) for this command only.
    var environment: [String: String?] = [:]
    /// Set for `generate`: the shape of the password it prints and stores, so that it can be masked.
    var generated: GeneratedPassword?
    /// Whether standard output lists files in the file system's order (re-encryption, `rm -r -v`,
    /// `cp -r -v`, grep): its lines are sorted before comparing.
    var unordered = false
    /// What kind of operation this is, without its names (`mv -f`, `edit EDITOR=:`, `git revert`): the
    /// first part of a divergence's signature.
    var shape: String
    /// The entry or folder names among the arguments, classified in a divergence's signature.
    var names: [String] = []
    /// What the generator meant to exercise beyond ``shape`` (`mv source folder`, `cp onto existing
    /// entry`), for the coverage check of the fixed seeds.
    var features: [String] = []
    /// Set for a step that coffer first runs alone in a copy of its store, killed or out of room.
    var hazard: FuzzHazard?

    static func == (left: FuzzOperation, right: FuzzOperation) -> Bool {
        left.arguments == right.arguments && left.input == right.input
            && left.environment == right.environment
            && left.shape == right.shape && left.hazard == right.hazard
    }

    /// The command as a line of shell, with `pass` as the program (`$K1`… and `$SANDBOX` left as
    /// variables).
    var shellLine: String {
        var words: [String] = []
        if !input.isEmpty { words += ["printf", Self.printfFormat(input), "|"] }
        for (name, value) in environment.sorted(by: { $0.key < $1.key }) {
            if let value {
                words.append(name + "=" + Self.shellWord(value))
            } else {
                words += ["env", "-u", name]
            }
        }
        words.append("pass")
        words += arguments.map(Self.shellWord)
        return words.joined(separator: " ")
    }

    /// A word of shell that stands for `text`: bare when that is safe, in double quotes when it names a
    /// sandbox variable (`$K1`, `$SANDBOX/…`), otherwise in single quotes.
    static func shellWord(_ text: String) -> String {
        if text.isEmpty { return "''" }
        let bare = text.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII
                && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)
                    || "-_./:=@%+,".unicodeScalars.contains(scalar))
        }
        if bare { return text }
        if text.hasPrefix("$K") || text.hasPrefix("$SANDBOX"),
            !text.contains(where: { "\"`\\".contains($0) }), text.dropFirst().allSatisfy({ $0 != "$" })
        {
            return "\"" + text + "\""
        }
        return "'" + text.replacing("'", with: #"'\''"#) + "'"
    }

    /// A single-quoted `printf` format that prints exactly `bytes`.
    static func printfFormat(_ bytes: [UInt8]) -> String {
        var format = ""
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "\n"): format += "\\n"
            case UInt8(ascii: "\\"): format += "\\\\"
            case UInt8(ascii: "%"): format += "%%"
            case UInt8(ascii: "'"): format += #"'\''"#
            case 0x20..<0x7f: format.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let octal = String(byte, radix: 8)
                format += "\\" + String(repeating: "0", count: 3 - octal.count) + octal
            }
        }
        return "'" + format + "'"
    }
}

/// A seeded sequence of operations: everything needed to run it again.
struct FuzzSequence: Sendable {
    /// The seed it was generated from.
    var seed: UInt64
    /// The locale both programs run in.
    var locale: TestLocale
    /// The operations, in order.
    var operations: [FuzzOperation]

    /// The sequence as a shell script for a person to run (with `pass` or a link to coffer named `pass`).
    func script(upTo last: Int? = nil) -> String {
        let end = last.map { $0 + 1 } ?? operations.count
        var lines = ["export LC_ALL=\(locale.rawValue)"]
        if operations[..<end].contains(where: {
            $0.environment.values.contains { $0?.contains("$SANDBOX") ?? false }
        }) {
            lines.append("# $SANDBOX/bin holds the scripted editors of DifferentialSandbox.editors")
        }
        for operation in operations[..<end] {
            if let hazard = operation.hazard { lines.append(hazard.comment) }
            lines.append(operation.shellLine)
        }
        return lines.joined(separator: "\n")
    }
}
