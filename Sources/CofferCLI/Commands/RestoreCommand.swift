import Coffer

/// `restore --revision REV pass-name`: writes the entry back as it was, re-encrypted, as a new commit.
enum RestoreCommand {
    static let revisionOption = ValueOption.required("r", "revision", "the revision to bring back")

    /// `restore`.
    static let command = Command(
        names: ["restore"], options: Command.options(revisionOption),
        usage: "--revision,-r rev pass-name", origin: .coffer,
        help: { _ in ["Write back pass-name as it was in rev, re-encrypted, as a new commit."] }, run: run)

    /// Runs the command.
    static func run(_ arguments: [String], _ invocation: Invocation) throws {
        let (parsed, failed) = invocation.parseOptions(arguments, Self.command.options)
        guard !failed, parsed.operands.count == 1, let revision = parsed[revisionOption] else {
            throw invocation.usage("--revision,-r REV pass-name")
        }
        let name = parsed.operands[0]
        try invocation.checkSneakyPaths(name)
        try invocation.store.restore(name, revision: revision)
        standardOutput.line("Restored \(name) from \(revision).")
    }
}
