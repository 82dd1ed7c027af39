import Coffer

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `sync`: pulls (rebase by default), merges entries field by field, pushes, and says what changed.
enum SyncCommand {
    /// Runs the command.
    static func run(_ arguments: [String], _ invocation: Invocation) throws {
        let (parsed, failed) = invocation.parseOptions(arguments, [])
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

/// `clone URL [--path DIR]`: clones a store, installs the merge driver, checks the keys.
enum CloneCommand {
    /// Runs the command.
    static func run(_ arguments: [String], _ invocation: Invocation) throws {
        let (parsed, failed) = invocation.parseOptions(
            arguments, [.init(short: UInt8(ascii: "p"), long: "path", argument: .required)])
        guard !failed, parsed.operands.count == 1 else { throw invocation.usage("URL [--path,-p DIR]") }
        var configuration = invocation.store.configuration
        if let path = parsed.value("path") { configuration.root = StoreConfiguration(root: path).root }
        let store = PasswordStore(configuration: configuration)
        let unreadable = try store.clone(from: parsed.operands[0], mergeDriver: ownExecutable)
        standardOutput.line("Cloned \(parsed.operands[0]) into \(store.root).")
        if !unreadable.isEmpty {
            standardError.line(
                "Warning: no secret key for \(unreadable.joined(separator: ", ")) is in your keyring; "
                    + "its entries will not decrypt here.")
        }
    }
}

/// `git-merge-driver BASE OURS THEIRS PATH`: the merge driver git runs for `*.gpg` (`merge=coffer`).
///
/// git runs it at the top of the work tree, which is the store. Exits 0 when the merge is clean, 1 when
/// a conflict was kept inside the entry, 2 when it could not merge (git then reports a conflict).
enum MergeDriverCommand {
    /// Runs the command.
    static func run(_ arguments: [String], _ invocation: Invocation) throws {
        guard arguments.count == 4 else { throw invocation.usage("BASE OURS THEIRS PATH") }
        var configuration = invocation.store.configuration
        configuration.root = currentDirectory()
        let store = PasswordStore(configuration: configuration)
        do {
            let clean = try store.mergeEntry(
                base: arguments[0], ours: arguments[1], theirs: arguments[2], path: arguments[3])
            if !clean { throw Exit(1) }
        } catch let exit as Exit {
            throw exit
        } catch {
            throw Exit(2, "\(invocation.program): cannot merge \(arguments[3]): \(error)")
        }
    }
}

/// `fsck [--fix]`: checks the store; one line per finding; non-zero exit when something is wrong.
enum FsckCommand {
    /// Runs the command.
    static func run(_ arguments: [String], _ invocation: Invocation) throws {
        let (parsed, failed) = invocation.parseOptions(
            arguments, [.init(short: UInt8(ascii: "f"), long: "fix", argument: .none)])
        guard !failed, parsed.operands.isEmpty else { throw invocation.usage("[--fix,-f]") }
        let meter = ProgressMeter(label: "checking", environment: invocation.environment)
        defer { meter.clear() }
        let fix = parsed.has("fix")
        let findings = try invocation.storeShowingProgress(meter).check(fix: fix)
        meter.clear()
        for finding in findings { standardOutput.line(finding.description) }
        // Plaintext an edit killed with SIGKILL left in its private folder.
        var leftovers: [String] = []
        for parent in SecureTemporaryFolder.parents(environment: invocation.environment) {
            leftovers +=
                fix
                ? SecureTemporaryFolder.removeAbandoned(in: parent)
                : SecureTemporaryFolder.abandoned(in: parent)
        }
        for path in leftovers {
            standardOutput.line("\(path): plaintext left by an interrupted edit\(fix ? " (fixed)" : "")")
        }
        if findings.contains(where: { !$0.fixed }) || (!fix && !leftovers.isEmpty) { throw Exit(1) }
    }
}

extension OptionParser.Result {
    /// The value of the last `name` option given, if any.
    func value(_ name: String) -> String? {
        options.last { $0.name == name }?.value ?? nil
    }
}

/// The process's working folder.
func currentDirectory() -> String {
    guard let path = getcwd(nil, 0) else { return "." }
    defer { free(path) }
    return String(cString: path)
}
