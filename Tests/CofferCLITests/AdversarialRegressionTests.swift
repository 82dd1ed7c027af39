import Coffer
import CofferTestSupport
import Testing

/// What an adversarial review of sync and the commands found (secrets reaching removed or unsigned
/// recipients, lost data, stuck stores), each reproduced with coffer installed as `pass`.
@Suite("Adversarial review: recipients, kills and concurrent changes")
struct AdversarialRegressionTests {
    /// The subkey ids an entry's file is encrypted to, as listed by gpg.
    static func keyIDs(_ clones: SyncClones, file: String) throws -> Set<String> {
        let packets = try clones.sandbox.run(["gpg", "--batch", "--list-packets", file])
        return Set(
            packets.outputText.split(separator: "\n").filter { $0.contains(":pubkey enc packet:") }
                .compactMap { $0.split(separator: " ").last.map(String.init) })
    }

    @Test("With a signing key, a .gpg-id the other side changed without signing it is never merged")
    func unsignedRecipientsAreNotMerged() throws {
        let clones = try SyncClones(entries: [("x", "x\n")])
        let (k0, k1, k2) = clones.fingerprints
        let signing = ["PASSWORD_STORE_SIGNING_KEY": k0]
        try clones.installed.check(
            ["init", "-p", "team", k0],
            environment: signing.merging(["PASSWORD_STORE_DIR": clones.one]) { $1 })
        try clones.insert(clones.one, "team/db", "db-secret\n")
        try clones.check(clones.one, ["sync"])
        // Someone with push access but no signing key adds a recipient.
        let evil = clones.sandbox.directory + "/evil"
        try clones.sandbox.check(["git", "clone", "-q", clones.remote, evil])
        try TestFiles.write("\(k0)\n\(k2)\n", to: evil + "/team/.gpg-id")
        try clones.sandbox.check(["git", "-C", evil, "commit", "-qam", "add a recipient"])
        try clones.sandbox.check(["git", "-C", evil, "push", "-q"])
        try clones.installed.check(
            ["init", "-p", "team", k0, k1],
            environment: signing.merging(["PASSWORD_STORE_DIR": clones.one]) { $1 })
        for mode in ["merge", "rebase"] {
            try clones.git(clones.one, ["config", "coffer.syncmode", mode])
            let result = try clones.installed.run(
                ["sync"], environment: signing.merging(["PASSWORD_STORE_DIR": clones.one]) { $1 })
            #expect(result.status == 1, "\(mode)")
            #expect(result.errorText.contains("no good signature"), "\(mode): \(result.errorText)")
            let recipients = String(
                decoding: try clones.sandbox.read(clones.one + "/team/.gpg-id"), as: UTF8.self)
            #expect(!recipients.contains(k2), "\(mode)")
            #expect(try !Self.keyIDs(clones, file: clones.one + "/team/db.gpg").contains(clones.subkeyID(2)))
        }
    }

    @Test("A recipient removed on one side stays removed when the other side names it another way")
    func removedRecipientStaysRemoved() throws {
        let clones = try SyncClones(entries: [("x", "x\n")])
        let keys = clones.sandbox.keys
        try clones.check(clones.one, ["init", "-p", "team", keys[0].fingerprint, keys[1].fingerprint])
        try clones.insert(clones.one, "team/a", "a\n")
        try clones.check(clones.one, ["sync"])
        try clones.check(clones.two, ["sync"])
        // One clone revokes the second key; the other lists all three by e-mail address.
        try clones.check(clones.one, ["init", "-p", "team", keys[0].fingerprint])
        try clones.insert(clones.one, "team/new", "NEW-SECRET\n")
        try clones.check(clones.two, ["init", "-p", "team", keys[0].email, keys[1].email, keys[2].email])
        try clones.check(clones.two, ["sync"])
        let result = try clones.run(clones.one, ["sync"])
        #expect(result.status == 0, "\(result.errorText)")
        let revoked = try clones.subkeyID(1)
        for entry in ["team/a", "team/new"] {
            #expect(
                try !Self.keyIDs(clones, file: clones.one + "/\(entry).gpg").contains(revoked), "\(entry)")
        }
        let recipients = String(
            decoding: try clones.sandbox.read(clones.one + "/team/.gpg-id"), as: UTF8.self)
        #expect(
            !recipients.contains(keys[1].email) && !recipients.contains(keys[1].fingerprint), "\(recipients)")
        #expect(recipients.contains(keys[2].email))
    }

    @Test("Moving a folder's entries away never carries another folder's recipients along")
    func directoryRenamesDoNotMoveRecipients() throws {
        let clones = try SyncClones(entries: [("shared/inner/a", "a\n"), ("shared/inner/b", "b\n")])
        try clones.check(clones.one, ["mv", "shared/inner/a", "shared/a"])
        try clones.check(clones.one, ["mv", "shared/inner/b", "shared/b"])
        let keys = clones.sandbox.keys
        try clones.check(
            clones.two, ["init", "-p", "shared/inner", keys[0].fingerprint, keys[2].fingerprint])
        try clones.check(clones.one, ["sync"])
        #expect(try clones.run(clones.two, ["sync"]).status == 0)
        #expect(!TestFiles.exists(clones.two + "/shared/.gpg-id"))
        let contractor = try clones.subkeyID(2)
        for entry in ["shared/a", "shared/b"] {
            #expect(
                try !Self.keyIDs(clones, file: clones.two + "/\(entry).gpg").contains(contractor), "\(entry)")
        }
        #expect(try clones.run(clones.two, ["fsck"]).status == 0)
    }

    @Test("In merge mode, no pushed commit keeps an entry encrypted for a recipient the remote removed")
    func mergeModeDoesNotPushOldEncryption() throws {
        let clones = try SyncClones(entries: [("team/x", "x\n")])
        let keys = clones.sandbox.keys
        try clones.check(clones.one, ["init", "-p", "team", keys[0].fingerprint, keys[1].fingerprint])
        try clones.check(clones.one, ["sync"])
        try clones.check(clones.two, ["sync"])
        try clones.check(clones.two, ["init", "-p", "team", keys[0].fingerprint])
        try clones.check(clones.two, ["sync"])
        try clones.git(clones.one, ["config", "coffer.syncmode", "merge"])
        try clones.insert(clones.one, "team/new", "NEW\n")
        try clones.check(clones.one, ["sync"])
        let removed = try clones.subkeyID(1)
        let commits = try clones.git(clones.one, ["log", "--format=%H", "origin/main", "--", "team/new.gpg"])
        for commit in commits.split(separator: "\n") {
            let blob = try clones.sandbox.check(["git", "-C", clones.one, "show", "\(commit):team/new.gpg"])
            let file = clones.sandbox.directory + "/pushed-\(commit).gpg"
            try TestFiles.write(blob.standardOutput, to: file)
            #expect(try !Self.keyIDs(clones, file: file).contains(removed), "commit \(commit)")
        }
    }

    @Test("A public key kept in the store as KEY.gpg does not stop init; fsck leaves it alone")
    func keyFilesAreNotEntries() throws {
        let coffer = try InstalledAsPass(entries: ["a": "a\n"])
        mkdir(coffer.store + "/.public-keys", 0o700)
        let key = try coffer.sandbox.check(["gpg", "--batch", "--export", coffer.sandbox.keys[1].fingerprint])
        try TestFiles.write(key.standardOutput, to: coffer.store + "/.public-keys/two.gpg", mode: 0o600)
        try coffer.git(["add", ".public-keys"])
        try coffer.git(["commit", "-qm", "keys"])
        let result = try coffer.run([
            "init", coffer.sandbox.keys[0].fingerprint, coffer.sandbox.keys[1].fingerprint,
        ])
        #expect(result.status == 0, "\(result.errorText)")
        #expect(try coffer.uncommitted() == "")
        #expect(try coffer.sandbox.read(coffer.store + "/.public-keys/two.gpg") == key.standardOutput)
        #expect(try coffer.run(["fsck"]).status == 0)
    }

    @Test("rm of the store itself or of a name ending in '.' is refused and removes nothing")
    func removingTheStoreIsRefused() throws {
        let coffer = try InstalledAsPass(entries: ["sub/a": "a\n"])
        let before = try coffer.sandbox.check(["find", coffer.store]).outputText
        for name in ["", ".", "./", "sub/.", "sub/./", "/"] {
            let result = try coffer.run(["rm", "-rf", name])
            #expect(result.status == 1, "rm -rf '\(name)'")
            #expect(result.errorText.contains("refusing to remove"), "rm -rf '\(name)': \(result.errorText)")
            #expect(
                try coffer.sandbox.check(["find", coffer.store]).outputText == before, "rm -rf '\(name)'")
        }
        #expect(try coffer.run(["mv", ".", "elsewhere"]).status == 1)
        #expect(try coffer.sandbox.check(["find", coffer.store]).outputText == before)
    }

    @Test("Undoing a killed sync keeps commits made since; leftovers of the remote's commit go")
    func undoKeepsLaterCommits() throws {
        let clones = try SyncClones(entries: [("x", "x\n")])
        try clones.insert(clones.one, "from-one", "one\n")
        try clones.check(clones.one, ["sync"])
        // A fast-forward killed after git moved the branch (its post-merge hook hangs).
        try clones.killSync(clones.two, hangingIn: "post-merge") {
            TestFiles.exists(clones.two + "/.git/coffer-sync")
                && (try? clones.git(clones.two, ["log", "-1", "--format=%s"]))
                    == "Add given password for from-one to store."
        }
        #expect(TestFiles.exists(clones.two + "/.git/coffer-sync"), "the kill must land during the sync")
        // Someone commits with git itself meanwhile, and a file of the remote's commit was left half made.
        try TestFiles.write("IMPORTANT-NEW\n", to: clones.two + "/later.txt")
        try clones.git(clones.two, ["add", "later.txt"])
        try clones.git(clones.two, ["commit", "-qm", "a commit made after the kill"])
        let synced = try clones.run(clones.two, ["sync"])
        #expect(synced.status == 0, "\(synced.errorText)")
        #expect(try clones.git(clones.two, ["log", "--format=%s"]).contains("a commit made after the kill"))
        #expect(TestFiles.exists(clones.two + "/later.txt"))
        #expect(try clones.isClean(clones.two))
        #expect(try clones.show(clones.two, "from-one") == "one\n")
    }

    @Test("Leftovers of a killed git: stale locks of every kind, and coffer's own temporary files")
    func staleLocksAndTemporaryFiles() throws {
        let clones = try SyncClones(entries: [("x", "x\n")])
        try clones.insert(clones.one, "y", "y\n")
        try clones.check(clones.one, ["sync"])
        for lock in ["HEAD.lock", "config.lock", "refs/heads/main.lock", "index.lock"] {
            try TestFiles.write("", to: clones.two + "/.git/" + lock)
        }
        let report = try clones.run(clones.two, ["fsck"])
        #expect(report.outputText.contains(".git/HEAD.lock"), "\(report.outputText)")
        #expect(report.outputText.contains(".git/config.lock"))
        let synced = try clones.run(clones.two, ["sync"])
        #expect(synced.status == 0, "\(synced.errorText)")
        #expect(try clones.show(clones.two, "y") == "y\n")
        #expect(try clones.isClean(clones.two))
    }

    @Test("coffer waits while a person's git commit has its editor open, and commits only its own change")
    func waitsForAPersonsCommit() throws {
        let coffer = try InstalledAsPass(entries: ["a": "a\n"])
        try TestFiles.write("notes\n", to: coffer.store + "/notes.txt")
        try coffer.git(["add", "notes.txt"])
        var environment = coffer.environment
        environment["GIT_EDITOR"] = "sleep 3; echo 'notes by hand' >"
        let pid = try TestProcess.start(
            ["git", "-C", coffer.store, "commit", "-q"], environment: environment)
        usleep(500_000)
        let result = try coffer.run(["insert", "-m", "b"], input: "b\n")
        #expect(result.status == 0, "\(result.errorText)")
        #expect(TestProcess.waitFor(pid) == 0, "the person's commit failed")
        #expect(
            try coffer.git(["log", "--format=%s", "-2"])
                == "Add given password for b to store.\nnotes by hand")
        #expect(try coffer.git(["show", "--name-only", "--format=", "HEAD"]) == "b.gpg")
        #expect(try coffer.git(["show", "--name-only", "--format=", "HEAD~1"]) == "notes.txt")
        #expect(try coffer.uncommitted() == "")
    }

    @Test("A commit a hook refused does not ride along with the next change")
    func refusedCommitIsUnstaged() throws {
        let coffer = try InstalledAsPass(entries: ["keep-me": "k\n"])
        let hook = coffer.store + "/.git/hooks/pre-commit"
        try TestFiles.write("#!/bin/sh\necho refused >&2\nexit 1\n", to: hook, mode: 0o755)
        #expect(try coffer.run(["rm", "-f", "keep-me"]).status == 1)
        unlink(hook)
        try coffer.insert("other", "o\n")
        let files = try coffer.git(["show", "--name-only", "--format=", "HEAD"])
        #expect(files == "other.gpg", "the next commit took: \(files)")
    }

    @Test("A deletion holds against a change that only re-encrypted the entry")
    func deletionBeatsReencryption() throws {
        let clones = try SyncClones(entries: [("team/old", "old\n"), ("team/keep", "keep\n")])
        let keys = clones.sandbox.keys
        try clones.check(clones.one, ["rm", "-f", "team/old"])
        try clones.check(clones.two, ["init", "-p", "team", keys[0].fingerprint, keys[1].fingerprint])
        try clones.check(clones.two, ["sync"])
        let result = try clones.run(clones.one, ["sync"])
        #expect(result.status == 0, "\(result.errorText)")
        #expect(!result.outputText.contains("Kept team/old"))
        #expect(!TestFiles.exists(clones.one + "/team/old.gpg"))
        try clones.check(clones.two, ["sync"])
        #expect(!TestFiles.exists(clones.two + "/team/old.gpg"))
    }

    @Test("An edit and a change made while the editor was open are merged, never overwritten")
    func editMergesAChangeMadeMeanwhile() throws {
        let coffer = try InstalledAsPass(entries: ["site": "old-pw\nlogin: alice\nurl: https://x\n"])
        // The editor: another process changes the password meanwhile, then the person changes the url.
        let editor = coffer.sandbox.directory + "/editor.sh"
        try TestFiles.write(
            """
            #!/bin/sh
            printf 'ROTATED\\nlogin: alice\\nurl: https://x\\n' | "$PASS" insert -m -f site >/dev/null || exit 9
            sed -i 's|https://x|https://NEW|' "$1"

            """, to: editor, mode: 0o755)
        let result = try coffer.run(
            ["edit", "site"], environment: ["EDITOR": editor, "PASS": coffer.program])
        #expect(result.status == 0, "\(result.errorText)")
        #expect(try coffer.decrypted("site") == "ROTATED\nlogin: alice\nurl: https://NEW\n")
        #expect(try coffer.uncommitted() == "")
    }

    @Test("edit finds what would stop the save before the editor runs")
    func editRefusesBeforeEditing() throws {
        let coffer = try InstalledAsPass(entries: ["site": "pw\n"])
        mkdir(coffer.store + "/.git/rebase-merge", 0o700)
        let marker = coffer.sandbox.directory + "/editor-ran"
        let result = try coffer.run(["edit", "site"], environment: ["EDITOR": "touch \(marker)"])
        #expect(result.status == 1)
        #expect(result.errorText.contains("rebase"), "\(result.errorText)")
        #expect(!TestFiles.exists(marker), "the editor ran although the save could not happen")
    }

    @Test("A password both clones changed: line 1 still holds a password, and the conflict is reported")
    func passwordConflictKeepsARealPassword() throws {
        let clones = try SyncClones(entries: [("site", "pw\nlogin: a\n")])
        try clones.insert(clones.one, "site", "pw-one\nlogin: a\n")
        try clones.insert(clones.two, "site", "pw-two\nlogin: a\n")
        try clones.check(clones.one, ["sync"])
        #expect(try clones.run(clones.two, ["sync"]).status == 1)
        let shown = try clones.run(clones.two, ["show", "site"])
        #expect(shown.outputText.split(separator: "\n").first == "pw-two")
        #expect(shown.errorText.contains("merge conflict"))
        let clipped = try clones.run(clones.two, ["show", "site"]).outputText
        #expect(clipped.contains("pw-one") && clipped.contains("pw-two"))
    }
}
