import Coffer

/// `insert`, `add [--echo,-e | --multiline,-m] [--force,-f] pass-name`: stores a password typed twice
/// (hidden), once (echoed), or everything on standard input (multiline).
enum InsertCommand {
    static let multilineFlag = Flag("m", "multiline", "read lines until the end of input")
    static let echoFlag = Flag("e", "echo", "read one line and echo it")
    static let forceFlag = Flag("f", "force", "overwrite without asking")
    static let fieldOption = ValueOption.required(
        nil, "field", "set field KEY=VALUE of an entry (KEY alone: its value on standard input)"
    ).exact

    /// `insert`, `add`.
    static let command = Command(
        names: ["insert", "add"],
        options: Command.options(multilineFlag, echoFlag, forceFlag, fieldOption),
        usage: "[--echo,-e | --multiline,-m] [--force,-f] pass-name",
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
        let fields = parsed.values(fieldOption)
        if !fields.isEmpty {
            guard !failed, parsed.operands.count == 1, !parsed[multilineFlag], !parsed[echoFlag] else {
                throw invocation.usage("--field KEY=VALUE... pass-name")
            }
            return try setFields(fields, of: parsed.operands[0], invocation)
        }
        let multiline = parsed[multilineFlag]
        let echo = parsed[echoFlag]
        if failed || (multiline && echo) || parsed.operands.count != 1 {
            throw invocation.usage("[--echo,-e | --multiline,-m] [--force,-f] pass-name")
        }
        var path = parsed.operands[0]
        if path.endsWithSlash { path = path.withoutLastSlash }
        try invocation.checkSneakyPaths(path)
        let store = invocation.store

        if !parsed[forceFlag] && FileSystem.exists(store.entryPath(path)) {
            try Terminal.confirm("An entry already exists for \(path). Overwrite it?")
        }
        try invocation.makeFolder(for: path)
        _ = try store.verifiedRecipients(forFolder: Invocation.dirname(path))
        invocation.warnAboutUnappliedGPGOptions()

        let contents: SecureBytes
        if multiline {
            standardOutput.write("Enter contents of \(path) and press Ctrl+D when finished:\n\n")
            contents = try readAll()
        } else if !echo {
            let password = try Terminal.readConfirmed("password", "passwords", for: path)
            contents = SecureBytes(password.bytes + [10])
        } else {
            let line = Terminal.bashRead(prompt: "Enter password for \(path): ", lineEditing: true)
            if let failure = line.failure { try stopOnReadFailure(failure) }
            contents = SecureBytes(line.value.bytes + [10])
        }
        try write(path, contents, invocation, message: "Add given password for \(path) to store.")
    }

    /// `insert --field KEY=VALUE... NAME`: sets fields of an existing entry and leaves every other line as
    /// it is. A `KEY` without `=` takes its value from the next line of standard input, which keeps it out
    /// of the process's arguments (where other users of the machine can read it). `password` is line 1.
    private static func setFields(_ assignments: [String], of rawName: String, _ invocation: Invocation)
        throws
    {
        var name = rawName
        if name.endsWithSlash { name = name.withoutLastSlash }
        try invocation.checkSneakyPaths(name)
        let store = invocation.store
        guard store.contains(name) else { throw Exit.die("Error: \(name) is not in the password store.") }
        var fromInput: [[UInt8]] = []
        if assignments.contains(where: { !$0.contains("=") }) {
            fromInput = try readAll().withUnsafeBytes {
                $0.split(separator: UInt8(ascii: "\n")).map(Array.init)
            }
        }
        var changes: [(key: String, value: String)] = []
        for assignment in assignments {
            let key: String
            let value: String
            if let equals = assignment.firstIndex(of: "=") {
                key = String(assignment[..<equals])
                value = String(assignment[assignment.index(after: equals)...])
            } else {
                key = assignment
                guard !fromInput.isEmpty else {
                    throw Exit.die("Error: no value for \(key) on standard input.")
                }
                value = String(decoding: fromInput.removeFirst(), as: UTF8.self)
            }
            guard !key.isEmpty, !key.contains(":"), !key.contains(where: \.isNewline), !key.hasPrefix(" ")
            else {
                throw Exit.die("Error: '\(key)' cannot be a field name.")
            }
            changes.append((key, value))
        }
        for index in fromInput.indices {
            fromInput[index].withUnsafeMutableBytes { wipeMemory($0.baseAddress, count: $0.count) }
        }
        let keys = changes.map(\.key).joined(separator: ", ")
        let message = "Set \(changes.count == 1 ? "field" : "fields") \(keys) of \(name)."
        do {
            try store.update(name, commitMessage: message) { contents in
                var secret = Secret(parsing: contents.withUnsafeBytes { Array($0) })
                for (key, value) in changes {
                    if key.lowercased() == "password" {
                        try secret.setPassword(value)
                    } else {
                        try secret.setField(key, value)
                    }
                }
                var bytes = secret.formatted()
                if bytes.last != UInt8(ascii: "\n") { bytes.append(UInt8(ascii: "\n")) }
                defer { bytes.withUnsafeMutableBytes { wipeMemory($0.baseAddress, count: $0.count) } }
                return SecureBytes(bytes)
            }
        } catch let error as CofferError {
            throw Exit.die("Error: \(error.message)")
        }
    }

    /// Encrypts and commits, with pass's `Password encryption aborted.` when gpg fails.
    static func write(_ name: String, _ contents: SecureBytes, _ invocation: Invocation, message: String)
        throws
    {
        try reportingEncryptionFailure(name, invocation, aborted: "Password encryption aborted.") {
            try invocation.store.write(name, contents, commitMessage: message)
        }
    }

    /// Runs `write`, which encrypts the entry `name`; when gpg fails, or cannot create the file, says so
    /// as pass (and pass-otp) do and ends with `aborted`.
    static func reportingEncryptionFailure(
        _ name: String, _ invocation: Invocation, aborted: String, _ write: () throws -> Void
    ) throws {
        do {
            try write()
        } catch let error as GPGError {
            standardError.line("Error: \(error.message)")
            throw Exit.die(aborted)
        } catch let error as CofferError
            where error.code == .io && error.errno != nil
            && writesEntry(error, invocation.store.entryPath(name))
        {
            // What pass shows when gpg cannot write the file.
            let reason = error.errno!.description
            standardError.line("gpg: can't create '\(invocation.store.entryPath(name))': \(reason)")
            standardError.line("gpg: [stdin]: encryption failed: \(reason)")
            throw Exit.die(aborted)
        }
    }

    /// Whether `error` is about writing the entry at `path` (the file, its folder, or the temporary file
    /// in that folder that becomes the entry), which pass shows as gpg's error; an error about another
    /// file keeps its own message.
    private static func writesEntry(_ error: CofferError, _ path: String) -> Bool {
        let folder = path.parentPath
        return error.paths.isEmpty
            || error.paths.contains {
                $0 == path || $0 == folder
                    || ($0.parentPath == folder && $0.lastPathPart.hasPrefix(FileSystem.temporaryMarker))
            }
    }

    /// Everything left on standard input, read into wiped memory. A read error (standard input a folder,
    /// or not open for reading) stops the command, as gpg's stops pass's: taken for the end of the input,
    /// it would replace the entry with what was read so far.
    static func readAll() throws -> SecureBytes {
        do {
            return try SystemCall.readAllSecret(0)
        } catch {
            try stopOnReadFailure(error)
        }
    }

    /// Stops the command after standard input could not be read, as `readAll` does.
    static func stopOnReadFailure(_ error: any Error) throws -> Never {
        let reason = (error as? CofferError)?.errno?.description ?? "\(error)"
        standardError.line("Error: cannot read standard input: \(reason)")
        throw Exit.die("Password encryption aborted.")
    }
}
