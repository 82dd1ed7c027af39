import Coffer
import CofferTestSupport
import Testing

/// Changes of several files are whole or absent, the commit included, whatever stops them: a hook that
/// refuses the commit, or the process killed between writing and committing. Run as people run coffer:
/// installed only as `pass`, by absolute path, with a short `PATH`.
@Suite("a change of several files is whole or absent")
struct WholeChangeTests {
    /// A store for key 0 and key 1 with entries under `team/`, committed.
    static func team() throws -> InstalledAsPass {
        let coffer = try InstalledAsPass(entries: ["top": "t\n"])
        let keys = coffer.sandbox.keys
        try coffer.check(["init", "-p", "team", keys[0].fingerprint, keys[1].fingerprint])
        for index in 0..<4 { try coffer.insert("team/entry\(index)", "secret \(index)\n") }
        return coffer
    }

    /// The bytes of every file of the work tree but `.git`, by path.
    static func files(_ coffer: InstalledAsPass) throws -> [String: [UInt8]] {
        let listed = try coffer.sandbox.check([
            "find", coffer.store, "-path", coffer.store + "/.git", "-prune", "-o", "-type", "f", "-print",
        ])
        var files: [String: [UInt8]] = [:]
        for path in listed.outputText.split(separator: "\n") {
            files[String(path)] = try coffer.sandbox.read(String(path))
        }
        return files
    }

    static let refusingHook = "#!/bin/sh\necho refused by policy >&2\nexit 1\n"
    /// A hook that kills the coffer that runs git (the hook's grandparent), as SIGKILL would mid-change.
    static let killingHook = TestFiles.killingHook

    static let changes: [(String, @Sendable (InstalledAsPass) -> [String])] = [
        ("recipients rm", { ["recipients", "rm", "-p", "team", $0.sandbox.keys[1].fingerprint] }),
        ("init -p", { ["init", "-p", "team", $0.sandbox.keys[0].fingerprint] }),
        ("mv of a folder", { _ in ["mv", "team", "moved"] }),
        ("rm -r", { _ in ["rm", "-r", "-f", "team"] }),
    ]

    /// Runs the change `arguments` on a fresh ``team()`` store with `hook` as its pre-commit hook; returns
    /// the store, its files and HEAD before, and what the change printed.
    static func run(_ arguments: (InstalledAsPass) -> [String], hook: String) throws -> (
        InstalledAsPass, [String: [UInt8]], String, ChildProcess.Output
    ) {
        let coffer = try team()
        let before = try files(coffer)
        let head = try coffer.git(["rev-parse", "HEAD"])
        try TestFiles.write(hook, to: coffer.store + "/.git/hooks/pre-commit", mode: 0o755)
        return (coffer, before, head, try coffer.run(arguments(coffer)))
    }

    @Test("A commit a hook refuses: nothing changed, nothing staged, one line that says so")
    func refusedCommit() throws {
        for (label, arguments) in Self.changes {
            let (coffer, before, head, result) = try Self.run(arguments, hook: Self.refusingHook)
            #expect(result.status != 0, "\(label)")
            #expect(result.errorText.contains("nothing was changed"), "\(label): \(result.errorText)")
            #expect(try Self.files(coffer) == before, "\(label): the files are as they were")
            #expect(try coffer.git(["rev-parse", "HEAD"]) == head, "\(label)")
            #expect(try coffer.uncommitted() == "", "\(label)")
            // The removed recipient still reads only what it could before, and the rest works.
            unlink(coffer.store + "/.git/hooks/pre-commit")
            try coffer.check(arguments(coffer))
            #expect(try coffer.uncommitted() == "", "\(label)")
        }
    }

    @Test("A change killed before its commit is put back by the next write, which says so")
    func killedChange() throws {
        for (label, arguments) in Self.changes {
            let (coffer, before, head, killed) = try Self.run(arguments, hook: Self.killingHook)
            #expect(killed.status != 0, "\(label)")
            unlink(coffer.store + "/.git/hooks/pre-commit")
            let next = try coffer.run(["insert", "-m", "-f", "other"], input: "o\n")
            #expect(next.status == 0, "\(label): \(next.errorText)")
            #expect(
                next.errorText.contains("Undid a change that an interrupted command left half done"),
                "\(label): \(next.errorText)")
            var after = try Self.files(coffer)
            after[coffer.store + "/other.gpg"] = nil
            #expect(after == before, "\(label): the files are as they were")
            #expect(try coffer.git(["rev-parse", "HEAD~1"]) == head, "\(label)")
            #expect(try coffer.uncommitted() == "", "\(label)")
        }
    }

    @Test("A killed change is put back when the next command spells the store's path another way")
    func killedChangeOtherSpelling() throws {
        for spelling in ["a link to it", "a trailing /.", "a .. in it"] {
            let (coffer, before, head, killed) = try Self.run(
                { _ in ["mv", "team", "moved"] }, hook: Self.killingHook)
            #expect(killed.status != 0, "\(spelling)")
            unlink(coffer.store + "/.git/hooks/pre-commit")
            let link = coffer.sandbox.directory + "/store-link"
            symlink(coffer.store, link)
            let spelled =
                switch spelling {
                case "a link to it": link
                case "a trailing /.": coffer.store + "/."
                default: coffer.store + "/../" + coffer.store.lastPathPart
                }
            let next = try coffer.run(["ls"], environment: ["PASSWORD_STORE_DIR": spelled])
            #expect(next.status == 0, "\(spelling): \(next.errorText)")
            #expect(next.errorText.contains("Undid a change"), "\(spelling): \(next.errorText)")
            #expect(try Self.files(coffer) == before, "\(spelling): the files are as they were")
            #expect(try coffer.git(["rev-parse", "HEAD"]) == head, "\(spelling)")
            #expect(try coffer.uncommitted() == "", "\(spelling)")
        }
    }

    @Test("A change killed under a spelling with letters beyond ASCII is put back under the plain one")
    func killedUnderUnicodeSpelling() throws {
        let coffer = try Self.team()
        let before = try Self.files(coffer)
        let head = try coffer.git(["rev-parse", "HEAD"])
        let link = coffer.sandbox.directory + "/trésor ünï"
        symlink(coffer.store, link)
        try TestFiles.write(Self.killingHook, to: coffer.store + "/.git/hooks/pre-commit", mode: 0o755)
        let killed = try coffer.run(["mv", "team", "moved"], environment: ["PASSWORD_STORE_DIR": link])
        #expect(killed.status != 0)
        unlink(coffer.store + "/.git/hooks/pre-commit")
        let next = try coffer.run(["ls"])
        #expect(next.errorText.contains("Undid a change"), "\(next.errorText)")
        #expect(try Self.files(coffer) == before, "the files are as they were")
        #expect(try coffer.git(["rev-parse", "HEAD"]) == head)
        #expect(try coffer.uncommitted() == "")
    }

    @Test("A killed cp of a folder holding a link and an empty folder leaves no folder or link behind")
    func killedCopyOfLinks() throws {
        let coffer = try InstalledAsPass(entries: ["keep": "k\n", "site/inner/entry": "e\n"])
        try coffer.sandbox.check(["mkdir", "-p", coffer.store + "/links/empty"])
        symlink("../site/inner/entry.gpg", coffer.store + "/links/entry.gpg")
        try coffer.sandbox.check(["mkdir", "-p", coffer.store + "/b"])
        try coffer.git(["add", "links"])
        try coffer.git(["commit", "-q", "-m", "A link."])
        let tree = {
            try coffer.sandbox.check(["find", coffer.store, "-path", "*/.git", "-prune", "-o", "-print"])
                .outputText
        }
        let before = try tree()
        try TestFiles.write(Self.killingHook, to: coffer.store + "/.git/hooks/pre-commit", mode: 0o755)
        for arguments in [["cp", "-f", "links", "b"], ["mv", "-f", "links", "b"]] {
            #expect(try coffer.run(arguments).status != 0, "\(arguments)")
            let next = try coffer.run(["ls"], environment: ["PATH": "/usr/bin:/bin"])
            #expect(next.status == 0, "\(next.errorText)")
            let after = try tree()
            #expect(after == before, "\(arguments): the tree is as it was: \(after)")
            #expect(try coffer.uncommitted() == "", "\(arguments)")
        }
    }

    /// Fuzzer seeds 12212971275084182636 and 7092323767408090391: the commit of a cp or mv into a folder
    /// adds the folder, as pass's does, which stages entries there that git did not track; the undoing
    /// of a killed one left them staged.
    @Test("A killed cp or mv into a folder leaves its untracked entries untracked")
    func killedTransferKeepsUntracked() throws {
        let coffer = try InstalledAsPass(entries: ["home": "h\n", "dest/kept": "k\n"])
        // An entry git does not track (a write killed before its commit, undone by pass's rules).
        try coffer.sandbox.check(["cp", coffer.store + "/dest/kept.gpg", coffer.store + "/dest/loose.gpg"])
        let status = try coffer.git(["status", "--porcelain"])
        #expect(status == "?? dest/loose.gpg", "\(status)")
        try TestFiles.write(Self.killingHook, to: coffer.store + "/.git/hooks/pre-commit", mode: 0o755)
        for arguments in [["cp", "home", "dest"], ["mv", "-f", "home", "dest"]] {
            #expect(try coffer.run(arguments).status != 0, "\(arguments)")
            let next = try coffer.run(["ls"], environment: ["PATH": "/usr/bin:/bin"])
            #expect(next.errorText.contains("Undid a change"), "\(arguments): \(next.errorText)")
            #expect(try coffer.git(["status", "--porcelain"]) == status, "\(arguments)")
            #expect(
                TestFiles.exists(coffer.store + "/home.gpg")
                    && !TestFiles.exists(coffer.store + "/dest/home.gpg"))
        }
    }

    @Test("fsck --fix puts back a killed single write too; rm -f then finds a clean index")
    func killedWriteAndFsck() throws {
        let coffer = try InstalledAsPass(entries: ["keep": "k\n"])
        try TestFiles.write(Self.killingHook, to: coffer.store + "/.git/hooks/pre-commit", mode: 0o755)
        #expect(try coffer.run(["insert", "-m", "new"], input: "n\n").status != 0)
        unlink(coffer.store + "/.git/hooks/pre-commit")
        #expect(try coffer.uncommitted() != "", "the kill left the entry staged")
        let fixed = try coffer.run(["fsck", "--fix"])
        #expect(fixed.status == 0, "\(fixed.outputText) \(fixed.errorText)")
        #expect(try coffer.uncommitted() == "")
        #expect(!TestFiles.exists(coffer.store + "/new.gpg"))
        #expect(try coffer.run(["rm", "-f", "new"]).status != 0, "nothing to remove")
        #expect(try coffer.uncommitted() == "")
    }
}

/// Writes on a full disk: a store on a tmpfs of a few MiB, filled up to leave a growing amount of room,
/// so that each command runs out of space at another step.
@Suite(
    "a full disk leaves every change whole or absent",
    .enabled(if: getuid() == 0, "mounting a tmpfs needs root"))
struct FullDiskTests {
    @Test("Every writing command, out of room at each step: exit 0 with the change whole, or nothing changed")
    func fullDisk() throws {
        let sandbox = try GPGSandbox()
        let mount = sandbox.directory + "/small"
        try sandbox.check(["mkdir", "-p", mount])
        try sandbox.check(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", mount])
        defer { _ = try? sandbox.run(["umount", "-l", mount]) }
        let store = mount + "/store"
        var environment = sandbox.environment
        environment["PASSWORD_STORE_DIR"] = store
        environment["PATH"] = "/usr/bin:/bin"
        let program = try CofferBinary.path()
        // An editor outside the small disk: edit's plaintext lives under /dev/shm, its result on the tmpfs.
        let editor = sandbox.directory + "/editor"
        try "#!/bin/sh\necho edited >> \"$1\"\n".write(toFile: editor)
        try sandbox.check(["chmod", "755", editor])
        environment["EDITOR"] = editor
        func run(
            _ arguments: [String], input: String = "", in folder: String? = nil
        ) throws -> ChildProcess.Output {
            var used = environment
            if let folder { used["PASSWORD_STORE_DIR"] = folder }
            return try sandbox.run([program] + arguments, input: Array(input.utf8), environment: used)
        }
        func git(_ arguments: [String]) throws -> String {
            try sandbox.check(["git", "-C", store] + arguments).outputText
        }
        func files() throws -> [String: [UInt8]] {
            let listed = try sandbox.check([
                "find", store, "-path", store + "/.git", "-prune", "-o", "-type", "f", "-print",
            ])
            var found: [String: [UInt8]] = [:]
            for path in listed.outputText.split(separator: "\n") {
                found[String(path)] = try sandbox.read(String(path))
            }
            return found
        }
        let keys = sandbox.keys
        _ = try run(["init", keys[0].fingerprint]).exitedZero("init")
        _ = try run(["git", "init"]).exitedZero("git init")
        _ = try run(["init", "-p", "team", keys[0].fingerprint, keys[1].fingerprint]).exitedZero("init -p")
        for index in 0..<6 {
            _ = try run(["insert", "-m", "team/e\(index)"], input: "secret \(index)\n").exitedZero("insert")
        }
        let hotp = "otpauth://hotp/Bank:me?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&counter=0"
        _ = try run(["insert", "-m", "team/bank"], input: "pw\n\(hotp)\n").exitedZero("insert bank")
        // A peer on a roomy disk, sharing a remote with the store, for sync.
        let remote = sandbox.directory + "/remote.git"
        let peer = sandbox.directory + "/peer"
        try sandbox.check(["git", "init", "-q", "--bare", remote])
        _ = try run(["git", "remote", "add", "origin", remote]).exitedZero("remote add")
        _ = try run(["git", "push", "-q", "-u", "origin", "HEAD"]).exitedZero("push")
        try sandbox.check(["git", "clone", "-q", remote, peer])
        var pushed = 0
        // Before each sync: one commit on each side, so that sync fetches, merges and pushes.
        func diverge() throws {
            pushed += 1
            _ = try run(["git", "pull", "-q", "--ff-only"], in: peer).exitedZero("peer pull")
            _ = try run(["insert", "-m", "team/peer\(pushed)"], input: "peer\n", in: peer).exitedZero("peer")
            _ = try run(["git", "push", "-q"], in: peer).exitedZero("peer push")
            _ = try run(["insert", "-m", "team/local\(pushed)"], input: "local\n").exitedZero("local")
        }
        let commands: [(arguments: [String], input: String, prepare: (() throws -> Void)?)] = [
            (["recipients", "rm", "-p", "team", keys[1].fingerprint], "", nil),
            (["init", "-p", "team", keys[0].fingerprint, keys[2].fingerprint], "", nil),
            (["mv", "team", "moved"], "", nil),
            (["cp", "team", "copied"], "", nil),
            (["rm", "-r", "-f", "team"], "", nil),
            (["insert", "-m", "-f", "team/e0"], "changed\n", nil),
            (["generate", "-f", "team/e1", "24"], "", nil),
            (["generate", "-i", "team/e2", "24"], "", nil),
            (["edit", "team/e3"], "", nil),
            (["otp", "team/bank"], "", nil),
            (["otp", "append", "-f", "team/e4"], hotp + "\n", nil),
            (["sync"], "", diverge),
        ]
        // Per command, a letter per room tried: w(hole), m(ade but not committed), a(bsent).
        var outcomes: [String: String] = [:]
        for (command, input, prepare) in commands {
            // Room from none to plenty, so the command fails at each of its steps in turn.
            for room in [0, 1, 2, 4, 8, 16, 32, 64, 128] {
                try prepare?()
                let before = try files()
                let head = try git(["rev-parse", "HEAD"])
                _ = try sandbox.run([
                    "sh", "-c",
                    "dd if=/dev/zero of=\(mount)/filler bs=4k 2>/dev/null; truncate -s -\(room * 4)k \(mount)/filler",
                ])
                let result = try run(command, input: input)
                unlink(mount + "/filler")
                let label =
                    "\(command.joined(separator: " ")) with \(room * 4) KiB free: exit \(result.status), "
                    + result.errorText
                if result.status == 0 {
                    outcomes[command.joined(separator: " "), default: ""] += "w "
                    #expect(try git(["status", "--porcelain"]) == "", "\(label): committed")
                    #expect(try git(["rev-parse", "HEAD"]) != head, "\(label)")
                } else if result.errorText.contains("the change is made but not committed") {
                    // Single writes fail as pass does: the one change made, nothing staged.
                    outcomes[command.joined(separator: " "), default: ""] += "m "
                    #expect(["rm", "insert", "generate", "edit", "otp"].contains(command[0]), "\(label)")
                    let staged = try sandbox.run(["git", "-C", store, "diff", "--cached", "--quiet"])
                    #expect(staged.status == 0, "\(label): nothing staged")
                } else {
                    outcomes[command.joined(separator: " "), default: ""] += "a "
                    // One complaint, in pass's words (mv's, gpg's, git's) or coffer's.
                    #expect(!result.errorText.isEmpty, "\(label)")
                    // A counter not saved hands out no code: the next otp would hand it out again.
                    if command[0] == "otp" { #expect(result.outputText.isEmpty, "\(label)") }
                    // With room again, the next write (or fsck --fix) puts back whatever is left half done.
                    _ = try run(["fsck", "--fix"])
                    #expect(try files() == before, "\(label): the files are as they were")
                    #expect(try git(["rev-parse", "HEAD"]) == head, "\(label)")
                    let status = try git(["status", "--porcelain"])
                    #expect(status == "", "\(label): nothing staged: \(status)")
                }
                // Every entry still decrypts: nothing truncated, nothing half-written.
                for (path, _) in try files() where path.hasSuffix(".gpg") {
                    #expect(
                        try sandbox.run(["gpg", "--batch", "--quiet", "-d", path]).status == 0,
                        "\(label): \(path)")
                }
                // Back to the store as it was, for the next step.
                if try git(["rev-parse", "HEAD"]) != head || !(try git(["status", "--porcelain"])).isEmpty {
                    try sandbox.check(["git", "-C", store, "reset", "--quiet", "--hard", head])
                    try sandbox.check(["git", "-C", store, "clean", "-q", "-f", "-d"])
                }
            }
        }
        // Each command met the full disk at some step, and had room enough at another.
        for (command, seen) in outcomes {
            #expect(seen.contains("w") && (seen.contains("a") || seen.contains("m")), "\(command): \(seen)")
        }
        #expect(outcomes.count == commands.count)
    }
}

/// A journal is coffer's own record: one planted by someone else, or naming files outside the store, puts
/// nothing back.
@Suite("a planted journal changes nothing")
struct PlantedJournalTests {
    /// A manifest that names `path` as missing (so putting it back would remove it) and `target` as a file
    /// to restore from copy 0.
    static func manifest(missing path: String, restoring target: String) -> [UInt8] {
        func hex(_ text: String) -> String {
            text.utf8.map {
                String($0 >> 4, radix: 16, uppercase: true) + String($0 & 15, radix: 16, uppercase: true)
            }
            .joined()
        }
        return Array("head -\nmissing 1 0 \(hex(path))\nfile 0 644 \(hex(target))\n".utf8)
    }

    @Test("A journal naming files outside the store, or one in a store without git, touches nothing")
    func plantedManifests() throws {
        // A git store: the journal's folder is coffer's own, but its lines name files outside the store.
        let coffer = try InstalledAsPass(entries: ["keep": "k\n"])
        let outside = coffer.sandbox.directory + "/outside.txt"
        let victim = coffer.sandbox.directory + "/victim.txt"
        try TestFiles.write("keep me\n", to: outside)
        try TestFiles.write("mine\n", to: victim)
        let journal = coffer.store + "/.git/coffer-journal"
        try coffer.sandbox.check(["mkdir", "-m", "700", journal])
        try TestFiles.write("attacker text\n", to: journal + "/0")
        try TestFiles.write(Self.manifest(missing: outside, restoring: victim), to: journal + "/manifest")
        try coffer.check(["ls"])
        #expect(String(decoding: try coffer.sandbox.read(outside), as: UTF8.self) == "keep me\n")
        #expect(String(decoding: try coffer.sandbox.read(victim), as: UTF8.self) == "mine\n")
        #expect(!TestFiles.exists(journal), "the journal is gone")

        // A store without git, whose folder someone else may write (a file-sync tool): a journal in it is
        // not coffer's.
        let plain = try InstalledAsPass(git: false, entries: ["keep": "k\n"])
        let planted = plain.store + "/.coffer-journal"
        let home = plain.sandbox.directory + "/home/.profile"
        try TestFiles.write("profile\n", to: home)
        try plain.sandbox.check(["mkdir", "-m", "700", planted])
        try TestFiles.write("attacker\n", to: planted + "/0")
        try TestFiles.write(
            Self.manifest(missing: plain.store + "/keep.gpg", restoring: home), to: planted + "/manifest")
        try plain.insert("other", "o\n")
        #expect(TestFiles.exists(plain.store + "/keep.gpg"))
        #expect(String(decoding: try plain.sandbox.read(home), as: UTF8.self) == "profile\n")
        // And a name like the journal's is an entry like any other, kept after the change that makes it.
        try plain.insert(".coffer-journal/y", "three\n")
        try plain.check(["cp", "keep", ".coffer-journal/x"])
        #expect(try plain.check(["show", ".coffer-journal/y"]).outputText == "three")
        #expect(try plain.check(["show", ".coffer-journal/x"]).outputText == "k")
    }

    /// Red team (another local user): with `XDG_CACHE_HOME` in a folder another user owns, they moved the
    /// user's own journal away during a change and put it back later, and the next command rolled the
    /// store back; a link they flipped there put their own journal back.
    @Test(
        "A journal under a cache folder another user may write is never put back, and none is made there",
        .enabled(if: geteuid() == 0))
    func journalInAFolderOthersWrite() throws {
        let plain = try InstalledAsPass(git: false, entries: ["keep": "k\n"])
        let shared = plain.sandbox.directory + "/shared-cache"
        try plain.sandbox.check(["mkdir", "-m", "777", shared])
        #expect(chown(shared, 65534, 65534) == 0)
        let root = FileSystem.canonicalPath(plain.store)
        let digest = try plain.sandbox.check(["sh", "-c", "printf %s \"$0\" | sha1sum", root]).outputText
        let journal = shared + "/coffer/journal-" + String(digest.prefix(40)).uppercased()
        try plain.sandbox.check(["mkdir", "-p", "-m", "700", journal])
        chmod(shared + "/coffer", 0o700)
        try TestFiles.write("k2\n", to: journal + "/0")
        try TestFiles.write(
            Self.manifest(missing: plain.store + "/keep.gpg", restoring: plain.store + "/other.gpg"),
            to: journal + "/manifest")
        let environment = ["XDG_CACHE_HOME": shared]
        let listed = try plain.run(["ls"], environment: environment)
        #expect(listed.status == 0, "\(listed.errorText)")
        #expect(!listed.errorText.contains("Undid"), "\(listed.errorText)")
        #expect(TestFiles.exists(plain.store + "/keep.gpg"), "the planted journal was put back")
        #expect(!TestFiles.exists(plain.store + "/other.gpg"))
        // A change of several files wants a journal: refused, with the reason, and nothing changed.
        let copied = try plain.run(["cp", "keep", "copy"], environment: environment)
        #expect(copied.status == 1)
        #expect(copied.errorText.contains("XDG_CACHE_HOME"), "\(copied.errorText)")
        #expect(!TestFiles.exists(plain.store + "/copy.gpg"))
    }
}
