/// One command of the command line: its names, its options, its usage and help, and what runs it.
///
/// ``CommandRegistry/all`` lists every command once. Dispatch, `help`, `help COMMAND`,
/// `COMMAND --help`, the option parsing of each command and the tests (of the completion scripts, the
/// manual page and the options) all read it, so a command is declared in one place.
struct Command: Sendable {
    /// Whether pass 1.7.4 has the command.
    enum Origin: Sendable, Equatable {
        /// A command of pass's; its entry in pass's help is reproduced from ``Command/passHelp``.
        case pass
        /// A command coffer adds.
        case coffer
        /// A command other programs run (git's merge driver), left out of help and completion.
        case hidden
    }

    /// What a command's operands name, for completion.
    enum Operands: Sendable, Equatable {
        /// Nothing.
        case none
        /// Entries and folders of the store.
        case entries
        /// The store's folders.
        case folders
        /// Recipients (keys of the keyring).
        case recipients
        /// git's own arguments.
        case gitArguments
        /// Other commands.
        case commands
        /// Free text (search terms, patterns).
        case text
        /// A URL.
        case url
    }

    /// The name, then its aliases (`rm`, `remove`, `delete`).
    let names: [String]
    /// The options, in the order pass gives them to getopt (which is the order of its messages).
    var options: [OptionParser.Option] = []
    /// The usage after `PROGRAM NAME`, as the command's usage error prints it.
    let usage: String
    /// Whether pass has it.
    var origin: Origin = .pass
    /// What its operands name.
    var operands: Operands = .entries
    /// What it does, for help: lines under the usage line, worded for the invocation (its settings).
    let help: @Sendable (Invocation) -> [String]
    /// Its entry in pass's own help: what follows `PROGRAM` on the first line (`[ls] [subfolder]`).
    var passHead: String?
    /// The lines below it there, indentation included, when they are not ``help`` indented by eight
    /// spaces.
    var passLines: (@Sendable (Invocation) -> [String])?
    /// Whether the command reads `--help` itself (`otp --help`, as pass-otp does) instead of the shared
    /// `COMMAND --help`.
    var handlesHelp = false
    /// Whether the command reimplements a pass extension of the same name faithfully (`otp` and
    /// pass-otp), so that it runs itself under pass's name.
    var reimplementsPassExtension = false

    /// Whether, run under pass's name, a pass extension of the same name (the user's, when extensions are
    /// enabled, or the system's) runs instead, as pass would run it: every command of coffer's own
    /// (`sync`, `history`, `audit`, ...) but those that reimplement the extension, since pass knows no
    /// such command and runs the extension. pass's own commands and hidden ones (run by the prelude and
    /// git) never yield.
    var yieldsUnderPassName: Bool { origin == .coffer && !reimplementsPassExtension }
    /// Runs it with the arguments after the command word.
    let run: @Sendable ([String], Invocation) throws -> Void

    /// The name the command is listed under.
    var name: String { names[0] }

    /// The entry in pass's help text, when pass has one for the command.
    func passEntry(_ invocation: Invocation) -> [String]? {
        guard let passHead else { return nil }
        let lines = passLines?(invocation) ?? help(invocation).map { "        " + $0 }
        return ["    \(invocation.program) \(passHead)"] + lines
    }

    /// The entry in coffer's own help: the usage line, the aliases, and what it does.
    func cofferEntry(_ invocation: Invocation) -> [String] {
        let aliases = names.count > 1 ? "   (also \(names.dropFirst().joined(separator: ", ")))" : ""
        let head = "    \(invocation.program) \(name)\(usage.isEmpty ? "" : " " + usage)\(aliases)"
        return [head] + help(invocation).map { "        " + $0 }
    }
}

/// Every command, in the order help lists them (pass's order, then coffer's own).
enum CommandRegistry {
    /// The commands.
    static let all: [Command] = [
        InitCommand.command, ListCommand.command, FindCommand.command, ShowCommand.command,
        GrepCommand.command, InsertCommand.command, EditCommand.command, GenerateCommand.command,
        RemoveCommand.command, CopyMoveCommand.moveCommand, CopyMoveCommand.copyCommand, GitCommand.command,
        HelpCommand.command, VersionCommand.command, HistoryCommand.command, RestoreCommand.command,
        SyncCommand.command, CloneCommand.command, FsckCommand.command, MergeDriverCommand.command,
        ExtensionHelperCommand.command, GitCredentialCommand.command,
        DockerCredentialCommand.command, SetupCommand.command, RecipientsCommand.command,
        OTPCommand.command, AuditCommand.command, SecretServiceCommand.command,
    ]

    /// The command called `name` (or by one of its aliases), if there is one.
    static func command(named name: String) -> Command? {
        all.first { $0.names.contains(name) }
    }

    /// The commands help and completion show.
    static var visible: [Command] { all.filter { $0.origin != .hidden } }
}

extension Command {
    /// The parser's options of `keys`, in their order.
    static func options(_ keys: any OptionKey...) -> [OptionParser.Option] { keys.map(\.option) }
}
