/// Command-line options parsed the way `getopt -o SHORT -l LONG -n PROGRAM -- "$@"` (util-linux getopt over
/// glibc `getopt_long`) parses them for pass: arguments are permuted so options may follow operands, `--`
/// ends the options, long options may be abbreviated to a unique prefix and take `--opt=value` or
/// `--opt value`, short options may be combined (`-rf`) and take `-pvalue` or `-p value`.
///
/// As with getopt, a bad option does not stop the parse: every problem is collected as glibc words it, and
/// the caller decides (pass prints the messages, then its usage line only for some commands).
struct OptionParser {
    /// Whether an option takes a value.
    enum ArgumentKind: Sendable {
        /// `-f`, `--force`.
        case none
        /// `-p sub`, `-psub`, `--path sub`, `--path=sub`.
        case required
        /// `-c`, `-c2`, `--clip`, `--clip=2` (never the next argument).
        case optional
    }

    /// One option a command accepts.
    struct Option: Sendable {
        /// The short letter, if any.
        var short: UInt8?
        /// The long name without `--`, if any.
        var long: String?
        /// Whether it takes a value.
        var argument: ArgumentKind
        /// What it does, in a few words (for help and completions).
        var summary: String = ""
        /// Whether only its whole long name selects it: coffer's own options take no abbreviation, so
        /// that pass's abbreviations (`--f` for `--force`) mean what they mean in pass.
        var exactOnly = false

        /// What a parse names it by: its long name, else its letter.
        var name: String { long ?? String(decoding: [short ?? 0], as: UTF8.self) }

        /// This option, matched only by its whole long name.
        var exact: Option {
            var option = self
            option.exactOnly = true
            return option
        }

        /// `-x`/`--long`, without a value.
        static func flag(_ short: Character?, _ long: String, _ summary: String) -> Option {
            Option(short: short?.asciiValue, long: long, argument: .none, summary: summary)
        }

        /// `-x VALUE`/`--long=VALUE`.
        static func value(_ short: Character?, _ long: String, _ summary: String) -> Option {
            Option(short: short?.asciiValue, long: long, argument: .required, summary: summary)
        }

        /// `-xVALUE`/`--long[=VALUE]`: the value is optional and never the next argument.
        static func optionalValue(_ short: Character?, _ long: String, _ summary: String) -> Option {
            Option(short: short?.asciiValue, long: long, argument: .optional, summary: summary)
        }
    }

    /// The outcome of a parse.
    struct Result: Equatable {
        /// The options found, in order, named by their long name (or short letter), with their value.
        var options: [(name: String, value: String?)]
        /// The operands, in order.
        var operands: [String]
        /// The error messages, one a line, without the trailing newline.
        var errors: [String]

        static func == (lhs: Result, rhs: Result) -> Bool {
            lhs.options.map(\.name) == rhs.options.map(\.name)
                && lhs.options.map(\.value) == rhs.options.map(\.value)
                && lhs.operands == rhs.operands && lhs.errors == rhs.errors
        }

        /// Whether `flag` was given at least once.
        subscript(_ flag: Flag) -> Bool { options.contains { $0.name == flag.option.name } }

        /// The value of the last `option` given, if any (`nil` too for an optional value left out).
        subscript(_ option: ValueOption) -> String? {
            options.last { $0.name == option.option.name }?.value ?? nil
        }

        /// Whether `option` was given at least once, with a value or (when optional) without.
        func given(_ option: ValueOption) -> Bool { options.contains { $0.name == option.option.name } }

        /// The value of the last of `keys` given (`nil` inside for an optional value left out).
        func last(of keys: ValueOption...) -> String?? {
            let names = keys.map(\.option.name)
            return options.last { names.contains($0.name) }.map(\.value)
        }

        /// The values of every `option` given, in order.
        func values(_ option: ValueOption) -> [String] {
            options.filter { $0.name == option.option.name }.compactMap(\.value)
        }
    }

    /// The options, in the order pass lists them to getopt (which is the order of ambiguity messages).
    var options: [Option]
    /// The name used in messages (pass gives getopt `-n "$PROGRAM"`).
    var program: String
    /// Stop at the first operand, as getopt does when `POSIXLY_CORRECT` is set.
    var stopAtFirstOperand = false

    /// Parses `arguments` (the command's arguments, without the command itself).
    func parse(_ arguments: [String]) -> Result {
        var result = Result(options: [], operands: [], errors: [])
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "--" {
                result.operands += arguments[index...]
                break
            }
            let bytes = Array(argument.utf8)
            if bytes.count > 2 && bytes[0] == UInt8(ascii: "-") && bytes[1] == UInt8(ascii: "-") {
                parseLong(String(argument.dropFirst(2)), arguments, &index, &result)
            } else if bytes.count > 1 && bytes[0] == UInt8(ascii: "-") {
                parseShort(bytes[1...], arguments, &index, &result)
            } else if stopAtFirstOperand {
                result.operands += arguments[(index - 1)...]
                break
            } else {
                result.operands.append(argument)
            }
        }
        return result
    }

    private func name(of option: Option) -> String { option.name }

    private func parseLong(_ body: String, _ arguments: [String], _ index: inout Int, _ result: inout Result)
    {
        let equals = body.firstIndex(of: "=")
        let typed = equals.map { String(body[..<$0]) } ?? body
        let attached = equals.map { String(body[body.index(after: $0)...]) }
        let candidates = options.filter { option in
            option.long.map { option.exactOnly ? $0 == typed : $0.hasPrefix(typed) } ?? false
        }
        let chosen: Option
        if let exact = candidates.first(where: { $0.long == typed }) {
            chosen = exact
        } else if candidates.count == 1 {
            chosen = candidates[0]
        } else if candidates.isEmpty {
            result.errors.append("\(program): unrecognized option '--\(body)'")
            return
        } else {
            let possibilities = candidates.map { " '--\($0.long ?? "")'" }.joined()
            result.errors.append(
                "\(program): option '--\(body)' is ambiguous; possibilities:\(possibilities)")
            return
        }
        let long = chosen.long ?? ""
        switch chosen.argument {
        case .none:
            if attached != nil {
                result.errors.append("\(program): option '--\(long)' doesn't allow an argument")
                return
            }
            result.options.append((name(of: chosen), nil))
        case .optional:
            result.options.append((name(of: chosen), attached))
        case .required:
            addRequired(
                chosen, attached, arguments, &index, &result,
                missing: "\(program): option '--\(long)' requires an argument")
        }
    }

    /// Adds `option` with its value: `attached` (`--path=sub`, `-psub`) when there is one, else the next
    /// argument; with neither, the error `missing`.
    private func addRequired(
        _ option: Option, _ attached: String?, _ arguments: [String], _ index: inout Int,
        _ result: inout Result,
        missing: String
    ) {
        if let attached {
            result.options.append((name(of: option), attached))
        } else if index < arguments.count {
            result.options.append((name(of: option), arguments[index]))
            index += 1
        } else {
            result.errors.append(missing)
        }
    }

    private func parseShort(
        _ letters: ArraySlice<UInt8>, _ arguments: [String], _ index: inout Int, _ result: inout Result
    ) {
        var position = letters.startIndex
        while position < letters.endIndex {
            let letter = letters[position]
            position += 1
            let shown = String(decoding: [letter], as: UTF8.self)
            guard letter != UInt8(ascii: ":"), let option = options.first(where: { $0.short == letter })
            else {
                result.errors.append("\(program): invalid option -- '\(shown)'")
                continue
            }
            let rest = String(decoding: letters[position...], as: UTF8.self)
            switch option.argument {
            case .none:
                result.options.append((name(of: option), nil))
            case .optional:
                result.options.append((name(of: option), rest.isEmpty ? nil : rest))
                return
            case .required:
                addRequired(
                    option, rest.isEmpty ? nil : rest, arguments, &index, &result,
                    missing: "\(program): option requires an argument -- '\(shown)'")
                return
            }
        }
    }
}

/// An option a command declares once and reads a parse through, never by name (see ``Flag`` and
/// ``ValueOption``).
protocol OptionKey: Sendable {
    /// The option as the parser takes it.
    var option: OptionParser.Option { get }
}

/// An option without a value (`-f`, `--force`): given or not.
struct Flag: OptionKey {
    let option: OptionParser.Option

    /// `-short`/`--long`.
    init(_ short: Character?, _ long: String, _ summary: String) {
        option = .flag(short, long, summary)
    }

    private init(option: OptionParser.Option) { self.option = option }

    /// This flag, matched only by its whole long name.
    var exact: Flag { Flag(option: option.exact) }
}

/// An option with a value (`-p sub`, `--path=sub`), or with an optional one (`-c2`, `--clip`).
struct ValueOption: OptionKey {
    let option: OptionParser.Option

    /// `-short VALUE`/`--long=VALUE`.
    static func required(_ short: Character?, _ long: String, _ summary: String) -> ValueOption {
        ValueOption(option: .value(short, long, summary))
    }

    /// `-shortVALUE`/`--long[=VALUE]`: the value is optional and never the next argument.
    static func optional(_ short: Character?, _ long: String, _ summary: String) -> ValueOption {
        ValueOption(option: .optionalValue(short, long, summary))
    }

    /// This option, matched only by its whole long name.
    var exact: ValueOption { ValueOption(option: option.exact) }
}
