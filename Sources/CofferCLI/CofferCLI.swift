import Coffer

/// The `coffer` command line: a drop-in for `pass` 1.7.4.
///
/// Every command, alias, option and message of pass is reproduced; the store work is done by the `Coffer`
/// library, and git, grep, the editor, the clipboard tools and qrencode are run as pass runs them.
public enum CofferCLI {
    /// Runs the command named by the process arguments and exits with its status.
    public static func run() -> Never {
        // Started without even its name (an empty argv): which command was meant is unknown.
        guard CommandLine.argc > 0 else {
            standardError.line("Error: started with no arguments at all (not even the program's name).")
            exit(1)
        }
        // Swift replaces bytes that are not UTF-8 in arguments; refuse rather than act on another name.
        for index in 1..<Int(CommandLine.argc) {
            guard let raw = CommandLine.unsafeArgv[index], String(validatingCString: raw) == nil else {
                continue
            }
            standardError.line("Error: argument \(index) is not valid UTF-8; names must be UTF-8 text.")
            exit(1)
        }
        // The same for the variables that name places: Swift would read another path than the one given.
        var variable = environ
        while let entry = variable.pointee {
            if String(validatingCString: entry) == nil {
                let bytes = Array(UnsafeRawBufferPointer(start: entry, count: strlen(entry)))
                let name = String(decoding: bytes.prefix { $0 != UInt8(ascii: "=") }, as: UTF8.self)
                if name.hasPrefix("PASSWORD_STORE_") || name.hasPrefix("XDG_") || name.hasPrefix("COFFER_")
                    || ["HOME", "GNUPGHOME", "TMPDIR", "EDITOR", "PATH"].contains(name)
                {
                    standardError.line(
                        "Error: \(Quoting.quoted(name)) is not valid UTF-8; paths must be UTF-8 text.")
                    exit(1)
                }
            }
            variable += 1
        }
        var status = main(CommandLine.arguments)
        // Output that could not be written (a full disk) is a failure, as it is for cat, not a success.
        if let failure = OutputStream.failure {
            standardError.line("Error: write error: \(String(cString: strerror(failure)))")
            if status == 0 { status = 1 }
        }
        exit(status)
    }

    /// Runs `arguments` (program name first) and returns the exit status.
    ///
    /// Output goes to the process's standard output and error, as child processes (git, grep, editors)
    /// write there too.
    public static func main(_ arguments: [String]) -> Int32 {
        ProcessHardening.disableCoreDumps()
        // A file-size limit (a full disk) then fails the write with EFBIG instead of killing the process.
        signal(SIGXFSZ, SIG_IGN)
        setlocale(LC_ALL, "")
        if ClipboardRestorer.isRestoreInvocation(arguments) {
            return ClipboardRestorer.run()
        }
        let environment = prepareProcess(StoreConfiguration.processEnvironment())
        var arguments = arguments
        // The credential helpers are this program under the names git and docker look for.
        let helpers = [
            "git-credential-coffer": "git-credential", "docker-credential-coffer": "docker-credential",
        ]
        if let helper = helpers[programName(arguments.first ?? "")] { arguments.insert(helper, at: 1) }
        let command = arguments.count > 1 ? arguments[1] : ""
        let rest = Array(arguments.dropFirst(2))
        var invocation = Invocation(
            program: programName(arguments.first ?? "pass"), command: command, environment: environment)
        do {
            try dispatch(
                command: command, arguments: rest, allArguments: Array(arguments.dropFirst()), &invocation)
            return 0
        } catch let exit as Exit {
            if let message = exit.message { standardError.line(message) }
            return exit.status
        } catch {
            // A write that the disk refused leaves no empty folder it made for it (pass's `mkdir -p`
            // before a write stays, as in pass, when the command fails for another reason).
            if let error = error as? CofferError, let number = error.errno?.rawValue,
                [ENOSPC, EDQUOT, EFBIG, EIO, EROFS].contains(number)
            {
                ChangeJournal.removeEmptyMadeFolders()
            }
            return report(error, invocation: invocation)
        }
    }

    /// Runs one command as pass's final `case` does, looking it up in ``CommandRegistry``: `help` and
    /// `version` also as `--help` and `--version`, `COMMAND --help` for the usage of one command, and
    /// anything else as an extension or, failing that, `show`.
    static func dispatch(
        command: String, arguments: [String], allArguments: [String], _ invocation: inout Invocation
    ) throws {
        let name = command == "--help" ? "help" : command == "--version" ? "version" : command
        if let found = CommandRegistry.command(named: name) {
            // Under pass's name, a pass extension of the same name (pass-audit for `audit`, a user's
            // `sync.bash`) is what pass would run: it wins over a command of coffer's own that is not a
            // reimplementation of it.
            if found.yieldsUnderPassName, invocation.speaksAsPass,
                try ExtensionCommand.run(allArguments, invocation, passExtensionsOnly: true)
            {
                return
            }
            if found.name != "help" && !found.handlesHelp && HelpCommand.asksForHelp(arguments)
                && found.origin != .hidden
            {
                HelpCommand.run(topic: name, invocation)
                return
            }
            // A change a killed coffer left half done is put back before anything reads the store. Not in
            // the merge driver: it runs inside a sync that holds the store's lock.
            if !["help", "version", "git-merge-driver"].contains(found.name) {
                invocation.store.putBackInterruptedChange()
            }
            try found.run(arguments, invocation)
            return
        }
        if try ExtensionCommand.run(allArguments, invocation) { return }
        invocation.command = "show"
        try ShowCommand.run(allArguments, invocation)
    }

    /// `${0##*/}`.
    static func programName(_ path: String) -> String {
        path.lastPathPart
    }

    /// What pass's first lines do to its own process: the umask, `GPG_TTY`, and git's environment
    /// (`GIT_DIR` and friends unset, `GIT_CEILING_DIRECTORIES` at the store's parent), which every child
    /// process inherits. Returns the environment as changed.
    private static func prepareProcess(_ original: [String: String]) -> [String: String] {
        var environment = original
        let configuration = StoreConfiguration(environment: original)
        umask(configuration.umask)
        if (environment["GPG_TTY"] ?? "").isEmpty, isatty(0) == 1, let name = ttyname(0) {
            environment["GPG_TTY"] = String(cString: name)
            setenv("GPG_TTY", String(cString: name), 1)
        }
        for name in GitRepository.unsetVariables {
            unsetenv(name)
            environment[name] = nil
        }
        let ceiling = configuration.root + "/.."
        setenv("GIT_CEILING_DIRECTORIES", ceiling, 1)
        environment["GIT_CEILING_DIRECTORIES"] = ceiling
        return environment
    }

    /// Prints a library error as pass would word the situation, and returns the exit status.
    static func report(_ error: any Error, invocation: Invocation) -> Int32 {
        if let error = error as? CofferError {
            if error.code == .noRecipients {
                standardError.write(
                    "Error: You must run:\n    \(invocation.program) init your-gpg-id\n"
                        + "before you may use the password store.\n\n")
                HelpCommand.run(invocation)
                return 1
            }
            if error.code == .notAGitRepository {
                standardError.line(
                    "Error: the password store is not a git repository. Try \"\(invocation.program) git init\"."
                )
                return 1
            }
            if error.code == .badSignature {
                standardError.line(error.message)
                return 1
            }
            standardError.line("Error: \(error.message)")
            return 1
        }
        if let error = error as? GPGError {
            standardError.line("Error: \(error.message)")
            return 1
        }
        standardError.line("Error: \(error)")
        return 1
    }
}
