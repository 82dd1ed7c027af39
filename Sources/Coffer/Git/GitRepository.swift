#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A git work tree that holds (part of) a store, driven through the user's own `git`.
///
/// Every call runs with the variables pass unsets removed and `GIT_CEILING_DIRECTORIES` set to the
/// store's parent, so git never finds a repository above the store.
package struct GitRepository: Sendable {
    /// Where git's own output goes.
    package enum Output: Sendable {
        /// Collected and dropped (library use); failures still throw with git's message.
        case quiet
        /// Written to this process's standard output and error, as pass does.
        case inherit
    }

    /// The folder git is run in (`git -C`): the top of the work tree, which exists whatever a change
    /// removes below it.
    package let directory: String
    /// The store root, used for `GIT_CEILING_DIRECTORIES`.
    package let storeRoot: String
    /// The environment git starts from (before pass's changes); `nil` means this process's own.
    package let baseEnvironment: [String: String]?
    /// How long a commit waits for another git working in the repository, in seconds.
    package var lockTimeout: Double = 120

    /// A repository rooted at `directory`, for a store at `storeRoot`.
    package init(directory: String, storeRoot: String, environment: [String: String]? = nil) {
        self.directory = directory
        self.storeRoot = storeRoot
        self.baseEnvironment = environment
    }

    /// The variables pass removes before running git.
    package static let unsetVariables: Set<String> = [
        "GIT_DIR", "GIT_WORK_TREE", "GIT_NAMESPACE", "GIT_INDEX_FILE", "GIT_INDEX_VERSION",
        "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR",
        // Configuration and programs from the environment would reach coffer's own git steps (hooks,
        // the journal's putting back): settings come from the repository and the user's files only.
        // (GIT_CONFIG_GLOBAL and GIT_CONFIG_SYSTEM name such files, and stay.)
        "GIT_CONFIG_COUNT", "GIT_CONFIG_PARAMETERS", "GIT_EXEC_PATH", "GIT_ALTERNATE_OBJECT_DIRECTORIES",
        "GIT_REPLACE_REF_BASE", "GIT_GRAFT_FILE", "GIT_SHALLOW_FILE",
        // A template folder's hooks would be copied into a repository coffer makes (clone, git init).
        "GIT_TEMPLATE_DIR",
    ]

    /// The repository containing `path`, found as pass finds it (the nearest existing folder at or above
    /// `path`'s folder, inside a work tree no higher than the store root), run from the top of that work
    /// tree. `nil` when there is none.
    package static func containing(
        _ path: String, storeRoot: String, environment: [String: String]? = nil
    ) -> GitRepository? {
        var directory = FileSystem.parent(of: path)
        while !FileSystem.isDirectory(directory) && directory.isPath(inside: storeRoot) {
            directory = FileSystem.parent(of: directory)
        }
        guard let top = workTreeTop(from: directory, storeRoot: storeRoot) else { return nil }
        return GitRepository(directory: top, storeRoot: storeRoot, environment: environment)
    }

    /// `path` as git is given it: relative to ``directory`` when it lies below it (`.` for the folder
    /// itself), so that it names the same file whatever symlinks lead to the work tree.
    package func pathspec(_ path: String) -> String {
        if path == directory || path == directory + "/" { return "." }
        guard path.isPath(inside: directory) else { return path }
        return String(path.droppingPathPrefix(directory))
    }

    /// The nearest folder at or above `directory` that holds a `.git`, no higher than the store root (git
    /// stops below GIT_CEILING_DIRECTORIES, the store's parent); `nil` when there is none.
    static func workTreeTop(from directory: String, storeRoot: String) -> String? {
        var probe = directory
        while probe == storeRoot || probe.isPath(inside: storeRoot) {
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
    package func environment(extra: [String: String] = [:], literalPathspecs: Bool = true) -> [String] {
        var variables = baseEnvironment ?? StoreConfiguration.processEnvironment()
        for name in Self.unsetVariables { variables[name] = nil }
        variables["GIT_CEILING_DIRECTORIES"] = storeRoot + "/.."
        variables["GIT_LITERAL_PATHSPECS"] = literalPathspecs ? "1" : nil
        if literalPathspecs {
            // Each of these would make git read the names as patterns again (or refuse the literal ones).
            for name in ["GIT_GLOB_PATHSPECS", "GIT_NOGLOB_PATHSPECS", "GIT_ICASE_PATHSPECS"] {
                variables[name] = nil
            }
        }
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

    /// Commits the change made to `paths` (files or folders, added, changed or removed) with `message`,
    /// signed when `pass.signcommits` is true, as pass does. Nothing is committed when they did not
    /// change.
    ///
    /// Only `paths` are committed (`git commit -- PATHS`): what someone else staged stays staged, and a
    /// commit that fails leaves nothing staged for the next one to take along. Two git processes for a
    /// change that adds or changes files (`add`, `commit`; git's own automatic maintenance only when it has
    /// something to do, see ``maintenanceOptions``), a third reads `pass.signcommits` once in a while;
    /// waits, first, while another git works in the repository (a person's `git commit` with its
    /// editor open).
    package func commit(paths: [String], message: String, output: Output = .quiet) throws {
        try waitForOtherGit()
        removeStaleLocks()
        // A path is absolute or relative to the top of the work tree.
        func onDisk(_ path: String) -> Bool {
            // A path under the work tree's top as spelled (relative to the current folder when the store's
            // root is), absolute, or relative to the top.
            let spelled =
                path.startsWithSlash || path.isPath(inside: directory) ? path : directory + "/" + path
            return FileSystem.kind(spelled) != .missing
        }
        let present = paths.filter(onDisk).map(pathspec)
        var committed = present
        if !present.isEmpty {
            // `-f`: a `.gitignore` someone pushed does not keep the change's own files out.
            let added = try runUnchecked(["add", "-A", "-f", "--"] + present)
            if added.status != 0 {
                // Attached, git's own complaint about the paths is shown, as pass shows it.
                if output == .inherit { Self.forward(added) }
                throw CofferError(
                    .git,
                    "git add failed (\(added.errorText.split(separator: "\n").last ?? "exit \(added.status)")); "
                        + "the change is made but not committed", exitStatus: added.status)
            }
        }
        // Removed paths are committed when git tracks something under them.
        let absent = paths.filter { !onDisk($0) }.map(pathspec)
        if !absent.isEmpty {
            let tracked = try run(["ls-files", "-z", "--"] + absent).standardOutput.split(separator: 0).map {
                String(decoding: $0, as: UTF8.self)
            }
            committed += absent.filter { spec in
                tracked.contains { $0 == spec || $0.isPath(inside: spec.withoutLastSlash) }
            }
        }
        guard !committed.isEmpty else { return }
        let result = try runUnchecked(
            maintenanceOptions + ["commit"] + (signsCommits ? ["-S"] : []) + ["-m", message, "--"] + committed
        )
        if result.status == 0 {
            // Attached, git's summary is shown, as under pass.
            if output == .inherit { Self.forward(result) }
            return
        }
        if try unchanged(committed) { return }
        if output == .inherit { Self.forward(result) }
        // What this change staged goes back out of the index.
        try unstage(committed)
        let reason = result.errorText.split(separator: "\n").last.map(String.init) ?? "exit \(result.status)"
        throw CofferError(
            .git, "git commit failed (\(reason)); the change is made but not committed",
            exitStatus: result.status)
    }

    /// Puts the index entries of `paths` back as they are in HEAD (a failed commit's staging undone).
    package func unstage(_ paths: [String]) throws {
        _ = try runUnchecked(["reset", "--quiet", "--"] + paths.map(pathspec))
    }

    /// Whether `paths` are in the index and the work tree as they are in HEAD.
    private func unchanged(_ paths: [String]) throws -> Bool {
        let compared = try runUnchecked(["diff", "--quiet", "HEAD", "--"] + paths)
        // No HEAD yet (a first commit): then there is a change.
        guard compared.status <= 1 else { return false }
        return compared.status == 0
    }

    /// The line of git's standard error that says what went wrong: its first `fatal:` or `error:` line
    /// (without the prefix), else its first line; `nil` when it printed nothing.
    package static func firstError(of text: String) -> String? {
        let lines = text.split(separator: "\n").map { $0.drop { $0 == " " || $0 == "\t" } }.filter {
            !$0.isEmpty
        }
        for prefix in ["fatal: ", "error: "] {
            if let line = lines.first(where: { $0.hasPrefix(prefix) }) {
                return String(line.dropFirst(prefix.count))
            }
        }
        return lines.first.map(String.init)
    }

    /// Waits while another git works in this repository, at most ``lockTimeout`` seconds, so that coffer
    /// never commits in the middle of a person's own commit.
    package func waitForOtherGit() throws {
        guard let gitDirectory = gitDirectory() else { return }
        let deadline = ChildProcess.monotonicSeconds() + lockTimeout
        while let pid = otherGit(gitDirectory: gitDirectory) {
            guard ChildProcess.monotonicSeconds() < deadline else {
                throw CofferError(
                    .locked, "git is running in the store (process \(pid)); try again once it is done")
            }
            usleep(100_000)
        }
    }

    /// Writes what a collected git run printed to this process's standard output and error.
    private static func forward(_ output: ChildProcess.Output) {
        for (descriptor, bytes) in [(Int32(1), output.standardOutput), (2, output.standardError)] {
            bytes.withUnsafeBytes { try? SystemCall.writeAll(descriptor, $0) }
        }
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
        return target.startsWithSlash ? target : top + "/" + target
    }

    /// The git operation left unfinished in this repository (`rebase`, `am`, `merge`, `cherry-pick` or
    /// `revert`: stopped on a conflict, or its git was killed), or `nil` when there is none.
    package func unfinishedOperation() -> String? {
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
    package func ensureNoUnfinishedOperation() throws {
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

    /// Whether a git process works in this repository (see ``otherGit(gitDirectory:)``).
    private func isGitRunning(gitDirectory: String) -> Bool {
        otherGit(gitDirectory: gitDirectory) != nil
    }

    /// A git process that works in this repository: one whose working folder is in the work tree or the
    /// git folder, other than a background monitor (Linux: a scan of `/proc`; elsewhere none is seen).
    private func otherGit(gitDirectory: String) -> pid_t? {
        #if os(Linux)
            guard let processes = try? FileSystem.contents(of: "/proc", sorted: false) else { return nil }
            let places = [FileSystem.realPath(directory), FileSystem.realPath(gitDirectory)].compactMap { $0 }
            let own = getpid()
            for name in processes {
                guard let pid = pid_t(name), pid != own,
                    let comm = try? FileSystem.readFile("/proc/\(name)/comm"),
                    String(decoding: comm, as: UTF8.self).hasPrefix("git"),
                    let folder = FileSystem.linkTarget("/proc/\(name)/cwd"),
                    places.contains(where: { folder == $0 || folder.isPath(inside: $0) })
                else { continue }
                // git's file-system monitor lives as long as the repository: it commits nothing.
                let command = (try? FileSystem.readFile("/proc/\(name)/cmdline")) ?? []
                if String(decoding: command, as: UTF8.self).contains("fsmonitor--daemon") { continue }
                return pid
            }
            return nil
        #else
            return nil
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
