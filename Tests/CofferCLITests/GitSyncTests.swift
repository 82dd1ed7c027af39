import Coffer
import CofferTestSupport
import Testing

/// Three clones of one bare repository (all local), synced with `coffer sync` and its merge driver.
@Suite("git sync and the entry merge driver")
struct GitSyncTests {
    let sandbox: GPGSandbox
    let coffer: String
    let remote: String

    init() throws {
        sandbox = try GPGSandbox()
        coffer = try CofferBinary.path()
        remote = sandbox.directory + "/remote.git"
        try sandbox.check(["git", "init", "-q", "--bare", remote])
    }

    /// Runs coffer on the store at `store`, with coffer's folder on `PATH` for the merge driver.
    @discardableResult
    func run(_ store: String, _ arguments: [String], input: String = "") throws -> ChildProcess.Output {
        let folder = String(coffer[..<coffer.lastIndex(of: "/")!])
        return try sandbox.run(
            [coffer] + arguments, input: Array(input.utf8),
            environment: [
                "PASSWORD_STORE_DIR": store, "PATH": folder + ":" + (sandbox.environment["PATH"] ?? ""),
            ])
    }

    @discardableResult
    func check(_ store: String, _ arguments: [String], input: String = "") throws -> ChildProcess.Output {
        let output = try run(store, arguments, input: input)
        #expect(output.status == 0, "coffer \(arguments.joined(separator: " ")): \(output.errorText)")
        return output
    }

    /// `coffer sync` in each store, in this order.
    func sync(_ stores: String...) throws {
        for store in stores { try check(store, ["sync"]) }
    }

    func show(_ store: String, _ name: String) throws -> String {
        try run(store, ["show", name]).outputText
    }

    /// The first clone: a store made by coffer and pushed.
    func makeFirstClone() throws -> String {
        let first = sandbox.directory + "/one"
        try check(first, ["init", sandbox.keys[0].email])
        try check(first, ["git", "init"])
        try check(
            first, ["insert", "-m", "site"], input: "MARK-pw\nlogin: MARK-alice\nurl: https://MARK-a\n")
        try sandbox.check(["git", "-C", first, "remote", "add", "origin", "file://" + remote])
        try check(first, ["sync"])
        return first
    }

    func clone(_ name: String) throws -> String {
        let path = sandbox.directory + "/" + name
        try check(path, ["clone", "file://" + remote, "--path", path])
        return path
    }

    /// The first clone (``makeFirstClone()``) and a clone of its remote, `two`.
    func makeTwoClones() throws -> (String, String) {
        let one = try makeFirstClone()
        return (one, try clone("two"))
    }

    /// Overwrites `site` in `store` with the password `MARK-pw` and the marked login and URL.
    func writeSite(_ store: String, login: String, url: String) throws {
        try check(
            store, ["insert", "-m", "-f", "site"],
            input: "MARK-pw\nlogin: MARK-\(login)\nurl: https://MARK-\(url)\n")
    }

    /// Every byte of every file in the sandbox and every git object, searched for the test's plaintext.
    func expectNoPlaintextAnywhere(_ stores: [String]) throws {
        let found = try sandbox.run(["grep", "-rl", "MARK-", sandbox.directory]).outputText
        #expect(found.isEmpty, "plaintext on disk: \(found)")
        for repository in stores.map({ $0 + "/.git" }) + [remote] {
            let objects = try sandbox.check([
                "git", "--git-dir", repository, "cat-file", "--batch-all-objects", "--batch",
            ])
            #expect(!objects.outputText.contains("MARK-"), "plaintext in a git object of \(repository)")
        }
    }

    @Test func differentFieldsMergeOnEveryClone() throws {
        let (one, two) = try makeTwoClones()
        let three = try clone("three")
        try writeSite(one, login: "bob", url: "a")
        try writeSite(two, login: "alice", url: "b")
        try check(one, ["sync"])
        let synced = try check(two, ["sync"])
        #expect(synced.outputText.contains("Changed site"))
        try sync(one, three)
        for store in [one, two, three] {
            #expect(try show(store, "site") == "MARK-pw\nlogin: MARK-bob\nurl: https://MARK-b")
        }
        try expectNoPlaintextAnywhere([one, two, three])
    }

    @Test func sameFieldIsAReportedConflictThatEditResolves() throws {
        let (one, two) = try makeTwoClones()
        try writeSite(one, login: "bob", url: "a")
        try writeSite(two, login: "carol", url: "a")
        try check(one, ["sync"])
        let conflicted = try run(two, ["sync"])
        #expect(conflicted.status == 1)
        #expect(conflicted.errorText.contains("Conflict in site"))
        let shown = try run(two, ["show", "site"])
        #expect(shown.outputText.contains("<<<<<<< ours"))
        #expect(shown.errorText.contains("conflict"))
        #expect(try sandbox.check(["git", "-C", two, "status", "--porcelain"]).outputText.isEmpty)

        let editor = sandbox.directory + "/resolve.sh"
        // The script spells the marker in two halves, so that the scan below does not find it in the script.
        try
            "#!/bin/sh\nm=MA; m=${m}RK-\nprintf \"${m}pw\\nlogin: ${m}carol\\nurl: https://${m}a\\n\" > \"$1\"\n"
            .write(toFile: editor)
        try sandbox.check(["chmod", "+x", editor])
        let edited = try sandbox.run(
            [coffer, "edit", "site"],
            environment: ["PASSWORD_STORE_DIR": two, "EDITOR": editor])
        #expect(edited.status == 0, "\(edited.errorText)")
        try sync(two, one)
        #expect(try show(one, "site") == "MARK-pw\nlogin: MARK-carol\nurl: https://MARK-a")
        try expectNoPlaintextAnywhere([one, two])
    }

    @Test func renameOnOneSideEditOnTheOtherKeepsBoth() throws {
        let (one, two) = try makeTwoClones()
        try check(one, ["mv", "site", "renamed/site"])
        try writeSite(two, login: "alice", url: "c")
        try sync(one, two, one)
        for store in [one, two] {
            #expect(try show(store, "renamed/site") == "MARK-pw\nlogin: MARK-alice\nurl: https://MARK-c")
            #expect(try run(store, ["show", "site"]).status == 1)
        }
        try expectNoPlaintextAnywhere([one, two])
    }

    @Test func deletionAgainstEditKeepsTheEditAndSaysSo() throws {
        let (one, two) = try makeTwoClones()
        try check(one, ["rm", "-f", "site"])
        try writeSite(two, login: "dave", url: "a")
        try check(one, ["sync"])
        let kept = try check(two, ["sync"])
        #expect(kept.outputText.contains("Kept site"))
        try check(one, ["sync"])
        #expect(try show(one, "site") == "MARK-pw\nlogin: MARK-dave\nurl: https://MARK-a")
        try expectNoPlaintextAnywhere([one, two])
    }

    @Test func cloneWorksWithPassAndGitAlone() throws {
        let (_, two) = try makeTwoClones()
        let shown = try sandbox.check(["pass", "show", "site"], environment: ["PASSWORD_STORE_DIR": two])
        #expect(shown.outputText == "MARK-pw\nlogin: MARK-alice\nurl: https://MARK-a")
        try sandbox.check(
            ["pass", "insert", "-e", "from-pass"], input: Array("MARK-x\n".utf8),
            environment: ["PASSWORD_STORE_DIR": two])
        let log = try sandbox.check(["git", "-C", two, "log", "--format=%s", "-1"]).outputText
        #expect(log == "Add given password for from-pass to store.")
        #expect(try sandbox.check(["git", "-C", two, "push", "-q"]).status == 0)
    }

    @Test func storeWithoutRemoteSaysSoAndSucceeds() throws {
        let lonely = sandbox.directory + "/lonely"
        try check(lonely, ["init", sandbox.keys[0].email])
        try check(lonely, ["git", "init"])
        let output = try check(lonely, ["sync"])
        #expect(output.outputText == "The password store has no git remote; nothing to sync.")
    }

    @Test func offlineRemoteLosesNothing() throws {
        let one = try makeFirstClone()
        try sandbox.check([
            "git", "-C", one, "remote", "set-url", "origin", "file://" + sandbox.directory + "/gone.git",
        ])
        try writeSite(one, login: "eve", url: "a")
        let output = try run(one, ["sync"])
        #expect(output.status == 1)
        #expect(output.errorText.contains("git fetch from origin failed, so nothing was changed"))
        #expect(try show(one, "site") == "MARK-pw\nlogin: MARK-eve\nurl: https://MARK-a")
    }

    @Test func historyShowRevisionAndRestoreFollowRenames() throws {
        let one = try makeFirstClone()
        try check(one, ["insert", "-m", "-f", "site"], input: "MARK-v2\n")
        try check(one, ["mv", "site", "moved"])
        let history = try check(one, ["history", "moved"]).outputText.split(separator: "\n")
        #expect(history.count == 3)
        #expect(history.first?.hasSuffix("Rename site to moved.") == true)
        #expect(history.last?.hasSuffix("Add given password for site to store.") == true)
        let firstHash = String(history.last!.split(separator: " ")[0])
        let old = try check(one, ["show", "--revision", firstHash, "moved"]).outputText
        #expect(old == "MARK-pw\nlogin: MARK-alice\nurl: https://MARK-a")
        #expect(try check(one, ["show", "-r", "HEAD~1", "moved"]).outputText == "MARK-v2")
        try check(one, ["restore", "--revision", firstHash, "moved"])
        #expect(try show(one, "moved") == "MARK-pw\nlogin: MARK-alice\nurl: https://MARK-a")
    }

    @Test func requiredSignaturesRefuseUnsignedAndAcceptSignedCommits() throws {
        let (one, two) = try makeTwoClones()
        try sandbox.check(["git", "-C", two, "config", "coffer.requiresignedcommits", "true"])
        try check(one, ["insert", "-m", "-f", "site"], input: "MARK-pw\nlogin: MARK-unsigned\n")
        try check(one, ["sync"])
        let before = try sandbox.check(["git", "-C", two, "rev-parse", "HEAD"]).outputText
        let refused = try run(two, ["sync"])
        #expect(refused.status == 1)
        #expect(refused.errorText.contains("signature does not verify"))
        #expect(try sandbox.check(["git", "-C", two, "rev-parse", "HEAD"]).outputText == before)

        // Signed from now on (pass.signcommits): the next sync takes them once the unsigned one is gone.
        try sandbox.check(["git", "-C", one, "config", "pass.signcommits", "true"])
        try sandbox.check(["git", "-C", one, "config", "user.signingkey", sandbox.keys[0].fingerprint])
        try sandbox.check(["git", "-C", one, "reset", "-q", "--hard", "HEAD~1"])
        try sandbox.check(["git", "-C", one, "push", "-q", "--force", "origin", "main"])
        try check(one, ["insert", "-m", "-f", "site"], input: "MARK-pw\nlogin: MARK-signed\n")
        let signature = try sandbox.check(["git", "-C", one, "log", "-1", "--format=%G?"]).outputText
        #expect(signature == "G")
        try sync(one, two)
        #expect(try show(two, "site") == "MARK-pw\nlogin: MARK-signed")
    }

    /// pass.signcommits read without a git process unless a config file could set it: set in a file the
    /// user's configuration includes, and under any spelling of the key, it still signs.
    @Test func signedCommitsWhereverGitReadsTheSetting() throws {
        let store = sandbox.directory + "/signed"
        try check(store, ["init", sandbox.keys[0].email])
        try check(store, ["git", "init"])
        try check(store, ["insert", "-m", "plain"], input: "pw\n")
        #expect(try sandbox.check(["git", "-C", store, "log", "-1", "--format=%G?"]).outputText == "N")
        let home = sandbox.environment["HOME"] ?? sandbox.directory
        let included = sandbox.directory + "/more.gitconfig"
        try TestFiles.write(
            "[pass]\n\tSignCommits = yes\n[user]\n\tsigningkey = \(sandbox.keys[0].fingerprint)\n",
            to: included)
        let original = TestFiles.read(home + "/.gitconfig") ?? []
        defer { try? TestFiles.write(original, to: home + "/.gitconfig") }
        try TestFiles.write(
            original + Array("[include]\n\tpath = \(included)\n".utf8), to: home + "/.gitconfig")
        try check(store, ["insert", "-m", "signed"], input: "pw\n")
        #expect(try sandbox.check(["git", "-C", store, "log", "-1", "--format=%G?"]).outputText == "G")
    }
}
