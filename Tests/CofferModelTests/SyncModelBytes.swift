import Coffer
import CofferTestSupport

/// Entries that are not text and an HOTP key in the sync model, on a random stream of their own so that
/// the steps of earlier seeds stay as they were.
///
/// Binary entries must always hold exactly a version some clone wrote, never a splice of two; the HOTP
/// counter a clone uses must never be one any clone used before, so no code is handed out twice.
extension SyncModelRun {
    /// Entries written only by ``binaryStep(_:)``.
    static let binaryNames = ["keys/store.jks", "keys/id"]
    /// The HOTP entry, used only by ``otpStep(_:)``.
    static let otpName = "otp/bank"
    static let otpURI = "otpauth://hotp/Bank:me?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&counter="

    /// Entries the other steps leave alone.
    static func isByteEntry(_ name: String) -> Bool { binaryNames.contains(name) || name == otpName }

    /// Now and then, a binary write, an HOTP code or a force-push on a random clone.
    func byteStep() throws {
        guard !options.without.contains("bytes"), byteRandom.chance(0.2) else { return }
        let clone = byteRandom.below(3)
        let roll = byteRandom.below(10)
        if roll < 4 {
            try binaryStep(clone)
        } else if roll < 8 {
            try otpStep(clone)
        } else if !options.without.contains("forcepush") {
            try forcePushStep(clone)
        }
    }

    /// A clone in step with the remote takes its last commit out of the remote's history (a purge) with
    /// `git push --force`. The values only that commit held are destroyed by that user; no sync may ever
    /// push the commit back (``checkPurged()``).
    func forcePushStep(_ clone: Int) throws {
        let name = Self.cloneNames[clone]
        let state = try gitState(clone)
        guard state.settled, let head = state.head, head == (try remoteHead()),
            try checkGit(["-C", clonePath(clone), "rev-parse", "-q", "--verify", "HEAD~1"]).status == 0
        else { return }
        let parent = try checkGit(["-C", clonePath(clone), "rev-parse", "HEAD~1"]).outputText.trimmingNewlines
        let dropped = try markers(ofRemoteCommit: head).subtracting(try markers(ofRemoteCommit: parent))
        let result = try shell(
            command(clone, "git", ["reset", "--quiet", "--hard", "HEAD~1"]) + " && "
                + command(clone, "git", ["push", "--quiet", "--force", "origin", "HEAD:main"]),
            comment: "\(name) purges its last commit \(head.prefix(10)) with a force-push")
        guard result.status == 0 else { return }
        figures.forcePushes += 1
        purged.insert(head)
        for marker in dropped { ledger.recordDestruction(marker, clone: clone, step: step) }
        let after = snapshot(clone)
        snapshots[clone] = after
        ledger.recordSeen(after.markers, clone: clone, step: step)
        baselines[clone] = after.markers
        settledHeads[clone] = try gitState(clone).head
    }

    /// No purged commit is in the remote's history again.
    func checkPurged() throws {
        guard let remote = try remoteHead() else { return }
        for commit in purged.sorted() {
            let back = try checkGit([
                "--git-dir", sandbox.directory + "/remote.git", "merge-base", "--is-ancestor", commit, remote,
            ])
            if back.status == 0 {
                failOnce(
                    "purged-back " + commit, "purged-commit-pushed-back",
                    "the purged commit \(commit.prefix(10)) is in the remote's history again (\(remote.prefix(10)))"
                )
            }
        }
    }

    /// Writes a new version of a binary entry: lines (so a line-wise merge would find places to splice),
    /// a NUL and a byte that is never UTF-8, and a fresh marker on a line of its own.
    func binaryStep(_ clone: Int) throws {
        let name = byteRandom.pick(Self.binaryNames)
        let old = snapshots[clone].items[name + ".gpg"]?.bytes ?? Array("head\nmiddle\ntail\n".utf8)
        var lines = old.split(separator: 10, omittingEmptySubsequences: false).map(Array.init)
        if lines.count < 4 { lines = [Array("head".utf8), [0, 0xFF], Array("tail".utf8), []] }
        // A change in one place: the first line or the last, so two clones' changes are apart.
        let index = byteRandom.chance(0.5) ? 0 : lines.count - 2
        lines[index] = Array("BIN \(newMarker())".utf8) + [0, 0xFE]
        let bytes = Array(lines.joined(separator: [10]))
        binaryVersions[name, default: []].insert(bytes)
        let line =
            "printf \(SyncModelShell.printfFormat(bytes)) | "
            + command(clone, randomStyle(), ["insert", "-m", "-f", name])
        try userCommand(
            clone, line, comment: "\(Self.cloneNames[clone]) writes binary \(name)", path: name + ".gpg",
            newText: nil, newBytes: bytes)
    }

    /// Makes an HOTP code on a clone (the entry is made first when the clone has none) and checks that
    /// the counter it used was never used before.
    func otpStep(_ clone: Int) throws {
        let name = Self.cloneNames[clone]
        guard snapshots[clone].items[Self.otpName + ".gpg"] != nil else {
            let text = "pw\n\(Self.otpURI)0\n"
            try userCommand(
                clone, command(clone, randomStyle(), ["insert", "-m", "-f", Self.otpName], input: text),
                comment: "\(name) adds the HOTP key \(Self.otpName)", path: Self.otpName + ".gpg",
                newText: text)
            return
        }
        let result = try shell(
            command(clone, randomStyle(), ["otp", Self.otpName]), comment: "\(name) makes an HOTP code")
        let after = snapshot(clone)
        snapshots[clone] = after
        guard result.status == 0 else {
            let settled = try gitState(clone).settled
            if !result.errorText.contains("merge conflict") && settled && hostilePushes == 0 {
                failOnce(
                    "otp-failed", "otp-failed",
                    "otp on \(name) failed (\(result.status)): \(result.errorText.lastLines)")
            }
            return
        }
        figures.otpCodes += 1
        let text = after.items[Self.otpName + ".gpg"]?.text ?? ""
        guard let uri = OneTimePassword.uri(in: Array(text.utf8)), let key = try? OneTimePassword(uri: uri),
            let counter = key.counter
        else {
            return fail(
                "otp-lost-key", "otp on \(name) exited 0 but \(Self.otpName) holds no HOTP key after it")
        }
        // A counter never goes back on a clone: not by a sync, nor by a merge that took the other side.
        if let highest = highestCounters[clone], counter <= highest {
            fail(
                "hotp-counter-went-back",
                "otp on \(name) used counter \(counter), not above \(highest) that it used before: a code handed out again"
            )
        }
        // Two clones that use the key before syncing use the same counter, as two devices would; one clone
        // never uses a counter twice.
        if let first = usedCounters[clone][counter] {
            fail(
                "hotp-code-reused",
                "otp on \(name) used counter \(counter), which it used already at \(first): a code handed out twice"
            )
        }
        usedCounters[clone][counter] = "step \(step)"
        highestCounters[clone] = max(highestCounters[clone] ?? 0, counter)
        // git's summary of the commit comes first, as under pass-otp; the code is the last line.
        let printed = result.outputText.split(separator: "\n").last.map(String.init)
        if printed != (try? key.code(counter: UInt64(counter), algorithm: .sha1)) {
            fail("otp-wrong-code", "otp on \(name) printed a code that is not the one of counter \(counter)")
        }
        let state = try gitState(clone)
        if state.settled {
            baselines[clone] = after.markers
            settledHeads[clone] = state.head
        }
    }

    /// A binary entry holds exactly a version a clone wrote.
    func checkBinaryEntries(_ clone: Int, _ snapshot: SyncModelSnapshot) {
        for name in Self.binaryNames {
            guard let item = snapshot.items[name + ".gpg"], item.problem == nil else { continue }
            if !(binaryVersions[name] ?? []).contains(item.bytes) {
                failOnce(
                    "binary-spliced " + name, "binary-entry-changed",
                    "\(name) on \(Self.cloneNames[clone]) holds bytes no clone wrote (a splice or conflict markers)"
                )
            }
        }
    }

    /// What a person does when sync says to keep one version of an entry that is not text: `git merge`,
    /// `git checkout --ours` or `--theirs` of it and `git add`, then sync. The version let go is destroyed
    /// by that person, not lost.
    func keepOneVersion(_ clone: Int, advice: String) throws {
        let name = Self.cloneNames[clone]
        figures.manualMerges += 1
        let sign = signed ? ["-S"] : []
        // Met while sync finished a merge by hand, the merge is under way already, as the advice says.
        if advice.contains("git merge ") {
            try shell(
                command(clone, "git", ["merge", "--no-edit"] + sign + ["origin/main"]) + " 2>/dev/null",
                comment: "\(name) merges by hand to keep one version")
        }
        let unmerged = try checkGit(["-C", clonePath(clone), "diff", "--name-only", "-z", "--diff-filter=U"])
            .standardOutput.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        try keepOneSide(clone, of: unmerged)
        // The files that are not entries the same merge leaves, as the advice names them.
        let files = unmerged.filter { !$0.hasSuffix(".gpg") }
        for path in files where !advice.contains(path) {
            failOnce(
                "keep-unnamed " + path, "sync-stop-unnamed-path",
                "sync stopped on \(name) but did not name \(path), which the merge by hand leaves unmerged")
        }
        try keepBothSides(clone, of: files)
        let finished = try sync(clone, mayKill: false, style: "path")
        if finished != 0 && !lastSync[clone].contains("both sides changed the same field") {
            fail(
                "keep-one-version-not-finished",
                "sync after keeping one version on \(name) exited \(finished)")
        }
    }

    /// Keeps one side, picked at random, of each entry that is not text among `paths` (unmerged), and
    /// `git add`s it; the markers only the other side held are destroyed by that person, not lost.
    func keepOneSide(_ clone: Int, of paths: [String]) throws {
        let name = Self.cloneNames[clone]
        let unmerged = paths
        let store = sandbox.store(root: clonePath(clone))
        for path in unmerged {
            guard path.hasSuffix(".gpg"), Self.binaryNames.contains(String(path.dropLast(4))) else {
                continue
            }
            let side = byteRandom.pick(["--ours", "--theirs"])
            // The markers of the version let go.
            let other = side == "--ours" ? "3" : "2"
            let blob = try checkGit(["-C", clonePath(clone), "cat-file", "blob", ":\(other):\(path)"])
                .standardOutput
            if let text = try? store.engine.decrypt(blob) {
                for marker in SyncModelText.markers(in: text.bytes, tag: tag) {
                    ledger.recordDestruction(marker, clone: clone, step: step)
                }
            }
            try shell(
                command(clone, "git", ["checkout", side, "--", path]),
                comment: "\(name) keeps \(side) of \(path)")
            try shell(command(clone, "git", ["add", "--", path]))
        }
    }
}
