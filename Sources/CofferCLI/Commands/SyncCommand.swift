import Coffer

/// `sync`: pulls (rebase by default), merges entries field by field, pushes, and says what changed.
enum SyncCommand {
    /// `sync`.
    static let command = Command(
        names: ["sync"], usage: "", origin: .coffer, operands: .none,
        help: { _ in ["Pull, merge entries field by field, and push the store."] }, run: run)

    /// Runs the command.
    static func run(_ arguments: [String], _ invocation: Invocation) throws {
        let (parsed, failed) = invocation.parseOptions(arguments, Self.command.options)
        guard !failed, parsed.operands.isEmpty else { throw invocation.usage("") }
        var store = invocation.store
        store.gitOutput = .quiet
        // The merge driver is this very program, by its absolute path, so git finds it from any PATH.
        let report = try store.sync(mergeDriver: ownExecutable)
        if report.recovered {
            standardOutput.line("Undid what an interrupted sync left half done.")
        }
        if report.noRemote {
            standardOutput.line("The password store has no git remote; nothing to sync.")
            return
        }
        for name in report.added { standardOutput.line("Added \(name)") }
        for name in report.changed { standardOutput.line("Changed \(name)") }
        for name in report.removed { standardOutput.line("Removed \(name)") }
        for name in report.keptEdits {
            standardOutput.line("Kept \(name): it was deleted on one side and edited on the other")
        }
        for name in report.keptRenames {
            standardOutput.line(
                "Kept \(name): the entry was renamed differently on each side; both names are kept")
        }
        for name in report.reencrypted {
            standardOutput.line("Reencrypted \(name) for the recipients of its folder")
        }
        if !report.importedKeys.isEmpty {
            let count = report.importedKeys.count
            standardOutput.line(
                "Imported \(count) recipient key\(count == 1 ? "" : "s") from .public-keys: "
                    + report.importedKeys.joined(separator: ", "))
        }
        for name in report.conflicts {
            standardError.line(
                "Conflict in \(name): both sides changed the same field; "
                    + "resolve it with \"\(invocation.program) edit \(name)\"")
        }
        let changes = report.added.count + report.changed.count + report.removed.count
        if changes == 0 && report.keptEdits.isEmpty && report.conflicts.isEmpty && report.keptRenames.isEmpty
        {
            standardOutput.line(report.pushed ? "Pushed local changes." : "Already up to date.")
        } else if report.pushed {
            standardOutput.line("Pushed local changes.")
        }
        if !report.conflicts.isEmpty { throw Exit(1) }
    }
}
