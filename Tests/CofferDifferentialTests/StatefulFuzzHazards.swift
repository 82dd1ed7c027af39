import CofferTestSupport

/// Something that goes wrong while coffer runs a step: it is killed, or the disk is full. Only coffer
/// meets it (pass makes no promise then), and only in a copy of its store: the step then runs as usual
/// in both twins, so the comparison with pass goes on from the same state.
struct FuzzHazard: Sendable, Equatable {
    /// What goes wrong.
    enum Kind: Sendable, Equatable {
        /// A git pre-commit hook kills coffer (its grandparent) with SIGKILL.
        case killedAtCommit
        /// SIGKILL to coffer's process group after this many milliseconds.
        case killedAfter(milliseconds: Int)
        /// The store on a small tmpfs with this much room left (root only; else ``fileSizeLimit(bytes:)``
        /// with as many bytes).
        case fullDisk(roomKiB: Int)
        /// `prlimit --fsize`: no file written may grow past this many bytes.
        case fileSizeLimit(bytes: Int)
    }

    /// The command that puts back what the hazard left half done.
    enum Recovery: Sendable, Equatable {
        /// `coffer fsck --fix`.
        case fsck
        /// The next write: `coffer rm -f` of a name that is never an entry, which takes the store's lock and
        /// changes nothing else.
        case nextWrite
    }

    var kind: Kind
    var recovery: Recovery

    /// The name the next-write recovery removes: never generated, so never there.
    static let absentName = "coffer-fuzz-never-an-entry"

    /// What the step's coverage shows.
    var features: [String] {
        let what: String
        switch kind {
        case .killedAtCommit: what = "killed at commit"
        case .killedAfter: what = "killed after a delay"
        case .fullDisk: what = "full disk"
        case .fileSizeLimit: what = "file size limit"
        }
        return [what, recovery == .fsck ? "recovered by fsck --fix" : "recovered by the next write"]
    }

    /// A comment for a reproduction.
    var comment: String {
        let what: String
        switch kind {
        case .killedAtCommit: what = "killed by a pre-commit hook"
        case .killedAfter(let milliseconds): what = "killed with SIGKILL after \(milliseconds) ms"
        case .fullDisk(let room): what = "with \(room) KiB left on a tmpfs"
        case .fileSizeLimit(let bytes): what = "under prlimit --fsize=\(bytes)"
        }
        let then = recovery == .fsck ? "pass fsck --fix" : "pass rm -f \(Self.absentName)"
        return "# first, in a copy of the store, coffer alone: the next line \(what), then \(then)"
    }

    /// The part of a divergence's signature that names the hazard.
    var signature: String {
        switch kind {
        case .killedAtCommit: "killed at commit"
        case .killedAfter: "killed after a delay"
        case .fullDisk: "full disk"
        case .fileSizeLimit: "file size limit"
        }
    }
}

/// A store's exact state: every path but `.git` with its type and mode, every file's bytes, HEAD,
/// `git status --porcelain` and whether a change journal is left.
struct FuzzStoreState: Equatable {
    var listing: [String] = []
    var files: [String: [UInt8]] = [:]
    var head: String?
    var status: [String] = []
    var journal = false

    /// The status lines of changes in git's index (the first column a change).
    var staged: [String] { status.filter { !$0.hasPrefix(" ") && !$0.hasPrefix("??") } }

    /// The state of the store at `store` (empty when there is none).
    static func capture(_ store: String, environment: [String: String]) throws -> FuzzStoreState {
        var state = FuzzStoreState()
        guard TestFiles.exists(store) else { return state }
        let listed = try TestProcess.check(
            [
                "find", store, "-mindepth", "1", "-path", store + "/.git", "-prune", "-o", "-printf",
                "%y %m %P\\0",
            ],
            environment: environment)
        for field in listed.standardOutput.split(separator: 0) {
            let line = String(decoding: field, as: UTF8.self)
            state.listing.append(line)
            if line.hasPrefix("f ") {
                let path = String(line.split(separator: " ", maxSplits: 2).last ?? "")
                state.files[path] = TestFiles.read(store + "/" + path) ?? []
            }
        }
        state.listing.sort()
        state.journal = TestFiles.exists(store + "/.git/coffer-journal")
        guard TestFiles.exists(store + "/.git") else { return state }
        let head = try TestProcess.run(
            ["git", "-C", store, "rev-parse", "-q", "--verify", "HEAD"], environment: environment)
        state.head = head.status == 0 ? head.outputText : nil
        let status = try TestProcess.run(
            ["git", "-C", store, "status", "--porcelain", "--untracked-files=all"], environment: environment)
        state.status = status.outputText.split(separator: "\n").map(String.init)
        return state
    }

    /// How `self` differs from `other`, in a line.
    func difference(from other: FuzzStoreState) -> String {
        var parts: [String] = []
        let paths = Set(files.keys).union(other.files.keys).filter { files[$0] != other.files[$0] }
        if !paths.isEmpty {
            parts.append("files " + paths.sorted().map(Report.escape).joined(separator: ", "))
        }
        let listed = Set(listing).symmetricDifference(other.listing).subtracting(paths.map { "f " + $0 })
        if !listed.isEmpty {
            parts.append("paths " + listed.sorted().map(Report.escape).joined(separator: ", "))
        }
        if head != other.head { parts.append("HEAD \(other.head ?? "none") → \(head ?? "none")") }
        if status != other.status {
            parts.append(
                "status [\(other.status.joined(separator: "; "))] → [\(status.joined(separator: "; "))]")
        }
        if journal != other.journal { parts.append(journal ? "a journal left" : "the journal gone") }
        return parts.joined(separator: "; ")
    }
}

/// A step run by coffer alone in a copy of its twin's store, with its ``FuzzHazard``, then the recovery;
/// its ``failures(normal:reference:)`` are the invariants it broke.
struct FuzzHazardRun {
    let operation: FuzzOperation
    let hazard: FuzzHazard
    /// How the hazard was met (a full disk without root is a file size limit).
    let kind: FuzzHazard.Kind
    /// The copy's state before the step, after it, and after the recovery.
    let before: FuzzStoreState
    let interrupted: FuzzStoreState
    let recovered: FuzzStoreState
    /// The step's and the recovery's outcomes.
    let result: ProcessResult
    let recovery: ProcessResult
    /// The copy's logical lines (``StoreSnapshot``) before the step, after it and after the recovery.
    let beforeLines: [String]
    let interruptedLines: () throws -> [String]
    let recoveredLines: [String]

    /// Runs `operation` with `hazard` in a copy of `twin`'s store.
    init(
        _ operation: FuzzOperation, _ hazard: FuzzHazard, twin: FuzzTwin, decryptions: DecryptionCache
    ) throws {
        self.operation = operation
        self.hazard = hazard
        let sandbox = twin.sandbox
        let setup = sandbox.baseEnvironment
        var kind = hazard.kind
        var folder = sandbox.directory + "/hazard"
        if case .fullDisk(let room) = kind {
            if let disk = twin.smallDisk() {
                folder = disk
            } else {
                kind = .fileSizeLimit(bytes: room * 1024)
            }
        }
        self.kind = kind
        let store = folder + "/.password-store"
        let temporary = sandbox.directory + "/hazard-tmp"
        try TestProcess.check(["rm", "-rf", store, folder + "/filler", temporary], environment: setup)
        try TestProcess.check(["mkdir", "-p", folder, temporary], environment: setup)
        if TestFiles.exists(sandbox.store) {
            try TestProcess.check(["cp", "-a", sandbox.store, folder + "/"], environment: setup)
        }
        before = try FuzzStoreState.capture(store, environment: setup)
        // Rendered as the twin's store is, "no store" included (`init ''` may remove the store), and with
        // the twin's path in commit messages that name the store's folder (`init ''`'s "Deinitialize").
        let lines = { (root: String) throws -> [String] in
            var snapshot = StoreSnapshot(
                root: root, temporary: temporary, environment: setup, before: { _ in nil },
                decryptions: decryptions)
            return try snapshot.render().filter { !$0.hasPrefix("left in TMPDIR") }.map {
                $0.replacing(root + "/", with: sandbox.store + "/")
            }
        }
        beforeLines = try lines(store)
        var environment = sandbox.commandEnvironment(operation.environment)
        environment["PATH"] = sandbox.bin + ":/usr/bin:/bin"
        environment["PASSWORD_STORE_DIR"] = store
        environment["TMPDIR"] = temporary
        // fsck --fix puts back what was left, but it also repairs what it finds: when the store has
        // something to repair before the step, the next write puts back instead, so that what is compared
        // is the putting back alone.
        var recoveryKind = hazard.recovery
        if recoveryKind == .fsck,
            try TestProcess.run(
                ["coffer", "fsck"], environment: environment, directory: sandbox.home, timeout: 60
            )
            .status != 0
        {
            recoveryKind = .nextWrite
        }
        let hook = store + "/.git/hooks/pre-commit"
        var command = ["coffer"] + operation.arguments.map(sandbox.expand)
        var timeout = 60.0
        switch kind {
        case .killedAtCommit:
            if TestFiles.exists(store + "/.git") {
                try TestProcess.check(["mkdir", "-p", store + "/.git/hooks"], environment: setup)
                try TestFiles.write(TestFiles.killingHook, to: hook, mode: 0o755)
            }
        case .killedAfter(let milliseconds): timeout = Double(milliseconds) / 1000
        case .fullDisk(let room):
            _ = try TestProcess.run(
                [
                    "sh", "-c",
                    "dd if=/dev/zero of=\(folder)/filler bs=4k 2>/dev/null; truncate -s -\(room)k \(folder)/filler",
                ], environment: setup)
        case .fileSizeLimit(let bytes): command = ["prlimit", "--fsize=\(bytes)"] + command
        }
        result = try TestProcess.run(
            command, environment: environment, directory: sandbox.home, input: operation.input,
            timeout: timeout)
        unlink(hook)
        unlink(folder + "/filler")
        interrupted = try FuzzStoreState.capture(store, environment: setup)
        interruptedLines = { try lines(store) }
        let again = recoveryKind == .fsck ? ["fsck", "--fix"] : ["rm", "-f", "--", FuzzHazard.absentName]
        environment = sandbox.commandEnvironment([:])
        environment["PATH"] = sandbox.bin + ":/usr/bin:/bin"
        environment["PASSWORD_STORE_DIR"] = store
        environment["TMPDIR"] = temporary
        recovery = try TestProcess.run(
            ["coffer"] + again, environment: environment, directory: sandbox.home, timeout: 60)
        recovered = try FuzzStoreState.capture(store, environment: setup)
        recoveredLines = try lines(store)
    }

    /// Whether coffer died of a signal (SIGKILL, or SIGXFSZ past a file size limit).
    var killed: Bool { result.status == 128 + SIGKILL || result.status == 128 + SIGXFSZ }

    /// The commands that change one entry, which may fail as pass does: the change made, not committed.
    static let singleEntryCommands: Set<String> = ["insert", "rm", "remove", "delete"]

    /// The invariants the run broke, each a short name and the details. `normal` is how the same step
    /// ended in coffer's twin, `reference` that twin's store as logical lines after it: the change whole.
    func failures(normal: ProcessResult, reference: () throws -> [String]) throws -> [(String, String)] {
        var failures: [(String, String)] = []
        let context = { (detail: String) in
            "exit \(self.result.status)\(self.result.timedOut ? " (killed)" : ""), stderr: "
                + Report.escape(self.result.errorText).prefix(400)
                + "\n    then exit \(self.recovery.status), "
                + "stderr: " + Report.escape(self.recovery.errorText).prefix(400) + "\n    " + detail
        }
        let undecryptable = { (lines: [String]) in
            lines.filter { $0.contains("<gpg cannot decrypt it") }.count
        }
        if undecryptable(recoveredLines) > undecryptable(beforeLines) {
            failures.append(("an entry no longer decrypts", context(recoveredLines.joined(separator: "\n"))))
        }
        if recovered.journal || recovered.listing.contains(where: { $0.hasSuffix(" .coffer-journal") }) {
            failures.append(
                ("a journal is left after the recovery", context(recovered.difference(from: before))))
        }
        if result.status == 0 {
            // Exit 0 only when the change is whole and committed.
            let whole = try interruptedLines()
            let expected = try reference()
            if normal.status != 0 {
                failures.append(("exit 0 where the step fails", context("the step exits \(normal.status)")))
            } else if whole != expected {
                failures.append(
                    (
                        "exit 0 without the whole change",
                        context(
                            Report.difference(expected.joined(separator: "\n"), whole.joined(separator: "\n"))
                        )
                    ))
            }
            if recovered != interrupted {
                failures.append(
                    ("the recovery undid a finished change", context(recovered.difference(from: interrupted)))
                )
            }
            return failures
        }
        let command = operation.arguments.first ?? ""
        if !killed && result.errorText.contains("the change is made but not committed") {
            // As under pass: the one entry written or removed, nothing staged, nothing committed.
            if !Self.singleEntryCommands.contains(command) {
                failures.append(("a change of several files is made but not committed", context("")))
            }
            if interrupted.head != before.head || interrupted.staged != before.staged {
                failures.append(
                    (
                        "made but not committed, yet staged or committed",
                        context(interrupted.difference(from: before))
                    ))
            }
            return failures
        }
        if !killed, interrupted.staged != before.staged || interrupted.head != before.head {
            failures.append(
                ("a failed step leaves changes staged", context(interrupted.difference(from: before))))
        }
        // A write killed before it began to change anything, after pass's `mkdir -p` of the entry's
        // folders (README, "Every write is atomic"), leaves those folders, empty, as pass does.
        var withoutMadeFolders = recovered
        withoutMadeFolders.listing.removeAll { $0.hasPrefix("d ") && !before.listing.contains($0) }
        if killed && withoutMadeFolders == before && ["insert", "generate", "edit", "otp"].contains(command) {
            return failures
        }
        if recovered != before {
            // Killed after its commit, the change may be whole instead; a hook kills it before.
            if kind == .killedAtCommit && killed {
                failures.append(
                    (
                        "killed before its commit, the recovery leaves the store changed",
                        context(recovered.difference(from: before))
                    ))
            } else if recoveredLines != (try reference()) {
                failures.append(
                    (
                        "the recovery leaves the store neither as before nor changed whole",
                        context(recovered.difference(from: before))
                    ))
            }
        } else if interrupted != before, killed,
            !recovery.errorText.contains("Undid a change that an interrupted command left half done")
        {
            var left = interrupted
            left.journal = before.journal
            left.listing.removeAll { $0.hasSuffix(" .coffer-journal") }
            if left != before {
                failures.append(
                    (
                        "the recovery does not say it undid a change",
                        context(interrupted.difference(from: before))
                    ))
            }
        }
        return failures
    }
}

extension FuzzTwin {
    /// A tmpfs of 8 MiB at `$SANDBOX/small`, mounted at the first call (root only); `nil` when it cannot be.
    func smallDisk() -> String? {
        let folder = sandbox.directory + "/small"
        if mountedSmallDisk { return folder }
        guard getuid() == 0, !smallDiskFailed else { return nil }
        let environment = sandbox.baseEnvironment
        let made =
            (try? TestProcess.run(["mkdir", "-p", folder], environment: environment).status) == 0
            && (try? TestProcess.run(
                ["mount", "-t", "tmpfs", "-o", "size=8m,mode=0700", "tmpfs", folder], environment: environment
            )
            .status) == 0
        mountedSmallDisk = made
        smallDiskFailed = !made
        return made ? folder : nil
    }
}
