import Coffer

/// `history pass-name`: one line per commit that touched the entry, newest first, following renames.
enum HistoryCommand {
    /// `history`.
    static let command = Command(
        names: ["history"], usage: "pass-name", origin: .coffer,
        help: { _ in ["Show the commits that changed pass-name, following renames."] }, run: run)

    /// Runs the command.
    static func run(_ arguments: [String], _ invocation: Invocation) throws {
        let (parsed, failed) = invocation.parseOptions(arguments, Self.command.options)
        guard !failed, parsed.operands.count == 1 else { throw invocation.usage("pass-name") }
        let name = parsed.operands[0]
        try invocation.checkSneakyPaths(name)
        for commit in try invocation.store.history(name) {
            // Author and subject come from the repository: quoted when they hold control characters.
            standardOutput.line(
                "\(commit.shortHash) \(commit.date) \(Quoting.quoted(commit.author)): \(Quoting.quoted(commit.subject))"
            )
        }
    }
}
