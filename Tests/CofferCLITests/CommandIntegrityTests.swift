import Coffer
import CofferTestSupport
import Testing

/// Every command does what it says: a change in a git store is committed or the command fails, nothing
/// acts on an entry it was not named for, and the exit status tells the truth. coffer runs installed as
/// `pass`, by absolute path, with a short `PATH`.
@Suite("Commands commit what they change and exit 0 only on success")
struct CommandIntegrityTests {
    @Test("rm of a folder's last entry commits the removal (and of a whole folder)")
    func removingTheLastEntryOfAFolderIsCommitted() throws {
        let coffer = try InstalledAsPass(entries: [
            "certs/a": "a-secret\n", "deep/er/folder/b": "b-secret\n", "team/c": "c\n", "team/d": "d\n",
        ])
        let removed = try coffer.run(["rm", "-f", "certs/a"])
        #expect(removed.status == 0, "\(removed.errorText)")
        #expect(!removed.errorText.contains("fatal"), "\(removed.errorText)")
        #expect(try coffer.uncommitted() == "")
        #expect(try coffer.lastCommit() == "Remove certs/a from store.")
        #expect(TestFiles.exists(coffer.store + "/certs") == false)

        try coffer.check(["rm", "-f", "deep/er/folder/b"])
        #expect(try coffer.uncommitted() == "")
        #expect(try coffer.lastCommit() == "Remove deep/er/folder/b from store.")
        #expect(TestFiles.exists(coffer.store + "/deep") == false)

        try coffer.check(["rm", "-rf", "team"])
        #expect(try coffer.uncommitted() == "")
        #expect(try coffer.lastCommit() == "Remove team from store.")
    }

    @Test("A name with glob characters is that entry and no other, for history, show -r and restore")
    func namesAreNeverPatterns() throws {
        let coffer = try InstalledAsPass(entries: [
            "certs/www.example.com": "www-1\n", "certs/*.example.com": "wildcard-1\n",
        ])
        let wildcardRevision = try coffer.git(["rev-parse", "HEAD"])
        try coffer.insert("certs/www.example.com", "www-2\n")
        try coffer.insert("certs/[w]ww.example.com", "bracket\n")

        let history = try coffer.check(["history", "certs/*.example.com"]).outputText
        #expect(history.split(separator: "\n").count == 1, "\(history)")
        #expect(history.hasSuffix("Add given password for certs/*.example.com to store."))
        let old = try coffer.run(["show", "--revision", "HEAD~1", "certs/*.example.com"])
        #expect(old.outputText == "wildcard-1")
        let bracketHistory = try coffer.check(["history", "certs/[w]ww.example.com"]).outputText
        #expect(bracketHistory.split(separator: "\n").count == 1, "\(bracketHistory)")

        try coffer.check(["restore", "--revision", wildcardRevision, "certs/*.example.com"])
        #expect(try coffer.decrypted("certs/*.example.com") == "wildcard-1\n")
        #expect(try coffer.decrypted("certs/www.example.com") == "www-2\n")
        #expect(try coffer.decrypted("certs/[w]ww.example.com") == "bracket\n")
        #expect(try coffer.uncommitted() == "")
    }

    @Test("A stale index.lock is cleared wherever the entry is; a held one fails the command")
    func indexLockAnywhere() throws {
        let coffer = try InstalledAsPass(entries: ["x": "x\n"])
        let lock = coffer.store + "/.git/index.lock"
        try TestFiles.write("", to: lock)
        try coffer.check(["insert", "-m", "sub/folder/y"], input: "y\n")
        #expect(try coffer.uncommitted() == "")
        #expect(try coffer.lastCommit() == "Add given password for sub/folder/y to store.")

        // A git that is running keeps the lock open: the commit cannot be made, and the command says so.
        let holder = try coffer.sandbox.run([
            "sh", "-c", "exec 3>\"$0\"; (sleep 20 <&- >&- 2>&- &) ; echo held", lock,
        ])
        #expect(holder.outputText == "held")
        let blocked = try coffer.run(["insert", "-m", "sub/z"], input: "z\n")
        #expect(blocked.status != 0, "the commit failed, so must the command")
        #expect(blocked.errorText.contains("not committed"), "\(blocked.errorText)")
    }

    @Test("fsck --fix commits the entries it re-encrypts and then finds nothing uncommitted")
    func fsckFixCommits() throws {
        let coffer = try InstalledAsPass(entries: ["a": "a\n", "b/c": "c\n"])
        // A .gpg-id changed by hand: the entries are encrypted to the old key.
        try TestFiles.write(
            coffer.sandbox.keys[0].fingerprint + "\n" + coffer.sandbox.keys[1].fingerprint + "\n",
            to: coffer.store + "/.gpg-id", mode: 0o600)
        try coffer.git(["commit", "-qam", "Add a recipient by hand."])
        let before = try coffer.commitCount()
        let fixed = try coffer.run(["fsck", "--fix"])
        #expect(fixed.status == 0, "\(fixed.outputText)\(fixed.errorText)")
        #expect(fixed.outputText.contains("a.gpg: encrypted to"))
        #expect(!fixed.outputText.contains("uncommitted"), "\(fixed.outputText)")
        #expect(try coffer.uncommitted() == "")
        #expect(try coffer.commitCount() == before + 1)
        #expect(try coffer.run(["fsck"]).status == 0)
    }

    @Test("mv and cp into a folder whose recipient key is missing change nothing")
    func transferToAnUnusableFolderChangesNothing() throws {
        let coffer = try InstalledAsPass(entries: [
            "x": "x-secret\n", "folder/y": "y-secret\n", "folder/z": "z-secret\n",
        ])
        let stranger = coffer.sandbox.keys[2].fingerprint
        try coffer.check(["init", "-p", "team", stranger])
        try coffer.sandbox.check(["gpg", "--batch", "--yes", "--delete-secret-and-public-key", stranger])
        let head = try coffer.git(["rev-parse", "HEAD"])
        let listing = try coffer.sandbox.check(["find", coffer.store, "-not", "-path", "*/.git*"]).outputText
        for arguments in [
            ["mv", "x", "team/x"], ["cp", "x", "team/x"], ["mv", "folder", "team/"],
            ["cp", "folder", "team/"],
            ["mv", "-f", "folder/y", "team/y"],
        ] {
            let result = try coffer.run(arguments)
            #expect(result.status == 1, "\(arguments)")
            #expect(result.errorText.contains(stranger), "\(arguments): \(result.errorText)")
            #expect(try coffer.git(["rev-parse", "HEAD"]) == head, "\(arguments)")
            #expect(try coffer.uncommitted() == "", "\(arguments)")
            let now = try coffer.sandbox.check(["find", coffer.store, "-not", "-path", "*/.git*"]).outputText
            #expect(now == listing, "\(arguments)")
        }
        #expect(try coffer.decrypted("x") == "x-secret\n")
        #expect(try coffer.decrypted("folder/y") == "y-secret\n")
    }

    @Test("Name parts of up to 251 bytes can be written, moved and re-encrypted")
    func longNameParts() throws {
        let coffer = try InstalledAsPass()
        for length in [226, 240, 251] {
            // "é" is two bytes.
            let name = "long/" + String(repeating: "n", count: length - 2) + "é"
            try coffer.check(["insert", "-m", name], input: "\(length)\n")
            #expect(try coffer.decrypted(name) == "\(length)\n")
        }
        try coffer.check(["init", coffer.sandbox.keys[0].fingerprint, coffer.sandbox.keys[1].fingerprint])
        #expect(try coffer.uncommitted() == "")
        #expect(try coffer.lastCommit().hasPrefix("Reencrypt password store using new GPG id"))
        let name = "long/" + String(repeating: "n", count: 249) + "é"  // 251 bytes
        try coffer.check(["mv", name, "moved/" + String(repeating: "m", count: 251)])
        #expect(try coffer.uncommitted() == "")
        let leftovers = try coffer.sandbox.check(["find", coffer.store, "-name", "*coffer-tmp*"]).outputText
        #expect(leftovers.isEmpty)
    }

    @Test("Exit statuses: clone of nothing, a failing git command, mv and cp onto themselves")
    func exitStatuses() throws {
        let coffer = try InstalledAsPass(entries: ["x": "x\n", "d/y": "y\n"])
        let clone = try coffer.run(
            [
                "clone", "file://" + coffer.sandbox.directory + "/missing.git", "--path",
                coffer.sandbox.directory + "/cloned",
            ])
        #expect(clone.status != 0)
        #expect(clone.errorText.contains("git clone failed"), "\(clone.errorText)")

        let git = try coffer.run(["git", "rev-parse", "--verify", "--quiet", "no-such-branch"])
        #expect(git.status == 1)
        let gitStatus = try coffer.run(["git", "status", "--short"])
        #expect(gitStatus.status == 0)

        let head = try coffer.git(["rev-parse", "HEAD"])
        for (arguments, message) in [
            (["mv", "-f", "x", "x"], "are the same file"), (["cp", "-f", "x", "x"], "are the same file"),
            (["mv", "-f", "d/y", "d/"], "are the same file"), (["cp", "-f", "d", "d"], "into itself"),
            (["mv", "-f", "d", "d/e/"], "subdirectory of itself"),
        ] {
            let result = try coffer.run(arguments)
            #expect(result.status == 1, "\(arguments)")
            #expect(result.errorText.contains(message), "\(arguments): \(result.errorText)")
            #expect(try coffer.decrypted("x") == "x\n")
            #expect(try coffer.decrypted("d/y") == "y\n")
        }
        #expect(try coffer.git(["rev-parse", "HEAD"]) == head)
        // Only the folder mv's `mkdir -p` makes first, as with pass.
        let left = try coffer.sandbox.check(["find", coffer.store + "/d", "-mindepth", "1"]).outputText
        #expect(
            left.split(separator: "\n").map(String.init).sorted() == [
                coffer.store + "/d/e", coffer.store + "/d/y.gpg",
            ])
    }

    @Test("generate --in-place refuses an entry that holds a kept merge conflict")
    func generateInPlaceRefusesAConflict() throws {
        let coffer = try InstalledAsPass()
        let conflicted = "<<<<<<< ours\nold-mine\n=======\nold-theirs\n>>>>>>> theirs\nlogin: me\n"
        try coffer.insert("site", conflicted)
        let result = try coffer.run(["generate", "--in-place", "site"])
        #expect(result.status == 1)
        #expect(result.errorText.contains("merge conflict"), "\(result.errorText)")
        #expect(try coffer.decrypted("site") == conflicted)
        #expect(try coffer.run(["fsck"]).outputText.contains("site.gpg: holds a merge conflict"))
    }

    @Test("EDITOR=: and EDITOR with shell syntax run as pass and git run them")
    func editorThroughTheShell() throws {
        let coffer = try InstalledAsPass(entries: ["x": "x\n"])
        let unchanged = try coffer.run(["edit", "x"], environment: ["EDITOR": ":"])
        #expect(unchanged.status == 1)
        #expect(unchanged.errorText == "Password unchanged.")
        let notSaved = try coffer.run(["edit", "new"], environment: ["EDITOR": ":"])
        #expect(notSaved.errorText == "New password not saved.")
        let quoted = try coffer.run(
            ["edit", "x"],
            environment: ["EDITOR": "sh -c 'printf \"%s\\n\" \"edited by sh\" > \"$1\"' editor"])
        #expect(quoted.status == 0, "\(quoted.errorText)")
        #expect(try coffer.decrypted("x") == "edited by sh\n")
        #expect(try coffer.uncommitted() == "")
    }

    @Test("history follows a move that re-encrypted the entry for other recipients")
    func historyFollowsReencryptingMoves() throws {
        let coffer = try InstalledAsPass()
        try coffer.insert("a b/ü", "first\n")
        try coffer.insert("a b/ü", "second\n")
        try coffer.check(["init", "-p", "team", coffer.sandbox.keys[1].fingerprint])
        try coffer.check(["mv", "a b/ü", "team/moved"])
        let history = try coffer.check(["history", "team/moved"]).outputText.split(separator: "\n")
        #expect(history.count == 3, "\(history)")
        #expect(history.first?.hasSuffix("Rename a b/ü to team/moved.") == true)
        let first = String(history.last!.split(separator: " ")[0])
        #expect(try coffer.check(["show", "--revision", first, "team/moved"]).outputText == "first")
    }
}
