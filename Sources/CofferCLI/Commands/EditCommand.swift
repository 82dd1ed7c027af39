import Coffer

/// `edit pass-name`: decrypts the entry into a private folder in `/dev/shm`, runs `$EDITOR` on it, and
/// encrypts the result back (a new entry when there was none).
enum EditCommand {
    /// `edit`.
    static let command = Command(
        names: ["edit"], usage: "pass-name",
        help: { ["Insert a new password or edit an existing password using \($0.editorName)."] },
        passHead: "edit pass-name", run: run)

    /// Runs the command.
    static func run(_ arguments: [String], _ invocation: Invocation) throws {
        guard arguments.count == 1 else { throw invocation.usage("pass-name") }
        var path = arguments[0]
        if path.endsWithSlash { path = path.withoutLastSlash }
        try invocation.checkSneakyPaths(path)
        try invocation.makeFolder(for: path)
        let store = invocation.store
        _ = try store.verifiedRecipients(forFolder: Invocation.dirname(path))
        // What would stop the save is found before the editor runs, not after (pass would save anyway).
        try store.git(for: store.entryPath(path))?.ensureNoUnfinishedOperation()
        invocation.warnAboutUnappliedGPGOptions()

        let folder = try SecureTemporaryFolder(
            program: invocation.program, environment: invocation.environment, warn: true)
        defer { folder.finish() }
        // pass's name (`XXXXXX-folder-name.txt`), its start left out when it would pass NAME_MAX: pass then
        // fails to make the file; the name's end, what an editor shows, stays.
        var flattened = Array(
            path.split(separator: "/", omittingEmptySubsequences: false).joined(separator: "-").utf8)
        let room = Int(NAME_MAX) - 6 - 1 - 4
        if flattened.count > room {
            flattened = Array(flattened.suffix(room))
            while let first = flattened.first, first & 0xc0 == 0x80 { flattened.removeFirst() }
        }
        let file =
            folder.path + "/" + PlaintextFolder.randomName(6) + "-"
            + String(decoding: flattened, as: UTF8.self)
            + ".txt"

        var original: PasswordStore.ReadVersion?
        if FileSystem.isFile(store.entryPath(path)) {
            do {
                original = try store.readVersion(path)
            } catch let error as GPGError {
                throw Exit(1, GPGMessages.decryptionFailure(error))
            }
            try writeFile(file, original!.plaintext, mode: 0o666 & ~invocation.store.configuration.umask)
        }
        let action = original == nil ? "Add" : "Edit"

        let status = runEditor(on: file, folder, invocation)
        if folder.mustStop { return }

        guard let edited = readFile(file) else { throw Exit.die("New password not saved.") }
        if let original, original.plaintext.constantTimeEquals(edited) {
            throw Exit.die("Password unchanged.")
        }
        // An editor that failed may have left half its text (a full /dev/shm, vim's :cq); pass saves it.
        if status != 0 {
            throw Exit.die(
                "Error: the editor exited with status \(status), so the edit of \(Quoting.quoted(path)) is not "
                    + "saved.")
        }
        let message = "\(action) password for \(path) using \(invocation.editorName)."
        while true {
            do {
                // A change made meanwhile (a sync) is merged with this one, never overwritten.
                if try store.write(path, edited, commitMessage: message, basedOn: original) {
                    standardError.line(
                        "Warning: \(path) changed while you edited it and both changed the same field; resolve "
                            + "it with \"\(invocation.program) edit \(path)\".")
                }
                return
            } catch let error as GPGError {
                standardError.line("Error: \(error.message)")
                guard Terminal.isTerminal(0) else { throw Exit(1) }
                try Terminal.confirm("GPG encryption failed. Would you like to try again?")
            } catch let error as CofferError where Terminal.isTerminal(0) && error.code != .invalidName {
                // The text is still in the private folder: a person at a terminal may fix the cause.
                standardError.line("Error: \(error.message)")
                try Terminal.confirm("Saving failed. Would you like to try again?")
            }
        }
    }

    /// Runs `${EDITOR:-editor} FILE` (`vi` when there is no `editor`) attached to the terminal and
    /// returns its status (127 when it cannot be started).
    ///
    /// As git runs it: a value with shell syntax (quotes, `$`, `;`, ...) or a shell builtin such as `:`
    /// runs through `/bin/sh -c 'EDITOR "$@"'`; otherwise it is split into words and run directly, as
    /// pass's unquoted `$EDITOR` is.
    private static func runEditor(on file: String, _ folder: SecureTemporaryFolder, _ invocation: Invocation)
        -> Int32
    {
        let editor = invocation.environment["EDITOR"] ?? ""
        var words = editor.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).map(String.init)
        if words.isEmpty {
            words = [ChildProcess.isOnPath("editor", environment: invocation.environment) ? "editor" : "vi"]
        } else if editor.contains(where: { "|&;<>()$`\\\"'*?[#~=%".contains($0) }) || words[0] == ":" {
            words = ["/bin/sh", "-c", editor + " \"$@\"", editor]
        }
        do {
            return folder.wait(for: try ChildProcess(words + [file]).spawn())
        } catch let error as CofferError {
            standardError.line("\(invocation.program): \(error.message)")
            return 127
        } catch {
            return 127
        }
    }

    private static func writeFile(_ path: String, _ contents: SecureBytes, mode: mode_t) throws {
        do {
            let descriptor = try SystemCall.open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode: mode)
            defer { SystemCall.close(descriptor) }
            try contents.withUnsafeBytes { try SystemCall.writeAll(descriptor, $0, path: path) }
        } catch let error as CofferError {
            throw Exit.die("Error: \(error.message)")
        }
    }

    /// The file's bytes, or `nil` when it is not a regular file (`[[ -f ]]`) or cannot be read.
    private static func readFile(_ path: String) -> SecureBytes? {
        guard FileSystem.isFile(path) else { return nil }
        return try? SecureBytes(contentsOfFile: path)
    }
}
