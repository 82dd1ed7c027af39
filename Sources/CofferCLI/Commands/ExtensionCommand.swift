import Coffer

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Unknown commands: an executable `coffer-COMMAND` in `PASSWORD_STORE_EXTENSIONS_DIR` (when
/// `PASSWORD_STORE_ENABLE_EXTENSIONS=true`) or on `PATH` runs with the remaining arguments and the store's
/// settings in its environment, as git and cargo run theirs. pass's bash extensions (`COMMAND.bash`) cannot
/// be sourced by coffer and are refused with one line.
enum ExtensionCommand {
    /// The prefix of extension executables.
    static let executablePrefix = "coffer-"

    /// Runs the extension for `arguments[0]` and returns `true`, or returns `false` when there is none
    /// (the arguments are then shown as pass does).
    static func run(_ arguments: [String], _ invocation: Invocation) throws -> Bool {
        let name = arguments.first ?? ""
        try invocation.checkSneakyPaths(name)
        guard !name.isEmpty, !name.contains("/"), !name.hasPrefix("-") else { return false }
        let environment = invocation.environment
        let enabled = environment["PASSWORD_STORE_ENABLE_EXTENSIONS"] == "true"
        let folder = invocation.extensionsDirectory
        var executable: String?
        if enabled {
            let candidate = folder + "/" + executablePrefix + name
            if FileSystem.isFile(candidate) && FileSystem.isExecutable(candidate) {
                try invocation.store.verifySignature(of: candidate)
                executable = candidate
            } else if FileSystem.isFile(folder + "/" + name + ".bash")
                && FileSystem.isExecutable(folder + "/" + name + ".bash")
            {
                throw bashExtension(folder + "/" + name + ".bash", invocation)
            }
        }
        if executable == nil {
            executable = ChildProcess.findOnPath(executablePrefix + name, environment: environment)
        }
        guard let executable else {
            let system = "/usr/lib/password-store/extensions/" + name + ".bash"
            if FileSystem.isFile(system) && FileSystem.isExecutable(system) {
                throw bashExtension(system, invocation)
            }
            return false
        }
        let status: Int32
        do {
            status = try ChildProcess(
                .path(executable), arguments: Array(arguments.dropFirst()),
                environment: extensionEnvironment(invocation).map { "\($0.key)=\($0.value)" }.sorted()
            ).runAttached().code
        } catch let error as CofferError {
            throw Exit.die("Error: \(error.message)")
        }
        if status > 128 {
            // The extension was killed by a signal: end the same way.
            signal(status - 128, SIG_DFL)
            raise(status - 128)
        }
        throw Exit(status)
    }

    private static func bashExtension(_ path: String, _ invocation: Invocation) -> Exit {
        .die("Error: \(path) is a bash extension for pass, which coffer cannot run.")
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
