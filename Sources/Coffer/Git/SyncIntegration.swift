#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One integration of the remote's commits into this clone, for `sync`: a fast-forward, a replay of this
/// clone's commits on top of the remote's (the default), or a merge. git applies the changes; every path
/// it leaves unmerged is settled here, by a rule for its kind, never by taking one side silently.
///
/// While it runs, a record in the git folder says where the branch was, so a sync that is killed is
/// undone by the next one (or by `fsck --fix`); a sync that fails undoes itself the same way.
struct SyncIntegration {
    /// What the integration started from, kept in `<git folder>/coffer-sync` while it runs: the branch,
    /// the commit it pointed to, the remote's commit being brought in, and the files git did not track.
    struct Record: Equatable {
        /// The commit the branch pointed to.
        var original: String
        /// The branch.
        var branch: String
        /// The remote's commit being integrated.
        var upstream: String
        /// The untracked files of the work tree (relative to its top) before the integration began.
        var untracked: [String] = []

        static func path(_ repository: GitRepository) -> String? {
            repository.gitDirectory().map { $0 + "/coffer-sync" }
        }

        /// The record of an integration in progress (or killed), if there is one.
        static func read(_ repository: GitRepository) -> Record? {
            guard let path = path(repository), let bytes = try? FileSystem.readFile(path) else { return nil }
            // Three lines, then the untracked names, each ended by a NUL (a name may hold any byte).
            let head = bytes.split(separator: 10, maxSplits: 3, omittingEmptySubsequences: false)
            guard head.count >= 3 else { return nil }
            let untracked =
                head.count == 4 ? head[3].split(separator: 0).map { String(decoding: $0, as: UTF8.self) } : []
            return Record(
                original: String(decoding: head[0], as: UTF8.self),
                branch: String(decoding: head[1], as: UTF8.self),
                upstream: String(decoding: head[2], as: UTF8.self),
                untracked: untracked)
        }

        func write(_ repository: GitRepository) throws {
            guard let path = Self.path(repository) else {
                throw CofferError(.git, "cannot find the store's git folder")
            }
            let bytes =
                Array("\(original)\n\(branch)\n\(upstream)\n".utf8)
                + untracked.flatMap { Array($0.utf8) + [0] }
            try FileSystem.atomicWrite(path, bytes: bytes, mode: 0o600)
        }

        static func remove(_ repository: GitRepository) {
            if let path = path(repository) { unlink(path) }
        }
    }

    let store: PasswordStore
    let repository: GitRepository
    /// The branch being synced.
    let branch: String
    /// The remote-tracking branch, `origin/main`.
    let upstream: String
    /// The commit `upstream` pointed to when it was fetched.
    let upstreamCommit: String
    /// Whether this clone's commits are replayed on top of the remote's (else merged).
    let rebase: Bool
    /// What was settled: conflicts, kept edits and renames, re-encrypted entries, entries left narrow.
    var report = SyncReport()
    /// Who the entries it re-encrypts may be encrypted to: never a key the user has not accepted for the
    /// folder an entry is in and for every folder it was written in, unless it could read it already.
    var policy: PasswordStore.AutomaticPolicy
    /// A commit of this clone that merged the remote's commit by hand (as a stopped sync advised) while
    /// the remote had dropped commits: the replay takes the person's version of every file both sides
    /// changed, since that merge is where they chose it. A replay that stopped on the file again would
    /// give the same advice for ever; a merge would push the dropped commits back.
    var resolvedByHand: String?
    /// The commits of this clone that the remote dropped (a force-push), oldest first.
    var droppedCommits: [String] = []
    /// What they wrote, once worked out (``droppedContent()``).
    var droppedContentFound: DroppedContent?
    /// Where the remote pointed before (its reflog and sync's record), as ``remoteHistory(original:)``
    /// last found.
    var remoteHeldBefore: [String] = []

    /// git with the entry merge driver switched off: coffer settles what git cannot merge itself.
    /// Directory renames are off: moving a folder's entries must never carry another folder's `.gpg-id`
    /// (its recipients) along with them.
    private static let withoutDriver = [
        "-c", "merge.coffer.driver=false", "-c", "rerere.enabled=false", "-c", "merge.directoryRenames=false",
    ]

    /// Whether git follows renames in this integration: not when the remote removed a file and added
    /// its exact bytes under more than one name (a rename and a copy), where git would pick one of them
    /// by itself (the first by name, which whoever made them chose) and carry this clone's change of
    /// the file there. Then a change to the removed name stays under it.
    var followsRenames = true

    /// The strategy options of the merge or the replay of a commit. git's `ort` strategy follows an
    /// exact rename even with `merge.renames` off (git 2.39), so the `recursive` one does this.
    private var renameArguments: [String] {
        followsRenames ? [] : ["--strategy=recursive", "-Xno-renames"]
    }

    /// Whether the commits from `base` to `upstreamCommit` remove a file whose bytes they add under two
    /// names or more.
    private func remoteDuplicatesRemovedFile(base: String) throws -> Bool {
        let output = try repository.run([
            "diff", "--raw", "-z", "--no-renames", "--no-abbrev", base, upstreamCommit, "--",
        ]).standardOutput
        let fields = output.split(separator: 0, omittingEmptySubsequences: false).map {
            String(decoding: $0, as: UTF8.self)
        }
        var removed = Set<String>()
        var added: [String: Int] = [:]
        var index = 0
        while index + 1 < fields.count {
            // `:OLDMODE NEWMODE OLD NEW STATUS`, then the path.
            let parts = fields[index].split(separator: " ").map(String.init)
            index += 2
            guard parts.count == 5 else { continue }
            if parts[4].hasPrefix("D") { removed.insert(parts[2]) }
            if parts[4].hasPrefix("A") { added[parts[3], default: 0] += 1 }
        }
        return removed.contains { (added[$0] ?? 0) >= 2 }
    }

    /// Brings the remote's commits in; on failure the clone is as it was, and the error says why.
    mutating func run() throws {
        let original = try repository.run(["rev-parse", "HEAD"]).outputText
        let found = try repository.runUnchecked(["merge-base", original, upstreamCommit])
        guard found.status == 0 else {
            throw CofferError(
                .cannotMerge,
                "the remote's history and this clone's have no commit in common, so they cannot be merged; "
                    + "nothing was changed")
        }
        let base = found.outputText
        followsRenames = try !remoteDuplicatesRemovedFile(base: base)
        let history = try remoteHistory(original: original)
        if base == upstreamCommit && history.dropped.isEmpty { return }
        let record = Record(
            original: original, branch: branch, upstream: upstreamCommit,
            untracked: try Self.untrackedFiles(repository))
        try record.write(repository)
        do {
            if !history.dropped.isEmpty {
                // The remote was force-pushed: what it dropped is not put back, as `git pull --rebase`
                // does not; this clone's own commits go on top of what it has now, in either mode (a
                // merge would bring the dropped commits back). They stay under a ref of their own.
                // A name of its own (never one an earlier attempt made): the commit goes in it.
                let kept = "refs/coffer/dropped-by-remote/\(time(nil))-\(original.prefix(12))"
                if repository.resolve(kept) == nil { try repository.run(["update-ref", kept, original, ""]) }
                report.droppedByRemote = try history.dropped.map(describeCommit)
                report.keptDropped = kept
                if history.own.isEmpty {
                    try repository.run(["reset", "--quiet", "--keep", upstreamCommit])
                } else {
                    if try mergedByHand(original) { resolvedByHand = original }
                    droppedCommits = history.dropped
                    try replay(history.own, onto: original)
                }
            } else if base == original {
                try repository.run(["merge", "--ff-only", "--quiet", upstreamCommit])
            } else if rebase {
                try replay(history.own, onto: original)
            } else {
                try merge(base: base, original: original)
            }
        } catch {
            try Self.undo(record, in: repository)
            throw error
        }
        Record.remove(repository)
    }

    /// Undoes an integration that failed or was killed: HEAD goes back to the branch, the index and the
    /// work tree to the branch's commit, and what git and coffer left behind goes (stale locks, the
    /// merge driver's copies, temporary files, files the integration wrote that nothing tracks).
    ///
    /// The branch itself is never moved: it points to where it was, or to the finished integration when
    /// the kill came after that, or to commits someone made since. Commits on a detached HEAD that the
    /// branch does not hold are kept under `refs/coffer/interrupted-sync/` before HEAD leaves them;
    /// their name is returned.
    @discardableResult
    static func undo(_ record: Record, in repository: GitRepository) throws -> String? {
        repository.removeStaleLocks()
        removeMergeLeftovers(in: repository)
        // A cherry-pick stopped half-way: its state goes with the reset below.
        _ = try repository.runUnchecked(["cherry-pick", "--quit"])
        var kept: String?
        if try repository.currentBranch() != record.branch {
            let head = try repository.run(["rev-parse", "HEAD"]).outputText
            let tip = try repository.run(["rev-parse", "refs/heads/\(record.branch)"]).outputText
            if head != tip && !repository.isAncestor(head, of: tip) {
                let name = "refs/coffer/interrupted-sync/\(time(nil))"
                try repository.run(["update-ref", name, head])
                kept = name
            }
            try repository.run(["checkout", "--quiet", "--force", record.branch])
        }
        try repository.run(["reset", "--quiet", "--hard", "HEAD"])
        // The merge commit of a sync killed right after making it (this clone's commit and the remote's
        // as its parents) goes too: the next sync makes it again, and the clone is where it was before.
        let tip = try repository.run(["rev-parse", "HEAD"]).outputText
        let parents = try repository.run(["rev-list", "--parents", "-n", "1", tip]).outputText.split(
            separator: " "
        ).map(String.init)
        if tip != record.original, parents == [tip, record.original, record.upstream] {
            try repository.run(["reset", "--quiet", "--hard", record.original])
        }
        // Files the integration began to write and nothing tracks now: coffer's temporary files, and
        // files of the remote's commit (git stopped after creating them). Anything else is someone's.
        let before = Set(record.untracked)
        let appeared = try untrackedFiles(repository).filter { !before.contains($0) }
        if !appeared.isEmpty {
            let remote = try repository.run(
                ["ls-tree", "-r", "-z", "--name-only", record.upstream, "--"] + appeared)
            let fromRemote = Set(
                remote.standardOutput.split(separator: 0).map { String(decoding: $0, as: UTF8.self) })
            for path in appeared where fromRemote.contains(path) || path.contains(FileSystem.temporaryMarker)
            {
                unlink(repository.directory + "/" + path)
            }
        }
        Record.remove(repository)
        return kept
    }

    /// The files of the work tree git does not track (ignored ones included), relative to its top.
    private static func untrackedFiles(_ repository: GitRepository) throws -> [String] {
        let output = try repository.run(["ls-files", "-z", "--others"]).standardOutput
        return output.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The copies of the three versions git writes for a merge driver (`.merge_file_XXXXXX` at the top of
    /// the work tree), left behind when git is killed while the driver runs.
    static func mergeLeftovers(in repository: GitRepository) -> [String] {
        let names = (try? FileSystem.contents(of: repository.directory, sorted: true)) ?? []
        return names.filter { $0.hasPrefix(".merge_file_") && $0.utf8.count == 18 }.map {
            repository.directory + "/" + $0
        }
    }

    static func removeMergeLeftovers(in repository: GitRepository) {
        for path in mergeLeftovers(in: repository) { unlink(path) }
    }

    // MARK: - Replaying and merging

    /// The commits of the branch (up to `original`) that the remote does not hold now, oldest first:
    /// this clone's own, and those the remote held once and dropped (a force-push). Where the remote
    /// pointed before comes from the remote-tracking branch's reflog, as `git pull --rebase` finds its
    /// fork point, and from the record sync keeps of what it fetched (``FetchedRecord``).
    ///
    /// - Throws: when neither says where the remote pointed before and the branch has commits the remote
    ///   does not: sync cannot tell whether they are new or were dropped, so it stops and names them.
    mutating func remoteHistory(original: String) throws -> (own: [String], dropped: [String]) {
        let all = try commits([
            "rev-list", "--reverse", "--topo-order", "--no-merges", original, "^" + upstreamCommit,
        ])
        guard !all.isEmpty else { return ([], []) }
        let reference =
            (try? repository.run(["rev-parse", "--symbolic-full-name", upstream]))?.outputText ?? ""
        let reflog = reference.isEmpty ? nil : reflogCommits(reference)
        let recorded = FetchedRecord.commits(for: reference, in: repository)
        // No reflog: git starts one when the branch first moves after a clone, unless it keeps none.
        let keepsNone =
            (try? repository.run(["config", "--bool", "core.logAllRefUpdates"]))?.outputText == "false"
        guard reflog != nil || !recorded.isEmpty || !keepsNone else {
            throw CofferError(
                .cannotMerge,
                "cannot tell whether the remote dropped commits this clone has: \(Quoting.quoted(reference)) "
                    + "has no reflog and no sync recorded what it fetched. Nothing was changed or pushed; sync "
                    + "would push \(try Self.list(all.suffix(5).map(describeCommit)))\(all.count > 5 ? " (and more)" : ""). "
                    + "If these are to be pushed, git push them, then sync again.")
        }
        let before = Set((reflog ?? []) + recorded).subtracting([upstreamCommit])
        remoteHeldBefore = before.sorted()
        guard !before.isEmpty else { return (all, []) }
        let held = before.sorted().map { "^" + $0 }
        let own = try commits(
            [
                "rev-list", "--reverse", "--topo-order", "--no-merges", "--ignore-missing", original,
                "^" + upstreamCommit,
            ]
                + held)
        // Merge commits the remote held and dropped are named too (a merge's resolution may hold what the
        // purge took out); the person's own merges are not dropped.
        let mergesOfOwn = Set(
            try commits(
                ["rev-list", "--merges", "--ignore-missing", original, "^" + upstreamCommit] + held))
        let withMerges = try commits([
            "rev-list", "--reverse", "--topo-order", original, "^" + upstreamCommit,
        ])
        let mine = Set(own).union(mergesOfOwn)
        return (own, withMerges.filter { !mine.contains($0) })
    }

    /// Every commit the reflog of `reference` says it pointed to, old values included (the first line
    /// holds where it was at the clone); `nil` when it has no reflog.
    private func reflogCommits(_ reference: String) -> [String]? {
        guard let path = try? repository.run(["rev-parse", "--git-path", "logs/" + reference]).outputText,
            let bytes = try? FileSystem.readFile(
                path.startsWithSlash ? path : repository.directory + "/" + path)
        else { return nil }
        var found: [String] = []
        for line in bytes.split(separator: 10) {
            for field in line.split(separator: 32).prefix(2) where field.count == 40 || field.count == 64 {
                let hash = String(decoding: field, as: UTF8.self)
                if hash.contains(where: { $0 != "0" }) { found.append(hash) }
            }
        }
        return found
    }

    /// The commit hashes `arguments` (a `rev-list`) prints.
    private func commits(_ arguments: [String]) throws -> [String] {
        try repository.run(arguments).outputText.split(separator: "\n").map(String.init)
    }

    /// `HASH "subject"`, as the report names a commit.
    private func describeCommit(_ commit: String) throws -> String {
        let subject = try repository.run(["log", "-1", "--format=%s", commit]).outputText
        return String(commit.prefix(12)) + " " + Quoting.inQuotes(subject)
    }

    /// The commits sync fetched for each remote-tracking branch, kept in `<git folder>/coffer-fetched`
    /// (`REF COMMIT` a line, the newest last), so that a force-push is found even where git keeps no
    /// reflog.
    enum FetchedRecord {
        /// How many lines the file keeps.
        static let limit = 200

        static func path(_ repository: GitRepository) -> String? {
            repository.gitDirectory().map { $0 + "/coffer-fetched" }
        }

        /// The commits recorded for `reference`.
        static func commits(for reference: String, in repository: GitRepository) -> [String] {
            guard !reference.isEmpty, let path = path(repository), let bytes = try? FileSystem.readFile(path)
            else { return [] }
            return String(decoding: bytes, as: UTF8.self).split(separator: "\n").compactMap { line in
                let fields = line.split(separator: " ")
                return fields.count == 2 && fields[0] == reference ? String(fields[1]) : nil
            }
        }

        /// Notes that `upstream` (a remote-tracking branch) points to `commit` now.
        static func note(_ upstream: String, commit: String, in repository: GitRepository) throws {
            guard let path = path(repository),
                let reference = try? repository.run(["rev-parse", "--symbolic-full-name", upstream])
                    .outputText,
                !reference.isEmpty, !reference.contains(" ")
            else { return }
            let old = (try? FileSystem.readFile(path)).map { String(decoding: $0, as: UTF8.self) } ?? ""
            var lines = old.split(separator: "\n").map(String.init)
            let line = reference + " " + commit
            guard lines.last != line else { return }
            lines.append(line)
            try FileSystem.atomicWrite(
                path, bytes: Array(lines.suffix(limit).map { $0 + "\n" }.joined().utf8), mode: 0o600)
        }
    }

    /// Replays `commits` (this clone's own, oldest first) on a detached HEAD at the remote's commit, then
    /// moves the branch there from `original`. Each commit keeps its message and author and is signed when `pass.signcommits`
    /// asks for it (or git's `commit.gpgsign` does).
    private mutating func replay(_ commits: [String], onto original: String) throws {
        try repository.run(["checkout", "--quiet", "--detach", upstreamCommit])
        let sign = repository.signsCommits
        for commit in commits {
            let picked = try repository.runUnchecked(
                Self.withoutDriver + ["cherry-pick", "--no-commit"] + renameArguments + [commit])
            try settleUnmerged(after: picked, localStage: 3, local: commit, remote: "HEAD")
            try remergeRecipients(base: commit + "^", local: commit, remote: "HEAD")
            // What this step writes: the commit's changes, wherever git put them (a rename on the other
            // side moves them), and the resolutions.
            try reencryptEntries(changedIn: stagedPaths(comparedWith: "HEAD"))
            if try repository.hasStagedChanges() {
                try repository.run(["commit", "--quiet", "--no-verify", "-C", commit] + (sign ? ["-S"] : []))
            }
            _ = try repository.runUnchecked(["cherry-pick", "--quit"])
        }
        if let resolution = resolvedByHand { try keepMergeByHand(resolution) }
        try repository.run(["update-ref", "-m", "coffer sync", "refs/heads/\(branch)", "HEAD", original])
        try repository.run(["symbolic-ref", "HEAD", "refs/heads/\(branch)"])
    }

    /// Whether a merge commit of this clone (after the remote's commit) has the remote's commit as a
    /// parent: a person merged it by hand, as a stopped sync advised. A remote merely rolled back to a
    /// commit this clone has is no such merge.
    private func mergedByHand(_ original: String) throws -> Bool {
        // A merge the remote held once (an earlier sync's, pushed) is not one: only this clone's own.
        let merges = try repository.run(
            ["rev-list", "--merges", "--parents", "--ignore-missing", original, "^" + upstreamCommit]
                + remoteHeldBefore.map { "^" + $0 })
        return merges.outputText.split(separator: "\n").contains { line in
            line.split(separator: " ").dropFirst().contains { $0 == upstreamCommit }
        }
    }

    /// After a replay that left out commits the remote dropped, where the person had merged the remote's
    /// commit by hand: every file those commits did not change is as that merge left it. Replaying
    /// commit by commit redoes what git did in that merge, and git follows an exact rename (`coffer mv`)
    /// into whatever the other side wrote under the old name; the person's merge is where they chose.
    /// Files the dropped commits changed, and files holding what they wrote, keep the replay's version,
    /// so that what the remote dropped (a purged value) stays out, unless the remote holds that version
    /// now; an entry they only re-encrypted counts as unchanged. Recipient files
    /// keep the replay's version (they merge by key), and entries are encrypted for their folder.
    private mutating func keepMergeByHand(_ resolution: String) throws {
        let output = try repository.run([
            "diff", "--name-only", "-z", "--no-renames", "HEAD", resolution, "--",
        ])
        let differing = output.standardOutput.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            .filter { Self.rank($0) >= 2 }
        guard !differing.isEmpty else { return }
        var written: [String] = []
        var removed: [String] = []
        for path in differing {
            let file = repository.directory + "/" + path
            let chosen = try repository.file(path, in: resolution)
            // The remote's own version is safe to keep whatever the dropped commits did there: it is what
            // the remote holds now.
            let remote = try repository.file(path, in: upstreamCommit)
            let asRemote = chosen != nil && chosen?.object == remote?.object
            if !asRemote {
                if try droppedContent().paths.contains(path) { continue }
                if let chosen, try holdsDropped(path, chosen.object) { continue }
            }
            if let chosen {
                if chosen.mode == "120000" {
                    try writeLink(repository.blob(chosen.object), to: file, path: path)
                } else if Self.isRegularFile(chosen.mode) {
                    try write(repository.blob(chosen.object), to: file, mode: chosen.mode)
                } else {
                    continue
                }
                written.append(path)
            } else if FileSystem.kind(file) != .missing {
                try store.checkInsideStore(file)
                unlink(file)
                removed.append(path)
            }
        }
        if !removed.isEmpty {
            try repository.run(["rm", "--quiet", "--cached", "--ignore-unmatch", "--"] + removed)
        }
        if !written.isEmpty { try repository.run(["add", "--"] + written) }
        try reencryptEntries(changedIn: written)
        guard try repository.hasStagedChanges() else { return }
        let sign = repository.signsCommits
        try repository.run(
            ["commit", "--quiet", "--no-verify", "-m", "Keep the merge by hand of '\(upstream)'."]
                + (sign ? ["-S"] : []))
    }

    /// The text of the entry blob `object`; `nil` when this clone cannot decrypt it (the caller then
    /// takes the side that keeps dropped values out).
    /// What the commits the remote dropped wrote (``droppedCommits``), to keep out of what a merge by
    /// hand chose: the paths they changed, the blobs they wrote, the texts of their entries and digests
    /// of the lines they added to entries. Worked out once a sync.
    struct DroppedContent {
        var paths: Set<String> = []
        var blobs: Set<String> = []
        var texts: [SecureBytes] = []
        // Kept as digests: no plaintext line outlives its entry's buffer.
        var lineDigests: Set<[UInt8]> = []
        // An entry of a dropped commit this clone cannot read: no entry of the merge can be told from it.
        var unreadable = false
    }

    /// ``DroppedContent`` of this sync.
    private mutating func droppedContent() throws -> DroppedContent {
        if let found = droppedContentFound { return found }
        var dropped = DroppedContent()
        // What a dropped commit wrote stays out under any name (git's rename following may have carried
        // it to another path in the merge): by blob, and for entries by text (a rename may have
        // re-encrypted it). An entry a dropped commit only re-encrypted is no change.
        // The lines a dropped commit added to an entry: an entry of the merge holding one of them (the
        // purged entry renamed and edited, red team of the pusher) holds what was purged.
        for commit in droppedCommits {
            // A root commit is compared with the empty tree (its name depends on the hash git uses).
            let parent =
                repository.resolve(commit + "^") == nil
                ? try repository.run(["hash-object", "-t", "tree", "/dev/null"]).outputText : commit + "^"
            var changes = try repository.changes(from: parent, to: commit)
            // What a merge wrote itself (its resolution) is what differs from every one of its parents.
            var other = 2
            while repository.resolve("\(commit)^\(other)") != nil {
                let against = Set(try repository.changes(from: "\(commit)^\(other)", to: commit).map(\.path))
                changes = changes.filter { against.contains($0.path) }
                other += 1
            }
            for change in changes {
                let path = change.path
                let after = try repository.file(path, in: commit)
                if path.hasSuffix(".gpg"), let after {
                    guard let text = readableText(after.object) else {
                        dropped.unreadable = true
                        dropped.paths.insert(path)
                        continue
                    }
                    let before = try repository.file(path, in: parent).flatMap { readableText($0.object) }
                    if before?.constantTimeEquals(text) == true { continue }
                    dropped.texts.append(text)
                    let old = Set(before.map(Self.lineDigests) ?? [])
                    dropped.lineDigests.formUnion(Self.lineDigests(text).filter { !old.contains($0) })
                }
                if let after { dropped.blobs.insert(after.object) }
                dropped.paths.insert(path)
            }
        }
        droppedContentFound = dropped
        return dropped
    }

    /// Whether the version `object` of `path` a merge by hand chose (`nil`: removed) holds what a dropped
    /// commit wrote and is not what the remote holds now.
    private mutating func keepsDropped(_ path: String, _ object: String?) throws -> Bool {
        guard let object, object != (try repository.file(path, in: upstreamCommit))?.object else {
            return false
        }
        return try holdsDropped(path, object)
    }

    /// Whether `object`, the version of `path` a merge by hand chose, holds what a dropped commit wrote:
    /// one of its blobs, or for an entry its text or a line it added (an entry that cannot be read, or
    /// compared, counts as holding it).
    private mutating func holdsDropped(_ path: String, _ object: String) throws -> Bool {
        let dropped = try droppedContent()
        if dropped.blobs.contains(object) { return true }
        guard path.hasSuffix(".gpg") else { return false }
        guard !dropped.unreadable, let text = readableText(object) else { return true }
        return dropped.texts.contains { $0.constantTimeEquals(text) }
            || Self.lineDigests(text).contains(where: dropped.lineDigests.contains)
    }

    /// The SHA-1 of each line of an entry's text that is not empty: lines compared without keeping them.
    private static func lineDigests(_ text: SecureBytes) -> [[UInt8]] {
        text.withUnsafeBytes { bytes in
            bytes.split(separator: UInt8(ascii: "\n")).map { slice in
                var line = Array(slice)
                defer { wipeMemory(&line, count: line.count) }
                return Gcrypt.sha1(line)
            }
        }
    }

    private func readableText(_ object: String) -> SecureBytes? {
        do {
            return try store.engine.decrypt(repository.blob(object))
        } catch {
            return nil
        }
    }

    /// Merges the remote's commit into the branch with a merge commit.
    ///
    /// When this clone's own commits hold entries that must be encrypted for other recipients now (the
    /// remote removed one), merging would push them as they are in those commits: they are replayed
    /// instead, re-encrypted, so that no pushed commit keeps the old encryption.
    private mutating func merge(base: String, original: String) throws {
        let output = try repository.runUnchecked(
            Self.withoutDriver + ["merge", "--no-commit", "--no-ff", "--quiet"] + renameArguments + [
                upstreamCommit
            ])
        try settleUnmerged(after: output, localStage: 2, local: "HEAD", remote: upstreamCommit)
        try remergeRecipients(base: base, local: "HEAD", remote: upstreamCommit)
        // This clone's changes, and whatever the merge wrote that neither side had (a rename on one side
        // with a change on the other, a resolution); what the remote wrote as it is stays as it is.
        let local = try repository.changes(from: base, to: original).map(\.path)
        let merged = Set(try stagedPaths(comparedWith: "HEAD")).intersection(
            try stagedPaths(comparedWith: upstreamCommit))
        let rewritten = try reencryptEntries(changedIn: Array(merged) + local)
        if !Set(rewritten).isDisjoint(with: local) {
            try repository.run(["reset", "--quiet", "--hard", "HEAD"])
            report = SyncReport()
            try replay(try remoteHistory(original: original).own, onto: original)
            return
        }
        let sign = repository.signsCommits
        try repository.run(
            ["commit", "--quiet", "--no-verify", "-m", "Merge remote-tracking branch '\(upstream)'"]
                + (sign ? ["-S"] : []))
    }

    /// Finishes a merge a person started with git, as sync advised (`git merge` of the remote's branch,
    /// files fixed and added): entries git left unmerged (changed on one side and removed or renamed on
    /// the other, or that the merge driver could not merge) are settled as sync settles them, entries are
    /// encrypted for the recipients of the merged tree, and the merge is committed. Refuses, changing
    /// nothing, while a file that is not an entry is unmerged or still holds conflict markers.
    mutating func finishMergeByHand() throws {
        let unmerged = try repository.unmergedPaths()
        let files = unmerged.map(\.path).filter { Self.rank($0) != 2 }
        let staged = try stagedPaths(comparedWith: "HEAD")
        let marked = staged.filter { path in
            Self.rank(path) != 2
                && (try? FileSystem.readFile(repository.directory + "/" + path)).map(
                    EntryMerge.containsConflict)
                    == true
        }
        if !files.isEmpty || !marked.isEmpty {
            let named = files + marked.filter { !files.contains($0) }
            throw CofferError(
                .gitOperationUnfinished,
                "a merge is under way in the store: fix \(Self.list(named.map(Quoting.quoted))), git add it, then sync again "
                    + "(or git merge --abort to give it up)",
                paths: named)
        }
        let entries = unmerged.filter { Self.rank($0.path) == 2 }
        if !entries.isEmpty {
            try settle(entries, localStage: 2, commits: (local: "HEAD", remote: upstreamCommit))
        }
        let base = try repository.run(["merge-base", "HEAD", upstreamCommit]).outputText
        let local = try repository.changes(from: base, to: "HEAD").map(\.path)
        let merged = Set(try stagedPaths(comparedWith: "HEAD")).intersection(
            try stagedPaths(comparedWith: upstreamCommit))
        try reencryptEntries(changedIn: Array(merged) + local)
        let sign = repository.signsCommits
        try repository.run(["commit", "--quiet", "--no-verify", "--no-edit"] + (sign ? ["-S"] : []))
    }

    /// `a`, `a and b`, `a, b and c`.
    static func list(_ items: [String]) -> String {
        items.count <= 1
            ? items.joined() : items.dropLast().joined(separator: ", ") + " and " + items[items.count - 1]
    }

    /// After git applied a commit (or a merge): settles what it left unmerged, or fails with git's words
    /// when it stopped for another reason (an untracked file in the way, say).
    private mutating func settleUnmerged(
        after output: ChildProcess.Output, localStage: Int, local: String, remote: String
    ) throws {
        let unmerged = try repository.unmergedPaths()
        if output.status != 0 && unmerged.isEmpty {
            let reason = output.errorText.split(separator: "\n").first.map(String.init) ?? "git failed"
            throw CofferError(
                .cannotMerge,
                "cannot merge the remote's changes: \(Quoting.quoted(reason)). Nothing was changed: your commits are on "
                    + "\(branch), the remote's on \(upstream).")
        }
        if !unmerged.isEmpty {
            try settle(unmerged, localStage: localStage, commits: (local: local, remote: remote))
        }
    }

    // MARK: - Settling unmerged paths

    /// What kind of file a path is, in the order they are settled: recipients first, so that entries
    /// are encrypted for the merged ones.
    private static func rank(_ path: String) -> Int {
        let name = path.lastPathPart
        if name == ".gpg-id" { return 0 }
        if name == ".gpg-id.sig" { return 1 }
        return path.hasSuffix(".gpg") ? 2 : 3
    }

    private mutating func settle(
        _ paths: [GitRepository.UnmergedPath], localStage: Int, commits: (local: String, remote: String)
    ) throws {
        let remoteStage = localStage == 2 ? 3 : 2
        var added: [String] = []
        var removed: [String] = []
        var mergedRecipients: Set<String> = []
        for unmerged in paths.sorted(by: { Self.rank($0.path) < Self.rank($1.path) }) {
            let path = unmerged.path
            let file = repository.directory + "/" + path
            let isEntry = Self.rank(path) == 2
            let name = isEntry ? String(path.dropLast(4)) : path
            let base = unmerged.stages[1]
            switch (unmerged.stages[localStage], unmerged.stages[remoteStage]) {
            case (nil, nil):
                // Removed on both sides (renamed to two different names): the new names stay.
                unlink(file)
                removed.append(path)
            case (let kept?, nil), (nil, let kept?):
                // Deleted (or renamed away) on one side and changed on the other keeps the change; a
                // change that only re-encrypted the entry is no change of its text, and the deletion holds.
                if isEntry, let base, try sameText(base.object, kept.object) {
                    unlink(file)
                    removed.append(path)
                    continue
                }
                // A name only one side has (a rename the other side renamed elsewhere) is kept, a link
                // as a link (git's directory renames move links too).
                if kept.mode == "120000" {
                    try writeLink(repository.blob(kept.object), to: file, path: path)
                } else if Self.isRegularFile(kept.mode) {
                    try write(repository.blob(kept.object), to: file, mode: kept.mode)
                } else {
                    throw cannotMerge(path, "it is a submodule on one side", advice: .byHand)
                }
                added.append(path)
                if isEntry && base != nil { report.keptEdits.append(name) }
                if isEntry && base == nil { report.keptRenames.append(name) }
            case (let local?, let remote?):
                if let resolution = resolvedByHand, Self.rank(path) >= 2,
                    case let chosen = try repository.file(path, in: resolution),
                    try !keepsDropped(path, chosen?.object)
                {
                    // The person's choice, from their merge by hand (never for recipients, which merge by key),
                    // unless it holds what the remote dropped: then the entry merges as without it.
                    if let chosen, Self.isRegularFile(chosen.mode) {
                        try write(repository.blob(chosen.object), to: file, mode: chosen.mode)
                        added.append(path)
                        continue
                    } else if chosen == nil {
                        unlink(file)
                        removed.append(path)
                        continue
                    }
                }
                guard Self.isRegularFile(local.mode), Self.isRegularFile(remote.mode) else {
                    throw cannotMerge(path, "it is a link or a submodule on one side", advice: .byHand)
                }
                let bytes: [UInt8]
                switch Self.rank(path) {
                case 0:
                    let (ours, theirs) = (
                        try repository.blob(local.object), try repository.blob(remote.object)
                    )
                    try verifySignatures(path, local: (ours, commits.local), remote: (theirs, commits.remote))
                    bytes = try mergedRecipientFile(
                        path, base: try base.map { try repository.blob($0.object) } ?? [], ours: ours,
                        theirs: theirs)
                    try checkVouched(path, merged: bytes, remote: theirs)
                    mergedRecipients.insert(path)
                case 1:
                    throw cannotMerge(path, "both sides signed their own .gpg-id", advice: .byHand)
                case 2:
                    bytes = try mergeEntry(
                        name, base: base?.object, local: local.object, remote: remote.object)
                default:
                    bytes = try mergeText(
                        path, base: base?.object, local: local.object, remote: remote.object)
                }
                try write(bytes, to: file, mode: local.mode)
                added.append(path)
            }
        }
        if !removed.isEmpty {
            try repository.run(["rm", "--quiet", "--cached", "--ignore-unmatch", "--"] + removed)
        }
        if !added.isEmpty { try repository.run(["add", "--"] + added) }
        for path in mergedRecipients { try resign(path) }
        let left = try repository.unmergedPaths()
        if let first = left.first {
            throw cannotMerge(
                first.path, "git left it unmerged in a way coffer does not know", advice: .byHand)
        }
    }

    private static func isRegularFile(_ mode: String) -> Bool { mode == "100644" || mode == "100755" }

    /// A `.gpg-id` both sides changed is merged by its keys even when git merged it cleanly as text: two
    /// sides that added the same recipient on different lines would otherwise list it twice, and one
    /// side's removal could come back through the other's reordering.
    private mutating func remergeRecipients(base: String, local: String, remote: String) throws {
        let changedLocally = Set(try repository.changes(from: base, to: local).map(\.path))
        let unmerged = Set(try repository.unmergedPaths().map(\.path))
        var merged: [String] = []
        for change in try repository.changes(from: base, to: remote)
        where changedLocally.contains(change.path) && !unmerged.contains(change.path)
            && (change.path == ".gpg-id" || change.path.hasSuffix("/.gpg-id"))
        {
            let path = change.path
            guard let ours = try? repository.blob(local + ":" + path),
                let theirs = try? repository.blob(remote + ":" + path)
            else { continue }
            try verifySignatures(path, local: (ours, local), remote: (theirs, remote))
            let bytes = try mergedRecipientFile(
                path, base: (try? repository.blob(base + ":" + path)) ?? [], ours: ours, theirs: theirs)
            try checkVouched(path, merged: bytes, remote: theirs)
            let file = repository.directory + "/" + path
            guard (try? FileSystem.readFile(file)) != bytes else { continue }
            try FileSystem.atomicWrite(file, bytes: bytes, mode: store.configuration.fileMode)
            merged.append(path)
        }
        guard !merged.isEmpty else { return }
        try repository.run(["add", "--"] + merged)
        for path in merged { try resign(path) }
    }

    /// A `.gpg-id` both sides changed, merged by its keys (``GPGIDFile/merge(base:ours:theirs:keys:name:)``).
    ///
    /// - Throws: when the merge leaves no recipient (each side removed the keys the other kept, seed
    ///   990024): no side chose that, and taking either side's keys would give the other's new entries to
    ///   a key it removed. The person merges it by hand.
    private func mergedRecipientFile(_ path: String, base: [UInt8], ours: [UInt8], theirs: [UInt8]) throws
        -> [UInt8]
    {
        let bytes = GPGIDFile.merge(
            base: base, ours: ours, theirs: theirs, keys: recipientKeys, name: primaryFingerprint)
        guard GPGIDFile.parse(bytes).isEmpty,
            !GPGIDFile.parse(ours).isEmpty || !GPGIDFile.parse(theirs).isEmpty
        else { return bytes }
        throw cannotMerge(
            path, "each side removed the recipients the other kept, so no recipient is left", advice: .byHand)
    }

    /// A signed commit vouches for the `.gpg-id` it writes (see ``PasswordStore/isSigned(_:by:in:range:)``):
    /// when this clone signs its commits, a merged `.gpg-id` that is not the remote's own must name no
    /// key this clone has not accepted for the folder (or holds the secret of), or merging a pushed
    /// recipient would sign it for every clone that trusts this one's signatures.
    private func checkVouched(_ path: String, merged: [UInt8], remote: [UInt8]) throws {
        guard merged != remote, repository.signsCommits, let acceptance = policy.acceptance else { return }
        let relative = (repository.directory + "/" + path).droppingPathPrefix(store.root)
        let folder = relative == ".gpg-id" ? "" : String(relative.dropLast("/.gpg-id".count))
        let allowed = acceptance.accepted.keys(forFolder: folder).union(try store.ownKeys())
        var unaccepted: [String] = []
        for line in try store.resolve(GPGIDFile.parse(merged)) {
            // A line no key of the keyring answers to is not accepted either.
            guard !line.keys.isEmpty else {
                unaccepted.append(Quoting.quoted(line.line))
                continue
            }
            unaccepted += line.keys.map(\.fingerprint).filter { !allowed.contains($0) }
        }
        guard !unaccepted.isEmpty else { return }
        throw cannotMerge(
            path,
            "the merged recipients name \(Self.list(unaccepted)), not accepted on this clone, in a commit it would sign",
            advice: .acceptKey)
    }

    /// Whether two versions of an entry decrypt to the same text (only its encryption changed); `false`
    /// when either cannot be decrypted here.
    private func sameText(_ first: String, _ second: String) throws -> Bool {
        let (one, other) = (try repository.blob(first), try repository.blob(second))
        do {
            return try store.engine.decrypt(one).constantTimeEquals(store.engine.decrypt(other))
        } catch {
            return false
        }
    }

    /// The encryption subkeys a `.gpg-id` line stands for, or `nil` when the keyring cannot tell (it
    /// has no key for the line: the line then stands for itself, and is not lost in the merge).
    private func recipientKeys(_ line: String) -> [String]? {
        let keys: Set<String>
        do {
            keys = try store.engine.encryptionKeyIDs(for: [line])
        } catch {
            // gpg could not say: the line stands for itself, and the merge keeps it.
            return nil
        }
        return keys.isEmpty ? nil : keys.sorted()
    }

    /// The fingerprint of the key a subkey id belongs to, for writing a recipient on a line of its own.
    private func primaryFingerprint(_ keyID: String) -> String {
        do {
            return try store.engine.keys(matching: [keyID], secretOnly: false).first?.subkeys.first?
                .fingerprint
                ?? keyID
        } catch {
            return keyID
        }
    }

    /// With `PASSWORD_STORE_SIGNING_KEY` set, both sides' `.gpg-id` must carry a good signature by a
    /// signing key in their own commit, or a recipient nobody signed could be merged in and signed here.
    private func verifySignatures(
        _ path: String, local: (bytes: [UInt8], commit: String), remote: (bytes: [UInt8], commit: String)
    ) throws {
        guard !store.configuration.signingKeys.isEmpty else { return }
        for (side, version) in [("this clone's", local), ("the remote's", remote)] {
            let signature = try repository.contents(of: path + ".sig", at: version.commit)
            let good =
                try signature.map { try store.isSignedBySigningKey(version.bytes, signature: $0) } ?? false
            if !good {
                throw cannotMerge(
                    path, "\(side) version has no good signature by PASSWORD_STORE_SIGNING_KEY",
                    advice: .byHand)
            }
        }
    }

    /// Writes a settled file into the work tree.
    private func write(_ bytes: [UInt8], to file: String, mode: String) throws {
        try store.checkInsideStore(file)
        try FileSystem.makeDirectories(FileSystem.parent(of: file), mode: store.configuration.folderMode)
        let executable: mode_t = mode == "100755" ? 0o111 & ~store.configuration.umask : 0
        try FileSystem.atomicWrite(file, bytes: bytes, mode: store.configuration.fileMode | executable)
    }

    /// Puts a link git keeps (mode `120000`, its target as the blob) into the work tree, as a checkout
    /// would. Whether coffer reads through it is decided where links are read, not here.
    private func writeLink(_ target: [UInt8], to file: String, path: String) throws {
        let folder = FileSystem.parent(of: file)
        try store.checkInsideStore(folder)
        guard !target.isEmpty, !target.contains(0) else {
            throw cannotMerge(path, "it is a link with no target", advice: .byHand)
        }
        try FileSystem.makeDirectories(folder, mode: store.configuration.folderMode)
        if FileSystem.kind(file) != .missing && FileSystem.kind(file) != .directory { unlink(file) }
        let made = (target.map { CChar(bitPattern: $0) } + [0]).withUnsafeBufferPointer {
            symlink($0.baseAddress!, file)
        }
        guard made == 0 else { throw FileSystem.error("cannot create the link", file) }
    }

    /// Merges an entry changed on both sides, field by field, and encrypts it for its recipients.
    private mutating func mergeEntry(_ name: String, base: String?, local: String, remote: String) throws
        -> [UInt8]
    {
        func decrypt(_ object: String) throws -> SecureBytes {
            let bytes = try repository.blob(object)
            return bytes.isEmpty ? SecureBytes([]) : try store.engine.decrypt(bytes)
        }
        let sides: [SecureBytes]
        do {
            sides = [try decrypt(local), try decrypt(remote)]
        } catch {
            let folder = PasswordStore.folder(of: name)
            throw cannotMerge(
                name + ".gpg", "this clone cannot decrypt it (\(error))",
                advice: .decryptElsewhere(folder.isEmpty ? "the store" : folder))
        }
        // An ancestor this clone cannot read (encrypted to an old key) merges as if there were none:
        // every field both sides set differently is then kept as a conflict, nothing is lost.
        var ancestor = SecureBytes([])
        if let base {
            do {
                ancestor = try decrypt(base)
            } catch {
                ancestor = SecureBytes([])
            }
        }
        let merged = PasswordStore.mergedText(base: ancestor, ours: sides[0], theirs: sides[1])
        if merged.isUnmergeable {
            throw cannotMerge(
                name + ".gpg",
                "it is not text (a NUL byte or bytes that are not UTF-8) and both sides changed it",
                advice: .pickSide)
        }
        let ciphertext: [UInt8]?
        do {
            ciphertext = try store.encryptMerged(
                merged.text, name: name, ours: repository.blob(local), theirs: repository.blob(remote),
                policy: &policy)
        } catch {
            throw cannotMerge(
                name + ".gpg", "it cannot be encrypted for its recipients (\(error))", advice: .importKey)
        }
        guard let ciphertext else {
            throw cannotMerge(
                name + ".gpg", "none of the recipients of its folder may read it", advice: .acceptKey)
        }
        if merged.hasConflicts { report.conflicts.append(name) }
        return ciphertext
    }

    /// Merges a file that is not an entry line by line (`git merge-file`); overlapping or binary changes
    /// cannot be merged.
    private func mergeText(_ path: String, base: String?, local: String, remote: String) throws -> [UInt8] {
        guard let gitDirectory = repository.gitDirectory() else {
            throw cannotMerge(path, "the git folder cannot be found", advice: .byHand)
        }
        var template = Array((gitDirectory + "/coffer-merge-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw cannotMerge(
                path, "no folder for the merge: \(String(cString: strerror(errno)))", advice: .byHand)
        }
        let folder = String(cString: made)
        defer { try? FileSystem.removeTree(folder) }
        let files = [folder + "/local", folder + "/base", folder + "/remote"]
        for (file, object) in zip(files, [local, base, remote]) {
            let bytes = try object.map { try repository.blob($0) } ?? []
            // git's own test for binary content: a NUL byte.
            if bytes.contains(0) {
                throw cannotMerge(path, "it is binary and changed on both sides", advice: .byHand)
            }
            try FileSystem.atomicWrite(file, bytes: bytes, mode: 0o600)
        }
        let output = try repository.runUnchecked(
            ["merge-file", "-p", "-L", "local", "-L", "base", "-L", "remote"] + files)
        guard output.status == 0 else {
            let reason =
                output.status > 0 && output.status < 128
                ? "both sides changed the same lines" : "it is not text git can merge"
            throw cannotMerge(path, reason, advice: .byHand)
        }
        return output.standardOutput
    }

    /// A merged `.gpg-id` whose folder has a signature needs a new one, made with
    /// `PASSWORD_STORE_SIGNING_KEY`; without it the merge cannot be signed.
    private func resign(_ path: String) throws {
        let gpgID = repository.directory + "/" + path
        guard FileSystem.isFile(gpgID + ".sig") else { return }
        guard let signer = store.configuration.signingKeys.last else {
            throw cannotMerge(
                path, "the merged recipients need a new signature and PASSWORD_STORE_SIGNING_KEY is not set",
                advice: .byHand)
        }
        let signature = try store.engine.signDetached(FileSystem.readFile(gpgID), signer: signer)
        try FileSystem.atomicWrite(gpgID + ".sig", bytes: signature, mode: store.configuration.fileMode)
        try repository.run(["add", "--", path + ".sig"])
    }

    // MARK: - Re-encryption

    /// Re-encrypts, for the recipients they have now, the entries this clone changed and every entry under a
    /// folder whose `.gpg-id` this clone changed: what this clone wrote lands where the other side may have
    /// changed the recipients, and what the other side wrote may land under recipients this clone changed.
    /// The paths whose staged version differs from `revision`'s.
    private func stagedPaths(comparedWith revision: String) throws -> [String] {
        let output = try repository.run([
            "diff", "--cached", "--name-only", "-z", "--no-renames", revision, "--",
        ])
        return output.standardOutput.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Returns the paths it re-encrypted.
    @discardableResult
    private mutating func reencryptEntries(changedIn paths: [String]) throws -> [String] {
        var candidates = Set(paths.filter { $0.hasSuffix(".gpg") })
        for path in paths where path == ".gpg-id" || path.hasSuffix("/.gpg-id") {
            let folder = FileSystem.parent(of: repository.directory + "/" + path)
            guard FileSystem.isDirectory(folder) else { continue }
            for file in try PasswordStore.entryFiles(at: folder) {
                candidates.insert(String(file.droppingPathPrefix(repository.directory)))
            }
        }
        let planned: (jobs: [PasswordStore.Reencryption], narrow: [NarrowEntry])
        do {
            planned = try store.automaticReencryptions(
                of: candidates.sorted().map { repository.directory + "/" + $0 }, policy: &policy)
        } catch {
            throw cannotMerge(
                "entries whose recipients changed", "their recipients cannot be used (\(error))",
                advice: .importKey)
        }
        let jobs = planned.jobs
        do {
            try store.encryptAgain(jobs, acceptance: policy.acceptance) { index, ciphertext in
                try FileSystem.atomicWrite(
                    jobs[index].file, bytes: ciphertext, mode: store.configuration.fileMode)
            }
        } catch {
            throw cannotMerge(
                "entries whose recipients changed", "they cannot be re-encrypted (\(error))",
                advice: .importKey)
        }
        let rewritten = jobs.map { String($0.file.droppingPathPrefix(repository.directory)) }
        if !rewritten.isEmpty { try repository.run(["add", "--"] + rewritten) }
        report.reencrypted += rewritten.map { String($0.dropLast(4)) }
        report.leftNarrow += planned.narrow.filter { entry in !report.leftNarrow.contains(entry) }
        return rewritten
    }

    // MARK: - Errors

    /// What a person can do about a path sync cannot merge.
    private enum Advice {
        case byHand
        case importKey
        case acceptKey
        case decryptElsewhere(String)
        case pickSide
    }

    /// The files `git merge` of the remote's commit into the branch would leave unmerged, by git's own
    /// text merge (`git merge-tree`, which changes nothing).
    private func conflictsOfPlainMerge() -> [String] {
        guard
            let output = try? repository.runUnchecked([
                "merge-tree", "--write-tree", "--name-only", "--no-messages", "-z", "refs/heads/" + branch,
                upstreamCommit,
            ]), output.status == 1
        else { return [] }
        return output.standardOutput.split(separator: 0).dropFirst().map {
            String(decoding: $0, as: UTF8.self)
        }
    }

    /// The entries `git merge` of the remote's commit would leave to a person: changed on both sides and
    /// not text, so that neither the merge driver nor sync can merge them. Entries this clone cannot
    /// read are left out: sync names them itself.
    private func entriesToKeepOneOf() -> [String] {
        guard
            let output = try? repository.runUnchecked([
                "merge-tree", "--write-tree", "--no-messages", "-z", "refs/heads/" + branch, upstreamCommit,
            ]), output.status == 1
        else { return [] }
        var stages: [String: [Int: String]] = [:]
        for record in output.standardOutput.split(separator: 0).dropFirst() {
            // MODE SP OBJECT SP STAGE TAB PATH
            guard let tab = record.firstIndex(of: UInt8(ascii: "\t")) else { continue }
            let fields = record[..<tab].split(separator: UInt8(ascii: " ")).map {
                String(decoding: $0, as: UTF8.self)
            }
            let path = String(decoding: record[(tab + 1)...], as: UTF8.self)
            guard fields.count == 3, let stage = Int(fields[2]), path.hasSuffix(".gpg") else { continue }
            stages[path, default: [:]][stage] = fields[1]
        }
        func text(_ object: String?) -> SecureBytes? {
            guard let object else { return SecureBytes([]) }
            guard let bytes = try? repository.blob(object) else { return nil }
            return bytes.isEmpty ? SecureBytes([]) : try? store.engine.decrypt(bytes)
        }
        return stages.keys.sorted().filter { path in
            guard let versions = stages[path], versions[2] != nil, versions[3] != nil,
                let ours = text(versions[2]), let theirs = text(versions[3])
            else { return false }
            let base = text(versions[1]) ?? SecureBytes([])
            return PasswordStore.mergedText(base: base, ours: ours, theirs: theirs).isUnmergeable
        }
    }

    private func cannotMerge(_ path: String, _ reason: String, advice: Advice) -> CofferError {
        let what: String
        switch advice {
        case .byHand:
            // Every file the same merge leaves to a person, not only the first one found, and the entries
            // that are not text both sides changed, whose version the person keeps in the same merge.
            let files = [path] + conflictsOfPlainMerge().filter { $0 != path && !$0.hasSuffix(".gpg") }
            let entries = entriesToKeepOneOf().filter { $0 != path }
            let keep =
                entries.isEmpty
                ? ""
                : ", keep one version of \(Self.list(entries.map(Quoting.quoted))) (git checkout --ours "
                    + "(or --theirs) -- \(entries.count == 1 ? "it" : "each") and git add it)"
            what =
                "Merge it by hand: in the store, git merge \(upstream), fix \(Self.list(files.map(Quoting.quoted))) and git add "
                + "\(files.count == 1 ? "it" : "them")\(keep); then sync again, which merges the entries and commits."
        case .importKey:
            what = "Import the missing public key (gpg --import) or fix the .gpg-id, then sync again."
        case .acceptKey:
            what =
                "Accept a recipient of its folder (\(store.configuration.program) recipients accept) or fix "
                + "the .gpg-id, then sync again."
        case .pickSide:
            // The same merge by hand may leave files that are not entries to fix too.
            let others = conflictsOfPlainMerge().filter { $0 != path && !$0.hasSuffix(".gpg") }
            let fix =
                others.isEmpty
                ? ""
                : ", fix \(Self.list(others.map(Quoting.quoted))) and git add \(others.count == 1 ? "it" : "them")"
            // Met while finishing a merge a person began, the merge is under way already.
            let merge = upstream == "MERGE_HEAD" ? "" : "git merge \(upstream), then "
            what =
                "Keep one version: in the store, \(merge)git checkout --ours (or --theirs) -- "
                + "\(Quoting.quoted(path)) and git add it\(fix); then sync again."
        case .decryptElsewhere(let folder):
            what = "Only a recipient of \(folder) can merge it: ask one to sync, then sync again."
        }
        return CofferError(
            .cannotMerge,
            "cannot merge \(Quoting.quoted(path)): \(reason). Nothing was changed: your commits are on \(branch), the "
                + "remote's on \(upstream). \(what)",
            paths: [path])
    }
}
