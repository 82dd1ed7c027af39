import Coffer

/// `rm`, `remove`, `delete [--recursive,-r] [--force,-f] pass-name`: removes an entry or a folder.
enum RemoveCommand {
    static let recursiveFlag = Flag("r", "recursive", "remove a folder and its contents")
    static let forceFlag = Flag("f", "force", "remove without asking")

    /// `rm`, `remove`, `delete`.
    static let command = Command(
        names: ["rm", "remove", "delete"],
        options: Command.options(recursiveFlag, forceFlag), usage: "[--recursive,-r] [--force,-f] pass-name",
        help: { _ in ["Remove existing password or directory, optionally forcefully."] },
        passHead: "rm [--recursive,-r] [--force,-f] pass-name", run: run)

    /// Runs the command.
    static func run(_ arguments: [String], _ invocation: Invocation) throws {
        let (parsed, _) = invocation.parseOptions(arguments, Self.command.options)
        // pass checks only the count here: a bad option is reported, then the removal goes on.
        guard parsed.operands.count == 1 else {
            throw invocation.usage("[--recursive,-r] [--force,-f] pass-name")
        }
        let path = parsed.operands[0]
        try invocation.checkSneakyPaths(path)
        let recursive = parsed[recursiveFlag]

        // Which file pass's `rm` is given: the entry, or the folder spelled with one trailing slash.
        let folder = invocation.prefix + "/" + (path.withoutLastSlash)
        let entry = invocation.prefix + "/" + path + ".gpg"
        let meansFolder =
            (FileSystem.isFile(entry) && FileSystem.isDirectory(folder) && path.endsWithSlash)
            || !FileSystem.isFile(entry)
        let target = meansFolder ? (folder.endsWithSlash ? folder : folder + "/") : entry
        guard FileSystem.exists(target) else {
            throw Exit.die("Error: \(path) is not in the password store.")
        }

        if !parsed[forceFlag] { try Terminal.confirm("Are you sure you would like to delete \(path)?") }
        if meansFolder && FileSystem.isDirectory(target) && !recursive {
            // `rm -f -v DIR/` fails, pass goes on and exits 0 with nothing removed but what its
            // `rmdir -p DIR` removes: the folder, when it is empty, and its emptied parents.
            standardError.line("rm: cannot remove \(CoreutilsMessages.quote(target)): Is a directory")
            invocation.store.removeEmptyFolders(from: String(target.dropLast()))
            return
        }
        do {
            try invocation.store.remove(path, recursive: recursive, onEvent: CoreutilsMessages.print)
        } catch let error as CofferError where error.code == .invalidArgument {
            throw Exit.die("rm: \(error.message)")
        }
    }
}
