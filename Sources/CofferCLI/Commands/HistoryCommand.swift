import Coffer

/// `history pass-name`: one line per commit that touched the entry, newest first, following renames.
enum HistoryCommand {
    /// Runs the command.
    static func run(_ arguments: [String], _ invocation: Invocation) throws {
        let (parsed, failed) = invocation.parseOptions(arguments, [])
        guard !failed, parsed.operands.count == 1 else { throw invocation.usage("pass-name") }
        let name = parsed.operands[0]
        try invocation.checkSneakyPaths(name)
        for commit in try invocation.store.history(name) {
            standardOutput.line("\(commit.shortHash) \(commit.date) \(commit.author): \(commit.subject)")
        }
    }
}

/// `restore --revision REV pass-name`: writes the entry back as it was, re-encrypted, as a new commit.
enum RestoreCommand {
    /// Runs the command.
    static func run(_ arguments: [String], _ invocation: Invocation) throws {
        let (parsed, failed) = invocation.parseOptions(
            arguments, [.init(short: UInt8(ascii: "r"), long: "revision", argument: .required)])
        guard !failed, parsed.operands.count == 1, let revision = parsed.value("revision") else {
            throw invocation.usage("--revision,-r REV pass-name")
        }
        let name = parsed.operands[0]
        try invocation.checkSneakyPaths(name)
        try invocation.store.restore(name, revision: revision)
        standardOutput.line("Restored \(name) from \(revision).")
    }
}
