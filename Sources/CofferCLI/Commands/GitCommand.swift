import Coffer

/// `git git-command-args...`: runs git in the store, attached to the terminal, with `TMPDIR` in a
/// private folder under `/dev/shm`; `git init` also commits what is there and sets up the gpg diff.
enum GitCommand {
    /// `git`.
    static let command = Command(
        names: ["git"], usage: "git-command-args...", operands: .gitArguments,
        help: { _ in
            [
                "If the password store is a git repository, execute a git command",
                "specified by git-command-args.",
            ]
        }, passHead: "git git-command-args...", run: run)

    /// Runs the command and exits with git's status (pass exits 0 whatever git's was; scripts need to
    /// know when git failed).
    static func run(_ arguments: [String], _ invocation: Invocation) throws {
        let prefix = invocation.prefix
        if arguments.first == "init" {
            try initialize(arguments, invocation)
            return
        }
        guard let repository = invocation.store.git(for: prefix + "/") else {
            throw Exit.die(
                "Error: the password store is not a git repository. Try \"\(invocation.program) git init\".")
        }
        let folder = try SecureTemporaryFolder(
            program: invocation.program, environment: invocation.environment, warn: false)
        defer { folder.finish() }
        let status: Int32
        do {
            let pid = try ChildProcess(
                ["git", "-C", repository.directory] + arguments,
                environment: repository.environment(extra: ["TMPDIR": folder.path], literalPathspecs: false)
            ).spawn()
            status = folder.wait(for: pid)
        } catch let error as CofferError {
            throw Exit(127, "\(invocation.program): \(error.message)")
        }
        if status != 0 { throw Exit(status) }
    }

    /// `git init`, then pass's two commits and the gpg diff configuration.
    static func initialize(_ arguments: [String], _ invocation: Invocation) throws {
        let prefix = invocation.prefix
        let repository = GitRepository(directory: prefix, storeRoot: prefix)
        let status: ChildProcess.TerminationStatus
        do {
            status = try repository.runAttached(arguments)
        } catch let error as CofferError {
            standardError.line("\(invocation.program): \(error.message)")
            throw Exit(1)
        }
        guard status.isSuccess else { throw Exit(1) }
        // As in pass, a git step that fails has already said why and the remaining steps still run; unlike
        // pass, the command then fails.
        var failed = false
        func ignoringGitFailure(_ step: () throws -> Void) {
            do {
                try step()
            } catch let error as CofferError where error.code == .git {
                standardError.line("Error: \(error.message)")
                failed = true
            } catch {
                standardError.line("Error: \(error)")
                failed = true
            }
        }
        ignoringGitFailure {
            try repository.commit(
                paths: [prefix], message: "Add current contents of password store.", output: .inherit)
        }
        let attributes = prefix + "/.gitattributes"
        do {
            try invocation.store.checkInsideStore(attributes)
            let descriptor = open(attributes, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666)
            let line = "*.gpg diff=gpg\n"
            if descriptor < 0 || line.withCString({ write(descriptor, $0, strlen($0)) }) != line.utf8.count {
                standardError.line("Error: cannot write \(attributes): \(String(cString: strerror(errno)))")
                failed = true
            }
            if descriptor >= 0 { close(descriptor) }
        } catch let error as CofferError {
            standardError.line("Error: \(error.message)")
            failed = true
        }
        ignoringGitFailure {
            try repository.commit(
                paths: [".gitattributes"], message: "Configure git repository for gpg file diff.",
                output: .inherit)
        }
        ignoringGitFailure { try repository.run(["config", "--local", "diff.gpg.binary", "true"]) }
        ignoringGitFailure {
            try repository.run(["config", "--local", "diff.gpg.textconv", textconv(invocation)])
        }
        // Beyond pass: the entry merge driver, in this clone's config and local attributes only.
        ignoringGitFailure { try repository.installMergeDriver(executable: ownExecutable) }
        // The store is the user's own: its recipients are accepted as they are, without a word.
        var store = invocation.store
        store.notices = nil
        ignoringGitFailure { _ = try store.acceptance(at: prefix + "/.gpg-id") }
        if failed { throw Exit(1) }
    }

    /// pass's `$GPG -d ${GPG_OPTS[*]}`.
    static func textconv(_ invocation: Invocation) -> String {
        let environment = invocation.environment
        let gpg2 = ChildProcess.isOnPath("gpg2", environment: environment)
        var options = (environment["PASSWORD_STORE_GPG_OPTS"] ?? "")
            .split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).map(String.init)
        options += ["--quiet", "--yes", "--compress-algo=none", "--no-encrypt-to"]
        if gpg2 || !(environment["GPG_AGENT_INFO"] ?? "").isEmpty { options += ["--batch", "--use-agent"] }
        return (gpg2 ? "gpg2" : "gpg") + " -d " + options.joined(separator: " ")
    }
}
