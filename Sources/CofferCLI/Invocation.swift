import Coffer

/// Everything a command needs: how the program was called, pass's settings from the environment, and the
/// store.
struct Invocation {
    /// The name the program was called by (`${0##*/}`), used in usage and messages as pass uses `$PROGRAM`.
    let program: String
    /// The command word as typed (`$COMMAND`): `rm`, `remove`, ...; `show` when a name was given directly.
    var command: String
    /// The environment, read once.
    let environment: [String: String]
    /// The store, with git's output shown as pass shows it.
    let store: PasswordStore

    /// Reads the settings and opens the store.
    init(program: String, command: String, environment: [String: String]) {
        self.program = program
        self.command = command
        self.environment = environment
        var configuration = StoreConfiguration(environment: environment)
        configuration.program = program
        var store = PasswordStore(configuration: configuration)
        store.gitOutput = .inherit
        store.notices = { notice in Self.report(notice, always: false) }
        self.store = store
    }

    /// Says on standard error what the store did about accepted recipients by itself: the recipients a
    /// clone accepted the first time it needed them, when the repository has a remote (or `always`).
    static func report(_ notice: RecipientNotice, always: Bool) {
        switch notice {
        case .acceptedOnFirstUse(let folders, let fromElsewhere):
            guard always || fromElsewhere else { return }
            for (folder, keys) in folders {
                standardError.line(
                    "Accepted the recipients of \(folder.isEmpty ? "the store" : Quoting.quoted(folder)) as they "
                        + "are now (first use on this clone): " + keys.joined(separator: ", "))
            }
        case .undidInterruptedChange(let files):
            standardError.line(
                "Undid a change that an interrupted command left half done: \(files) file\(files == 1 ? "" : "s") put "
                    + "back as they were.")
        }
    }

    /// The store, reporting the progress of bulk work on `meter`.
    func storeShowingProgress(_ meter: ProgressMeter) -> PasswordStore {
        var store = self.store
        store.progress = { meter.update(done: $0, total: $1) }
        return store
    }

    /// Whether coffer runs under pass's name, and so prints pass's own banner and help.
    var speaksAsPass: Bool { program == "pass" }

    /// `$PREFIX`, the store's root.
    var prefix: String { store.root }

    /// A setting read as pass reads it: `${NAME:-fallback}`.
    func setting(_ name: String, _ fallback: String) -> String {
        guard let value = environment[name], !value.isEmpty else { return fallback }
        return value
    }

    /// `PASSWORD_STORE_CLIP_TIME`, as written (pass prints it verbatim).
    var clipTime: String { setting("PASSWORD_STORE_CLIP_TIME", "45") }
    /// `PASSWORD_STORE_X_SELECTION`.
    var xSelection: String { setting("PASSWORD_STORE_X_SELECTION", "clipboard") }
    /// `PASSWORD_STORE_GENERATED_LENGTH`, as written.
    var generatedLength: String { setting("PASSWORD_STORE_GENERATED_LENGTH", "25") }
    /// `PASSWORD_STORE_CHARACTER_SET`.
    var characterSet: String {
        setting("PASSWORD_STORE_CHARACTER_SET", PasswordGenerator.defaultCharacterSet)
    }
    /// `PASSWORD_STORE_CHARACTER_SET_NO_SYMBOLS`.
    var characterSetNoSymbols: String {
        setting("PASSWORD_STORE_CHARACTER_SET_NO_SYMBOLS", PasswordGenerator.noSymbolsCharacterSet)
    }
    /// `PASSWORD_STORE_EXTENSIONS_DIR`, by default `$PREFIX/.extensions`.
    var extensionsDirectory: String { setting("PASSWORD_STORE_EXTENSIONS_DIR", prefix + "/.extensions") }
    /// `${EDITOR:-editor}`, as pass names it in commit messages.
    var editorName: String { setting("EDITOR", "editor") }

    /// The command's usage line, as pass's `die "Usage: $PROGRAM $COMMAND ..."` prints it.
    func usage(_ synopsis: String) -> Exit {
        .die("Usage: \(program) \(command)\(synopsis.isEmpty ? "" : " " + synopsis)")
    }

    /// Parses the command's options the way pass's getopt call does and prints getopt's complaints.
    ///
    /// - Returns: the options and operands, and whether getopt reported an error (pass's `$err`).
    func parseOptions(_ arguments: [String], _ options: [OptionParser.Option]) -> (OptionParser.Result, Bool)
    {
        let parser = OptionParser(
            options: options, program: program, stopAtFirstOperand: environment["POSIXLY_CORRECT"] != nil)
        let result = parser.parse(arguments)
        for error in result.errors { standardError.line(error) }
        return (result, !result.errors.isEmpty)
    }

    /// pass's `check_sneaky_paths`.
    func checkSneakyPaths(_ paths: String...) throws {
        for path in paths where EntryName.isSneaky(path) {
            throw Exit.die("Error: You've attempted to pass a sneaky path to \(program). Go home.")
        }
    }

    /// Says on standard error which `PASSWORD_STORE_GPG_OPTS` options the engine cannot apply, before the
    /// first gpg operation, when they would make pass behave differently (pass hands them all to gpg):
    /// nothing is said for options that apply or change nothing visible, nor for encryption options
    /// when the command only decrypts.
    func warnAboutUnappliedGPGOptions(encrypting: Bool = true) {
        let unapplied = GPGMessages.unapplied(store.configuration.gpgOptions.ignored, encrypting: encrypting)
        guard !unapplied.isEmpty else { return }
        standardError.line(
            "\(program): PASSWORD_STORE_GPG_OPTS: not applied (unsupported with GPGME): "
                + unapplied.joined(separator: " "))
    }

    /// The `mkdir -p -v` of a name's folder that pass runs before encrypting (`$PREFIX/$(dirname -- NAME)`).
    ///
    /// As in pass, a folder that cannot be made is reported in mkdir's words and the command goes on (the
    /// write that follows then fails).
    func makeFolder(for name: String) throws {
        // A name that can never be written creates nothing (pass would make its folders first).
        try store.validateNewName(name)
        do {
            try store.makeFolders(store.root + "/" + Self.dirname(name), onEvent: CoreutilsMessages.print)
        } catch let error as CofferError
            where error.code == .io && error.errno != nil && error.paths.count == 1
        {
            standardError.line(
                "mkdir: cannot create directory \(CoreutilsMessages.localeQuote(error.paths[0])): \(error.errno!)"
            )
        }
    }

    /// `dirname -- NAME`.
    static func dirname(_ path: String) -> String {
        var bytes = Array(path.utf8)
        while bytes.count > 1 && bytes.last == UInt8(ascii: "/") { bytes.removeLast() }
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return "." }
        var end = slash
        while end > 0 && bytes[end - 1] == UInt8(ascii: "/") { end -= 1 }
        if end == 0 { return "/" }
        return String(decoding: bytes[..<end], as: UTF8.self)
    }
}
