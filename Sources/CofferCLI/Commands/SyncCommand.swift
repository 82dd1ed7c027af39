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
        let quoted: (String) -> String = Quoting.quoted
        if !report.droppedByRemote.isEmpty {
            let count = report.droppedByRemote.count
            standardOutput.line(
                "The remote dropped \(count) commit\(count == 1 ? "" : "s") this clone had (it was force-pushed); "
                    + "\(count == 1 ? "it was" : "they were") not pushed back: "
                    + report.droppedByRemote.joined(separator: ", ")
                    + (report.keptDropped.map { ". The branch as it was is kept as \($0)" } ?? ""))
        }
        for name in report.added { standardOutput.line("Added \(quoted(name))") }
        for name in report.changed { standardOutput.line("Changed \(quoted(name))") }
        for name in report.removed { standardOutput.line("Removed \(quoted(name))") }
        for name in report.keptCounters {
            standardOutput.line(
                "Kept the HOTP counter of \(quoted(name)): the remote brought it back lower, which would hand out "
                    + "codes already used")
        }
        for name in report.keptEdits {
            standardOutput.line("Kept \(quoted(name)): it was deleted on one side and edited on the other")
        }
        for name in report.keptRenames {
            standardOutput.line(
                "Kept \(quoted(name)): the entry was renamed differently on each side; both names are kept")
        }
        for name in report.reencrypted {
            standardOutput.line("Reencrypted \(quoted(name)) for the recipients of its folder")
        }
        for change in report.recipientChanges { standardOutput.line(line(for: change, invocation)) }
        for link in report.links {
            standardOutput.line(
                "Link \(quoted(link.path)) -> \(quoted(link.target)) arrived; coffer reads and writes no entry through "
                    + "a link to another folder")
        }
        if !report.importedKeys.isEmpty {
            let count = report.importedKeys.count
            standardOutput.line(
                "Imported \(count) recipient key\(count == 1 ? "" : "s") from .public-keys (as data, not "
                    + "certified): " + report.importedKeys.joined(separator: ", "))
        }
        for entry in report.leftNarrow { standardError.line(CoreutilsMessages.line(for: .leftNarrow(entry))) }
        for name in report.conflicts {
            standardError.line(
                "Conflict in \(quoted(name)): both sides changed the same field; "
                    + "resolve it with \"\(invocation.program) edit \(name)\"")
        }
        let changes = report.added.count + report.changed.count + report.removed.count
        if changes == 0 && report.keptEdits.isEmpty && report.conflicts.isEmpty && report.keptRenames.isEmpty
            && report.recipientChanges.isEmpty && report.links.isEmpty && report.droppedByRemote.isEmpty
        {
            standardOutput.line(report.pushed ? "Pushed local changes." : "Already up to date.")
        } else if report.pushed {
            standardOutput.line("Pushed local changes.")
        }
        if !report.conflicts.isEmpty { throw Exit(1) }
    }

    /// One line of the report for a change to who may read a folder.
    static func line(for change: RecipientChange, _ invocation: Invocation) -> String {
        let by = change.commit.map { " by commit \($0)" } ?? ""
        switch change.kind {
        case .recipients, .removed:
            let folder = change.path == ".gpg-id" ? "" : String(change.path.dropLast("/.gpg-id".count))
            let place = folder.isEmpty ? "the store" : Quoting.quoted(folder)
            var words =
                change.kind == .removed
                ? "\(Quoting.quoted(change.path)) removed\(by): \(place) takes the recipients of the folder above"
                : "Recipients of \(place) changed\(by)"
            if !change.added.isEmpty { words += "; added " + change.added.joined(separator: ", ") }
            if !change.removed.isEmpty { words += "; removed " + change.removed.joined(separator: ", ") }
            if let first = change.unaccepted.first {
                let option = folder.isEmpty ? "" : "-p \(Quoting.quoted(folder)) "
                words +=
                    "; not accepted on this clone: \(change.unaccepted.joined(separator: ", ")) (to accept: "
                    + "\(invocation.program) recipients accept \(option)\(first))"
            }
            return words
        case .signature:
            return "Signature \(Quoting.quoted(change.path)) changed\(by)"
        case .publicKey:
            return "Public key \(Quoting.quoted(change.path)) changed\(by)"
        }
    }
}
