/// What `sync` did.
public struct SyncReport: Sendable, Equatable {
    /// Entries that arrived from the remote.
    public var added: [String] = []
    /// Entries whose content changed from the remote.
    public var changed: [String] = []
    /// Entries the remote removed.
    public var removed: [String] = []
    /// Entries that hold a conflict to resolve with `coffer edit` (both sides changed the same field).
    public var conflicts: [String] = []
    /// Entries deleted on one side and edited on the other: the edit was kept.
    public var keptEdits: [String] = []
    /// Entries renamed differently on each side: every new name was kept.
    public var keptRenames: [String] = []
    /// Entries re-encrypted because their folder's recipients changed on the other side.
    public var reencrypted: [String] = []
    /// Entries left encrypted for fewer keys than their folder's `.gpg-id` names: the keys withheld
    /// are not accepted for the folder (or for the folder the entry was written in).
    public var leftNarrow: [NarrowEntry] = []
    /// The changes the remote's commits made to who may read a folder: its `.gpg-id`, its signature, or
    /// a public key kept in `.public-keys`.
    public var recipientChanges: [RecipientChange] = []
    /// Symbolic links the remote's commits added or changed: their paths and where they point.
    public var links: [ArrivedLink] = []
    /// Whether an earlier sync had been interrupted and was undone first.
    public var recovered = false
    /// Where commits found on the interrupted sync's detached HEAD were kept (`refs/coffer/...`), if any.
    public var keptInterruptedWork: String?
    /// Commits this clone had that the remote held once and no longer holds (it was force-pushed), as
    /// `HASH "subject"`: they were not pushed back.
    public var droppedByRemote: [String] = []
    /// Where the branch as it was before is kept when the remote dropped commits (`refs/coffer/...`).
    public var keptDropped: String?
    /// Entries whose HOTP counter came back lower from the remote and kept this clone's (committed).
    public var keptCounters: [String] = []
    /// Whether the store has no remote (nothing else was done).
    public var noRemote = false
    /// Whether local commits were pushed.
    public var pushed = false
    /// The recipients' public keys that arrived in `.public-keys` and were imported into the keyring:
    /// `FINGERPRINT (user id)` each.
    public var importedKeys: [String] = []

    /// Creates an empty report.
    public init() {}

    /// Takes in what an integration settled.
    mutating func add(_ other: SyncReport) {
        conflicts += other.conflicts
        keptEdits += other.keptEdits
        keptRenames += other.keptRenames
        reencrypted += other.reencrypted
        droppedByRemote += other.droppedByRemote
        keptDropped = other.keptDropped ?? keptDropped
        leftNarrow += other.leftNarrow.filter { !leftNarrow.contains($0) }
    }
}

/// A symbolic link the remote's commits added or changed.
public struct ArrivedLink: Sendable, Equatable {
    /// The link, relative to the top of the work tree.
    public let path: String
    /// Where it points, as written in it.
    public let target: String
}

/// A change the remote's commits made to who may read a part of the store, as `sync` reports it.
public struct RecipientChange: Sendable, Equatable {
    /// What changed.
    public enum Kind: Sendable, Equatable {
        /// A `.gpg-id` was added or changed.
        case recipients
        /// A `.gpg-id` was removed: its folder takes the recipients of the one above now.
        case removed
        /// A `.gpg-id.sig` was added, changed or removed.
        case signature
        /// A public key kept in `.public-keys` was added, changed or removed.
        case publicKey
    }

    /// What changed.
    public let kind: Kind
    /// The file, relative to the store root.
    public let path: String
    /// The keys the change added to the folder's recipients, as `FINGERPRINT "user id"`.
    public let added: [String]
    /// The keys it removed.
    public let removed: [String]
    /// The fingerprints among the folder's recipients now that the user has not accepted there.
    public let unaccepted: [String]
    /// The last of the remote's commits that changed the file, as `HASH by AUTHOR`.
    public let commit: String?
}

extension PasswordStore {
    /// Pulls and pushes the store: fetches the remote, puts this clone's commits on top of the remote's
    /// (`git config coffer.syncmode merge` merges instead), and pushes.
    ///
    /// The merge is coffer's own, whatever git's configuration: entries changed on both sides merge
    /// field by field after decrypting them in memory (a conflict stays inside the encrypted entry and is
    /// reported), `.gpg-id` files merge as sets of recipients, text files merge line-wise, deletion
    /// against edit keeps the edit, renames to two names keep both, and entries that land in a folder
    /// whose recipients changed are re-encrypted for them. When something cannot be merged (a binary or
    /// overlapping change to a file that is not an entry, an entry this clone cannot decrypt or
    /// encrypt), nothing is changed and nothing is pushed: the error says what to do, this clone's
    /// commits stay on its branch and the remote's on the remote-tracking branch. With
    /// `coffer.requiresignedcommits` true, incoming commits must carry a good signature, and outgoing
    /// ones must be signed (`pass.signcommits`).
    ///
    /// - Parameter mergeDriver: the absolute path of a `coffer` executable to register as the git merge
    ///   driver for `*.gpg` (for people who run `git pull` themselves); `nil` leaves the configuration.
    public func sync(mergeDriver: String? = nil) throws -> SyncReport {
        try withStoreLock {
            let repository = try rootRepository()
            var report = SyncReport()
            if let undone = try undoInterruptedSync(repository) {
                report.recovered = true
                report.keptInterruptedWork = undone.kept
            }
            // A merge begun by hand (as a stopped sync advises) is finished first.
            if repository.unfinishedOperation() == "merge", let branch = try repository.currentBranch(),
                let mergeHead = repository.resolve("MERGE_HEAD")
            {
                let origins = try updatedOrigins(repository, revisions: [mergeHead])
                var integration = SyncIntegration(
                    store: self, repository: repository, branch: branch, upstream: "MERGE_HEAD",
                    upstreamCommit: mergeHead, rebase: false,
                    policy: try AutomaticPolicy(
                        store: self, acceptance: try acceptance(at: root + "/.gpg-id"), origins: origins))
                integration.policy.gained = gainedKeys(repository, local: "HEAD", remote: mergeHead)
                let beforeMerge = try repository.run(["rev-parse", "HEAD"]).outputText
                try integration.finishMergeByHand()
                report.add(integration.report)
                // What the merge brought counts for the HOTP counters as what a sync brings does.
                report.keptCounters += try keepHOTPCounters(repository, since: beforeMerge)
            }
            try repository.ensureNoUnfinishedOperation()
            repository.removeStaleLocks()
            guard let branch = try repository.currentBranch() else {
                throw CofferError(
                    .git,
                    "the store's git repository is not on a branch (detached HEAD); check out the branch to "
                        + "sync (git checkout main in the store) and sync again")
            }
            let uncommitted = try repository.uncommittedChanges()
            if !uncommitted.isEmpty {
                throw CofferError(
                    .git,
                    "the store has changes that are not committed (\(uncommitted.prefix(3).map(Quoting.quoted).joined(separator: ", "))"
                        + "\(uncommitted.count > 3 ? ", ..." : "")); commit them (git commit in the store) or "
                        + "undo them, then sync again")
            }
            if let mergeDriver { try repository.installMergeDriver(executable: mergeDriver) }
            // What this clone accepts is settled before anything arrives: a clone without records takes
            // the recipients it has now, not those a pull brings.
            var acceptance = try acceptance(at: root + "/.gpg-id")
            let remotes = try repository.run(["remote"]).outputText.split(separator: "\n").map(String.init)
            guard let defaultRemote = remotes.contains("origin") ? "origin" : remotes.first else {
                report.noRemote = true
                return report
            }
            // The remote-tracking branch by its full name: a tag someone pushed named `origin/main` would
            // be what the short name stands for (and `@{u}` would come out as `remotes/origin/main`).
            let configuredRemote = (try? repository.run(["config", "branch.\(branch).remote"]))?.outputText
            let remote = configuredRemote.flatMap { remotes.contains($0) ? $0 : nil } ?? defaultRemote
            let configuredUpstream = (try? repository.run(["rev-parse", "--symbolic-full-name", "@{u}"]))?
                .outputText
            let upstream =
                configuredUpstream.flatMap { $0.hasPrefix("refs/remotes/\(remote)/") ? $0 : nil }
                ?? "refs/remotes/\(remote)/\(branch)"
            let before = try repository.run(["rev-parse", "HEAD"]).outputText
            // The remote may move between fetch and push: then everything is done again.
            for attempt in 1...3 {
                try fetchBranch(repository, remote: remote, upstream: upstream)
                var origins: BlobOrigins = [:]
                if let remoteHead = repository.resolve(upstream) {
                    try verifySignatures(repository, range: "HEAD..\(remoteHead)")
                    origins = try updatedOrigins(repository, revisions: [remoteHead])
                    var integration = SyncIntegration(
                        store: self, repository: repository, branch: branch, upstream: upstream,
                        upstreamCommit: remoteHead,
                        rebase: ((try? repository.run(["config", "coffer.syncmode"]))?.outputText ?? "rebase")
                            != "merge",
                        policy: try AutomaticPolicy(store: self, acceptance: acceptance, origins: origins))
                    integration.policy.gained = gainedKeys(repository, local: before, remote: remoteHead)
                    try integration.run()
                    report.add(integration.report)
                    // No HOTP counter goes back: a push that lowered one is answered with the one this clone had.
                    report.keptCounters += try keepHOTPCounters(repository, since: before)
                    try SyncIntegration.FetchedRecord.note(upstream, commit: remoteHead, in: repository)
                }
                // Keys and recipients that arrived: keys are imported as data; a `.gpg-id` signed by a key
                // the user trusts to sign them is accepted; a record loses the keys its folder dropped.
                let arrived = try recipientFiles(repository, changedFrom: before, to: "HEAD")
                if !arrived.keys.isEmpty || !arrived.gpgIDs.isEmpty {
                    let imported = try importKeptPublicKeys(
                        onlyChanged: arrived.gpgIDs.isEmpty ? Set(arrived.keys) : nil)
                    report.importedKeys += imported.filter { !report.importedKeys.contains($0) }
                }
                if var current = acceptance, !arrived.gpgIDs.isEmpty {
                    try settleAcceptance(
                        &current, changed: arrived.gpgIDs, repository: repository, since: before,
                        upstream: repository.resolve(upstream))
                    acceptance = current
                }
                let remoteHead = repository.resolve(upstream)
                if let remoteHead {
                    // Read again: the integration noted where the ciphertexts it made come from.
                    var policy = try AutomaticPolicy(store: self, acceptance: acceptance)
                    policy.gained = gainedKeys(repository, local: before, remote: remoteHead)
                    let outgoing = try reencryptOutgoing(repository, since: remoteHead, policy: &policy)
                    report.reencrypted += outgoing.reencrypted
                    report.leftNarrow = outgoing.narrow
                }
                let ahead =
                    try remoteHead == nil
                    || !repository.run(["rev-list", "\(remoteHead!)..HEAD"]).outputText.isEmpty
                guard ahead else { break }
                if let remoteHead { try verifyOutgoingSignatures(repository, range: "\(remoteHead)..HEAD") }
                let pushed = try repository.runUnchecked([
                    "push", "--quiet", "--set-upstream", remote, "HEAD:refs/heads/\(branch)",
                ])
                if pushed.status == 0 {
                    report.pushed = true
                    if let pushedHead = repository.resolve("HEAD") {
                        try SyncIntegration.FetchedRecord.note(upstream, commit: pushedHead, in: repository)
                    }
                    break
                }
                let rejected = ["rejected", "non-fast-forward", "fetch first"].contains {
                    pushed.errorText.contains($0)
                }
                if !rejected || attempt == 3 {
                    throw CofferError(
                        .git,
                        "push to \(remote) failed; your changes are committed on \(branch) and will go with the "
                            + "next sync (\(Quoting.quoted(String(pushed.errorText.split(separator: "\n").last ?? ""))))"
                    )
                }
            }
            let after = try repository.run(["rev-parse", "HEAD"]).outputText
            if before != after {
                try describeChanges(repository, from: before, to: after, report: &report)
                report.recipientChanges = try recipientChanges(
                    repository, from: before, to: after, acceptance: acceptance)
            }
            return report
        }
    }

    /// Fetches the remote's branch that `upstream` tracks into it (named, so that a branch the remote
    /// no longer has is an error, not an old remote-tracking branch left in place).
    ///
    /// - Throws: when the fetch fails, and when the remote has no such branch though this clone fetched
    ///   it before (someone deleted it): a push would make it again with whatever the remote had dropped
    ///   (a purged entry). A branch the remote never had is made by the push.
    private func fetchBranch(_ repository: GitRepository, remote: String, upstream: String) throws {
        let name = String(upstream.dropFirst("refs/remotes/\(remote)/".count))
        // Known from before the fetch (which may prune it, with its reflog).
        let known =
            repository.resolve(upstream) != nil
            || !SyncIntegration.FetchedRecord.commits(for: upstream, in: repository).isEmpty
        let fetched = try repository.runUnchecked([
            "fetch", "--quiet", remote, "+refs/heads/\(name):\(upstream)",
        ])
        guard fetched.status != 0 else { return }
        let listed = try repository.runUnchecked(["ls-remote", "--exit-code", remote, "refs/heads/\(name)"])
        guard listed.status == 2 else {
            throw CofferError(
                .git,
                "git fetch from \(remote) failed, so nothing was changed: "
                    + Quoting.quoted(
                        GitRepository.firstError(of: fetched.errorText) ?? "exit \(fetched.status)"),
                exitStatus: fetched.status)
        }
        guard !known else {
            throw CofferError(
                .cannotMerge,
                "\(remote) has no branch \(Quoting.quoted(name)) any more, though this clone fetched it before "
                    + "(someone deleted or renamed it): nothing was changed or pushed, since a push would make it "
                    + "again with every commit this clone has, also those the remote had dropped. To make the "
                    + "branch again from this clone, git push it, then sync again")
        }
    }

    /// Entries of the commits about to be pushed (changed since `remoteHead`, or under a `.gpg-id` changed
    /// since) that are not encrypted for their recipients, encrypted again and committed, so that what is
    /// pushed matches its `.gpg-id`: a merge made by hand with git, say, brings entries into folders whose
    /// recipients changed without re-encrypting them. Returns their names.
    private func reencryptOutgoing(
        _ repository: GitRepository, since remoteHead: String, policy: inout AutomaticPolicy
    ) throws -> (reencrypted: [String], narrow: [NarrowEntry]) {
        var files = Set<String>()
        for change in try repository.changes(from: remoteHead, to: "HEAD") where change.status != "D" {
            let path = repository.directory + "/" + change.path
            if change.path.hasSuffix(".gpg") {
                files.insert(path)
            } else if change.path == ".gpg-id" || change.path.hasSuffix("/.gpg-id") {
                let folder = FileSystem.parent(of: path)
                if FileSystem.isDirectory(folder) { files.formUnion(try Self.entryFiles(at: folder)) }
            }
        }
        let planned = try automaticReencryptions(
            of: files.sorted().filter { FileSystem.kind($0) == .file }, policy: &policy)
        guard !planned.jobs.isEmpty else { return ([], planned.narrow) }
        var plan = ReencryptionPlan(jobs: planned.jobs)
        try encryptAgain(planned.jobs, acceptance: policy.acceptance) { _, ciphertext in
            plan.ciphertexts.append(ciphertext)
        }
        let written = plan.jobs.map(\.destination)
        // Whole or absent: the files and their commit, or none, and nothing is pushed then.
        try whole(written) { _ in
            try write(plan) { _ in }
            try repository.commit(
                paths: written,
                message:
                    "Reencrypt \(written.count) \(written.count == 1 ? "entry" : "entries") to match .gpg-id."
            )
        }
        return (written.map { String($0.droppingPathPrefix(root).dropLast(4)) }, planned.narrow)
    }

    /// With `coffer.requiresignedcommits` true, every commit in `range` must carry a good signature.
    private func verifySignatures(_ repository: GitRepository, range: String) throws {
        try firstUnsignedCommit(repository, range: range).map { commit in
            throw CofferError(.git, "refusing to merge commit \(commit): its signature does not verify")
        }
    }

    /// With `coffer.requiresignedcommits` true, the commits about to be pushed must be signed, or every
    /// other clone that requires signatures would refuse them for ever.
    private func verifyOutgoingSignatures(_ repository: GitRepository, range: String) throws {
        try firstUnsignedCommit(repository, range: range).map { commit in
            throw CofferError(
                .git,
                "commit \(commit) is not signed, and this store requires signed commits; "
                    + "set git config pass.signcommits true (and user.signingkey), sign it again "
                    + "(git commit --amend -S or git rebase -S), then sync again")
        }
    }

    /// The first commit in `range` without a good signature, when `coffer.requiresignedcommits` is true.
    private func firstUnsignedCommit(_ repository: GitRepository, range: String) throws -> String? {
        guard Self.requiresSignedCommits(repository) else { return nil }
        let lines = try repository.run(["log", "--format=%H %G?", range]).outputText.split(separator: "\n")
        for line in lines {
            let parts = line.split(separator: " ")
            if parts.count == 2 && parts[1] != "G" { return String(parts[0].prefix(12)) }
        }
        return nil
    }

    private static func requiresSignedCommits(_ repository: GitRepository) -> Bool {
        (try? repository.run(["config", "--bool", "coffer.requiresignedcommits"]))?.outputText == "true"
    }

    private func describeChanges(
        _ repository: GitRepository, from before: String, to after: String, report: inout SyncReport
    ) throws {
        for (status, path) in try repository.changes(from: before, to: after) where path.hasSuffix(".gpg") {
            let name = String(path.dropLast(4))
            switch status.prefix(1) {
            case "A": report.added.append(name)
            case "D": report.removed.append(name)
            default: report.changed.append(name)
            }
        }
        // Links that arrived: the way into other folders (or out of the store) someone put there.
        let raw = try repository.run(["diff", "--raw", "-z", "--no-renames", before, after, "--"])
            .standardOutput
            .split(separator: 0, omittingEmptySubsequences: false)
        var index = 0
        while index + 1 < raw.count {
            // `:OLDMODE NEWMODE OLD NEW STATUS`, then the path.
            let fields = raw[index].split(separator: 32).map { String(decoding: $0, as: UTF8.self) }
            let path = String(decoding: raw[index + 1], as: UTF8.self)
            if fields.count == 5, fields[1] == "120000",
                let target = try repository.contents(of: path, at: after)
            {
                report.links.append(ArrivedLink(path: path, target: String(decoding: target, as: UTF8.self)))
            }
            index += 2
        }
    }

    /// The merge driver: merges three encrypted versions of an entry into `ours`, re-encrypted to the
    /// recipients of `path` (relative to the store root), but never to a key that could not read `ours`
    /// and that the user has not accepted for the entry's folder. Returns `false` when a conflict was
    /// kept inside. An entry that is not text and that both sides changed is not merged: `ours` is left as
    /// it is and the error says so.
    package func mergeEntry(base: String, ours: String, theirs: String, path: String) throws -> Bool {
        let name = path.hasSuffix(".gpg") ? String(path.dropLast(4)) : path
        func read(_ file: String) throws -> (ciphertext: [UInt8], text: SecureBytes) {
            let bytes = try FileSystem.readFile(file)
            return (bytes, bytes.isEmpty ? SecureBytes([]) : try engine.decrypt(bytes))
        }
        let ourSide = try read(ours)
        let theirSide = try read(theirs)
        let merged = Self.mergedText(base: try read(base).text, ours: ourSide.text, theirs: theirSide.text)
        // An entry that is not text and changed on both sides stays as this side has it, unmerged.
        if merged.isUnmergeable {
            throw CofferError(
                .cannotMerge,
                "it is not text (a NUL byte or bytes that are not UTF-8) and both sides changed it; keep one "
                    + "version: git checkout --ours (or --theirs) -- \(Quoting.quoted(path)), then git add it",
                paths: [name])
        }
        var policy = try AutomaticPolicy(store: self, acceptance: try acceptance(at: entryPath(name)))
        guard
            let ciphertext = try encryptMerged(
                merged.text, name: name, ours: ourSide.ciphertext, theirs: theirSide.ciphertext,
                policy: &policy)
        else { throw Self.noReaderForMerge(name) }
        try FileSystem.atomicWrite(ours, bytes: ciphertext, mode: configuration.fileMode)
        return !merged.hasConflicts
    }

    /// The error for a merge of entry `name` that none of its folder's recipients may read.
    static func noReaderForMerge(_ name: String) -> CofferError {
        CofferError(
            .notAccepted,
            "cannot merge \(Quoting.quoted(name)): none of the recipients of its folder may read it (none of "
                + "them could read this clone's version, and none is accepted for the folder)",
            paths: [name])
    }

    /// Merges three plaintexts of an entry field by field.
    static func mergedText(base: SecureBytes, ours: SecureBytes, theirs: SecureBytes) -> (
        text: SecureBytes, hasConflicts: Bool, isUnmergeable: Bool
    ) {
        var texts = [base.bytes, ours.bytes, theirs.bytes]
        defer { for index in texts.indices { wipeMemory(&texts[index], count: texts[index].count) } }
        let result = EntryMerge.merge(base: texts[0], ours: texts[1], theirs: texts[2])
        let merged = SecureBytes(result.bytes)
        var bytes = result.bytes
        wipeMemory(&bytes, count: bytes.count)
        return (merged, result.hasConflicts, result.isUnmergeable)
    }

    /// Encrypts the merge of entry `name` for its recipients as `policy` allows, taking what this
    /// clone's side (`ours`, its ciphertext) could be read by as already allowed; `nil` when no
    /// recipient may read it (the caller keeps this clone's side as it is).
    func encryptMerged(
        _ text: SecureBytes, name: String, ours: [UInt8], theirs: [UInt8], policy: inout AutomaticPolicy
    ) throws -> [UInt8]? {
        let recipients = try recipients(for: name)
        try verifyRecipientsFile(recipients.file)
        let chosen = try policy.recipients(
            forMergeOf: [ours, theirs], inFolder: Self.folder(of: name), wanted: recipients)
        guard let ids = chosen.ids else {
            // A side encrypted to a key this keyring does not know: who may read the merge cannot be told.
            if chosen.unknownReaders {
                throw CofferError(
                    .notAccepted,
                    "one side is encrypted to a key this keyring does not know, so who may read the merge "
                        + "cannot be told", paths: [name])
            }
            return nil
        }
        let ciphertext = try engine.encrypt(text, to: ids)
        try checkAccepted(
            ciphertext, forFolder: Self.folder(of: name), acceptance: policy.acceptance,
            allowed: chosen.allowed)
        if let acceptance = policy.acceptance {
            let folder = Self.folder(of: name)
            // The merge holds text of both sides: it comes from wherever either did.
            let made = Self.ciphertextID(of: ciphertext)
            try CiphertextOrigins.append(
                [ours, theirs].map { .carried(blob: made, from: Self.ciphertextID(of: $0), folder: folder) },
                to: acceptance.originsFile)
            policy.carry(ciphertext, from: Self.ciphertextID(of: ours), inFolder: folder)
            policy.carry(ciphertext, from: Self.ciphertextID(of: theirs), inFolder: folder)
        }
        return ciphertext
    }

    /// Clones a store from `url` into this store's root, registers `mergeDriver` (when given) as the git
    /// merge driver for entries, and returns the root recipients for which no secret key is in the
    /// keyring (empty when the user can read the store).
    public func clone(from url: String, mergeDriver: String? = nil) throws -> [String] {
        guard try FileSystem.kind(root) == .missing || FileSystem.contents(of: root).isEmpty else {
            throw CofferError(.alreadyExists, "\(root) already exists and is not empty")
        }
        let parent = FileSystem.parent(of: root)
        try FileSystem.makeDirectories(parent, mode: configuration.folderMode)
        let output = try GitRepository(
            directory: parent, storeRoot: root, environment: configuration.environment
        )
        .runUnchecked(["clone", "--quiet", "--no-checkout", "--", url, root])
        guard output.status == 0 else {
            throw CofferError(
                .git,
                "git clone failed: \(Quoting.quoted(String(output.errorText.split(separator: "\n").last ?? "")))"
            )
        }
        let repository = try rootRepository()
        // This clone's attributes come before the first checkout: a pushed `.gitattributes` (`*.gpg text
        // eol=crlf`) would otherwise rewrite the ciphertexts as they are checked out.
        try repository.installEntryAttributes(mergeDriver: mergeDriver != nil)
        if repository.resolve("HEAD") != nil { try repository.run(["checkout", "--quiet", "-f"]) }
        // A remote whose HEAD names a branch it does not have (a bare repository made with another default
        // branch than the one pushed) leaves the clone on no commit: take its branch, main first.
        if repository.resolve("HEAD") == nil {
            let branches = try repository.run([
                "for-each-ref", "--format=%(refname:lstrip=3)", "refs/remotes/origin",
            ])
            .outputText.split(separator: "\n").map(String.init).filter { $0 != "HEAD" }
            if let branch = ["main", "master"].first(where: branches.contains)
                ?? (branches.count == 1 ? branches[0] : nil)
            {
                try repository.run(["checkout", "--quiet", "-B", branch, "--track", "origin/" + branch])
            }
        }
        if let mergeDriver { try repository.installMergeDriver(executable: mergeDriver) }
        // The recipients' public keys the store keeps, as data: for adding and checking recipients.
        _ = try? importKeptPublicKeys()
        // What the clone accepts: the `.gpg-id` files signed by a key the user trusts to sign them, or,
        // when no such key is set, every one as it is now (told to ``notices``).
        _ = try acceptance(at: root + "/.gpg-id")
        // A clone without a root .gpg-id has no recipients to check.
        guard gpgIDFile(forFolder: "") != nil || configuration.keyOverride != nil else { return [] }
        let ids = try recipients(forFolder: "").ids
        return try engine.keys(matching: ids, secretOnly: true).isEmpty ? ids : []
    }

    /// What undoing an interrupted sync did.
    struct UndoneSync {
        /// Where commits of its detached HEAD were kept, if it had any.
        var kept: String?
    }

    /// Undoes a sync that was killed while it merged (see ``SyncIntegration/undo(_:in:)``); `nil` when
    /// there was none.
    func undoInterruptedSync(_ repository: GitRepository) throws -> UndoneSync? {
        guard let record = SyncIntegration.Record.read(repository) else { return nil }
        return UndoneSync(kept: try SyncIntegration.undo(record, in: repository))
    }
}
