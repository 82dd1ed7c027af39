import Coffer
import CofferTestSupport
import Testing

/// sync after the shared remote was force-pushed (a purged entry taken out of its history): as `git pull
/// --rebase` does, what the remote dropped is not replayed or pushed back.
@Suite("sync never pushes back what a force-push took out of the remote")
struct ForcePushSyncTests {
    /// Clones where `one` added `purged` and pushed, `two` synced it, and `one` then took that commit out of
    /// the remote's history with a force-push.
    static func purged() throws -> SyncClones {
        let clones = try SyncClones(entries: [("kept", "pw\n")])
        try clones.insert(clones.one, "purged", "leaked\n")
        try clones.check(clones.one, ["sync"])
        try clones.check(clones.two, ["sync"])
        #expect(try clones.show(clones.two, "purged") == "leaked\n")
        try clones.git(clones.one, ["reset", "--quiet", "--hard", "HEAD~1"])
        try clones.insert(clones.one, "after", "new\n")
        try clones.git(clones.one, ["push", "--quiet", "--force", "origin", "main"])
        return clones
    }

    /// The entries of the remote's branch.
    static func remoteEntries(_ clones: SyncClones) throws -> [String] {
        try clones.sandbox.check(["git", "-C", clones.remote, "ls-tree", "-r", "--name-only", "main"])
            .outputText
            .split(separator: "\n").map(String.init).filter { $0.hasSuffix(".gpg") }.sorted()
    }

    @Test("A clone with commits of its own: they are pushed, the dropped one is not; both modes")
    func withOwnCommits() throws {
        for mode in ["rebase", "merge"] {
            let clones = try Self.purged()
            try clones.git(clones.two, ["config", "coffer.syncmode", mode])
            try clones.insert(clones.two, "mine", "mine\n")
            let synced = try clones.check(clones.two, ["sync"])
            #expect(
                synced.outputText.contains("The remote dropped 1 commit"), "\(mode): \(synced.outputText)")
            #expect(
                synced.outputText.contains("Add given password for purged to store."), "\(synced.outputText)")
            #expect(try Self.remoteEntries(clones) == ["after.gpg", "kept.gpg", "mine.gpg"], "\(mode)")
            #expect(!TestFiles.exists(clones.two + "/purged.gpg"))
            #expect(try clones.isClean(clones.two))
            let kept = try clones.git(
                clones.two, ["for-each-ref", "--format=%(refname)", "refs/coffer/dropped-by-remote"])
            #expect(!kept.isEmpty, "the branch as it was is kept")
            // Nothing comes back later either.
            try clones.check(clones.one, ["sync"])
            try clones.check(clones.two, ["sync"])
            #expect(try Self.remoteEntries(clones) == ["after.gpg", "kept.gpg", "mine.gpg"])
        }
    }

    /// Clones (two syncing in `mode`) where one added the binary `keys/store` and `purged`, both synced,
    /// and one then took the `purged` commit out of its branch (not pushed yet).
    static func binaryThenPurged(mode: String, entries: [(String, String)]) throws -> SyncClones {
        let clones = try SyncClones(entries: entries)
        try clones.git(clones.two, ["config", "coffer.syncmode", mode])
        try clones.insert(clones.one, "keys/store", bytes: BinaryAndCounterSyncTests.binary)
        try clones.insert(clones.one, "purged", "leaked\n")
        try clones.check(clones.one, ["sync"])
        try clones.check(clones.two, ["sync"])
        try clones.git(clones.one, ["reset", "--quiet", "--hard", "HEAD~1"])
        return clones
    }

    @Test(
        "After a force-push, the advice for a binary entry both sides changed works; nothing dropped returns")
    func keepOneVersionAfterForcePush() throws {
        for (mode, side) in [("rebase", "--theirs"), ("merge", "--ours"), ("rebase", "--ours")] {
            let clones = try Self.binaryThenPurged(mode: mode, entries: [("kept", "pw\n")])
            let binary = BinaryAndCounterSyncTests.binary
            let one = BinaryAndCounterSyncTests.changed(binary, "line one", "line 1")
            try clones.insert(clones.one, "keys/store", bytes: one)
            try clones.git(clones.one, ["push", "--quiet", "--force", "origin", "main"])
            let two = BinaryAndCounterSyncTests.changed(binary, "line three", "line 3")
            try clones.insert(clones.two, "keys/store", bytes: two)
            let stopped = try clones.run(clones.two, ["sync"])
            #expect(stopped.status == 1, "\(mode): \(stopped.outputText)")
            #expect(stopped.errorText.contains("Keep one version"), "\(stopped.errorText)")
            // The advice, followed once, is enough: sync does not stop on the same entry again.
            _ = try clones.sandbox.run(["git", "-C", clones.two, "merge", "-q", "origin/main"])
            try clones.git(clones.two, ["checkout", side, "--", "keys/store.gpg"])
            try clones.git(clones.two, ["add", "keys/store.gpg"])
            let synced = try clones.run(clones.two, ["sync"])
            #expect(synced.status == 0, "\(mode) \(side): \(synced.errorText)")
            #expect(try clones.decrypted(clones.two, "keys/store") == (side == "--ours" ? two : one))
            #expect(try Self.remoteEntries(clones) == ["kept.gpg", "keys/store.gpg"])
            #expect(!TestFiles.exists(clones.two + "/purged.gpg"), "\(mode) \(side)")
            let pushedBack = try clones.sandbox.run([
                "git", "-C", clones.remote, "log", "--format=%s", "main", "--", "purged.gpg",
            ])
            #expect(
                pushedBack.outputText.isEmpty,
                "the dropped commit is not pushed back: \(pushedBack.outputText)")
            try clones.check(clones.one, ["sync"])
            #expect(try clones.decrypted(clones.one, "keys/store") == (side == "--ours" ? two : one))
        }
    }

    /// Sync-model seeds 417981608047 and 619000000017: the replay redid git's rename following and
    /// dropped the entry the remote wrote under the old name, which the person's merge had kept.
    @Test(
        "After a force-push, the merge by hand decides where a rename on this clone meets the remote's entries"
    )
    func mergeByHandDecidesRenames() throws {
        for mode in ["rebase", "merge"] {
            let clones = try Self.binaryThenPurged(
                mode: mode, entries: [("kept", "pw\n"), ("deploy", "old-deploy\n")])
            let binary = BinaryAndCounterSyncTests.binary
            // One has purged the last commit; it changes the binary entry and deploy, and adds ci.
            try clones.insert(
                clones.one, "keys/store",
                bytes: BinaryAndCounterSyncTests.changed(binary, "line one", "line 1"))
            try clones.insert(clones.one, "deploy", "MARK-one-deploy\n")
            try clones.insert(clones.one, "ci", "MARK-one-ci\n")
            try clones.git(clones.one, ["push", "--quiet", "--force", "origin", "main"])
            // Two renames deploy to ci (the same ciphertext: git sees an exact rename).
            try clones.check(clones.two, ["mv", "deploy", "ci"])
            try clones.insert(
                clones.two, "keys/store",
                bytes: BinaryAndCounterSyncTests.changed(binary, "line three", "line 3"))
            let stopped = try clones.run(clones.two, ["sync"])
            #expect(stopped.status == 1, "\(mode): \(stopped.outputText)")
            _ = try clones.sandbox.run(["git", "-C", clones.two, "merge", "-q", "origin/main"])
            try clones.git(clones.two, ["checkout", "--theirs", "--", "keys/store.gpg"])
            // The person keeps the remote's deploy and ci, as they are there.
            for name in ["deploy.gpg", "ci.gpg"] {
                try clones.git(clones.two, ["checkout", "origin/main", "--", name])
            }
            try clones.git(clones.two, ["add", "--all"])
            let merged = try clones.git(clones.two, ["ls-tree", "-r", "--name-only", "HEAD"])
            let synced = try clones.run(clones.two, ["sync"])
            #expect(synced.status == 0, "\(mode): \(synced.errorText)")
            #expect(
                try clones.show(clones.two, "deploy") == "MARK-one-deploy\n", "\(mode), merged: \(merged)")
            #expect(try clones.show(clones.two, "ci") == "MARK-one-ci\n", "\(mode)")
            #expect(try Self.remoteEntries(clones) == ["ci.gpg", "deploy.gpg", "kept.gpg", "keys/store.gpg"])
            #expect(!TestFiles.exists(clones.two + "/purged.gpg"), "\(mode)")
            try clones.check(clones.one, ["sync"])
            #expect(try clones.show(clones.one, "deploy") == "MARK-one-deploy\n", "\(mode)")
        }
    }

    /// Red team: a rollback was taken for a merge by hand, and the purged value came back under the
    /// name this clone renamed the entry to.
    @Test("A rollback and a rename on this clone: the purged value does not come back under the new name")
    func rollbackThenRename() throws {
        let clones = try SyncClones(entries: [("a", "A-value\n")])
        try clones.insert(clones.one, "a", "PURGED-secret\n")
        try clones.check(clones.one, ["sync"])
        try clones.check(clones.two, ["sync"])
        try clones.check(clones.two, ["mv", "a", "b"])
        try clones.git(clones.one, ["push", "--quiet", "--force", "origin", "HEAD~1:main"])
        let synced = try clones.check(clones.two, ["sync"])
        #expect(synced.outputText.contains("The remote dropped 1 commit"), "\(synced.outputText)")
        #expect(try clones.show(clones.two, "b") == "A-value\n")
        #expect(try Self.remoteEntries(clones) == ["b.gpg"])
        let pushed = try clones.git(clones.two, ["log", "--format=%s", "origin/main"])
        #expect(!pushed.contains("Keep the merge by hand"), "\(pushed)")
    }

    /// Red team: after a rollback, an entry this clone edited was taken whole from its tip, purged line 1
    /// included, rather than merged field by field.
    @Test("A rollback and an edit of the purged entry: the fields merge, the purged line stays out")
    func rollbackThenEdit() throws {
        let clones = try SyncClones(entries: [("a", "A-value\nuser: bob\nurl: x\n")])
        try clones.insert(clones.one, "a", "PURGED-secret\nuser: bob\nurl: x\n")
        try clones.check(clones.one, ["sync"])
        try clones.check(clones.two, ["sync"])
        try clones.insert(clones.two, "a", "PURGED-secret\nuser: bob\nurl: y\n")
        try clones.git(clones.one, ["push", "--quiet", "--force", "origin", "HEAD~1:main"])
        try clones.check(clones.two, ["sync"])
        #expect(try clones.show(clones.two, "a") == "A-value\nuser: bob\nurl: y\n")
        try clones.check(clones.one, ["sync"])
        #expect(try clones.show(clones.one, "a") == "A-value\nuser: bob\nurl: y\n")
    }

    @Test("A clone with nothing of its own takes the remote as it is now and pushes nothing")
    func withoutOwnCommits() throws {
        let clones = try Self.purged()
        let remoteHead = try clones.git(clones.one, ["rev-parse", "HEAD"])
        let synced = try clones.check(clones.two, ["sync"])
        #expect(!synced.outputText.contains("Pushed"), "\(synced.outputText)")
        #expect(try clones.git(clones.two, ["rev-parse", "HEAD"]) == remoteHead)
        #expect(
            try clones.sandbox.check(["git", "-C", clones.remote, "rev-parse", "main"]).outputText
                == remoteHead)
        #expect(!TestFiles.exists(clones.two + "/purged.gpg"))
    }

    @Test("A remote rolled back to an older commit is not pushed forward again")
    func rolledBack() throws {
        let clones = try SyncClones(entries: [("kept", "pw\n")])
        try clones.insert(clones.one, "purged", "leaked\n")
        try clones.check(clones.one, ["sync"])
        try clones.check(clones.two, ["sync"])
        try clones.git(clones.one, ["push", "--quiet", "--force", "origin", "HEAD~1:main"])
        let synced = try clones.check(clones.two, ["sync"])
        #expect(synced.outputText.contains("The remote dropped 1 commit"), "\(synced.outputText)")
        #expect(try Self.remoteEntries(clones) == ["kept.gpg"])
    }

    /// Red team: after a purge, a pusher deleted the remote's branch; sync saw no force-push (its
    /// remote-tracking branch stayed, or was pruned with its reflog) and pushed the purged commit back.
    @Test("A branch deleted on the remote after a purge is not made again with the purged commit")
    func deletedBranchNotRemade() throws {
        for prune in [false, true] {
            let clones = try Self.purged()
            try clones.sandbox.check([
                "git", "-C", clones.remote, "config", "receive.denyDeleteCurrent", "ignore",
            ])
            try clones.git(clones.one, ["push", "--quiet", "origin", "--delete", "main"])
            if prune { try clones.git(clones.two, ["config", "fetch.prune", "true"]) }
            try clones.insert(clones.two, "mine", "mine\n")
            let synced = try clones.run(clones.two, ["sync"])
            #expect(synced.status != 0, "prune \(prune): \(synced.outputText)")
            #expect(synced.errorText.contains("has no branch main any more"), "\(synced.errorText)")
            let branches = try clones.sandbox.check(["git", "-C", clones.remote, "branch", "--list"])
                .outputText
            #expect(branches.isEmpty, "prune \(prune): the remote has no branch again: \(branches)")
        }
    }

    @Test("A first sync into an empty remote makes its branch")
    func firstPushMakesBranch() throws {
        let clones = try SyncClones(entries: [("kept", "pw\n")])
        let empty = clones.sandbox.directory + "/empty.git"
        try clones.sandbox.check(["git", "init", "--quiet", "--bare", empty])
        try clones.git(clones.two, ["remote", "set-url", "origin", empty])
        try clones.git(clones.two, ["update-ref", "-d", "refs/remotes/origin/main"])
        try? FileSystem.remove(clones.two + "/.git/coffer-fetched")
        let synced = try clones.run(clones.two, ["sync"])
        #expect(synced.status == 0, "\(synced.errorText)")
        let listed = try clones.sandbox.check(["git", "-C", empty, "ls-tree", "-r", "--name-only", "main"])
            .outputText
        #expect(listed.contains("kept.gpg"), "\(listed)")
    }

    /// Red team (pusher): the purged line came back in a merge by hand under the name this clone renamed
    /// the entry to and edited: another path, another blob and another text than the dropped commit's.
    @Test("A merge by hand keeps no line a dropped commit added, in an entry renamed and edited here")
    func mergeByHandRenamedAndEdited() throws {
        let clones = try SyncClones(entries: [("web/a", "pw0\nuser: bob\n")])
        try TestFiles.write("line1\nline2\n", to: clones.one + "/notes.txt")
        try clones.git(clones.one, ["add", "notes.txt"])
        try clones.git(clones.one, ["commit", "-qm", "notes"])
        try clones.check(clones.one, ["sync"])
        try clones.check(clones.two, ["sync"])
        try clones.insert(clones.one, "web/a", "pw0\nuser: bob\nleak: PURGED-SECRET\n")
        try clones.check(clones.one, ["sync"])
        try clones.check(clones.two, ["sync"])
        // Two renames and edits the entry, and changes a note.
        try clones.check(clones.two, ["mv", "web/a", "web/b"])
        try clones.insert(clones.two, "web/b", "pw0\nuser: bob\nleak: PURGED-SECRET\nmine: yes\n")
        try TestFiles.write("line1 two\nline2\n", to: clones.two + "/notes.txt")
        try clones.git(clones.two, ["commit", "-qam", "two's note"])
        // The leak is purged, and the same line of the note changed there.
        try clones.git(clones.one, ["reset", "--quiet", "--hard", "HEAD~1"])
        try TestFiles.write("line1 one\nline2\n", to: clones.one + "/notes.txt")
        try clones.git(clones.one, ["commit", "-qam", "one's note"])
        try clones.git(clones.one, ["push", "--quiet", "--force", "origin", "main"])
        let stopped = try clones.run(clones.two, ["sync"])
        #expect(stopped.status == 1, "\(stopped.outputText)")
        _ = try? clones.git(clones.two, ["merge", "-q", "origin/main"])
        try TestFiles.write("line1 merged\nline2\n", to: clones.two + "/notes.txt")
        try clones.git(clones.two, ["add", "notes.txt"])
        let synced = try clones.run(clones.two, ["sync"])
        #expect(synced.status == 0, "\(synced.errorText)")
        #expect(!(try clones.show(clones.two, "web/b")).contains("PURGED"))
        let pushed = try clones.sandbox.check(["git", "-C", clones.remote, "show", "main:web/b.gpg"])
            .outputText
        #expect(!pushed.isEmpty)
        for name in try Self.remoteEntries(clones) {
            let text = try clones.sandbox.run(
                [
                    "sh", "-c", "git -C \"$1\" show main:\"$2\" | gpg --batch --quiet -d", "sh",
                    clones.remote, name,
                ])
            #expect(!text.outputText.contains("PURGED"), "\(name)")
        }
    }

    @Test("A merge commit the remote dropped is named with the others it dropped")
    func droppedMergeNamed() throws {
        let clones = try SyncClones(entries: [("kept", "pw\n")])
        let base = try clones.git(clones.one, ["rev-parse", "HEAD"])
        try clones.git(clones.two, ["config", "coffer.syncmode", "merge"])
        try clones.insert(clones.one, "purged", "leaked\n")
        try clones.check(clones.one, ["sync"])
        try clones.insert(clones.two, "theirs", "t\n")
        try clones.check(clones.two, ["sync"])
        let merge = try clones.git(clones.two, ["rev-parse", "HEAD"])
        #expect(
            try clones.git(clones.two, ["rev-list", "--parents", "-n", "1", "HEAD"]).split(separator: " ")
                .count == 3)
        // The remote is put back to before both, with a commit of its own.
        try clones.check(clones.one, ["sync"])
        try clones.git(clones.one, ["reset", "--quiet", "--hard", base])
        try clones.insert(clones.one, "after", "new\n")
        try clones.git(clones.one, ["push", "--quiet", "--force", "origin", "main"])
        let synced = try clones.check(clones.two, ["sync"])
        #expect(synced.outputText.contains("The remote dropped 3 commits"), "\(synced.outputText)")
        #expect(synced.outputText.contains(String(merge.prefix(12))), "\(synced.outputText)")
        #expect(try Self.remoteEntries(clones) == ["after.gpg", "kept.gpg"])
        #expect(!TestFiles.exists(clones.two + "/purged.gpg"))
    }

    @Test("A pushed tag named like the remote-tracking branch changes nothing sync does")
    func tagNamedLikeTheUpstream() throws {
        let clones = try SyncClones(entries: [("kept", "pw\n")])
        let old = try clones.git(clones.one, ["rev-parse", "HEAD"])
        try clones.insert(clones.one, "later", "l\n")
        try clones.check(clones.one, ["sync"])
        // The pusher's tag points at an old commit and is named as `origin/main` is.
        try clones.git(clones.one, ["tag", "origin/main", old])
        try clones.git(clones.one, ["push", "-q", "origin", "refs/tags/origin/main"])
        for round in 0..<2 {
            try clones.insert(clones.two, "mine\(round)", "m\n")
            let synced = try clones.run(clones.two, ["sync"])
            #expect(synced.status == 0, "\(synced.errorText)")
            #expect(synced.outputText.contains("Pushed local changes."), "\(synced.outputText)")
            #expect(!synced.outputText.contains("dropped"), "\(synced.outputText)")
        }
        #expect(try Self.remoteEntries(clones) == ["kept.gpg", "later.gpg", "mine0.gpg", "mine1.gpg"])
    }

    @Test("Without a reflog or a record of what sync fetched, sync stops and names what it would push")
    func cannotTell() throws {
        let clones = try SyncClones(entries: [("kept", "pw\n")])
        let three = clones.sandbox.directory + "/three"
        try clones.sandbox.check([
            "git", "-c", "core.logAllRefUpdates=false", "clone", "-q", "file://" + clones.remote, three,
        ])
        try clones.git(three, ["config", "core.logAllRefUpdates", "false"])
        try clones.sandbox.check(["rm", "-rf", three + "/.git/logs"])
        try clones.insert(three, "mine", "mine\n")
        let head = try clones.git(three, ["rev-parse", "HEAD"])
        let stopped = try clones.run(three, ["sync"])
        #expect(stopped.status == 1)
        #expect(
            stopped.errorText.contains("cannot tell whether the remote dropped commits"),
            "\(stopped.errorText)")
        #expect(stopped.errorText.contains("Add given password for mine to store."), "\(stopped.errorText)")
        #expect(stopped.errorText.split(separator: "\n").count == 1)
        #expect(try clones.git(three, ["rev-parse", "HEAD"]) == head)
        #expect(try Self.remoteEntries(clones) == ["kept.gpg"])
        // The way out it gives; from then on sync keeps its own record.
        try clones.git(three, ["push", "-q", "origin", "main"])
        try clones.check(three, ["sync"])
        try clones.insert(three, "more", "more\n")
        try clones.check(three, ["sync"])
        #expect(try Self.remoteEntries(clones) == ["kept.gpg", "mine.gpg", "more.gpg"])
    }
}
