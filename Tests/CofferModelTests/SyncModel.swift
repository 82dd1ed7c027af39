import CofferTestSupport

@testable import Coffer

/// Something a sync-model run found wrong.
struct SyncModelFailure: Sendable, CustomStringConvertible {
    /// The model step (0: setup; steps after the random ones belong to the final syncs and checks).
    let step: Int
    /// A short name of the kind of failure, the same for the same fault (`sync-lost-value`, ...).
    let kind: String
    /// What exactly happened.
    let detail: String

    var description: String { "step \(step): [\(kind)] \(detail)" }
}

/// How a sync-model run is set up.
struct SyncModelOptions: Sendable {
    /// Fixes every choice the model makes.
    var seed: UInt64
    /// Random steps before the final syncs.
    var steps = 30
    /// Parts of the model to leave out (for narrowing a failure down): `kill` (no SIGKILL), `files`
    /// (no non-entry files), `gpgid` (no recipient changes), `rename`, `remove`, `edit` (no `coffer edit`),
    /// `fsck`, `mode` (no switching between rebase and merge), `full` and `pass` (those ways of starting
    /// coffer), `merge` (every clone rebases), `rebase` (every clone merges), `sign` (no seed signs its
    /// commits; otherwise a quarter of the seeds sign every commit and require signatures), `quoted` (no
    /// entry names git quotes: no spaces, ASCII only), `hostile` (no hostile clone; otherwise half the seeds
    /// that do not sign have one, see `SyncModelHostile.swift`).
    var without: Set<String> = []
    /// Whether the run has a hostile clone whatever the seed says (unless it signs).
    var hostile = false
    /// The time limit of one command, in seconds.
    var commandTimeout: Double = 240

    /// Options from `COFFER_SYNC_STEPS` and `COFFER_SYNC_WITHOUT` (comma-separated) for `seed`.
    static func fromEnvironment(seed: UInt64, defaultSteps: Int) -> SyncModelOptions {
        var options = SyncModelOptions(seed: seed)
        options.steps = environmentVariable("COFFER_SYNC_STEPS").flatMap { Int($0) } ?? defaultSteps
        options.without = Set(
            (environmentVariable("COFFER_SYNC_WITHOUT") ?? "").split(separator: ",").map(String.init))
        return options
    }
}

/// Counts of what a run did.
struct SyncModelFigures: Sendable {
    /// Commands run (each one script line).
    var commands = 0
    /// `sync` runs.
    var syncs = 0
    /// `sync` runs that did not exit 0.
    var failedSyncs = 0
    /// Syncs given a kill point.
    var killsArmed = 0
    /// Syncs that were really killed.
    var killed = 0
    /// Rounds of final syncs.
    var finalRounds = 0
    /// Merges by hand that sync asked for.
    var manualMerges = 0
    /// Entries holding a conflict at the end.
    var conflictedEntries = 0
    /// Values written.
    var values = 0
    /// Values users deliberately overwrote or removed.
    var destroyed = 0
    /// Runs whose clones did not agree because a sync waits for its user to accept a recipient.
    var stoppedForAcceptance = 0
    /// Pushes of the hostile clone that the remote took.
    var hostilePushes = 0
    /// Messages on the remote the hostile clone's key opens (checked for honest values at the end).
    var hostileReadable = 0
    /// HOTP codes made.
    var otpCodes = 0
    /// Commits purged from the remote with a force-push.
    var forcePushes = 0

    /// Adds another run's counts.
    mutating func add(_ other: SyncModelFigures) {
        commands += other.commands
        syncs += other.syncs
        failedSyncs += other.failedSyncs
        killsArmed += other.killsArmed
        killed += other.killed
        finalRounds += other.finalRounds
        manualMerges += other.manualMerges
        conflictedEntries += other.conflictedEntries
        values += other.values
        destroyed += other.destroyed
        hostilePushes += other.hostilePushes
        stoppedForAcceptance += other.stoppedForAcceptance
        hostileReadable += other.hostileReadable
        otpCodes += other.otpCodes
        forcePushes += other.forcePushes
    }

    var summary: String {
        "\(commands) commands, \(syncs) syncs (\(failedSyncs) not exit 0, \(killed) of \(killsArmed) armed kills "
            + "killed), \(manualMerges) merges by hand, \(values) values written, \(destroyed) overwritten by users, "
            + "\(conflictedEntries) entries in conflict at the end, \(hostilePushes) hostile pushes, "
            + "\(hostileReadable) messages the hostile key opens, \(stoppedForAcceptance) runs stopped for an acceptance, "
            + "\(otpCodes) HOTP codes, \(forcePushes) force-pushes"
    }
}

/// The result of one seed.
struct SyncModelOutcome: Sendable {
    /// The seed.
    let seed: UInt64
    /// What went wrong (empty when the run passed).
    let failures: [SyncModelFailure]
    /// The run as a shell script.
    let script: String
    /// What the run did.
    let figures: SyncModelFigures

    /// The failures, then the script that replays the run.
    var report: String {
        var text = "sync model seed \(seed): \(failures.count) failure(s); \(figures.summary)\n"
        for failure in failures { text += "  \(failure)\n" }
        text += "replay (COFFER_SYNC_SEED=\(seed) swift test --filter SyncModelTests/seedFromEnvironment, "
        text += "or the script below with COFFER=<path to coffer>):\n"
        return text + script
    }
}

/// Three clones of one bare repository driven by seeded random edits and syncs, checked against a
/// ledger of every value written.
///
/// Every command is a line of `sh` (``SyncModelShell``); coffer is started on `PATH`, by absolute path
/// with no coffer on `PATH`, or only as `pass`; clones rebase or merge; some syncs are killed with
/// SIGKILL at a chosen git command. After every command the clone's work tree is read back, so the model
/// never predicts a merge: it only knows what each user saw and did. The checks:
/// - a command that exits 0 did what it says (a write is there; nothing else vanished); a `sync` that
///   exits 0 leaves the clone clean, on its branch, and equal to the remote;
/// - at every settled point (no git operation under way, nothing uncommitted) the clone still holds every
///   value it held at the previous one, unless a user destroyed it (``SyncModelLedger``);
/// - no file that is not an entry (`.gpg-id` included) is settled with conflict markers;
/// - a sync that stops saying "Nothing was changed" left the clone as it last was settled; when it asks for
///   a merge by hand, the model's user does exactly that (`git merge`, both sides of each file kept,
///   `git commit`), and sync must have named every file that leaves unmerged;
/// - after final rounds of syncs every clone is clean and at the remote's commit; every value written is
///   in the final entries (decrypted with `gpg -d`) or files, or was destroyed by a user; `coffer show`
///   reports every entry that holds a conflict; every entry is encrypted to the keys of its `.gpg-id`;
///   no plaintext is on disk or in a git object.
final class SyncModelRun {
    static let cloneNames = ["one", "two", "three"]
    /// Entry names: some git quotes (spaces, non-ASCII), three folders that may get their own `.gpg-id`.
    static let entryNames = [
        "email", "my bank/acc ount", "ünï/пароль", "ünï/ключ", "team/deploy", "team/ci token", "web/shop",
        "web/forum",
    ]
    /// The same without a name git quotes (`COFFER_SYNC_WITHOUT=quoted`).
    static let plainEntryNames = [
        "email", "bank/account", "uni/pass", "uni/key", "team/deploy", "team/ci-token", "web/shop",
        "web/forum",
    ]
    static let fieldKeys = ["login", "url", "email", "pin", "note"]
    static let textFile = "notes.txt"
    static let jsonFile = ".browserpass.json"
    static let binaryFile = "team/blob.bin"

    let options: SyncModelOptions
    let sandbox: GPGSandbox
    let coffer: String
    /// Sandbox environment plus the helpers' variables.
    let environment: [String: String]
    /// The marker tag: values are `MARK-<tag>-<n>`, file values `NOTE-<tag>-<n>`.
    let tag: String
    var random: SeededRandom
    var modes: [String]
    /// Whether every clone signs its commits (`pass.signcommits`) and requires signatures
    /// (`coffer.requiresignedcommits`).
    var signed = false
    /// The sync modes the clones started with.
    var startModes: [String] = []
    /// The entry names in use.
    let entryNames: [String]
    /// The folders whose recipients change: the root and two that hold entries.
    let recipientFolders: [String]
    var script: [String] = []
    var failures: [SyncModelFailure] = []
    var ledger = SyncModelLedger(clones: 3)
    var snapshots: [SyncModelSnapshot] = Array(repeating: SyncModelSnapshot(), count: 3)
    /// Per clone, the markers it held at its last settled point.
    var baselines: [Set<String>] = Array(repeating: [], count: 3)
    /// Per clone, its HEAD at its last settled point.
    var settledHeads: [String?] = Array(repeating: nil, count: 3)
    var figures = SyncModelFigures()
    var step = 0
    var valueCount = 0
    var reported: Set<String> = []
    var lastSync: [String] = Array(repeating: "", count: 3)
    /// The advice a person is following on some clone ("Merge it by hand", "Keep one version"). The sync
    /// that ends a merge by hand may give the other advice (a binary entry changed on both sides), but
    /// the same advice again is a finding: following it again would recurse without end.
    var followingAdvice: Set<String> = []
    private var recipientKeyIDs: [[String]: Set<String>] = [:]
    private var blobMarkers: [String: [String]] = [:]
    /// The hostile clone's own choices, apart from the honest ones: a seed without it runs as before.
    var hostileRandom: SeededRandom
    /// The hostile clone's key, when the run has one.
    var hostileKey: String?
    var hostilePushes = 0 {
        didSet { figures.hostilePushes = hostilePushes }
    }
    /// The folder each value was written in by an honest clone (entries only).
    var writtenIn: [String: String] = [:]
    /// The random stream of binary and HOTP steps (``byteStep()``), apart from the others.
    var byteRandom: SeededRandom
    /// Every version of each binary entry a clone wrote.
    var binaryVersions: [String: Set<[UInt8]>] = [:]
    /// Per clone, each HOTP counter it used, and when.
    var usedCounters: [[Int64: String]] = Array(repeating: [:], count: 3)
    /// Commits a clone took out of the remote's history with a force-push.
    var purged: Set<String> = []
    /// Per clone, the highest HOTP counter it used.
    var highestCounters: [Int64?] = Array(repeating: nil, count: 3)

    init(options: SyncModelOptions) throws {
        self.options = options
        sandbox = try GPGSandbox()
        coffer = try CofferBinary.path()
        random = SeededRandom(seed: options.seed)
        hostileRandom = SeededRandom(seed: options.seed ^ 0x6D61_6C6C_6F72_79)
        byteRandom = SeededRandom(seed: options.seed ^ 0x6279_7465_73)
        entryNames = options.without.contains("quoted") ? Self.plainEntryNames : Self.entryNames
        recipientFolders = ["", "team", options.without.contains("quoted") ? "uni" : "ünï"]
        // The process id keeps the markers of two runs of one seed apart (two test runs at once share
        // /dev/shm, which the plaintext check reads).
        tag = String(options.seed, radix: 36) + "x" + String(getpid(), radix: 36)
        let git = try sandbox.check(["sh", "-c", "command -v git"]).outputText.trimmingNewlines
        var environment = sandbox.environment
        for (name, value) in SyncModelShell.environment(sandbox: sandbox.directory, coffer: coffer, git: git)
        {
            environment[name] = value
        }
        environment["COFFER_LOCK_TIMEOUT"] = "200"
        self.environment = environment
        modes = Self.cloneNames.map { _ in "rebase" }
        for folder in ["bin", "wrap"] { mkdir(sandbox.directory + "/" + folder, 0o755) }
        symlink(coffer, sandbox.directory + "/bin/pass")
        for helper in SyncModelShell.helpers {
            try TestFiles.write(helper.text, to: sandbox.directory + "/" + helper.path, mode: 0o755)
        }
    }

    // MARK: Running

    /// Runs the seed: setup, random steps, final syncs, final checks.
    func run() throws -> SyncModelOutcome {
        defer { _ = try? sandbox.run(["gpgconf", "--kill", "all"]) }
        if try setUp() {
            for _ in 0..<options.steps {
                step += 1
                try randomStep()
            }
            step += 1
            let converged = try finalSyncs()
            try finalChecks(converged: converged)
        }
        figures.values = ledger.order.count
        figures.destroyed = ledger.destroyed.count
        let summary =
            "clones " + zip(Self.cloneNames, startModes).map { "\($0) \($1)" }.joined(separator: ", ")
            + (signed ? "; signed commits required" : "")
        let text =
            (SyncModelShell.preamble(seed: options.seed, summary: summary) + script + SyncModelShell.epilogue)
            .joined(separator: "\n") + "\n"
        return SyncModelOutcome(seed: options.seed, failures: failures, script: text, figures: figures)
    }

    func fail(_ kind: String, _ detail: String) {
        failures.append(SyncModelFailure(step: step, kind: kind, detail: detail))
    }

    /// Reports a failure only the first time its key is seen.
    func failOnce(_ key: String, _ kind: String, _ detail: String) {
        guard reported.insert(key).inserted else { return }
        fail(kind, detail)
    }

    /// Runs one script line in the sandbox.
    @discardableResult
    func shell(_ line: String, comment: String? = nil) throws -> ProcessResult {
        if let comment { script.append("# step \(step): \(comment)") }
        script.append(line)
        figures.commands += 1
        let result = try TestProcess.run(
            ["sh", "-c", line], environment: environment, directory: sandbox.directory,
            timeout: options.commandTimeout)
        if result.timedOut {
            fail("timed-out", "\(line) ran longer than \(Int(options.commandTimeout)) s and was killed")
        }
        let said =
            result.errorText.split(separator: "\n").prefix(3)
            + result.outputText.split(separator: "\n").prefix(3)
        if result.status != 0 || line.hasSuffix(" sync") {
            script.append(
                "#   -> exit \(result.status)" + (said.isEmpty ? "" : ": " + said.joined(separator: " | ")))
        }
        return result
    }

    /// A script line that runs coffer (or `git -C`, style "git") on a clone.
    func command(_ clone: Int, _ style: String, _ arguments: [String], input: String? = nil) -> String {
        let line =
            "\"$S/run\" \(style) \(Self.cloneNames[clone]) "
            + arguments.map { $0.hasPrefix("$S/") ? "\"\($0)\"" : SyncModelShell.quote($0) }.joined(
                separator: " ")
        guard let input else { return line }
        return "printf '%s' \(SyncModelShell.quote(input)) | " + line
    }

    /// A random way of starting coffer, among those not left out.
    func randomStyle() -> String {
        let styles = SyncModelShell.Style.allCases.map(\.rawValue).filter { !options.without.contains($0) }
        return random.pick(styles.isEmpty ? ["path"] : styles)
    }

    func newMarker() -> String {
        valueCount += 1
        return "MARK-\(tag)-\(valueCount)"
    }

    func newNote() -> String {
        valueCount += 1
        return "NOTE-\(tag)-\(valueCount)"
    }

    /// A value: a marker, sometimes followed by characters that are not digits.
    func newValue() -> String {
        newMarker() + random.pick(["", "", "!x", " with spaces", "#%&*", "é"])
    }

    func clonePath(_ clone: Int) -> String { sandbox.directory + "/" + Self.cloneNames[clone] }

    // MARK: Reading clones

    /// Runs git for the checks (never killed, never through the helpers).
    func checkGit(_ arguments: [String]) throws -> ProcessResult {
        try TestProcess.run(["git", "--no-optional-locks"] + arguments, environment: sandbox.environment)
    }

    /// The state of a clone's git repository.
    struct GitState {
        var operation: String?
        var porcelain: String
        var branch: String?
        var head: String?
        var indexLock: Bool

        var settled: Bool { operation == nil && porcelain.isEmpty && branch != nil }

        var summary: String {
            var parts: [String] = []
            if let operation { parts.append("\(operation) under way") }
            if branch == nil { parts.append("HEAD detached") }
            if indexLock { parts.append(".git/index.lock present") }
            if !porcelain.isEmpty {
                parts.append(
                    "git status: " + porcelain.split(separator: "\n").prefix(6).joined(separator: " | "))
            }
            return parts.isEmpty ? "clean" : parts.joined(separator: "; ")
        }
    }

    func gitState(_ clone: Int) throws -> GitState {
        let path = clonePath(clone)
        // coffer's own record of a sync under way (or killed) counts as one.
        let markers = [
            ("coffer-sync", "sync"), ("rebase-merge", "rebase"), ("rebase-apply", "rebase"),
            ("MERGE_HEAD", "merge"),
            ("CHERRY_PICK_HEAD", "cherry-pick"), ("REVERT_HEAD", "revert"),
        ]
        let operation = markers.first { TestFiles.exists(path + "/.git/" + $0.0) }?.1
        let status = try checkGit(["-C", path, "status", "--porcelain"])
        let branch = try checkGit(["-C", path, "symbolic-ref", "-q", "--short", "HEAD"])
        let head = try checkGit(["-C", path, "rev-parse", "-q", "--verify", "HEAD"])
        return GitState(
            operation: operation,
            porcelain: status.status == 0 ? status.outputText : "git status failed: \(status.errorText)",
            branch: branch.status == 0 ? branch.outputText.trimmingNewlines : nil,
            head: head.status == 0 ? head.outputText.trimmingNewlines : nil,
            indexLock: TestFiles.exists(path + "/.git/index.lock"))
    }

    func remoteHead() throws -> String? {
        let output = try checkGit([
            "--git-dir", sandbox.directory + "/remote.git", "rev-parse", "-q", "--verify", "refs/heads/main",
        ])
        return output.status == 0 ? output.outputText.trimmingNewlines : nil
    }

    /// The markers in the tree of `commit` of the remote (entries decrypted in this process), cached by blob.
    func markers(ofRemoteCommit commit: String) throws -> Set<String> {
        let gitDirectory = sandbox.directory + "/remote.git"
        let listing = try checkGit(["--git-dir", gitDirectory, "ls-tree", "-r", "-z", commit])
        var blobs: [(hash: String, entry: Bool)] = []
        for record in listing.standardOutput.split(separator: 0) {
            let text = String(decoding: record, as: UTF8.self)
            guard let tab = text.firstIndex(of: "\t") else { continue }
            let fields = text[..<tab].split(separator: " ")
            guard fields.count == 3, fields[1] == "blob" else { continue }
            blobs.append((String(fields[2]), text[text.index(after: tab)...].hasSuffix(".gpg")))
        }
        let missing = blobs.filter { blobMarkers[$0.hash] == nil }
        if !missing.isEmpty {
            let output = try TestProcess.run(
                ["git", "--git-dir", gitDirectory, "cat-file", "--batch"], environment: sandbox.environment,
                input: Array(missing.map { $0.hash + "\n" }.joined().utf8))
            var bytes = output.standardOutput[...]
            let engine = sandbox.store().engine
            for blob in missing {
                guard let newline = bytes.firstIndex(of: 10) else { break }
                let header = String(decoding: bytes[..<newline], as: UTF8.self).split(separator: " ")
                bytes = bytes[(newline + 1)...]
                guard header.count == 3, let size = Int(header[2]), bytes.count >= size else { break }
                let content = Array(bytes.prefix(size))
                bytes = bytes.dropFirst(size + 1)
                let plain = blob.entry ? ((try? engine.decrypt(content).bytes) ?? []) : content
                blobMarkers[blob.hash] = SyncModelText.markers(in: plain, tag: tag)
            }
        }
        return Set(blobs.flatMap { blobMarkers[$0.hash] ?? [] })
    }

    /// Whether `ancestor` is an ancestor of (or is) the clone's HEAD.
    func headContains(_ clone: Int, _ ancestor: String) throws -> Bool {
        try checkGit(["-C", clonePath(clone), "merge-base", "--is-ancestor", ancestor, "HEAD"]).status == 0
    }

    /// Reads every file of a clone's work tree (entries decrypted in this process).
    func snapshot(_ clone: Int) -> SyncModelSnapshot {
        let root = clonePath(clone)
        let store = sandbox.store(root: root)
        var snapshot = SyncModelSnapshot()
        for relative in Self.files(under: root) {
            if relative.hasSuffix(".gpg") {
                do {
                    let bytes = try store.read(String(relative.dropLast(4))).bytes
                    snapshot.items[relative] = item(bytes)
                } catch {
                    snapshot.items[relative] = SyncModelItem(
                        text: "", markers: [], conflict: false, problem: "\(error)")
                }
            } else {
                snapshot.items[relative] = item(TestFiles.read(root + "/" + relative) ?? [])
            }
        }
        return snapshot
    }

    func item(_ bytes: [UInt8]) -> SyncModelItem {
        SyncModelItem(
            text: String(decoding: bytes, as: UTF8.self), markers: SyncModelText.markers(in: bytes, tag: tag),
            conflict: EntryMerge.containsConflict(bytes), problem: nil, bytes: bytes)
    }

    /// Every regular file below `root` outside `.git`, relative to it.
    static func files(under root: String, relative: String = "") -> [String] {
        let folder = relative.isEmpty ? root : root + "/" + relative
        guard let names = try? FileSystem.contents(of: folder) else { return [] }
        var found: [String] = []
        for name in names where !(relative.isEmpty && name == ".git") {
            let path = relative.isEmpty ? name : relative + "/" + name
            switch FileSystem.kind(root + "/" + path) {
            case .directory: found += files(under: root, relative: path)
            case .file: found.append(path)
            default: break
            }
        }
        return found
    }

    // MARK: Setup

    /// Clone one makes the store and pushes it; two and three clone it. Returns `false` when that failed.
    func setUp() throws -> Bool {
        let keys = sandbox.keys.map(\.email)
        signed = !options.without.contains("sign") && random.chance(0.25)
        // Required signatures would turn the hostile clone's every push away.
        if !signed && (options.hostile || (!options.without.contains("hostile") && hostileRandom.chance(0.5)))
        {
            hostileKey = try makeHostileKey()
        }
        // The remote is a local folder, so its receive-pack would die with a killed sync and leave a ref lock
        // a real server never leaves: it runs in a session of its own, as a server's would.
        var lines = [
            "git init -q --bare \"$S/remote.git\"",
            "git config --global remote.origin.receivepack 'setsid \"$SYNCMODEL_GIT\" receive-pack'",
        ]
        if signed {
            lines += [
                "git config --global pass.signcommits true",
                "git config --global coffer.requiresignedcommits true",
                "git config --global user.signingkey \(keys[0])",
            ]
        }
        lines += [command(0, "path", ["init", keys[0]]), command(0, "path", ["git", "init"])]
        var written: [(String, String)] = []
        for name in [entryNames[0], entryNames[4], entryNames[2]] {
            let (content, markers) = freshEntry()
            lines.append(command(0, "path", ["insert", "-m", name], input: content))
            written += markers.map { ($0, name) }
        }
        let note = newNote()
        written.append((note, Self.textFile))
        lines.append("printf 'first line\\n\(note)\\n' > \"$S/one/\(Self.textFile)\"")
        lines.append(command(0, "path", ["git", "add", "--", Self.textFile]))
        lines.append(
            command(0, "path", ["git", "commit"] + (signed ? ["-S"] : []) + ["-q", "-m", "Add notes."]))
        if let hostileKey { lines += hostileSetupLines(key: hostileKey) }
        lines.append(command(0, "git", ["remote", "add", "origin", "$S/remote.git"]))
        lines.append(command(0, "path", ["sync"]))
        lines.append(command(1, "path", ["clone", "$S/remote.git", "--path", "$S/two"]))
        lines.append(command(2, "path", ["clone", "$S/remote.git", "--path", "$S/three"]))
        for clone in 1..<3 where signed {
            lines.append(command(clone, "git", ["config", "user.signingkey", keys[clone]]))
        }
        for clone in 0..<3 {
            let merge =
                options.without.contains("rebase")
                || (!options.without.contains("merge") && random.chance(0.5))
            if merge {
                modes[clone] = "merge"
                lines.append(command(clone, "git", ["config", "coffer.syncmode", "merge"]))
            }
        }
        for (index, line) in lines.enumerated() {
            let result = try shell(line, comment: index == 0 ? "setup" : nil)
            if result.status != 0 {
                fail("setup", "\(line) failed (\(result.status)): \(result.errorText)")
                return false
            }
        }
        startModes = modes
        if hostileKey != nil { try cloneForMallory() }
        for (marker, what) in written {
            ledger.recordWrite(marker, clone: 0, step: 0, what: what)
            if what != Self.textFile { writtenIn[marker] = PasswordStore.folder(of: what) }
        }
        for clone in 0..<3 {
            snapshots[clone] = snapshot(clone)
            baselines[clone] = snapshots[clone].markers
            settledHeads[clone] = try gitState(clone).head
            ledger.recordSeen(baselines[clone], clone: clone, step: 0)
        }
        return true
    }

    // MARK: Random steps

    func randomStep() throws {
        if hostileKey != nil && hostileRandom.chance(0.3) { try hostileStep() }
        try byteStep()
        let clone = Int.random(in: 0..<3, using: &random)
        var choices: [(weight: Int, name: String)] = [
            (30, "edit"), (10, "add"), (25, "sync"),
        ]
        let optional: [(Int, String, String)] = [
            (7, "rename", "rename"), (6, "remove", "remove"), (6, "gpgid", "gpgid"), (10, "file", "files"),
            (2, "fsck", "fsck"), (3, "mode", "mode"),
        ]
        for (weight, name, part) in optional where !options.without.contains(part) {
            if name == "mode" && (options.without.contains("merge") || options.without.contains("rebase")) {
                continue
            }
            choices.append((weight, name))
        }
        let chosen = random.weighted(choices.map { (weight: $0.weight, value: $0.name) })
        switch chosen {
        case "edit": try editEntry(clone)
        case "add": try addEntry(clone)
        case "rename": try renameEntry(clone)
        case "remove": try removeEntry(clone)
        case "gpgid": try changeRecipients(clone)
        case "file": try changeFile(clone)
        case "fsck": try fsck(clone)
        case "mode": try toggleMode(clone)
        default: try sync(clone, mayKill: !options.without.contains("kill"))
        }
    }

    /// A new entry's text: a password, one to three fields, sometimes a line of free text.
    func freshEntry() -> (String, [String]) {
        var lines = [newValue()]
        var keys = Self.fieldKeys
        keys.shuffle(using: &random)
        for key in keys.prefix(Int.random(in: 1...3, using: &random)) {
            lines.append("\(key): \(newValue())")
        }
        if random.chance(0.3) { lines.append("free text \(newValue())") }
        let text = lines.map { $0 + "\n" }.joined()
        return (text, SyncModelText.markers(in: Array(text.utf8), tag: tag))
    }

    /// An edit of one part of an entry: the password, a field's value, a new or removed field, free text.
    func editedEntry(_ old: String) -> (text: String, what: String) {
        var lines = SyncModelText.lines(old)
        if lines.isEmpty { return (freshEntry().0, "rewrites") }
        let fieldIndices = lines.indices.dropFirst().filter { SyncModelText.fieldKey(lines[$0]) != nil }
        let presentKeys = Set(fieldIndices.compactMap { SyncModelText.fieldKey(lines[$0]) })
        let roll = Int.random(in: 0..<100, using: &random)
        if roll < 30 || (fieldIndices.isEmpty && roll < 60) {
            lines[0] = newValue()
            return (lines.map { $0 + "\n" }.joined(), "changes the password of")
        } else if roll < 65, let index = fieldIndices.randomElement(using: &random) {
            let key = SyncModelText.fieldKey(lines[index]) ?? "login"
            lines[index] = "\(key): \(newValue())"
            return (lines.map { $0 + "\n" }.joined(), "changes \(key) of")
        } else if roll < 80, let key = Self.fieldKeys.filter({ !presentKeys.contains($0) }).first {
            let position = (fieldIndices.last ?? 0) + 1
            lines.insert("\(key): \(newValue())", at: position)
            return (lines.map { $0 + "\n" }.joined(), "adds \(key) to")
        } else if roll < 85, fieldIndices.count > 1, let index = fieldIndices.randomElement(using: &random) {
            let key = SyncModelText.fieldKey(lines[index]) ?? "?"
            lines.remove(at: index)
            return (lines.map { $0 + "\n" }.joined(), "removes \(key) from")
        } else {
            lines.append("more text \(newValue())")
            return (lines.map { $0 + "\n" }.joined(), "adds free text to")
        }
    }

    /// The entries users pick: all of them, or with a hostile clone only those an honest user made.
    func honestEntries(_ snapshot: SyncModelSnapshot) -> [String] {
        (hostileKey == nil ? snapshot.entries : snapshot.entries.filter { entryNames.contains($0) }).filter {
            !Self.isByteEntry($0)
        }
    }

    func editEntry(_ clone: Int) throws {
        let before = snapshots[clone]
        guard let name = honestEntries(before).randomElement(using: &random),
            let item = before.items[name + ".gpg"]
        else {
            return try addEntry(clone)
        }
        let text: String
        let what: String
        if item.conflict {
            text = SyncModelText.resolved(item.text) { random.chance(0.5) }
            what = "resolves the conflict in"
        } else {
            (text, what) = editedEntry(item.text)
        }
        let line: String
        if options.without.contains("edit") || random.chance(0.7) {
            line = command(clone, randomStyle(), ["insert", "-m", "-f", name], input: text)
        } else {
            let spelled = text.replacing("MARK-", with: "@@-")
            line =
                "EDITOR=\"$S/editor\" SYNCMODEL_CONTENT=\(SyncModelShell.quote(spelled)) "
                + command(clone, randomStyle(), ["edit", name])
        }
        try userCommand(
            clone, line, comment: "\(Self.cloneNames[clone]) \(what) \(name)", path: name + ".gpg",
            newText: text)
    }

    func addEntry(_ clone: Int) throws {
        let existing = Set(snapshots[clone].entries)
        guard let name = entryNames.filter({ !existing.contains($0) }).randomElement(using: &random)
        else {
            return try options.without.contains("remove") ? editEntry(clone) : removeEntry(clone)
        }
        let (text, _) = freshEntry()
        try userCommand(
            clone, command(clone, randomStyle(), ["insert", "-m", name], input: text),
            comment: "\(Self.cloneNames[clone]) adds \(name)", path: name + ".gpg", newText: text)
    }

    func renameEntry(_ clone: Int) throws {
        let existing = honestEntries(snapshots[clone])
        var free = entryNames.filter { !snapshots[clone].entries.contains($0) }
        guard let source = existing.randomElement(using: &random) else { return try editEntry(clone) }
        // With a hostile clone, users keep entries on their side of the folder it may read.
        if hostileKey != nil {
            free = free.filter { Self.isHostileFolder($0) == Self.isHostileFolder(source) }
        }
        guard let target = free.randomElement(using: &random) else { return try editEntry(clone) }
        try userCommand(
            clone, command(clone, randomStyle(), ["mv", source, target]),
            comment: "\(Self.cloneNames[clone]) renames \(source) to \(target)", path: nil, newText: nil)
    }

    func removeEntry(_ clone: Int) throws {
        guard let name = honestEntries(snapshots[clone]).randomElement(using: &random) else {
            return try addEntry(clone)
        }
        try userCommand(
            clone, command(clone, randomStyle(), ["rm", "-f", name]),
            comment: "\(Self.cloneNames[clone]) removes \(name)", path: name + ".gpg", newText: "")
    }

    func changeRecipients(_ clone: Int) throws {
        let folder = random.pick(recipientFolders)
        var keys = sandbox.keys.map(\.email)
        keys.shuffle(using: &random)
        var chosen = Array(keys.prefix(Int.random(in: 1...3, using: &random)))
        let hasOwn = snapshots[clone].items[folder + "/.gpg-id"] != nil
        if !folder.isEmpty && hasOwn && random.chance(0.15) { chosen = [""] }
        let arguments = ["init"] + (folder.isEmpty ? [] : ["-p", folder]) + chosen
        try userCommand(
            clone, command(clone, randomStyle(), arguments),
            comment:
                "\(Self.cloneNames[clone]) sets the recipients of \(folder.isEmpty ? "the store" : folder) to "
                + (chosen == [""] ? "its parent's" : chosen.joined(separator: " ")),
            path: nil, newText: nil)
    }

    /// Writes a file that is not an entry and commits it with `coffer git`.
    func changeFile(_ clone: Int) throws {
        guard try gitState(clone).settled else {
            try sync(clone, mayKill: false)
            return
        }
        let before = snapshots[clone]
        let file = random.pick([Self.textFile, Self.textFile, Self.jsonFile, Self.binaryFile])
        var bytes: [UInt8]
        var what: String
        switch file {
        case Self.textFile:
            let old = before.items[file]
            if let old, old.conflict {
                bytes = Array(SyncModelText.resolved(old.text) { random.chance(0.5) }.utf8)
                what = "resolves the conflict in"
            } else {
                var lines = SyncModelText.lines(old?.text ?? "")
                let roll = Int.random(in: 0..<100, using: &random)
                if roll < 50 || lines.isEmpty {
                    lines.append(newNote())
                    what = "appends a line to"
                } else if roll < 80 {
                    lines[Int.random(in: 0..<lines.count, using: &random)] = "changed " + newNote()
                    what = "changes a line of"
                } else {
                    lines.remove(at: Int.random(in: 0..<lines.count, using: &random))
                    what = "removes a line of"
                }
                bytes = Array(lines.map { $0 + "\n" }.joined().utf8)
            }
        case Self.jsonFile:
            bytes = Array("{\"note\": \"\(newNote())\"}\n".utf8)
            what = "rewrites"
        default:
            bytes = [0, 1, 2, 0xff, 0xfe] + Array(newNote().utf8) + [0]
            bytes += (0..<8).map { _ in UInt8.random(in: 0...255, using: &random) }
            what = "rewrites"
        }
        let style = randomStyle()
        let folder = file.contains("/") ? String(file[..<file.lastIndex(of: "/")!]) : ""
        var line = folder.isEmpty ? "" : "mkdir -p \"$S/\(Self.cloneNames[clone])/\(folder)\" && "
        line += "printf \(SyncModelShell.printfFormat(bytes)) > \"$S/\(Self.cloneNames[clone])/\(file)\" && "
        line += command(clone, style, ["git", "add", "--", file]) + " && "
        line += command(
            clone, style, ["git", "commit"] + (signed ? ["-S"] : []) + ["-q", "-m", "Edit \(file)."])
        try userCommand(
            clone, line, comment: "\(Self.cloneNames[clone]) \(what) \(file)", path: file,
            newText: String(decoding: bytes, as: UTF8.self), newBytes: bytes)
    }

    func fsck(_ clone: Int) throws {
        let before = snapshots[clone]
        let settledBefore = try gitState(clone).settled
        let result = try shell(
            command(clone, randomStyle(), ["fsck", "--fix"]),
            comment: "\(Self.cloneNames[clone]) runs fsck --fix")
        let after = snapshot(clone)
        snapshots[clone] = after
        let state = try gitState(clone)
        if settledBefore && !state.settled {
            failOnce(
                "uncommitted fsck", "command-left-uncommitted",
                "fsck --fix left \(Self.cloneNames[clone]) not clean: \(state.summary)")
        }
        guard state.settled else { return }
        // After a killed sync, fsck --fix may undo it: the clone is then where it last was settled.
        let reference = settledBefore ? before.markers : baselines[clone]
        for marker in reference.subtracting(after.markers).sorted()
        where !ledger.mayBeMissing(marker) && ledger.recordLoss(marker, step: step) {
            fail(
                "fsck-lost-value",
                "fsck --fix (exit \(result.status)) removed \(marker) from \(Self.cloneNames[clone]): "
                    + ledger.story(of: marker, cloneNames: Self.cloneNames))
        }
        baselines[clone] = after.markers
        settledHeads[clone] = state.head
    }

    func toggleMode(_ clone: Int) throws {
        modes[clone] = modes[clone] == "merge" ? "rebase" : "merge"
        try shell(
            command(clone, "git", ["config", "coffer.syncmode", modes[clone]]),
            comment: "\(Self.cloneNames[clone]) switches to \(modes[clone]) mode")
    }

    /// Runs a command that changes one file (or, with `path` nil, moves or re-encrypts entries) and checks
    /// that it did that and nothing else. The text the command replaces is what the user destroys.
    func userCommand(
        _ clone: Int, _ line: String, comment: String, path: String?, newText: String?,
        newBytes: [UInt8]? = nil
    ) throws {
        let before = snapshots[clone]
        let stateBefore = try gitState(clone)
        let result = try shell(line, comment: comment)
        let after = snapshot(clone)
        snapshots[clone] = after
        let oldMarkers = path.flatMap { before.items[$0]?.markers } ?? []
        let newMarkers =
            newBytes.map { SyncModelText.markers(in: $0, tag: tag) }
            ?? newText.map { SyncModelText.markers(in: Array($0.utf8), tag: tag) } ?? []
        let replaced = Set(oldMarkers).subtracting(newMarkers)
        let name = Self.cloneNames[clone]
        if result.status == 0 {
            for marker in newMarkers where !after.markers.contains(marker) {
                fail("write-missing", "\(line) exited 0 but \(marker) is not in \(name)'s store")
            }
            for marker in before.markers.subtracting(replaced).subtracting(after.markers)
            where ledger.recordLoss(marker, step: step) {
                fail(
                    "command-lost-value",
                    "\(line) exited 0 and removed \(marker), which it did not touch: "
                        + ledger.story(of: marker, cloneNames: Self.cloneNames))
            }
            // Destroyed when no file but Mallory's copies holds it: she may drop those at any time.
            for marker in replaced where !after.honestMarkers.contains(marker) {
                ledger.recordDestruction(marker, clone: clone, step: step)
            }
            for marker in newMarkers where after.markers.contains(marker) && !before.markers.contains(marker)
            {
                ledger.recordWrite(marker, clone: clone, step: step, what: "\(comment) (\(path ?? "?"))")
                if let path, path.hasSuffix(".gpg") {
                    writtenIn[marker] = PasswordStore.folder(of: String(path.dropLast(4)))
                }
            }
        } else {
            // What a hostile clone pushed makes writes fail (a key not accepted, a line two keys answer to).
            if stateBefore.settled && hostilePushes == 0 {
                failOnce(
                    "command-failed " + SyncModelRun.normalized(result.errorText), "command-failed",
                    "\(line) failed (\(result.status)) on a clean clone: \(result.errorText.lastLines)")
            }
            for marker in before.markers.subtracting(after.markers)
            where ledger.recordLoss(marker, step: step) {
                fail(
                    "failed-command-lost-value",
                    "\(line) failed (\(result.status)) and removed \(marker): "
                        + ledger.story(of: marker, cloneNames: Self.cloneNames))
            }
        }
        ledger.recordSeen(after.markers, clone: clone, step: step)
        let state = try gitState(clone)
        if result.status == 0 && stateBefore.settled && !state.settled {
            failOnce(
                "uncommitted " + comment.split(separator: " ").dropFirst().prefix(1).joined(),
                "command-left-uncommitted",
                "\(line) exited 0 but left \(name) not clean: \(state.summary)")
        }
        if state.settled {
            baselines[clone] = after.markers
            settledHeads[clone] = state.head
        }
    }

    // MARK: Sync

    /// Runs `sync` on a clone (sometimes armed to be killed) and checks what it did.
    @discardableResult
    func sync(_ clone: Int, mayKill: Bool, style given: String? = nil) throws -> Int32 {
        let style = given ?? randomStyle()
        let name = Self.cloneNames[clone]
        var line = command(clone, style, ["sync"])
        var comment =
            "\(name) syncs (\(modes[clone]), coffer \(style == "path" ? "on PATH" : style == "full" ? "off PATH" : "as pass"))"
        let armed = mayKill && random.chance(0.25)
        if armed {
            let at = Int.random(in: 1...6, using: &random)
            let phase = random.pick(["before", "after", "0.02", "0.1", "0.1", "0.3", "0.6"])
            line = "rm -f \"$S/kill-count\"; SYNCMODEL_KILL='\(at) \(phase)' setsid -w " + line
            comment +=
                ", killed at changing git run \(at) \(Double(phase) == nil ? phase : "+\(phase) s (timing)")"
            figures.killsArmed += 1
        }
        figures.syncs += 1
        let remoteBefore = try remoteHead()
        // "Nothing was changed" means: back where the clone was when it last was settled (a sync that
        // follows a killed one first undoes what that one left).
        let headBefore = settledHeads[clone]
        let snapshotBefore = snapshots[clone]
        let settledBefore = try gitState(clone).settled
        let result = try shell(line, comment: comment)
        if armed && result.status == 128 + SIGKILL { figures.killed += 1 }
        if result.status != 0 { figures.failedSyncs += 1 }
        lastSync[clone] = "\(line) -> \(result.status): \(result.errorText.lastLines)"
        let after = snapshot(clone)
        snapshots[clone] = after
        ledger.recordSeen(after.markers, clone: clone, step: step)
        let state = try gitState(clone)
        let remote = try remoteHead()
        if result.status == 0 && settledBefore {
            checkRecipientReport(
                before: snapshotBefore, after: after, output: result.outputText + result.errorText)
        }
        if result.status == 0 {
            if !state.settled {
                failOnce(
                    "exit0-unsettled \(state.operation ?? "") \(state.branch == nil)", "sync-exit0-unclean",
                    "\(line) exited 0 leaving \(name) not clean: \(state.summary)")
            }
            if state.head != remote {
                failOnce(
                    "exit0-not-pushed", "sync-exit0-not-pushed",
                    "\(line) exited 0 but \(name)'s HEAD \(state.head ?? "none") is not the remote's \(remote ?? "none")"
                )
            }
        }
        // A sync that stops saying it changed nothing has changed nothing.
        // A merge by hand under way before (the person's) may still be under way.
        if result.status != 0 && result.errorText.contains("Nothing was changed")
            && ((settledBefore && !state.settled) || state.head != headBefore)
        {
            failOnce(
                "stop-changed", "sync-stop-changed",
                "\(line) said nothing was changed but left \(name) \(state.summary), HEAD "
                    + "\(state.head?.prefix(10) ?? "none") (before: \(headBefore?.prefix(10) ?? "none"))")
        }
        guard state.settled else { return result.status }
        // What the clone held, and what the remote held if the clone now builds on it, is still there.
        // A value the clone held only in a copy Mallory planted goes when she overwrites that copy.
        var held = baselines[clone].subtracting(snapshotBefore.plantedOnlyMarkers)
        var source: [String: String] = [:]
        if let remoteBefore, try headContains(clone, remoteBefore) {
            for marker in try markers(ofRemoteCommit: remoteBefore) where !held.contains(marker) {
                held.insert(marker)
                source[marker] = "the remote's \(remoteBefore.prefix(10)), which it merged"
            }
        }
        for marker in held.subtracting(after.markers).sorted()
        where !ledger.mayBeMissing(marker) && ledger.recordLoss(marker, step: step) {
            fail(
                "sync-lost-value",
                "\(line) (exit \(result.status)) lost \(marker) (held by \(source[marker] ?? name)) on \(name) "
                    + "(\(modes[clone]) mode): " + ledger.story(of: marker, cloneNames: Self.cloneNames))
        }
        baselines[clone] = after.markers
        settledHeads[clone] = state.head
        checkSettledFiles(clone, after)
        let advice = ["Merge it by hand", "Keep one version"].first { result.errorText.contains($0) }
        if result.status != 0, let advice, followingAdvice.contains(advice) {
            failOnce(
                "advice-again " + name, "sync-advice-repeated",
                "\(line) said \"\(advice)\" again right after \(name) followed that advice: "
                    + result.errorText.lastLines + "\n    history there:\n"
                    + ((try? checkGit([
                        "-C", clonePath(clone), "log", "--graph", "--format=%h %s", "-n", "40", "HEAD",
                        "refs/remotes/origin/main",
                    ]).outputText) ?? ""))
        } else if result.status != 0, let advice {
            followingAdvice.insert(advice)
            defer { followingAdvice.remove(advice) }
            if advice == "Merge it by hand" {
                try mergeByHand(clone, advice: result.errorText)
            } else {
                try keepOneVersion(clone, advice: result.errorText)
            }
        }
        return result.status
    }

    /// What a person does when sync stops on something it cannot merge and says "Merge it by hand": `git
    /// merge` the remote's branch, keep both sides of every file (not entry) git leaves unmerged (ours,
    /// then theirs) and `git add` them, then sync again. Entries are never left to the person: the merge
    /// driver or that sync merges them.
    func mergeByHand(_ clone: Int, advice: String) throws {
        let name = Self.cloneNames[clone]
        let before = snapshots[clone]
        let remote = try remoteHead()
        figures.manualMerges += 1
        let sign = signed ? ["-S"] : []
        try shell(
            command(clone, "git", ["merge", "--no-edit"] + sign + ["origin/main"]),
            comment: "\(name) merges by hand, as sync asked")
        let unmerged = try checkGit(["-C", clonePath(clone), "diff", "--name-only", "-z", "--diff-filter=U"])
            .standardOutput.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        // Entries git leaves unmerged (changed on one side, removed or renamed on the other) are left to
        // sync, as its advice says: the person fixes and adds the other files only.
        for path in unmerged where !path.hasSuffix(".gpg") && !advice.contains(path) {
            failOnce(
                "stop-unnamed " + path, "sync-stop-unnamed-path",
                "sync stopped on \(name) but did not name \(path), which a merge by hand leaves unmerged")
        }
        try keepBothSides(clone, of: unmerged.filter { !$0.hasSuffix(".gpg") })
        // Entries that are not text and that both sides changed: the advice names them, and the person
        // keeps one version of each in the same merge.
        try keepOneSide(clone, of: unmerged.filter { $0.hasSuffix(".gpg") && advice.contains($0) })
        // Then sync again, which settles the entries, commits the merge and pushes it.
        let finished = try sync(clone, mayKill: false, style: "path")
        // Finished means merged, committed and pushed; exit 1 is right when an entry keeps a conflict
        // inside it (sync says so), as after any sync (seed 802990158119).
        let settledNow = try gitState(clone)
        let remoteNow = try remoteHead()
        let keptConflict = finished == 1 && lastSync[clone].contains("both sides changed the same field")
        if finished != 0 && !(keptConflict && settledNow.settled && settledNow.head == remoteNow) {
            fail("manual-merge-not-finished", "sync after the merge by hand on \(name) exited \(finished)")
        }
        let after = snapshot(clone)
        snapshots[clone] = after
        ledger.recordSeen(after.markers, clone: clone, step: step)
        let expected = before.markers.union(try remote.map { try markers(ofRemoteCommit: $0) } ?? [])
        for marker in expected.subtracting(after.markers).sorted()
        where !ledger.mayBeMissing(marker) && ledger.recordLoss(marker, step: step) {
            fail("manual-merge-lost-value", "the merge by hand on \(name) lost \(marker)")
        }
        let state = try gitState(clone)
        if state.settled {
            baselines[clone] = after.markers
            settledHeads[clone] = state.head
        } else {
            fail("manual-merge-failed", "the merge by hand left \(name) \(state.summary)")
        }
    }

    /// What a person does with files (not entries) a merge by hand leaves unmerged: keeps both sides
    /// (ours, then theirs) and `git add`s them.
    func keepBothSides(_ clone: Int, of files: [String]) throws {
        let name = Self.cloneNames[clone]
        for path in files {
            let stages = ["2", "3"].map {
                command(clone, "git", ["cat-file", "blob", ":\($0):\(path)"]) + " 2>/dev/null"
            }
            try shell(
                "{ \(stages.joined(separator: "; ")); } > \"$S/\(name)/\"\(SyncModelShell.quote(path))",
                comment: "\(name) keeps both sides of \(path)")
        }
        if !files.isEmpty { try shell(command(clone, "git", ["add", "--"] + files)) }
    }

    /// Files that are not entries never rest with conflict markers; entries always decrypt.
    func checkSettledFiles(_ clone: Int, _ snapshot: SyncModelSnapshot) {
        checkBinaryEntries(clone, snapshot)
        try? checkPurged()
        for (path, item) in snapshot.items.sorted(by: { $0.key < $1.key }) where !Self.isPlanted(path) {
            if !path.hasSuffix(".gpg") && item.conflict {
                let kind = path.hasSuffix(".gpg-id") ? "gpg-id-conflict-markers" : "file-conflict-markers"
                failOnce(
                    kind + path, kind,
                    "\(path) holds conflict markers on \(Self.cloneNames[clone]) with no git operation under way "
                        + "(committed with markers)")
            }
            if let problem = item.problem {
                failOnce(
                    "undecryptable " + path, "entry-does-not-decrypt",
                    "\(path) on \(Self.cloneNames[clone]) does not decrypt: \(problem)")
            }
        }
    }

    // MARK: Final syncs and checks

    /// Rounds of syncs, every clone in turn, no kills, until every clone is clean and at the remote's
    /// commit. Returns whether they got there.
    func finalSyncs() throws -> Bool {
        script.append("# final syncs: every clone in turn until all agree")
        for round in 1...6 {
            figures.finalRounds = round
            var allSucceeded = true
            for clone in 0..<3 where try sync(clone, mayKill: false) != 0 {
                allSucceeded = false
            }
            if allSucceeded, try converged() { return true }
        }
        var states: [String] = []
        let remote = try remoteHead() ?? "none"
        var refusals = true
        for clone in 0..<3 {
            let state = try gitState(clone)
            states.append(
                "\(Self.cloneNames[clone]): \(state.summary), HEAD \(state.head?.prefix(10) ?? "none")"
                    + " (remote \(remote.prefix(10))); last: \(lastSync[clone])")
            if !(state.settled && state.head == remote) {
                // Stopped, clean, for a merge no recipient it accepted may read: the user's move (seed
                // 1096216358055, Mallory renamed a root entry into team/ while it was edited).
                refusals =
                    refusals && state.settled && lastSync[clone].contains("Nothing was changed")
                    && lastSync[clone].contains("recipients accept")
            }
        }
        if hostileKey != nil && refusals {
            figures.stoppedForAcceptance += 1
            script.append("# the clones do not agree: a sync stops until its user accepts a recipient")
            return false
        }
        fail(
            "no-convergence",
            "after 6 rounds of syncs the clones do not agree:\n    " + states.joined(separator: "\n    "))
        return false
    }

    func converged() throws -> Bool {
        let remote = try remoteHead()
        for clone in 0..<3 {
            let state = try gitState(clone)
            if !state.settled || state.head != remote || state.branch != "main" { return false }
        }
        return true
    }

    func finalChecks(converged: Bool) throws {
        script.append("# final checks")
        try checkPurged()
        // The values: in clone one's entries, decrypted by gpg itself (or, without agreement, anywhere).
        var present: Set<String> = []
        var conflicted: [String] = []
        for clone in converged ? [0] : [0, 1, 2] {
            let root = clonePath(clone)
            for path in Self.files(under: root) {
                var bytes = TestFiles.read(root + "/" + path) ?? []
                if path.hasSuffix(".gpg") {
                    let decrypted = try TestProcess.run(
                        ["gpg", "--batch", "--quiet", "--decrypt", root + "/" + path],
                        environment: sandbox.environment)
                    if decrypted.status != 0 {
                        failOnce(
                            "undecryptable " + path, "entry-does-not-decrypt",
                            "gpg -d \(path) on \(Self.cloneNames[clone]) failed: \(decrypted.errorText.lastLines)"
                        )
                    }
                    bytes = decrypted.standardOutput
                    if clone == 0 && EntryMerge.containsConflict(bytes) {
                        conflicted.append(String(path.dropLast(4)))
                    }
                } else if EntryMerge.containsConflict(bytes) {
                    let kind = path.hasSuffix(".gpg-id") ? "gpg-id-conflict-markers" : "file-conflict-markers"
                    failOnce(kind + path, kind, "\(path) holds conflict markers at the end")
                }
                present.formUnion(SyncModelText.markers(in: bytes, tag: tag))
            }
        }
        // Without agreement a clone's own commits may wait in an unfinished rebase, outside its work tree:
        // the failure to converge is reported, and the values are checked only in converged runs.
        for marker in ledger.required where converged && !present.contains(marker) {
            fail(
                "final-lost-value",
                "\(marker) is in no final entry or file: "
                    + ledger.story(of: marker, cloneNames: Self.cloneNames))
        }
        figures.conflictedEntries = conflicted.count
        for name in conflicted {
            let shown = try TestProcess.run(
                [coffer, "show", name],
                environment: environment.merging(["PASSWORD_STORE_DIR": clonePath(0)]) { $1 })
            if shown.status != 0 || !shown.errorText.contains("conflict") {
                fail(
                    "conflict-not-reported",
                    "\(name) holds a conflict but coffer show (exit \(shown.status)) does not say so")
            }
        }
        // With a hostile clone, entries are left narrower than their .gpg-id on purpose; what counts is
        // that its key opens no honest value from elsewhere.
        if converged && hostileKey == nil { try checkRecipients(0) }
        if hostileKey != nil { try checkHostileReads() }
        try checkNoPlaintext()
    }

    /// Every entry is encrypted to exactly the encryption subkeys its nearest `.gpg-id` names.
    func checkRecipients(_ clone: Int) throws {
        let root = clonePath(clone)
        let store = sandbox.store(root: root)
        for path in Self.files(under: root) where path.hasSuffix(".gpg") {
            var folder = path.contains("/") ? String(path[..<path.lastIndex(of: "/")!]) : ""
            var idFile: String?
            while true {
                let candidate = (folder.isEmpty ? "" : folder + "/") + ".gpg-id"
                if TestFiles.exists(root + "/" + candidate) {
                    idFile = candidate
                    break
                }
                if folder.isEmpty { break }
                folder = folder.contains("/") ? String(folder[..<folder.lastIndex(of: "/")!]) : ""
            }
            guard let idFile else {
                fail("recipients", "\(path) has no .gpg-id above it")
                continue
            }
            let ids = SyncModelText.lines(
                String(decoding: TestFiles.read(root + "/" + idFile) ?? [], as: UTF8.self)
            )
            .map { String($0.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0]) }
            .map { $0.trimmed(" \t") }.filter { !$0.isEmpty }
            guard ids.allSatisfy({ id in sandbox.keys.contains { $0.email == id } }), !ids.isEmpty else {
                failOnce(
                    "bad-gpg-id " + idFile, "gpg-id-invalid", "\(idFile) does not list recipients: \(ids)")
                continue
            }
            let wanted = try keyIDs(for: ids.sorted(), store: store)
            let actual = OpenPGPPackets.recipientKeyIDs(TestFiles.read(root + "/" + path) ?? []) ?? []
            if actual != wanted {
                failOnce(
                    "recipients " + path, "recipients-mismatch",
                    "\(path) is encrypted to \(actual.sorted()) but \(idFile) names \(ids) (\(wanted.sorted()))"
                )
            }
        }
    }

    func keyIDs(for recipients: [String], store: PasswordStore) throws -> Set<String> {
        if let known = recipientKeyIDs[recipients] { return known }
        let ids = try store.engine.encryptionKeyIDs(for: recipients)
        recipientKeyIDs[recipients] = ids
        return ids
    }

    /// No value marker in any file of the sandbox or /dev/shm, nor in any git object of any repository.
    func checkNoPlaintext() throws {
        let needle = "MARK-\(tag)-"
        let grep = try TestProcess.run(
            ["grep", "-rlaF", "--", needle, sandbox.directory, "/dev/shm"], environment: sandbox.environment)
        let files = grep.outputText.split(separator: "\n")
        if !files.isEmpty {
            fail("plaintext-on-disk", "plaintext values in: " + files.prefix(8).joined(separator: ", "))
        }
        let repositories = (0..<3).map { clonePath($0) + "/.git" } + [sandbox.directory + "/remote.git"]
        for repository in repositories {
            let objects = try TestProcess.run(
                ["git", "--git-dir", repository, "cat-file", "--batch-all-objects", "--batch"],
                environment: sandbox.environment)
            if objects.standardOutput.containsBytes(Array(needle.utf8)) {
                fail(
                    "plaintext-in-git",
                    "a git object of \(repository.dropFirst(sandbox.directory.count + 1)) holds plaintext")
            }
        }
    }

    /// An error message with names, numbers and markers blurred, to tell failures of one kind apart.
    static func normalized(_ text: String) -> String {
        let line = text.split(separator: "\n").last.map(String.init) ?? ""
        var output = ""
        var lastWasDigit = false
        for character in line.prefix(90) {
            if character.isNumber {
                if !lastWasDigit { output.append("N") }
                lastWasDigit = true
            } else {
                output.append(character)
                lastWasDigit = false
            }
        }
        return output
    }
}

extension String {
    /// The text without trailing newlines.
    var trimmingNewlines: String {
        var text = self
        while text.last == "\n" { text.removeLast() }
        return text
    }

    /// The last three lines, joined, for messages.
    var lastLines: String {
        split(separator: "\n").suffix(3).joined(separator: " | ")
    }

    /// The text without `characters` at either end.
    func trimmed(_ characters: String) -> String {
        var text = Substring(self)
        while let first = text.first, characters.contains(first) { text.removeFirst() }
        while let last = text.last, characters.contains(last) { text.removeLast() }
        return String(text)
    }
}

extension Array where Element == UInt8 {
    /// Whether `needle` occurs in the bytes.
    func containsBytes(_ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, needle.count <= count else { return needle.isEmpty }
        var index = 0
        while index + needle.count <= count {
            if self[index] == needle[0] && Array(self[index..<(index + needle.count)]) == needle {
                return true
            }
            index += 1
        }
        return false
    }
}
