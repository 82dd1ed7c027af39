import Coffer

/// `init [--path=subfolder,-p subfolder] gpg-id...`: sets the recipients of the store or of a folder and
/// re-encrypts what they change; a single empty id removes the folder's `.gpg-id`.
enum InitCommand {
    static let pathOption = ValueOption.required("p", "path", "set the recipients of this subfolder only")

    /// `init`.
    static let command = Command(
        names: ["init"], options: Command.options(pathOption),
        usage: "[--path=subfolder,-p subfolder] gpg-id...", operands: .recipients,
        help: { _ in
            [
                "Initialize new password storage and use gpg-id for encryption.",
                "Selectively reencrypt existing passwords using new gpg-id.",
            ]
        }, passHead: "init [--path=subfolder,-p subfolder] gpg-id...", run: run)

    /// Runs the command.
    static func run(_ arguments: [String], _ invocation: Invocation) throws {
        let (parsed, failed) = invocation.parseOptions(arguments, Self.command.options)
        let subfolder = parsed[pathOption] ?? ""
        if failed || parsed.operands.isEmpty {
            throw invocation.usage("[--path=subfolder,-p subfolder] gpg-id...")
        }
        if !subfolder.isEmpty { try invocation.checkSneakyPaths(subfolder) }
        invocation.warnAboutUnappliedGPGOptions()
        let meter = ProgressMeter(label: "re-encrypting", environment: invocation.environment)
        defer { meter.clear() }
        // A SIGTERM or a closed terminal waits for the change to be whole: never a narrowed .gpg-id
        // committed while its entries are still encrypted for the old recipients.
        try HeldSignals.during {
            try invocation.storeShowingProgress(meter).initialize(
                recipients: parsed.operands, subfolder: subfolder
            ) {
                meter.clear()
                CoreutilsMessages.print($0)
            }
        }
        // pass then lists the folder's entries with find, which says so when the removal took the folder.
        let folder = invocation.prefix + "/" + subfolder
        if parsed.operands == [""] && !FileSystem.isDirectory(folder) {
            standardError.line("find: \(CoreutilsMessages.localeQuote(folder)): No such file or directory")
        }
        // A key that exists but cannot encrypt is accepted, as pass accepts it; say so now rather than
        // at the first insert. (An unknown key stays silent: it may be imported later, as in pass.)
        let named = parsed.operands == [""] ? [] : parsed.operands
        for problem in (try? invocation.store.engine.recipientProblems(named)) ?? []
        where problem.kind != .noPublicKey {
            standardError.line("\(invocation.program): warning: \(problem.message)")
        }
    }
}
