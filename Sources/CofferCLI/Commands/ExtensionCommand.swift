import Coffer

/// Unknown commands run extensions: pass's bash extensions (`COMMAND.bash`) where pass looks for them,
/// sourced by bash after coffer's prelude (``ExtensionPrelude``); and coffer's own executables
/// (`coffer-COMMAND`) with the remaining arguments and the store's settings in their environment, as git
/// and cargo run theirs.
///
/// The order: with `PASSWORD_STORE_ENABLE_EXTENSIONS=true`, the user's folder
/// (`PASSWORD_STORE_EXTENSIONS_DIR`, default `<store>/.extensions`), `coffer-COMMAND` then `COMMAND.bash`;
/// then the system folder's `COMMAND.bash`, which pass reads without the switch; then `coffer-COMMAND`
/// on `PATH`. With `PASSWORD_STORE_SIGNING_KEY` set, an extension of the user's folder runs only with a
/// valid signature, as in pass.
///
/// Names that are no command of ``CommandRegistry`` get here; and, under pass's name, the commands of
/// coffer's own that yield to a pass extension of the same name (``Command/yieldsUnderPassName``: all but
/// `otp`, which reimplements pass-otp's `otp.bash`), as pass would run that extension. pass's own
/// commands answer first.
enum ExtensionCommand {
    /// The prefix of extension executables.
    static let executablePrefix = "coffer-"

    /// Where pass's system extensions are: `COFFER_SYSTEM_EXTENSIONS_DIR` when set (for tests), else
    /// Debian's and Ubuntu's folder, or on macOS Homebrew's.
    static func systemDirectory(_ environment: [String: String]) -> String {
        if let folder = environment["COFFER_SYSTEM_EXTENSIONS_DIR"], !folder.isEmpty { return folder }
        #if os(macOS)
            for prefix in ["/opt/homebrew", "/usr/local"]
            where FileSystem.isDirectory(prefix + "/lib/password-store") {
                return prefix + "/lib/password-store/extensions"
            }
            return "/usr/local/lib/password-store/extensions"
        #else
            return "/usr/lib/password-store/extensions"
        #endif
    }

    /// Runs the extension for `arguments[0]` and returns `true`, or returns `false` when there is none
    /// (the arguments are then shown as pass does). With `passExtensionsOnly`, only pass's bash
    /// extensions are looked for (`coffer-COMMAND` executables are not: pass would not run them).
    static func run(_ arguments: [String], _ invocation: Invocation, passExtensionsOnly: Bool = false) throws
        -> Bool
    {
        let name = arguments.first ?? ""
        try invocation.checkSneakyPaths(name)
        guard !name.isEmpty else { return false }
        // pass runs `team/sync` as EXTENSIONS/team/sync.bash and `--x` as `--x.bash`; coffer's own
        // executables are looked for only under plain names (a `/` would make a path of the name).
        let executables =
            !passExtensionsOnly && !name.utf8.contains(0x2F) && name.utf8.first != UInt8(ascii: "-")
        let environment = invocation.environment
        let enabled = environment["PASSWORD_STORE_ENABLE_EXTENSIONS"] == "true"
        let folder = invocation.extensionsDirectory
        func runnable(_ path: String) -> Bool { FileSystem.isFile(path) && FileSystem.isExecutable(path) }
        if enabled {
            let candidate = folder + "/" + executablePrefix + name
            if executables, runnable(candidate) {
                try verify(candidate, invocation)
                try runExecutable(candidate, arguments, invocation)
            }
            if runnable(folder + "/" + name + ".bash") {
                try verify(folder + "/" + name + ".bash", invocation)
                try runBash(arguments, invocation)
            }
        }
        if runnable(systemDirectory(environment) + "/" + name + ".bash") {
            try runBash(arguments, invocation)
        }
        guard executables,
            let executable = ChildProcess.findOnPath(executablePrefix + name, environment: environment)
        else {
            return false
        }
        try runExecutable(executable, arguments, invocation)
    }

    private static func verify(_ path: String, _ invocation: Invocation) throws {
        do {
            try invocation.store.verifySignature(of: path)
        } catch let error as CofferError {
            throw Exit.die(error.message)
        }
    }

    /// Runs `coffer-COMMAND` and ends with its status.
    private static func runExecutable(_ executable: String, _ arguments: [String], _ invocation: Invocation)
        throws
        -> Never
    {
        try finish(
            ChildProcess(
                .path(executable), arguments: Array(arguments.dropFirst()),
                environment: extensionEnvironment(invocation).map { "\($0.key)=\($0.value)" }.sorted()))
    }

    /// Runs bash with the prelude, which finds the extension again (by pass's rules) and sources it, and
    /// ends with bash's status. The environment is this process's, as pass's extensions get pass's.
    private static func runBash(_ arguments: [String], _ invocation: Invocation) throws -> Never {
        let environment = invocation.environment
        let bash = ChildProcess.findOnPath("bash", environment: environment) ?? "/bin/bash"
        #if os(macOS)
            let getopt =
                ["/opt/homebrew/opt/gnu-getopt/bin/getopt", "/usr/local/opt/gnu-getopt/bin/getopt"].first(
                    where: FileSystem.isExecutable) ?? "getopt"
            let (shred, base64) = ("srm -f -z", "openssl base64")
        #else
            let (getopt, shred, base64) = ("getopt", "shred -f -z", "base64")
        #endif
        let settings = [
            ownExecutable, systemDirectory(environment), invocation.program, getopt, shred, base64,
        ]
        let argumentZero = CommandLine.arguments.first ?? invocation.program
        try finish(
            ChildProcess(
                .path(bash), arguments: ["-c", ExtensionPrelude.script, argumentZero] + settings + arguments,
                environment: environment.map { "\($0.key)=\($0.value)" }.sorted()))
    }

    /// Runs `child` attached to this process's terminal and ends as it ended: with its exit status, or,
    /// when a signal killed it, killed by the same signal.
    ///
    /// While it runs, this process waits as a shell waits for a foreground job: SIGINT and SIGQUIT (which
    /// the terminal sends to the child too) are ignored here, so that an extension or editor that handles
    /// Ctrl-C goes on with the terminal; SIGTERM and SIGHUP, sent to this process alone, are passed on to
    /// the child, and this process still waits for it.
    private static func finish(_ child: ChildProcess) throws -> Never {
        let termination: ChildProcess.TerminationStatus
        do {
            termination = try waitAsForegroundJob(child)
        } catch let error as CofferError {
            throw Exit.die("Error: \(error.message)")
        }
        switch termination {
        case .exited(let code):
            throw Exit(code)
        case .signaled(let signalNumber):
            signal(signalNumber, SIG_DFL)
            var set = sigset_t()
            sigemptyset(&set)
            sigaddset(&set, signalNumber)
            sigprocmask(SIG_UNBLOCK, &set, nil)
            raise(signalNumber)
            throw Exit(128 + signalNumber)
        }
    }

    /// Starts `child` (its signals at their defaults) and waits for it, ignoring SIGINT and SIGQUIT and
    /// passing SIGTERM and SIGHUP on to it.
    static func waitAsForegroundJob(_ child: ChildProcess) throws -> ChildProcess.TerminationStatus {
        let ignored = [SIGINT, SIGQUIT].map { ($0, signal($0, SIG_IGN)) }
        defer { for (signalNumber, previous) in ignored { signal(signalNumber, previous) } }
        var forwarded = sigset_t()
        sigemptyset(&forwarded)
        for signalNumber in [SIGTERM, SIGHUP, SIGCHLD] { sigaddset(&forwarded, signalNumber) }
        var previousMask = sigset_t()
        sigprocmask(SIG_BLOCK, &forwarded, &previousMask)
        defer { sigprocmask(SIG_SETMASK, &previousMask, nil) }
        let pid = try child.spawn()
        while true {
            if let ended = ChildProcess.status(ifEnded: pid) { return ended }
            var timeout = timespec(tv_sec: 1, tv_nsec: 0)
            let received = sigtimedwait(&forwarded, nil, &timeout)
            if received == SIGTERM || received == SIGHUP { kill(pid, received) }
        }
    }

    /// The environment an extension gets: this process's, plus every store setting spelled out.
    static func extensionEnvironment(_ invocation: Invocation) -> [String: String] {
        var environment = invocation.environment
        environment["PASSWORD_STORE_DIR"] = invocation.prefix
        environment["PASSWORD_STORE_EXTENSIONS_DIR"] = invocation.extensionsDirectory
        environment["PASSWORD_STORE_X_SELECTION"] = invocation.xSelection
        environment["PASSWORD_STORE_CLIP_TIME"] = invocation.clipTime
        environment["PASSWORD_STORE_GENERATED_LENGTH"] = invocation.generatedLength
        environment["PASSWORD_STORE_CHARACTER_SET"] = invocation.characterSet
        environment["PASSWORD_STORE_CHARACTER_SET_NO_SYMBOLS"] = invocation.characterSetNoSymbols
        environment["PASSWORD_STORE_UMASK"] = invocation.setting("PASSWORD_STORE_UMASK", "077")
        environment["COFFER"] = ownExecutable
        environment["COFFER_PROGRAM"] = invocation.program
        return environment
    }
}
