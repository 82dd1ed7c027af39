import Coffer
import CofferTestSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// coffer as many people run it: installed only as `pass` (a link in a folder of its own), called by
/// its absolute path, with `PATH` holding nothing but the system's packages (`/usr/bin:/bin`), so a
/// step that starts coffer again by name would find Debian's pass, or nothing.
struct InstalledAsPass {
    let sandbox: GPGSandbox
    /// The `pass` link to the coffer under test.
    let program: String

    /// A sandbox with a store for the first test key; a git store unless `git` is false.
    init(git: Bool = true) throws {
        sandbox = try GPGSandbox()
        let bin = sandbox.directory + "/installed"
        mkdir(bin, 0o755)
        program = bin + "/pass"
        guard symlink(try CofferBinary.path(), program) == 0 else {
            throw SandboxError("cannot link \(program)")
        }
        try check(["init", sandbox.keys[0].fingerprint])
        if git { try check(["git", "init"]) }
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
        let output = try run(arguments, input: input, environment: extra)
        guard output.status == 0 else {
            throw SandboxError(
                "pass \(arguments.joined(separator: " ")) exited \(output.status): \(output.errorText)")
        }
        return output
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
