import CofferTestSupport
import Testing

/// One row of the differential table: a store set up with the real `pass`, then one command run by
/// `pass` and by `coffer` in identical sandboxes.
///
/// In `setup`, `arguments`, `environment` and terminal replies, `$K1`, `$K2`, `$K3` are the test keys'
/// fingerprints, `$E1`… their e-mail addresses, `$SANDBOX` the sandbox folder, `$HOME` its home and
/// `$STORE` the default store folder. The setup is a bash script run in `$HOME` with `set -e`, the real
/// `pass` on `PATH` and the helpers of ``DifferentialSandbox/prelude``.
struct DifferentialScenario: Sendable {
    /// A unique name, `command.what` (it is the test case's name).
    var name: String
    /// Bash run before the command, identically for both programs.
    var setup: String
    /// The command's arguments (after the program name).
    var arguments: [String]
    /// Standard input.
    var input: Input = .pipe("")
    /// Variables set (a value) or removed (`nil`) for the command only.
    var environment: [String: String?] = [:]
    /// The locales (`LC_ALL`) the scenario runs in.
    var locales: [TestLocale] = [.utf8]
    /// Set when the command generates a password: its expected shape, used to mask it.
    var generated: GeneratedPassword?
    /// Whether standard output lists files in the file system's order (`cp -r -v`, `rm -r -v`, grep,
    /// re-encryption), which differs between two copies of a folder: its lines are then sorted.
    var unordered = false
    /// Why coffer deliberately differs from pass here; the difference is then a known issue.
    var deliberate: String?
    /// A program the command is run through (`faketime -f TIME`), for both programs alike.
    var launcher: [String] = []

    /// Standard input of the command.
    enum Input: Sendable {
        /// A pipe carrying these bytes, then end of file.
        case pipe([UInt8])
        /// A pseudo-terminal as standard input, output and error, driven by `expect`.
        case terminal([Interaction])
        /// A pseudo-terminal as standard input and error (reported as standard error, with the echo of
        /// what was typed), standard output into a file (reported as standard output).
        case terminalStderrOnly([Interaction])

        /// A pipe carrying UTF-8 text.
        static func pipe(_ text: String) -> Input { .pipe(Array(text.utf8)) }
    }

    /// One step of a terminal conversation.
    enum Interaction: Sendable {
        /// Wait until the program printed this text.
        case wait(String)
        /// Type this text (ASCII; `\r` is Enter, `\u{4}` is Ctrl-D).
        case type(String)
    }
}

/// The locale a case runs in.
enum TestLocale: String, Sendable, CaseIterable {
    /// `LC_ALL=C`.
    case c = "C"
    /// `LC_ALL=C.UTF-8`.
    case utf8 = "C.UTF-8"

    /// Both locales.
    static let both: [TestLocale] = [.c, .utf8]
}

/// The shape a generated password must have; the password itself is masked before comparing.
struct GeneratedPassword: Sendable {
    /// The allowed characters.
    enum Characters: Sendable {
        /// `[:punct:][:alnum:]` (printable ASCII without space).
        case graph
        /// `[:alnum:]`.
        case alphanumeric
        /// Exactly these characters.
        case only(String)

        func allows(_ character: Character) -> Bool {
            switch self {
            case .graph: return character.isASCII && character.asciiValue! > 32 && character.asciiValue! < 127
            case .alphanumeric:
                return character.isASCII && (character.isLetter || character.isNumber)
            case .only(let allowed): return allowed.contains(character)
            }
        }

        var name: String {
            switch self {
            case .graph: return "[:graph:]"
            case .alphanumeric: return "[:alnum:]"
            case .only(let allowed): return "[\(allowed)]"
            }
        }
    }

    /// The expected number of characters.
    var length: Int
    /// The allowed characters.
    var characters: Characters = .graph

    /// The text that replaces a password in a report.
    func mask(_ password: String) -> String {
        if password.count == length && password.allSatisfy(characters.allows) {
            return "<generated: \(length) of \(characters.name)>"
        }
        return "<generated: WRONG SHAPE \(password.debugDescription), want \(length) of \(characters.name)>"
    }
}

/// One test case: a scenario in one locale.
struct DifferentialCase: Sendable, CustomTestStringConvertible {
    /// The scenario.
    var scenario: DifferentialScenario
    /// The locale.
    var locale: TestLocale

    var testDescription: String { "\(scenario.name) [\(locale.rawValue)]" }

    /// Every case of the table; with `COFFER_DIFF_ONLY=PREFIX`, only the scenarios whose name starts with
    /// it (`otp.`), to run one command's cases while working on it.
    static var all: [DifferentialCase] {
        let prefix = environmentVariable("COFFER_DIFF_ONLY") ?? ""
        return DifferentialTable.scenarios.filter { $0.name.hasPrefix(prefix) }.flatMap { scenario in
            scenario.locales.map { DifferentialCase(scenario: scenario, locale: $0) }
        }
    }
}
