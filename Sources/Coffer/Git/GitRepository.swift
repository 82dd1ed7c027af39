#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A git work tree that holds (part of) a store, driven through the user's own `git`.
///
/// Every call runs with the variables pass unsets removed and `GIT_CEILING_DIRECTORIES` set to the
/// store's parent, so git never finds a repository above the store.
public struct GitRepository: Sendable {
    /// Where git's own output goes.
    public enum Output: Sendable {
        /// Collected and dropped (library use); failures still throw with git's message.
        case quiet
        /// Written to this process's standard output and error, as pass does.
        case inherit
    }

    /// The folder git is run in (`git -C`): the top of the work tree, which exists whatever a change
    /// removes below it.
    public let directory: String
    /// The store root, used for `GIT_CEILING_DIRECTORIES`.
    public let storeRoot: String
    /// The environment git starts from (before pass's changes); `nil` means this process's own.
    public let baseEnvironment: [String: String]?

    /// A repository rooted at `directory`, for a store at `storeRoot`.
    public init(directory: String, storeRoot: String, environment: [String: String]? = nil) {
        self.directory = directory
        self.storeRoot = storeRoot
        self.baseEnvironment = environment
    }

    /// The variables pass removes before running git.
    public static let unsetVariables: Set<String> = [
        "GIT_DIR", "GIT_WORK_TREE", "GIT_NAMESPACE", "GIT_INDEX_FILE", "GIT_INDEX_VERSION",
        "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR",
    ]

    /// The repository containing `path`, found as pass finds it (the nearest existing folder at or above
    /// `path`'s folder, inside a work tree no higher than the store root), run from the top of that work
    /// tree. `nil` when there is none.
    public static func containing(
        _ path: String, storeRoot: String, environment: [String: String]? = nil
    ) -> GitRepository? {
        var directory = FileSystem.parent(of: path)
        while !FileSystem.isDirectory(directory) && directory.hasPrefix(storeRoot + "/") {
            directory = FileSystem.parent(of: directory)
        }
        guard let top = workTreeTop(from: directory, storeRoot: storeRoot) else { return nil }
        return GitRepository(directory: top, storeRoot: storeRoot, environment: environment)
    }

    /// `path` as git is given it: relative to ``directory`` when it lies below it (`.` for the folder
    /// itself), so that it names the same file whatever symlinks lead to the work tree.
    public func pathspec(_ path: String) -> String {
        if path == directory || path == directory + "/" { return "." }
        guard path.hasPrefix(directory + "/") else { return path }
        return String(path.dropFirst(directory.count + 1))
    }

    /// The nearest folder at or above `directory` that holds a `.git`, no higher than the store root (git
    /// stops below GIT_CEILING_DIRECTORIES, the store's parent); `nil` when there is none.
    static func workTreeTop(from directory: String, storeRoot: String) -> String? {
        var probe = directory
        while probe == storeRoot || probe.hasPrefix(storeRoot + "/") {
            if FileSystem.kind(probe + "/.git") != .missing { return probe }
            probe = FileSystem.parent(of: probe)
        }
        return nil
    }

    /// The environment git runs with.
    ///
    /// Coffer's own git steps name entries, never patterns, so `literalPathspecs` (the default) sets
    /// `GIT_LITERAL_PATHSPECS`: an entry called `certs/*.example.com` is that file and no other. The
    /// person's own `coffer git ...` commands run without it.
    public func environment(extra: [String: String] = [:], literalPathspecs: Bool = true) -> [String] {
        var variables = baseEnvironment ?? StoreConfiguration.processEnvironment()
        for name in Self.unsetVariables { variables[name] = nil }
        variables["GIT_CEILING_DIRECTORIES"] = storeRoot + "/.."
        variables["GIT_LITERAL_PATHSPECS"] = literalPathspecs ? "1" : nil
        for (name, value) in extra { variables[name] = value }
        return variables.map { "\($0.key)=\($0.value)" }.sorted()
    }

    /// Runs `git -C directory arguments...` and returns its output whatever its exit status.
    package func runUnchecked(
        _ arguments: [String], input: [UInt8] = [], extraEnvironment: [String: String] = [:]
    ) throws -> ChildProcess.Output {
        try ChildProcess(
            ["git", "-C", directory] + arguments, environment: environment(extra: extraEnvironment)
        )
        .run(input: input)
    }

    /// Runs `git -C directory arguments...` and returns its output; throws when it fails.
    @discardableResult
    package func run(_ arguments: [String], input: [UInt8] = []) throws -> ChildProcess.Output {
        let output = try runUnchecked(arguments, input: input)
        if output.status != 0 {
            let message =
                output.errorText.split(separator: "\n").last.map(String.init) ?? "exit \(output.status)"
            throw CofferError(
                .git, "git \(arguments.first ?? "") failed: \(message)", exitStatus: output.status)
        }
        return output
    }

    /// Runs git attached to this process's terminal and returns how it ended.
    package func runAttached(_ arguments: [String], extraEnvironment: [String: String] = [:]) throws
        -> ChildProcess.TerminationStatus
    {
        try ChildProcess(
            ["git", "-C", directory] + arguments, environment: environment(extra: extraEnvironment)
        )
        .runAttached()
    }

    /// Stages `paths` and commits what is staged with `message`, as pass's `git_add_file` does: two git
    /// processes, `add` and `commit` (a third reads `pass.signcommits`, once per process and repository).
    ///
    /// Signs the commit when `pass.signcommits` is true, as pass does.
    package func commit(paths: [String], message: String, output: Output = .quiet) throws {
        removeStaleLocks()
        let specs = paths.map(pathspec)
        let added = try runUnchecked(["add", "--"] + specs)
        if added.status != 0 {
            // Attached, git's own complaint about the paths is shown, as pass shows it.
            if output == .inherit { Self.forward(added) }
            throw CofferError(
                .git,
                output == .inherit
                    ? "git add exited with status \(added.status); the change is made but not committed"
                    : "git add failed: \(added.errorText.split(separator: "\n").last ?? ""); the change is "
                        + "made but not committed",
                exitStatus: added.status)
        }
        try commitStaged(message: message, output: output)
    }

    /// Commits what is staged with `message` (signed when `pass.signcommits` is true); when nothing is
    /// staged (the change touched only files git does not track) there is nothing to commit.
    package func commit(message: String, output: Output = .quiet) throws {
        try commitStaged(message: message, output: output)
    }

    /// `git commit` of what is staged; a commit that finds nothing to commit is no failure, which a
    /// third process tells when the commit does not succeed.
    private func commitStaged(message: String, output: Output) throws {
        let result = try runUnchecked(["commit"] + (signsCommits ? ["-S"] : []) + ["-m", message])
        if result.status == 0 {
            // Attached, git's summary is shown, as under pass.
            if output == .inherit { Self.forward(result) }
            return
        }
        if try nothingToCommit() { return }
        if output == .inherit { Self.forward(result) }
        let reason = result.errorText.split(separator: "\n").last.map(String.init) ?? "exit \(result.status)"
        throw CofferError(
            .git, "git commit failed (\(reason)); the change is made but not committed",
            exitStatus: result.status)
    }

    /// Whether the index holds nothing to commit.
    private func nothingToCommit() throws -> Bool {
        let staged = try runUnchecked(["diff", "--cached", "--quiet"])
        guard staged.status <= 1 else {
            throw CofferError(.git, "git diff failed: \(staged.errorText)", exitStatus: staged.status)
        }
        return staged.status == 0
    }

    /// Writes what a collected git run printed to this process's standard output and error.
    private static func forward(_ output: ChildProcess.Output) {
        for (descriptor, bytes) in [(Int32(1), output.standardOutput), (2, output.standardError)] {
            bytes.withUnsafeBytes { try? SystemCall.writeAll(descriptor, $0) }
        }
    }

    /// Removes `paths` from the index and the work tree (`git rm -qr`), ignoring paths git does not track.
    public func remove(paths: [String]) throws {
        removeStaleLocks()
        // Callers have removed the files already: only the index is left to change.
        try run(["rm", "-qr", "--cached", "--ignore-unmatch", "--"] + paths.map(pathspec))
    }

    /// The git folder of the work tree holding ``directory`` (following a `.git` file's `gitdir:`), or `nil`.
    func gitDirectory() -> String? {
        guard let top = Self.workTreeTop(from: directory, storeRoot: storeRoot) else { return nil }
        let dotGit = top + "/.git"
        guard FileSystem.resolvedKind(dotGit) == .file else { return dotGit }
        guard let bytes = try? FileSystem.readFile(dotGit),
            let line = String(decoding: bytes, as: UTF8.self).split(separator: "\n").first,
            line.hasPrefix("gitdir: ")
        else { return nil }
        let target = String(line.dropFirst("gitdir: ".count))
        return target.hasPrefix("/") ? target : top + "/" + target
    }

    /// The git operation left unfinished in this repository (`rebase`, `am`, `merge`, `cherry-pick` or
    /// `revert`: stopped on a conflict, or its git was killed), or `nil` when there is none.
    public func unfinishedOperation() -> String? {
        guard let gitDirectory = gitDirectory() else { return nil }
        if SyncIntegration.Record.read(self) != nil { return "sync" }
        let markers = [
            ("rebase-merge", "rebase"), ("rebase-apply/applying", "am"), ("rebase-apply", "rebase"),
            ("MERGE_HEAD", "merge"), ("CHERRY_PICK_HEAD", "cherry-pick"), ("REVERT_HEAD", "revert"),
        ]
        return markers.first { FileSystem.kind(gitDirectory + "/" + $0.0) != .missing }?.1
    }

    /// Throws when a git operation is unfinished: committing in the middle of it would put the store's
    /// change on a detached or half-merged history, so coffer asks for it to be finished first.
    public func ensureNoUnfinishedOperation() throws {
        guard let operation = unfinishedOperation() else { return }
        if operation == "sync" {
            throw CofferError(
                .gitOperationUnfinished,
                "a sync of the store was interrupted; run sync again (or fsck --fix) to undo what it left, "
                    + "then try again")
        }
        throw CofferError(
            .gitOperationUnfinished,
            "the store's git repository is in the middle of a \(operation); finish it with "
                + "'git \(operation) --continue' or undo it with 'git \(operation) --abort', then try again")
    }

    /// Removes the lock files a git killed half-way left behind (`index.lock`, `HEAD.lock`,
    /// `config.lock`, a branch's `.lock`, ...), on which every later git command would fail.
    ///
    /// A lock counts as left behind only when no process has it open and no git process works in this
    /// repository: store writers hold the store lock, so only such a leftover or a person's own git can
    /// be there, and a person's `git commit` waiting for its editor keeps running (it closed the file).
    func removeStaleLocks() {
        for lock in staleLocks { unlink(lock) }
    }

    /// The lock files of the git folder that no process holds and no running git works on.
    var staleLocks: [String] {
        guard let gitDirectory = gitDirectory() else { return [] }
        var locks: [String] = []
        func collect(_ folder: String, depth: Int) {
            guard let names = try? FileSystem.contents(of: folder, sorted: true) else { return }
            for name in names {
                let path = folder + "/" + name
                switch FileSystem.kind(path) {
                case .file where name.hasSuffix(".lock"): locks.append(path)
                case .directory where depth > 0 && (folder != gitDirectory || name == "refs"):
                    collect(path, depth: depth - 1)
                default: break
                }
            }
        }
        collect(gitDirectory, depth: 8)
        guard !locks.isEmpty, !isGitRunning(gitDirectory: gitDirectory) else { return [] }
        return locks.filter { !Self.isOpenByAnyProcess($0) }
    }

    /// Whether a git process works in this repository: one whose working folder is in the work tree or
    /// the git folder (Linux: a scan of `/proc`; elsewhere assume one does).
    private func isGitRunning(gitDirectory: String) -> Bool {
        #if os(Linux)
            guard let processes = try? FileSystem.contents(of: "/proc", sorted: false) else { return true }
            let places = [FileSystem.realPath(directory), FileSystem.realPath(gitDirectory)].compactMap { $0 }
            for pid in processes where pid.utf8.allSatisfy({ (48...57).contains($0) }) {
                guard let name = try? FileSystem.readFile("/proc/\(pid)/comm"),
                    String(decoding: name, as: UTF8.self).hasPrefix("git"),
                    let folder = FileSystem.linkTarget("/proc/\(pid)/cwd")
                else { continue }
                if places.contains(where: { folder == $0 || folder.hasPrefix($0 + "/") }) { return true }
            }
            return false
        #else
            return true
        #endif
    }

    /// Whether some process has `path` open (Linux: a scan of `/proc/*/fd`; elsewhere assume it is).
    static func isOpenByAnyProcess(_ path: String) -> Bool {
        #if os(Linux)
            guard let processes = try? FileSystem.contents(of: "/proc", sorted: false) else { return true }
            for pid in processes where pid.utf8.allSatisfy({ (48...57).contains($0) }) {
                guard let descriptors = try? FileSystem.contents(of: "/proc/\(pid)/fd", sorted: false) else {
                    continue
                }
                for descriptor in descriptors
                where FileSystem.linkTarget("/proc/\(pid)/fd/\(descriptor)") == path {
                    return true
                }
            }
            return false
        #else
            return true
        #endif
    }
}
