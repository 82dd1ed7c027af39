import Coffer

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `insert`, `add [--echo,-e | --multiline,-m] [--force,-f] pass-name`: stores a password typed twice
/// (hidden), once (echoed), or everything on standard input (multiline).
enum InsertCommand {
    /// `insert`, `add`.
    static let command = Command(
        names: ["insert", "add"],
        options: [
            .flag("m", "multiline", "read lines until the end of input"),
            .flag("e", "echo", "read one line and echo it"), .flag("f", "force", "overwrite without asking"),
        ], usage: "[--echo,-e | --multiline,-m] [--force,-f] pass-name",
        help: { _ in
            [
                "Insert new password. Optionally, echo the password back to the console",
                "during entry. Or, optionally, the entry may be multiline. Prompt before",
                "overwriting existing password unless forced.",
            ]
        }, passHead: "insert [--echo,-e | --multiline,-m] [--force,-f] pass-name", run: run)

    /// Runs the command.
    static func run(_ arguments: [String], _ invocation: Invocation) throws {
        let (parsed, failed) = invocation.parseOptions(arguments, Self.command.options)
        let multiline = parsed.has("multiline")
        let echo = parsed.has("echo")
        if failed || (multiline && echo) || parsed.operands.count != 1 {
            throw invocation.usage("[--echo,-e | --multiline,-m] [--force,-f] pass-name")
        }
        var path = parsed.operands[0]
        if path.hasSuffix("/") { path.removeLast() }
        try invocation.checkSneakyPaths(path)
        let store = invocation.store

        if !parsed.has("force") && FileSystem.exists(store.entryPath(path)) {
            try Terminal.confirm("An entry already exists for \(path). Overwrite it?")
        }
        try invocation.makeFolder(for: path)
        _ = try store.verifiedRecipients(forFolder: Invocation.dirname(path))
        invocation.warnAboutUnappliedGPGOptions()

        let contents: SecureBytes
        if multiline {
            standardOutput.write("Enter contents of \(path) and press Ctrl+D when finished:\n\n")
            contents = readAll()
        } else if !echo {
            let first = Terminal.bashRead(prompt: "Enter password for \(path): ", hidden: true)
            guard first.succeeded else { throw Exit(1) }
            standardOutput.write("\n")
            let second = Terminal.bashRead(prompt: "Retype password for \(path): ", hidden: true)
            guard second.succeeded else { throw Exit(1) }
            standardOutput.write("\n")
            guard first.value.constantTimeEquals(second.value) else {
                throw Exit.die("Error: the entered passwords do not match.")
            }
            contents = SecureBytes(first.value.bytes + [10])
        } else {
            let line = Terminal.bashRead(prompt: "Enter password for \(path): ", lineEditing: true)
            contents = SecureBytes(line.value.bytes + [10])
        }
        try write(path, contents, invocation, message: "Add given password for \(path) to store.")
    }

    /// Encrypts and commits, with pass's `Password encryption aborted.` when gpg fails.
    static func write(_ name: String, _ contents: SecureBytes, _ invocation: Invocation, message: String)
        throws
    {
        do {
            try invocation.store.write(name, contents, commitMessage: message)
        } catch let error as GPGError {
            standardError.line("Error: \(error.message)")
            throw Exit.die("Password encryption aborted.")
        } catch let error as CofferError where error.code == .io && error.errno != nil {
            // What pass shows when gpg cannot write the file.
            let reason = error.errno!.description
            standardError.line("gpg: can't create '\(invocation.store.entryPath(name))': \(reason)")
            standardError.line("gpg: [stdin]: encryption failed: \(reason)")
            throw Exit.die("Password encryption aborted.")
        }
    }

    /// Everything left on standard input, read into wiped memory (a read error ends it, as for bash).
    static func readAll() -> SecureBytes {
        (try? SystemCall.readAllSecret(0)) ?? SecureBytes([])
    }
}
