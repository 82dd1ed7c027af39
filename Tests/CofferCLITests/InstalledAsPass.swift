import Coffer
import CofferTestSupport

/// coffer as many people run it: installed only as `pass` (a link in a folder of its own), called by
/// its absolute path, with `PATH` holding nothing but the system's packages (`/usr/bin:/bin`), so a
/// step that starts coffer again by name would find Debian's pass, or nothing.
struct InstalledAsPass {
    let sandbox: GPGSandbox
    /// The `pass` link to the coffer under test.
    let program: String

    /// A sandbox with a store for the first test key, holding `entries` (inserted in order, name and text); a
    /// git store unless `git` is false.
    init(git: Bool = true, entries: KeyValuePairs<String, String> = [:]) throws {
        sandbox = try GPGSandbox()
        let bin = sandbox.directory + "/installed"
        mkdir(bin, 0o755)
        program = bin + "/pass"
        guard symlink(try CofferBinary.path(), program) == 0 else {
            throw SandboxError("cannot link \(program)")
        }
        try check(["init", sandbox.keys[0].fingerprint])
        if git { try check(["git", "init"]) }
        for (name, text) in entries { try insert(name, text) }
    }

    /// The store's folder.
    var store: String { sandbox.storeDirectory }

    /// The environment coffer runs with: the sandbox's, with the short `PATH`.
    var environment: [String: String] {
        var environment = sandbox.environment
        environment["PATH"] = "/usr/bin:/bin"
        return environment
    }

    /// Runs the installed program with `arguments`.
    @discardableResult
    func run(_ arguments: [String], input: String = "", environment extra: [String: String] = [:]) throws
        -> ChildProcess.Output
    {
        var environment = self.environment
        for (name, value) in extra { environment[name] = value }
        return try sandbox.run([program] + arguments, input: Array(input.utf8), environment: environment)
    }

    /// Runs the installed program and throws unless it exits 0.
    @discardableResult
    func check(_ arguments: [String], input: String = "", environment extra: [String: String] = [:]) throws
        -> ChildProcess.Output
    {
        try run(arguments, input: input, environment: extra).exitedZero(
            "pass \(arguments.joined(separator: " "))")
    }

    /// Stores `text` as entry `name` (`insert -m -f`).
    func insert(_ name: String, _ text: String) throws {
        try check(["insert", "-m", "-f", name], input: text)
    }

    /// The entry decrypted by gpg itself, or `nil` when its file does not decrypt or is missing.
    func decrypted(_ name: String) throws -> String? {
        let output = try sandbox.run(["gpg", "--batch", "--quiet", "-d", store + "/" + name + ".gpg"])
        return output.status == 0 ? String(decoding: output.standardOutput, as: UTF8.self) : nil
    }

    /// Runs git in the store and returns its output without the final newline.
    @discardableResult
    func git(_ arguments: [String]) throws -> String {
        try sandbox.check(["git", "-C", store] + arguments).outputText
    }

    /// `git status --porcelain`: empty when everything is committed.
    func uncommitted() throws -> String { try git(["status", "--porcelain", "--untracked-files=all"]) }

    /// The subject of the last commit.
    func lastCommit() throws -> String { try git(["log", "-1", "--format=%s"]) }

    /// The number of commits.
    func commitCount() throws -> Int { Int(try git(["rev-list", "--count", "HEAD"])) ?? -1 }
}

/// Two clones of one bare repository, with coffer installed only as `pass` and run by absolute path with
/// `PATH=/usr/bin:/bin`, so that nothing (git's merge driver least of all) can find it by name.
struct SyncClones {
    let installed: InstalledAsPass
    let remote: String
    let one: String
    let two: String

    var sandbox: GPGSandbox { installed.sandbox }

    /// A first clone made by coffer with `first` (name, text) entries, pushed, and a second clone of it.
    init(entries: [(String, String)]) throws {
        installed = try InstalledAsPass(git: false)
        remote = installed.sandbox.directory + "/remote.git"
        one = installed.sandbox.directory + "/one"
        two = installed.sandbox.directory + "/two"
        try sandbox.check(["git", "init", "-q", "--bare", remote])
        try check(one, ["init", sandbox.keys[0].fingerprint])
        try check(one, ["git", "init"])
        for (name, text) in entries { try insert(one, name, text) }
        try sandbox.check(["git", "-C", one, "remote", "add", "origin", "file://" + remote])
        try check(one, ["sync"])
        try check(two, ["clone", "file://" + remote, "--path", two])
    }

    /// Runs the installed `pass` on the store at `store`.
    @discardableResult
    func run(_ store: String, _ arguments: [String], input: String = "") throws -> ChildProcess.Output {
        try installed.run(arguments, input: input, environment: ["PASSWORD_STORE_DIR": store])
    }

    @discardableResult
    func check(_ store: String, _ arguments: [String], input: String = "") throws -> ChildProcess.Output {
        try installed.check(arguments, input: input, environment: ["PASSWORD_STORE_DIR": store])
    }

    func insert(_ store: String, _ name: String, _ text: String) throws {
        try check(store, ["insert", "-m", "-f", name], input: text)
    }

    func show(_ store: String, _ name: String) throws -> String {
        String(decoding: try check(store, ["show", name]).standardOutput, as: UTF8.self)
    }

    /// Stores `bytes` exactly as entry `name` (`insert -m -f`, the bytes on standard input).
    func insert(_ store: String, _ name: String, bytes: [UInt8]) throws {
        var environment = installed.environment
        environment["PASSWORD_STORE_DIR"] = store
        _ = try sandbox.run(
            [installed.program, "insert", "-m", "-f", name], input: bytes, environment: environment
        ).exitedZero("pass insert -m -f \(name)")
    }

    /// The entry's bytes as gpg decrypts them; `nil` when the file does not decrypt.
    func decrypted(_ store: String, _ name: String) throws -> [UInt8]? {
        let output = try sandbox.run(["gpg", "--batch", "--quiet", "-d", store + "/" + name + ".gpg"])
        return output.status == 0 ? output.standardOutput : nil
    }

    @discardableResult
    func git(_ store: String, _ arguments: [String]) throws -> String {
        try sandbox.check(["git", "-C", store] + arguments).outputText
    }

    /// Whether the clone is on its branch, with nothing uncommitted and no operation half done.
    func isClean(_ store: String) throws -> Bool {
        try git(store, ["status", "--porcelain"]).isEmpty
            && (try? git(store, ["symbolic-ref", "-q", "HEAD"])) == "refs/heads/main"
            && !TestFiles.exists(store + "/.git/coffer-sync")
            && !TestFiles.exists(store + "/.git/rebase-merge")
            && !TestFiles.exists(store + "/.git/MERGE_HEAD")
    }

    /// The encryption subkey ids an entry is encrypted to, sorted.
    func keyIDs(_ store: String, _ name: String) throws -> [String] {
        let packets = try sandbox.run(["gpg", "--batch", "--list-packets", store + "/" + name + ".gpg"])
        return packets.outputText.split(separator: "\n").filter { $0.contains(":pubkey enc packet:") }
            .compactMap { $0.split(separator: " ").last.map(String.init) }.sorted()
    }

    /// The fingerprints of the sandbox's three keys.
    var fingerprints: (String, String, String) {
        (sandbox.keys[0].fingerprint, sandbox.keys[1].fingerprint, sandbox.keys[2].fingerprint)
    }

    /// The encryption subkey id of test key `index`.
    func subkeyID(_ index: Int) throws -> String {
        let listing = try sandbox.check([
            "gpg", "--batch", "--with-colons", "--list-keys", sandbox.keys[index].fingerprint,
        ])
        let line = listing.outputText.split(separator: "\n").first { $0.hasPrefix("sub:") }
        return line.map { String($0.split(separator: ":", omittingEmptySubsequences: false)[4]) } ?? ""
    }

    /// Starts `sync` in `store` with the git hook `hook` hanging, waits until `reached` says the sync got
    /// there (at most 30 seconds), kills it with its whole process group, and takes the hook away.
    func killSync(_ store: String, hangingIn hook: String, once reached: () -> Bool) throws {
        let hooks = sandbox.directory + "/hooks"
        mkdir(hooks, 0o755)
        try TestFiles.write("#!/bin/sh\nexec sleep 30\n", to: hooks + "/" + hook, mode: 0o755)
        try git(store, ["config", "core.hooksPath", hooks])
        var environment = installed.environment
        environment["PASSWORD_STORE_DIR"] = store
        let pid = try TestProcess.start([installed.program, "sync"], environment: environment)
        let deadline = TestProcess.monotonicSeconds() + 30
        while !reached() && TestProcess.monotonicSeconds() < deadline { usleep(20_000) }
        usleep(300_000)
        kill(-pid, SIGKILL)
        TestProcess.waitFor(pid)
        try git(store, ["config", "--unset", "core.hooksPath"])
    }
}

/// Each finding of the sync review, reproduced: every write survives, nothing is pushed half done, and
/// the exit status tells the truth.
