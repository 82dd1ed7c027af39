import Coffer
import CofferTestSupport
import Testing

@Suite("sync never loses a write and never lies")
struct SyncRegressionTests {
    @Test("Different fields merge with coffer installed only as pass, in sync and in a plain git pull")
    func mergeDoesNotDependOnPath() throws {
        let clones = try SyncClones(entries: [("site", "pw\nlogin: alice\nurl: https://a\n")])
        let driver = try clones.git(clones.two, ["config", "merge.coffer.driver"])
        #expect(driver.hasPrefix("'/"), "the driver is registered by absolute path: \(driver)")
        try clones.insert(clones.one, "site", "pw\nlogin: bob\nurl: https://a\n")
        try clones.insert(clones.two, "site", "pw\nlogin: alice\nurl: https://b\n")
        try clones.check(clones.one, ["sync"])
        let synced = try clones.run(clones.two, ["sync"])
        #expect(synced.status == 0, "\(synced.errorText)")
        #expect(!synced.errorText.contains("Conflict"))
        #expect(try clones.show(clones.two, "site") == "pw\nlogin: bob\nurl: https://b\n")
        #expect(try clones.isClean(clones.two))

        // git pull by hand, with a PATH where no coffer is: git runs the registered driver.
        try clones.insert(clones.one, "site", "pw2\nlogin: bob\nurl: https://b\n")
        try clones.check(clones.one, ["sync"])
        try clones.insert(clones.two, "site", "pw\nlogin: bob\nurl: https://c\n")
        let pulled = try clones.sandbox.run(
            ["git", "-C", clones.two, "pull", "--no-rebase", "--no-edit", "-q"],
            environment: ["PATH": "/usr/bin:/bin"])
        #expect(pulled.status == 0, "\(pulled.errorText)")
        #expect(try clones.show(clones.two, "site") == "pw2\nlogin: bob\nurl: https://c\n")
    }

    @Test("An entry this clone cannot encrypt for stops the sync with nothing changed and nothing lost")
    func unusableRecipientStopsCleanly() throws {
        let clones = try SyncClones(entries: [("site", "pw\nlogin: a\n")])
        let third = clones.sandbox.keys[2].fingerprint
        try clones.check(clones.one, ["init", clones.sandbox.keys[0].fingerprint, third])
        try clones.insert(clones.one, "site", "pw\nlogin: from-one\n")
        try clones.check(clones.one, ["sync"])
        try clones.insert(clones.two, "site", "pw-from-two\nlogin: a\n")
        try clones.sandbox.check(["gpg", "--batch", "--yes", "--delete-secret-and-public-key", third])
        let head = try clones.git(clones.two, ["rev-parse", "HEAD"])
        let result = try clones.run(clones.two, ["sync"])
        #expect(result.status == 1)
        #expect(result.errorText.contains("cannot merge site.gpg"), "\(result.errorText)")
        #expect(result.errorText.contains("Nothing was changed"))
        #expect(try clones.git(clones.two, ["rev-parse", "HEAD"]) == head)
        #expect(try clones.isClean(clones.two))
        #expect(try clones.show(clones.two, "site") == "pw-from-two\nlogin: a\n")
        #expect(try clones.git(clones.two, ["rev-parse", "origin/main"]) != head)
    }

    @Test("Names with spaces and other letters: conflicts reported by name, the clone left on its branch")
    func namesGitQuotes() throws {
        let start = "pw\nlogin: a\nurl: u\n"
        let clones = try SyncClones(entries: [("ünï/пароль", start), ("my bank/acc ount", start)])
        try clones.insert(clones.one, "ünï/пароль", "pw\nlogin: one\nurl: u\n")
        try clones.insert(clones.two, "ünï/пароль", "pw\nlogin: two\nurl: u\n")
        try clones.insert(clones.one, "my bank/acc ount", "pw\nlogin: a\nurl: one\n")
        try clones.insert(clones.two, "my bank/acc ount", "pw-two\nlogin: a\nurl: u\n")
        try clones.check(clones.one, ["sync"])
        let result = try clones.run(clones.two, ["sync"])
        #expect(result.status == 1)
        #expect(result.errorText.contains("Conflict in ünï/пароль"), "\(result.errorText)")
        #expect(result.outputText.contains("Changed my bank/acc ount"), "\(result.outputText)")
        #expect(!result.outputText.contains("\\303"))
        #expect(try clones.isClean(clones.two))
        #expect(
            try clones.git(clones.two, ["rev-parse", "HEAD"])
                == clones.git(clones.two, ["rev-parse", "origin/main"]))
        let shown = try clones.run(clones.two, ["show", "ünï/пароль"])
        #expect(
            shown.outputText == "pw\n<<<<<<< ours\nlogin: two\n=======\nlogin: one\n>>>>>>> theirs\nurl: u")
        #expect(shown.errorText.contains("merge conflict"))
        #expect(try clones.show(clones.two, "my bank/acc ount") == "pw-two\nlogin: a\nurl: one\n")
        #expect(
            try clones.run(clones.two, ["fsck"]).outputText.contains("ünï/пароль.gpg: holds a merge conflict")
        )
    }

    @Test(".gpg-id changed on both sides merges as a set; its entries are encrypted for the result")
    func recipientsChangedOnBothSides() throws {
        let clones = try SyncClones(entries: [("team/a", "a\n")])
        let (k0, k1, k2) = clones.fingerprints
        try clones.check(clones.one, ["init", "-p", "team", k0, k1])
        try clones.check(clones.two, ["init", "-p", "team", k0, k2])
        try clones.check(clones.one, ["sync"])
        let result = try clones.run(clones.two, ["sync"])
        #expect(result.status == 0, "\(result.errorText)")
        let merged = try clones.sandbox.read(clones.two + "/team/.gpg-id")
        #expect(String(decoding: merged, as: UTF8.self) == "\(k0)\n\(k2)\n\(k1)\n")
        #expect(
            try clones.keyIDs(clones.two, "team/a")
                == [clones.subkeyID(0), clones.subkeyID(1), clones.subkeyID(2)].sorted())
        try clones.check(clones.one, ["sync"])
        #expect(try clones.run(clones.one, ["fsck"]).status == 0)
        // A .gpg-id with markers (from a plain git merge) is named by fsck and refused by writers.
        try TestFiles.write(
            "<<<<<<< ours\n\(k0)\n=======\n\(k1)\n>>>>>>> theirs\n", to: clones.one + "/team/.gpg-id",
            mode: 0o600)
        #expect(
            try clones.run(clones.one, ["fsck"]).outputText.contains(
                "team/.gpg-id: holds merge conflict markers"))
        let refused = try clones.run(clones.one, ["insert", "-m", "team/b"], input: "b\n")
        #expect(refused.status == 1)
        #expect(refused.errorText.contains("merge conflict markers"), "\(refused.errorText)")
    }

    /// Sync model seed 4200064: the remote renamed an entry and copied it (a pusher's rename and copy),
    /// and git carried this clone's edit of it into the copy whose name sorts first, which the pusher
    /// then overwrote. The edit stays under the entry's own name now, in both sync modes.
    @Test(
        "an edit of an entry the remote removed and added under two names stays under its own name",
        arguments: ["rebase", "merge"])
    func editOfEntryRenamedAndCopied(mode: String) throws {
        let clones = try SyncClones(entries: [("email", "old\n")])
        try clones.git(clones.one, ["config", "coffer.syncmode", mode])
        try clones.git(clones.two, ["mv", "email.gpg", "moved.gpg"])
        try clones.sandbox.check(["cp", clones.two + "/moved.gpg", clones.two + "/a-copy.gpg"])
        try clones.git(clones.two, ["add", "a-copy.gpg"])
        try clones.git(clones.two, ["commit", "-q", "-m", "tidy"])
        try clones.git(clones.two, ["push", "-q"])
        try clones.insert(clones.one, "email", "edited\n")
        let synced = try clones.run(clones.one, ["sync"])
        #expect(synced.status == 0, "\(synced.errorText)")
        #expect(try clones.show(clones.one, "email") == "edited\n")
        #expect(try clones.show(clones.one, "a-copy") == "old\n")
        #expect(try clones.show(clones.one, "moved") == "old\n")
        #expect(try clones.isClean(clones.one))
    }

    /// Sync model seed 990024: each side removed the recipients the other kept; the merge by keys left
    /// none, and sync failed to encrypt with advice about a missing key.
    @Test("A .gpg-id both sides cut down to nothing stops for a merge by hand; the person's choice is kept")
    func recipientsCutToNothing() throws {
        let clones = try SyncClones(entries: [("team/a", "a\n")])
        let (k0, k1, k2) = clones.fingerprints
        try clones.check(clones.one, ["init", "-p", "team", k0, k1, k2])
        try clones.check(clones.one, ["sync"])
        try clones.check(clones.two, ["sync"])
        try clones.check(clones.one, ["init", "-p", "team", k1])
        try clones.check(clones.two, ["init", "-p", "team", k0])
        try clones.check(clones.one, ["sync"])
        let head = try clones.git(clones.two, ["rev-parse", "HEAD"])
        let stopped = try clones.run(clones.two, ["sync"])
        #expect(stopped.status == 1)
        #expect(
            stopped.errorText.contains("cannot merge team/.gpg-id: each side removed"), "\(stopped.errorText)"
        )
        #expect(stopped.errorText.contains("Merge it by hand"), "\(stopped.errorText)")
        #expect(try clones.git(clones.two, ["rev-parse", "HEAD"]) == head)
        #expect(try clones.isClean(clones.two))
        // The person merges by hand and chooses both keys.
        _ = try? clones.git(clones.two, ["merge", "--no-edit", "origin/main"])
        try TestFiles.write("\(k0)\n\(k1)\n", to: clones.two + "/team/.gpg-id", mode: 0o600)
        try clones.git(clones.two, ["add", "team/.gpg-id"])
        let finished = try clones.run(clones.two, ["sync"])
        #expect(finished.status == 0, "\(finished.errorText)")
        #expect(
            String(decoding: try clones.sandbox.read(clones.two + "/team/.gpg-id"), as: UTF8.self)
                == "\(k0)\n\(k1)\n")
        #expect(try clones.keyIDs(clones.two, "team/a") == [clones.subkeyID(0), clones.subkeyID(1)].sorted())
    }

    @Test("Files that are not entries: separate lines merge; overlapping and binary changes stop cleanly")
    func filesThatAreNotEntries() throws {
        let clones = try SyncClones(entries: [("x", "x\n")])
        try TestFiles.write("a\nb\nc\nd\n", to: clones.one + "/notes.txt")
        try TestFiles.write([0, 1, 2, 3], to: clones.one + "/blob.bin")
        try clones.git(clones.one, ["add", "notes.txt", "blob.bin"])
        try clones.git(clones.one, ["commit", "-qm", "files"])
        try clones.check(clones.one, ["sync"])
        try clones.check(clones.two, ["sync"])
        try TestFiles.write("a ONE\nb\nc\nd\n", to: clones.one + "/notes.txt")
        try TestFiles.write("a\nb\nc\nd TWO\n", to: clones.two + "/notes.txt")
        try clones.git(clones.one, ["commit", "-qam", "one"])
        try clones.git(clones.two, ["commit", "-qam", "two"])
        try clones.check(clones.one, ["sync"])
        try clones.check(clones.two, ["sync"])
        #expect(
            String(decoding: try clones.sandbox.read(clones.two + "/notes.txt"), as: UTF8.self)
                == "a ONE\nb\nc\nd TWO\n")

        for (file, one, two) in [
            ("notes.txt", Array("a 1\nb\nc\nd TWO\n".utf8), Array("a 2\nb\nc\nd TWO\n".utf8)),
            ("blob.bin", [0, 9, 9], [0, 8, 8]),
        ] {
            try clones.check(clones.one, ["sync"])
            try TestFiles.write(one, to: clones.one + "/" + file)
            try TestFiles.write(two, to: clones.two + "/" + file)
            try clones.git(clones.one, ["commit", "-qam", "one \(file)"])
            try clones.git(clones.two, ["commit", "-qam", "two \(file)"])
            try clones.check(clones.one, ["sync"])
            let head = try clones.git(clones.two, ["rev-parse", "HEAD"])
            let result = try clones.run(clones.two, ["sync"])
            #expect(result.status == 1, "\(file)")
            #expect(result.errorText.contains("cannot merge \(file)"), "\(result.errorText)")
            #expect(try clones.git(clones.two, ["rev-parse", "HEAD"]) == head)
            #expect(try clones.isClean(clones.two))
            #expect(try clones.sandbox.read(clones.two + "/" + file) == two)
            let remote = try clones.git(clones.one, ["rev-parse", "HEAD"])
            #expect(try clones.git(clones.two, ["rev-parse", "origin/main"]) == remote, "nothing pushed")
            // The way out the message gives: merge by hand, then sync.
            _ = try clones.sandbox.run(["git", "-C", clones.two, "merge", "-q", "origin/main"])
            try TestFiles.write(one, to: clones.two + "/" + file)
            try clones.git(clones.two, ["commit", "-qam", "resolved \(file)"])
            try clones.check(clones.two, ["sync"])
        }
    }

    @Test("An entry added under recipients the other side changed is re-encrypted before it is pushed")
    func entryAddedUnderChangedRecipients() throws {
        let clones = try SyncClones(entries: [("team/a", "a\n")])
        let (k0, k1) = (clones.sandbox.keys[0].fingerprint, clones.sandbox.keys[1].fingerprint)
        try clones.check(clones.one, ["init", "-p", "team", k0, k1])
        try clones.check(clones.one, ["sync"])
        try clones.insert(clones.two, "team/new", "new\n")
        #expect(try clones.keyIDs(clones.two, "team/new") == [clones.subkeyID(0)])
        let result = try clones.run(clones.two, ["sync"])
        #expect(result.status == 0, "\(result.errorText)")
        let wanted = [try clones.subkeyID(0), try clones.subkeyID(1)].sorted()
        #expect(try clones.keyIDs(clones.two, "team/new") == wanted)
        // What was pushed is the re-encrypted entry, in the commit that adds it.
        try clones.check(clones.one, ["sync"])
        #expect(try clones.keyIDs(clones.one, "team/new") == wanted)
        let added = try clones.git(clones.one, ["log", "--format=%H", "-1", "--", "team/new.gpg"])
        let blob = try clones.sandbox.check(["git", "-C", clones.one, "show", "\(added):team/new.gpg"])
            .standardOutput
        try TestFiles.write(blob, to: clones.sandbox.directory + "/pushed.gpg")
        let packets = try clones.sandbox.run([
            "gpg", "--batch", "--list-packets", clones.sandbox.directory + "/pushed.gpg",
        ])
        #expect(packets.outputText.contains(try clones.subkeyID(1)))
    }

    @Test("Signed commits stay signed when replayed, so a clone that requires them accepts them")
    func signedCommitsStaySigned() throws {
        let clones = try SyncClones(entries: [("site", "pw\nlogin: a\n")])
        for store in [clones.one, clones.two] {
            try clones.git(store, ["config", "pass.signcommits", "true"])
            try clones.git(store, ["config", "user.signingkey", clones.sandbox.keys[0].fingerprint])
            try clones.git(store, ["config", "coffer.requiresignedcommits", "true"])
        }
        try clones.insert(clones.one, "site", "pw\nlogin: one\n")
        try clones.check(clones.one, ["sync"])
        try clones.insert(clones.two, "other", "other\n")
        try clones.check(clones.two, ["sync"])
        let signatures = try clones.git(clones.two, ["log", "--format=%G?", "-2"])
        #expect(signatures == "G\nG")
        let accepted = try clones.run(clones.one, ["sync"])
        #expect(accepted.status == 0, "\(accepted.errorText)")
        #expect(try clones.show(clones.one, "other") == "other\n")
        // An unsigned commit is not pushed where signatures are required.
        try clones.git(clones.two, ["config", "pass.signcommits", "false"])
        try clones.insert(clones.two, "unsigned", "u\n")
        let refused = try clones.run(clones.two, ["sync"])
        #expect(refused.status == 1)
        #expect(refused.errorText.contains("is not signed"))
    }

    @Test("A sync killed half-way is undone by the next sync or by fsck --fix; writers wait for that")
    func killedSyncIsUndone() throws {
        let clones = try SyncClones(entries: [("site", "pw\nlogin: a\n")])
        try clones.insert(clones.one, "site", "pw\nlogin: one\n")
        try clones.check(clones.one, ["sync"])
        try clones.insert(clones.two, "site", "pw-two\nlogin: a\n")
        // A hook that hangs once sync has moved to the remote's commit, so the kill lands half-way.
        try clones.killSync(clones.two, hangingIn: "post-checkout") {
            TestFiles.exists(clones.two + "/.git/coffer-sync")
        }
        #expect(TestFiles.exists(clones.two + "/.git/coffer-sync"), "the kill must land during the merge")
        // Leftovers of a killed git, for fsck to find.
        try TestFiles.write("", to: clones.two + "/.git/index.lock")
        try TestFiles.write("ciphertext", to: clones.two + "/.merge_file_AbC123")

        let refused = try clones.run(clones.two, ["insert", "-m", "other"], input: "o\n")
        #expect(refused.status == 1)
        #expect(refused.errorText.contains("sync"), "\(refused.errorText)")
        let report = try clones.run(clones.two, ["fsck"])
        #expect(report.status == 1)
        #expect(report.outputText.contains("a sync was interrupted"), "\(report.outputText)")
        #expect(report.outputText.contains(".git/index.lock"))
        #expect(report.outputText.contains(".merge_file_AbC123"))
        let fixed = try clones.run(clones.two, ["fsck", "--fix"])
        #expect(fixed.status == 0, "\(fixed.outputText)\(fixed.errorText)")
        #expect(try clones.isClean(clones.two))
        #expect(!TestFiles.exists(clones.two + "/.merge_file_AbC123"))
        #expect(try clones.show(clones.two, "site") == "pw-two\nlogin: a\n")
        try clones.check(clones.two, ["sync"])
        #expect(try clones.show(clones.two, "site") == "pw-two\nlogin: one\n")
        #expect(try clones.isClean(clones.two))
    }

    @Test("Renamed to two names keeps both; labels say which side is which in both modes; layout kept")
    func renamesLabelsAndLayout() throws {
        for mode in ["rebase", "merge"] {
            let clones = try SyncClones(entries: [
                ("site", "pw\r\nlogin: a\r\nremember the blue door\r\nurl: u\r\n"), ("moved", "m\n"),
            ])
            try clones.git(clones.two, ["config", "coffer.syncmode", mode])
            try clones.check(clones.one, ["mv", "moved", "moved-by-one"])
            try clones.check(clones.two, ["mv", "moved", "moved-by-two"])
            try clones.insert(
                clones.one, "site", "pw\r\nlogin: one\r\nremember the blue door\r\nurl: u-one\r\n")
            try clones.insert(
                clones.two, "site", "pw-two\r\nlogin: two\r\nremember the blue door\r\nurl: u\r\n")
            try clones.check(clones.one, ["sync"])
            let result = try clones.run(clones.two, ["sync"])
            #expect(result.status == 1, "\(mode): the login conflict is reported")
            #expect(
                result.outputText.contains("Kept moved-by-two")
                    || result.outputText.contains("Kept moved-by-one"))
            #expect(try clones.show(clones.two, "moved-by-one") == "m\n")
            #expect(try clones.show(clones.two, "moved-by-two") == "m\n")
            #expect(try clones.run(clones.two, ["show", "moved"]).status == 1)
            #expect(
                try clones.show(clones.two, "site")
                    == "pw-two\r\n<<<<<<< ours\nlogin: two\r\n=======\nlogin: one\r\n>>>>>>> theirs\nremember the blue door\r\nurl: u-one\r\n",
                "\(mode)")
            #expect(try clones.isClean(clones.two))
            let fsck = try clones.run(clones.two, ["fsck"]).outputText
            #expect(fsck.contains("site.gpg: holds a merge conflict"))
        }
    }

    @Test("A detached HEAD is refused at once, with what to do")
    func detachedHead() throws {
        let clones = try SyncClones(entries: [("x", "x\n")])
        try clones.insert(clones.two, "y", "y\n")
        try clones.git(clones.two, ["checkout", "-q", "--detach"])
        let result = try clones.run(clones.two, ["sync"])
        #expect(result.status == 1)
        #expect(result.errorText.contains("detached HEAD"))
        #expect(result.errorText.contains("git checkout"))
    }

    @Test("A merge by hand as sync advises: every file named, sync settles the entries, re-encrypts, commits")
    func mergeByHandFinishedBySync() throws {
        let clones = try SyncClones(entries: [("site", "pw\nlogin: alice\n"), ("team/db", "db\n")])
        let (_, k1, _) = clones.fingerprints
        for file in ["notes.txt", "other.txt"] {
            try TestFiles.write("a\n", to: clones.one + "/" + file)
        }
        try clones.git(clones.one, ["add", "notes.txt", "other.txt"])
        try clones.git(clones.one, ["commit", "-qm", "files"])
        try clones.check(clones.one, ["sync"])
        try clones.check(clones.two, ["sync"])
        // One: edits both files, the entry's login, and gives team/ to key 1 only. Two: edits both files
        // and the entry's password, and adds an entry to team/ (still encrypted for key 0 there).
        for file in ["notes.txt", "other.txt"] {
            try TestFiles.write("one\n", to: clones.one + "/" + file)
            try TestFiles.write("two\n", to: clones.two + "/" + file)
        }
        try clones.git(clones.one, ["commit", "-qam", "one's files"])
        try clones.insert(clones.one, "site", "pw\nlogin: bob\n")
        try clones.check(clones.one, ["init", "-p", "team", k1])
        try clones.check(clones.one, ["sync"])
        try clones.git(clones.two, ["commit", "-qam", "two's files"])
        try clones.insert(clones.two, "site", "pw2\nlogin: alice\n")
        try clones.insert(clones.two, "team/new", "new\n")
        let stopped = try clones.run(clones.two, ["sync"])
        #expect(stopped.status == 1)
        #expect(
            stopped.errorText.contains("fix notes.txt and other.txt and git add them"), "\(stopped.errorText)"
        )

        // As advised: git merge, both files fixed and added, sync again.
        _ = try? clones.git(clones.two, ["merge", "-q", "--no-edit", "origin/main"])
        for file in ["notes.txt", "other.txt"] {
            try TestFiles.write("one\ntwo\n", to: clones.two + "/" + file)
        }
        let early = try clones.run(clones.two, ["sync"])
        #expect(early.status == 1, "files not added yet: \(early.outputText)")
        #expect(early.errorText.contains("a merge is under way"), "\(early.errorText)")
        try clones.git(clones.two, ["add", "notes.txt", "other.txt"])
        let finished = try clones.run(clones.two, ["sync"])
        #expect(finished.status == 0, "\(finished.errorText)")
        #expect(try clones.isClean(clones.two))
        #expect(try clones.show(clones.two, "site") == "pw2\nlogin: bob\n")
        #expect(try clones.keyIDs(clones.two, "team/new") == [try clones.subkeyID(1)])
        #expect(
            try clones.git(clones.two, ["rev-parse", "HEAD"])
                == clones.git(clones.two, ["rev-parse", "origin/main"]))
    }

    @Test("A recipient both sides added is listed once, whatever the order of the lines")
    func recipientAddedOnBothSides() throws {
        let clones = try SyncClones(entries: [("site", "pw\n")])
        let (k0, k1, _) = clones.fingerprints
        try clones.check(clones.one, ["init", k0, k1])
        try clones.check(clones.one, ["sync"])
        try clones.check(clones.two, ["init", k1, k0])
        try clones.check(clones.two, ["sync"])
        let lines = String(decoding: TestFiles.read(clones.two + "/.gpg-id") ?? [], as: UTF8.self)
            .split(separator: "\n")
        #expect(lines.count == 2 && Set(lines) == [Substring(k0), Substring(k1)], "\(lines)")
    }
}
