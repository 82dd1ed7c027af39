/// What `sync` did.
public struct SyncReport: Sendable, Equatable {
    /// Entries that arrived from the remote.
    public var added: [String] = []
    /// Entries whose content changed from the remote.
    public var changed: [String] = []
    /// Entries the remote removed.
    public var removed: [String] = []
    /// Entries that hold a conflict to resolve with `coffer edit`.
    public var conflicts: [String] = []
    /// Entries deleted on one side and edited on the other: the edit was kept.
    public var keptEdits: [String] = []
    /// Whether the store has no remote (nothing else was done).
    public var noRemote = false
    /// Whether local commits were pushed.
    public var pushed = false

    /// Creates an empty report.
    public init() {}
}

extension PasswordStore {
    /// Pulls (rebase by default; `git config coffer.syncmode merge` merges) and pushes the store.
    ///
    /// Entries are merged field by field by the merge driver, which `sync` installs; a conflict stays
    /// inside the encrypted entry and is reported. Deletion against edit keeps the edit. With
    /// `coffer.requiresignedcommits` true, incoming commits must carry a good signature.
    public func sync() throws -> SyncReport {
        try StoreLock.withLock(root: root, timeout: configuration.lockTimeout) {
            let repository = try rootRepository()
            try repository.ensureNoUnfinishedOperation()
            var report = SyncReport()
            try repository.installMergeDriver()
            let remotes = try repository.run(["remote"]).outputText.split(separator: "\n").map(String.init)
            guard let defaultRemote = remotes.contains("origin") ? "origin" : remotes.first else {
                report.noRemote = true
                return report
            }
            let branch = try repository.run(["rev-parse", "--abbrev-ref", "HEAD"]).outputText
            let configuredUpstream = try? repository.run([
                "rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{u}",
            ])
            let upstream = configuredUpstream?.outputText ?? "\(defaultRemote)/\(branch)"
            let remote = String(upstream.split(separator: "/").first ?? Substring(defaultRemote))
            do {
                try repository.run(["fetch", "--quiet", remote])
            } catch let error as CofferError {
                throw CofferError(
                    .git, "cannot reach the remote \(remote); nothing was changed (\(error.message))")
            }
            let before = try repository.run(["rev-parse", "HEAD"]).outputText
            if repository.resolve(upstream) != nil {
                try verifySignatures(repository, range: "HEAD..\(upstream)")
                try integrate(upstream, into: repository, report: &report)
            }
            let after = try repository.run(["rev-parse", "HEAD"]).outputText
            if before != after { try describeChanges(repository, from: before, to: after, report: &report) }
            let ahead =
                try repository.resolve(upstream) == nil
                || !repository.run(["rev-list", "\(upstream)..HEAD"]).outputText.isEmpty
            if ahead {
                do {
                    try repository.run(["push", "--quiet", "--set-upstream", remote, "HEAD:\(branch)"])
                    report.pushed = true
                } catch let error as CofferError {
                    throw CofferError(
                        .git,
                        "push to \(remote) failed; your changes are committed locally, sync again later (\(error.message))"
                    )
                }
            }
            return report

        }
    }

    private func verifySignatures(_ repository: GitRepository, range: String) throws {
        let required =
            (try? repository.run(["config", "--bool", "coffer.requiresignedcommits"]))?.outputText == "true"
        guard required else { return }
        let lines = try repository.run(["log", "--format=%H %G?", range]).outputText.split(separator: "\n")
        for line in lines {
            let parts = line.split(separator: " ")
            if parts.count == 2 && parts[1] != "G" {
                throw CofferError(
                    .git, "refusing to merge commit \(parts[0].prefix(12)): its signature does not verify")
            }
        }
    }

    /// Rebases onto (or merges) `upstream`, settling what git leaves unmerged.
    private func integrate(_ upstream: String, into repository: GitRepository, report: inout SyncReport)
        throws
    {
        let mode = (try? repository.run(["config", "coffer.syncmode"]))?.outputText ?? "rebase"
        let first: [String] = mode == "merge" ? ["merge", "--no-edit", upstream] : ["rebase", upstream]
        let continuing: [String] = mode == "merge" ? ["commit", "--no-edit"] : ["rebase", "--continue"]
        var arguments = first
        for _ in 0..<1000 {
            let output = try repository.runUnchecked(arguments, extraEnvironment: ["GIT_EDITOR": "true"])
            let unmerged = try repository.run(["diff", "--name-only", "--diff-filter=U"]).outputText
                .split(separator: "\n").map(String.init)
            if output.status == 0 && unmerged.isEmpty {
                if arguments == continuing || arguments == first { return }
            }
            if unmerged.isEmpty {
                if output.status == 0 { return }
                // A step with nothing left to merge (e.g. an emptied commit): skip it or fail clearly.
                if mode != "merge", (try? repository.run(["rebase", "--skip"])) != nil {
                    arguments = continuing; continue
                }
                throw CofferError(
                    .git, "git \(arguments[0]) failed: \(output.errorText.split(separator: "\n").last ?? "")")
            }
            try settle(unmerged, in: repository, report: &report)
            arguments = continuing
        }
    }

    /// Resolves unmerged paths: entries keep what the merge driver wrote (conflicts stay inside them),
    /// and deletion against edit keeps the edit.
    private func settle(_ paths: [String], in repository: GitRepository, report: inout SyncReport) throws {
        let top = try repository.topLevel()
        let status = try repository.run(["status", "--porcelain", "--"] + paths).outputText
        for line in status.split(separator: "\n") {
            let code = String(line.prefix(2))
            let path = String(line.dropFirst(3))
            let full = top + "/" + path
            let name = path.hasSuffix(".gpg") ? String(path.dropLast(4)) : path
            if FileSystem.kind(full) == .missing {
                try repository.run(["rm", "--quiet", "--", path])
                continue
            }
            try repository.run(["add", "--", path])
            if code == "DU" || code == "UD" {
                report.keptEdits.append(name)
            } else if path.hasSuffix(".gpg") {
                // Still unmerged: the driver kept a conflict inside the entry (or could not run, and the
                // work tree holds our version). Either way the entry needs a person.
                report.conflicts.append(name)
            }
        }
    }

    private func describeChanges(
        _ repository: GitRepository, from before: String, to after: String, report: inout SyncReport
    ) throws {
        // -z: names as they are, whatever bytes they hold.
        let output = try repository.run(["diff", "-z", "--name-status", "--no-renames", before, after])
        let fields = output.standardOutput.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        var index = 0
        while index + 1 < fields.count {
            let (status, path) = (fields[index], fields[index + 1])
            index += 2
            guard path.hasSuffix(".gpg") else { continue }
            let name = String(path.dropLast(4))
            switch status.prefix(1) {
            case "A": report.added.append(name)
            case "D": report.removed.append(name)
            default: report.changed.append(name)
            }
        }
    }

    /// The merge driver: merges three encrypted versions of an entry into `ours`, re-encrypted to the
    /// recipients of `path` (relative to the store root). Returns `false` when a conflict was kept inside.
    public func mergeEntry(base: String, ours: String, theirs: String, path: String) throws -> Bool {
        func decrypt(_ file: String) throws -> [UInt8] {
            let bytes = try FileSystem.readFile(file)
            return bytes.isEmpty ? [] : try engine.decrypt(bytes).bytes
        }
        let result = EntryMerge.merge(
            base: try decrypt(base), ours: try decrypt(ours), theirs: try decrypt(theirs))
        let name = path.hasSuffix(".gpg") ? String(path.dropLast(4)) : path
        let recipients = try recipients(for: name)
        try verifyRecipientsFile(recipients.file)
        let ciphertext = try engine.encrypt(SecureBytes(result.bytes), to: recipients.ids)
        try FileSystem.atomicWrite(ours, bytes: ciphertext, mode: configuration.fileMode)
        return !result.hasConflicts
    }

    /// Clones a store from `url` into this store's root, installs the merge driver, and returns the
    /// root recipients for which no secret key is in the keyring (empty when the user can read the store).
    public func clone(from url: String) throws -> [String] {
        guard try FileSystem.kind(root) == .missing || FileSystem.contents(of: root).isEmpty else {
            throw CofferError(.alreadyExists, "\(root) already exists and is not empty")
        }
        let parent = FileSystem.parent(of: root)
        try FileSystem.makeDirectories(parent, mode: configuration.folderMode)
        let output = try GitRepository(
            directory: parent, storeRoot: root, environment: configuration.environment
        )
        .runUnchecked(["clone", "--quiet", "--", url, root])
        guard output.status == 0 else {
            throw CofferError(.git, "git clone failed: \(output.errorText.split(separator: "\n").last ?? "")")
        }
        let repository = try rootRepository()
        try repository.installMergeDriver()
        // A clone without a root .gpg-id has no recipients to check.
        guard gpgIDFile(forFolder: "") != nil || configuration.keyOverride != nil else { return [] }
        let ids = try recipients(forFolder: "").ids
        return try engine.keys(matching: ids, secretOnly: true).isEmpty ? ids : []
    }
}
