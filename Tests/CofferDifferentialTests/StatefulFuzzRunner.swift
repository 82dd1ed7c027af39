import Coffer
import CofferTestSupport
import Dispatch

/// One program's sandbox for a whole sequence. Its gpg-agent keeps running from step to step; the two
/// twins of a sequence live at different paths of the same length, which reports show as `$SANDBOX`.
final class FuzzTwin: @unchecked Sendable {
    let program: ProgramUnderTest
    let sandbox: DifferentialSandbox
    /// Each regular file's bytes after the last step, by path relative to `HOME`.
    private(set) var files: [String: [UInt8]] = [:]
    /// The passwords `generate` printed so far, each with the text that stands for it in reports.
    private(set) var masks: [(password: [UInt8], mask: [UInt8])] = []
    /// The folders of every twin of the sequence, shown as `$SANDBOX`: after ``adopt(_:)`` a git log can
    /// hold the other twin's path (a commit message naming `EDITOR`).
    var sandboxFolders: [String] = []
    /// Whether ``smallDisk()`` mounted its tmpfs, or could not.
    var mountedSmallDisk = false
    var smallDiskFailed = false

    init(program: ProgramUnderTest, locale: TestLocale) throws {
        self.program = program
        sandbox = try DifferentialSandbox(locale: locale)
        try sandbox.link(program.path)
    }

    deinit {
        sandbox.stopAgent()
        if mountedSmallDisk {
            _ = try? TestProcess.run(
                ["umount", "-l", sandbox.directory + "/small"], environment: sandbox.baseEnvironment)
        }
    }

    /// Runs one operation, then takes the snapshot of the sandbox's home.
    func step(_ operation: FuzzOperation, decryptions: DecryptionCache) throws -> FuzzOutcome {
        var environment = sandbox.commandEnvironment(operation.environment)
        environment["PATH"] = sandbox.bin + ":/usr/bin:/bin"
        let result = try TestProcess.run(
            ["coffer"] + operation.arguments.map(sandbox.expand), environment: environment,
            directory: sandbox.home, input: operation.input, timeout: 60)
        if let shape = operation.generated, let password = Self.printedPassword(result.standardOutput) {
            let masked = shape.mask(String(decoding: password, as: UTF8.self))
            let mask = masked.replacing("<generated: ", with: "<generated #\(masks.count + 1): ")
            masks.append((password, Array(mask.utf8)))
        }
        let masks = self.masks
        var snapshot = StoreSnapshot(
            root: sandbox.home, temporary: sandbox.temporary, environment: sandbox.baseEnvironment,
            before: { [files] in files[$0] }, maskEntry: { Self.replacing(masks, in: $0) },
            decryptions: decryptions)
        let folders = sandboxFolders.isEmpty ? [sandbox.directory] : sandboxFolders
        let lines = try snapshot.render().map { line in
            folders.reduce(line) { $0.replacing($1, with: "$SANDBOX") }
        }
        files = snapshot.files
        return FuzzOutcome(result: result, files: lines)
    }

    /// Standard output or error made comparable: the sandbox's path, generated passwords, git's hashes and
    /// counts, and the random names of pass's temporary files are masked.
    func normalise(_ bytes: [UInt8]) -> [UInt8] {
        let folders = sandboxFolders.isEmpty ? [sandbox.directory] : sandboxFolders
        let replaced = Self.replacing(
            folders.map { (Array($0.utf8), Array("$SANDBOX".utf8)) } + masks, in: bytes)
        guard var text = String(validating: replaced, as: UTF8.self) else { return replaced }
        text = Report.maskingGit(text)
        text = text.replacing(#/(/dev/shm/[a-z]+)\.[A-Za-z0-9]{13}/[A-Za-z0-9]{6}-/#) { match in
            "\(match.output.1).RANDOM13/RANDOM6-"
        }
        return Array(text.utf8)
    }

    /// Makes this twin's home, `TMPDIR` and generated passwords a copy of `other`'s, so that a sequence
    /// goes on comparing from the same state after a divergence.
    func adopt(_ other: FuzzTwin) throws {
        let environment = sandbox.baseEnvironment
        try TestProcess.check(
            ["rm", "-rf", sandbox.home, sandbox.temporary], environment: environment)
        try TestProcess.check(
            ["cp", "-a", other.sandbox.home, other.sandbox.temporary, sandbox.directory + "/"],
            environment: environment)
        files = other.files
        masks = other.masks
    }

    /// The password that `generate` printed (`\e[1m\e[93mPASSWORD\e[0m`), if it printed one.
    static func printedPassword(_ output: [UInt8]) -> [UInt8]? {
        let start = Array("\u{1b}[1m\u{1b}[93m".utf8)
        guard let opening = output.firstRange(of: start) else { return nil }
        let rest = output[opening.upperBound...]
        guard let closing = rest.firstRange(of: Array("\u{1b}[0m".utf8)), closing.lowerBound > rest.startIndex
        else { return nil }
        return Array(rest[..<closing.lowerBound])
    }

    /// `bytes` with every occurrence of each pattern replaced, in order.
    static func replacing(_ replacements: [(password: [UInt8], mask: [UInt8])], in bytes: [UInt8]) -> [UInt8]
    {
        var result = bytes
        for (pattern, replacement) in replacements where !pattern.isEmpty {
            guard result.firstRange(of: pattern) != nil else { continue }
            var output: [UInt8] = []
            var index = result.startIndex
            while let found = result[index...].firstRange(of: pattern) {
                output += result[index..<found.lowerBound]
                output += replacement
                index = found.upperBound
            }
            output += result[index...]
            result = output
        }
        return result
    }
}

/// One twin's outcome of a step: how the command ended, and the snapshot's lines.
struct FuzzOutcome: Sendable {
    var result: ProcessResult
    var files: [String]
}

/// A step after which coffer's outcome differed from pass's.
struct FuzzDivergence: Sendable {
    /// The step's index in the sequence.
    var index: Int
    /// What kind of step it was and what differed (`mv -f [entry, entry] ⇒ status`): divergences with
    /// the same signature are taken for the same fault.
    var signature: String
    /// The difference of the two reports (`-` pass, `+` coffer).
    var difference: String

    /// The signature with the command alone instead of its flags and editor (`edit [entry] ⇒ stderr`):
    /// a soak shrinks one divergence of each family.
    var family: String {
        let command = signature.prefix { $0 != " " }
        let rest =
            signature.firstRange(of: " [").map { signature[$0.lowerBound...] }
            ?? signature.firstRange(of: " ⇒").map { signature[$0.lowerBound...] } ?? ""
        return String(command + rest)
    }
}

/// What a run of a sequence found.
struct FuzzRunResult: Sendable {
    /// Steps run.
    var steps = 0
    /// pass's exit status at each step.
    var passStatuses: [Int32] = []
    /// Divergences, in order (after each, coffer's twin continued from a copy of pass's state).
    var divergences: [FuzzDivergence] = []
    /// Differences that are deliberate (README, "Where coffer deliberately differs from pass").
    var tolerated: [String] = []
    /// Differences that a race inside gpg caused ("lockfile"), which say nothing about coffer.
    var races = 0
    /// Steps that coffer also ran killed or out of room (``FuzzHazard``).
    var hazards = 0
}

/// A step whose outcomes differ, as the rules of ``FuzzTolerance`` see it.
struct FuzzStep {
    /// The operation.
    let operation: FuzzOperation
    /// Whether the store was a git repository before the step.
    let git: Bool
    /// pass's files before the step, by path relative to `HOME`.
    let before: [String: [UInt8]]
    /// How pass's command ended.
    let pass: ProcessResult
    /// How coffer's command ended.
    let coffer: ProcessResult
    /// The parts of the reports that differ (`status`, `stdout`, `stderr`, `files`, `git`).
    let differing: [String]
    /// Whether coffer's command left every file as it was.
    let cofferChangedNothing: Bool
    /// pass's snapshot lines before the step and after it.
    let passLines: (before: [String], after: [String])

    /// Whether git's index held staged changes, or the work tree untracked files, before the step (a
    /// `status: XY` line with X a change or `??`): a commit of pass's can sweep them in.
    var hadStrayChanges: Bool {
        passLines.before.contains { line in
            guard line.hasPrefix("    status: "), let staged = line.dropFirst("    status: ".count).first
            else {
                return false
            }
            return "MADRCT?".contains(staged)
        }
    }

    /// Whether git's work tree or index held any change before the step (a `status:` line): pass's
    /// `init` adds the whole store (`git add "$PREFIX"`), so its commit sweeps in unstaged ones too.
    var hadAnyChanges: Bool { passLines.before.contains { $0.hasPrefix("    status: ") } }

    /// Whether pass's store had, before or after the step, a folder whose name ends in `.gpg`.
    var hasFolderNamedLikeEntry: Bool {
        (passLines.before + passLines.after).contains { $0.hasPrefix("dir  ") && $0.hasSuffix(".gpg") }
    }

    /// Lines of pass's standard output that coffer's does not have.
    var passOnlyOutput: Set<Substring> {
        Set(pass.outputText.split(separator: "\n")).subtracting(coffer.outputText.split(separator: "\n"))
    }

    /// The operation's names without a trailing slash.
    var trimmedNames: [String] { operation.names.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 } }

    /// Whether only these parts of the reports differ.
    func differsOnly(in parts: Set<String>) -> Bool { Set(differing).isSubset(of: parts) }
}

/// The differences that coffer makes on purpose and that a sequence can reach, from the README's "Where
/// coffer deliberately differs from pass" (the others are never generated: names with control characters
/// or over 251 bytes a part, `insert -e ""`, `rm` of the store itself, `init` to an unusable key,
/// extensions, symbolic links, `PASSWORD_STORE_DIR` relative or with a trailing slash,
/// `PASSWORD_STORE_GPG_OPTS`, a git operation stopped half-way). ``Tolerance`` is applied to every step as
/// well. A rule that matches hides the whole step: keep each as narrow as the README's sentence.
enum FuzzTolerance {
    /// A deliberate difference: its name and when a step shows it.
    struct Rule: Sendable {
        let name: String
        let applies: @Sendable (FuzzStep) -> Bool
    }

    static let rules = [
        Rule(name: "`init -p sub \"\"` in a git store commits the removal") { step in
            // pass commits from the folder it has just removed: git says "cannot change to" and the removal
            // stays uncommitted.
            step.git && step.operation.arguments.first == "init" && step.operation.arguments.last == ""
                && step.operation.names.count == 1 && step.pass.errorText.contains("fatal: cannot change to")
        },
        Rule(name: "`coffer git ...` exits with git's status; pass exits 0") { step in
            step.operation.arguments.first == "git" && step.pass.status == 0 && step.coffer.status != 0
                && step.differsOnly(in: ["status"])
        },
        Rule(name: "a failed git step fails the command; pass ignores it and exits 0") { step in
            step.pass.status == 0 && step.coffer.status == 1
                && step.coffer.errorText.contains("the change is made but not committed")
                && step.differsOnly(in: ["status", "stdout", "stderr"])
        },
        Rule(name: "a failed git step in a change of several files leaves nothing changed; pass keeps half") {
            step in
            // init, mv, cp and rm -r are whole or absent, their commits included; pass leaves the files
            // changed.
            ["init", "mv", "rename", "cp", "copy", "rm", "remove", "delete"].contains(
                step.operation.arguments.first ?? "")
                && step.coffer.status == 1 && step.coffer.errorText.contains("nothing was changed")
                && step.cofferChangedNothing
        },
        Rule(name: "`mv` and `cp` change nothing unless the whole change can be made") { step in
            // pass moves or copies first and then fails to re-encrypt (no .gpg-id, a missing key), leaving the
            // change made and uncommitted; coffer fails before touching anything.
            ["mv", "rename", "cp", "copy"].contains(step.operation.arguments.first ?? "")
                && step.pass.status != 0
                && step.coffer.status == step.pass.status && step.cofferChangedNothing
        },
        Rule(name: "`init` changes nothing unless every entry can be re-encrypted") { step in
            step.operation.arguments.first == "init" && step.coffer.status == 1 && step.cofferChangedNothing
        },
        Rule(name: "a commit takes only the change's own files; pass commits everything staged") { step in
            let swept =
                step.hadStrayChanges || (step.operation.arguments.first == "init" && step.hadAnyChanges)
            return step.git && swept && step.pass.status == step.coffer.status
                && step.differsOnly(in: ["stdout", "git"])
        },
        Rule(name: "where pass fails, coffer does not: name parts of 226 bytes or more") { step in
            step.pass.errorText.contains("File name too long")
                && !step.coffer.errorText.contains("File name too long")
        },
        Rule(name: "where pass fails, coffer does not: a folder whose name ends in `.gpg`") { step in
            step.hasFolderNamedLikeEntry
                && (step.pass.errorText.contains("read error: Is a directory")
                    || step.pass.errorText.contains("You must run"))
        },
        Rule(name: "where pass fails, coffer does not: names with glob characters in git steps") { step in
            step.git && step.operation.names.contains { $0.contains(where: { "*?[".contains($0) }) }
                && step.passOnlyOutput.contains { $0.hasPrefix(" delete mode ") }
        },
        Rule(name: "where pass fails, coffer does not: git's complaints about files it does not track") {
            step in
            // With stray changes in git's index the commit that follows differs too (the rule above).
            (step.pass.errorText.contains("did not match any files")
                || step.pass.errorText.contains("could not open directory"))
                && step.differsOnly(
                    in: step.git && step.hadStrayChanges
                        ? ["stdout", "stderr", "git"] : ["stdout", "stderr"])
        },
        Rule(name: "an editor that fails saves nothing") { step in
            step.operation.arguments.first == "edit" && step.pass.status == 0 && step.coffer.status == 1
                && step.coffer.errorText.contains("is not saved") && step.cofferChangedNothing
        },
        Rule(name: "`cp` of a folder into itself is refused") { step in
            let names = step.trimmedNames
            guard step.operation.arguments.first.map({ ["cp", "copy"].contains($0) }) == true,
                names.count == 2,
                FuzzRunner.kind(of: names[0], in: step.before).hasSuffix("folder")
            else { return false }
            return (names[1] == names[0] || names[1].hasPrefix(names[0] + "/")) && step.coffer.status == 1
                && step.coffer.errorText.contains("into itself")
        },
    ]

    /// The rule that explains a step's difference, if one does.
    static func rule(for step: FuzzStep) -> Rule? {
        rules.first { $0.applies(step) }
    }
}

/// Runs sequences with Debian's pass and with coffer in twin sandboxes, both at once, and compares exit
/// status, standard output and error, the files (decrypted, recipients, modes), `git status --porcelain`,
/// `git log` and the repository's configuration after every step.
struct FuzzRunner: Sendable {
    /// The coffer under test.
    let coffer: ProgramUnderTest
    /// A signature at which a run ends (for shrinking); other divergences, like every divergence when
    /// this is `nil`, are recorded and the run goes on from a copy of pass's state.
    var stopAtSignature: String?

    /// Runs `sequence`.
    func run(_ sequence: FuzzSequence) throws -> FuzzRunResult {
        let twins = [
            try FuzzTwin(program: .pass, locale: sequence.locale),
            try FuzzTwin(program: coffer, locale: sequence.locale),
        ]
        for twin in twins { twin.sandboxFolders = twins.map(\.sandbox.directory) }
        let decryptions = DecryptionCache()
        var result = FuzzRunResult()
        var previousPassLines: [String] = []
        for (index, operation) in sequence.operations.enumerated() {
            let passFiles = twins[0].files
            let cofferFiles = twins[1].files
            let passLines = previousPassLines
            let git = TestFiles.exists(twins[0].sandbox.store + "/.git")
            let hazard = try operation.hazard.map {
                try FuzzHazardRun(operation, $0, twin: twins[1], decryptions: decryptions)
            }
            let outcomes = try Self.inParallel(twins) { try $0.step(operation, decryptions: decryptions) }
            result.steps += 1
            result.passStatuses.append(outcomes[0].result.status)
            previousPassLines = outcomes[0].files
            var broken = try Self.exactBytes(
                operation, twin: twins[1], before: cofferFiles, result: outcomes[1].result,
                decryptions: decryptions)
            if let hazard {
                result.hazards += 1
                broken += try hazard.failures(normal: outcomes[1].result) {
                    var snapshot = StoreSnapshot(
                        root: twins[1].sandbox.store, temporary: twins[1].sandbox.temporary,
                        environment: twins[1].sandbox.baseEnvironment, before: { _ in nil },
                        decryptions: decryptions)
                    return try snapshot.render().filter { !$0.hasPrefix("left in TMPDIR") }
                }.map { ("\(operation.shape) \(hazard.hazard.signature) ⇒ \($0.0)", $0.1) }
            }
            var stop = false
            for (signature, detail) in broken {
                result.divergences.append(
                    FuzzDivergence(index: index, signature: signature, difference: detail))
                if signature == stopAtSignature { stop = true }
            }
            if stop { break }
            var cofferOutcome = outcomes[1]
            Tolerance.apply(
                to: &cofferOutcome.result, files: &cofferOutcome.files,
                reference: (outcomes[0].result, outcomes[0].files, []))
            let reports = [(twins[0], outcomes[0]), (twins[1], cofferOutcome)].map { twin, outcome in
                Report.render(
                    result: outcome.result, files: outcome.files, unordered: operation.unordered,
                    normalise: twin.normalise)
            }
            guard reports[0] != reports[1] else { continue }
            if (reports[0] + reports[1]).contains("lockfile") {
                result.races += 1
            } else if let rule = FuzzTolerance.rule(
                for: FuzzStep(
                    operation: operation, git: git, before: passFiles, pass: outcomes[0].result,
                    coffer: outcomes[1].result, differing: Self.differingParts(reports[0], reports[1]),
                    cofferChangedNothing: twins[1].files == cofferFiles,
                    passLines: (passLines, outcomes[0].files)))
            {
                result.tolerated.append(rule.name)
            } else {
                let signature = Self.signature(operation, files: passFiles, reports: (reports[0], reports[1]))
                result.divergences.append(
                    FuzzDivergence(
                        index: index, signature: signature,
                        difference: Report.difference(reports[0], reports[1])))
                if signature == stopAtSignature { break }
            }
            try twins[1].adopt(twins[0])
        }
        return result
    }

    /// The invariants of every byte kept, beyond agreeing with pass: an `insert -m` that exits 0 stores
    /// its input exactly, and `show` prints exactly what the entry holds, NULs and bytes that are not UTF-8
    /// included. `before` is the twin's files before the step.
    static func exactBytes(
        _ operation: FuzzOperation, twin: FuzzTwin, before: [String: [UInt8]], result: ProcessResult,
        decryptions: DecryptionCache
    ) throws -> [(String, String)] {
        guard result.status == 0, let name = operation.names.first, operation.names.count == 1 else {
            return []
        }
        let path = ".password-store/" + (name.hasSuffix("/") ? String(name.dropLast()) : name) + ".gpg"
        let flags = operation.arguments.dropFirst().prefix { $0 != "--" && $0 != name }
        let plaintext = { (files: [String: [UInt8]]) throws -> [UInt8]? in
            guard let bytes = files[path] else { return nil }
            let decrypted = try decryptions.decrypt(
                bytes, file: twin.sandbox.home + "/" + path, environment: twin.sandbox.baseEnvironment)
            return decrypted.status == 0 ? decrypted.plaintext : nil
        }
        let show = { (bytes: [UInt8]) in Report.contentLines(bytes).joined(separator: "\n") }
        switch operation.arguments.first {
        case "insert" where flags.contains { ["-m", "--multiline", "-mf", "-fm"].contains($0) }:
            // Without -f an existing entry makes pass ask first, on the same standard input.
            let forced = flags.contains { ["-f", "--force", "-mf", "-fm"].contains($0) }
            guard forced || before[path] == nil, let stored = try plaintext(twin.files),
                stored != operation.input
            else { return [] }
            return [
                (
                    "\(operation.shape) ⇒ stored bytes",
                    "inserted:\n\(show(operation.input))\nstored:\n\(show(stored))"
                )
            ]
        case "show" where flags.isEmpty:
            guard let stored = try plaintext(before), stored != result.standardOutput else { return [] }
            return [
                (
                    "show ⇒ shown bytes",
                    "stored:\n\(show(stored))\nshown:\n\(show(result.standardOutput))"
                )
            ]
        default: return []
        }
    }

    /// Runs `work` for each twin, each on its own thread.
    static func inParallel<Result: Sendable>(
        _ twins: [FuzzTwin], _ work: @Sendable (FuzzTwin) throws -> Result
    ) throws
        -> [Result]
    {
        let results = Locked<[Int: Swift.Result<Result, any Error>]>([:])
        DispatchQueue.concurrentPerform(iterations: twins.count) { index in
            let result = Swift.Result { try work(twins[index]) }
            results.withLock { $0[index] = result }
        }
        return try results.withLock { results in try twins.indices.map { try results[$0]!.get() } }
    }

    /// `command flags [kind of each name] ⇒ the parts that differ` (whether the store is a git repository
    /// is left out: a fault in both kinds of store is one fault, and the reproduction shows `git init`).
    static func signature(
        _ operation: FuzzOperation, files: [String: [UInt8]], reports: (String, String)
    ) -> String {
        var kinds = operation.names.map { kind(of: $0, in: files) }
        if operation.names.count == 2 {
            let trim = { (name: String) in name.hasSuffix("/") ? String(name.dropLast()) : name }
            if trim(operation.names[0]) == trim(operation.names[1]) {
                kinds = ["itself"]
            } else if recipientsFolder(of: operation.names[0], in: files)
                != recipientsFolder(of: operation.names[1] + "/x", in: files)
            {
                kinds.append("other .gpg-id")
            }
        }
        if operation.names.contains(where: { $0.split(separator: "/").contains { $0.utf8.count > 200 } }) {
            kinds.append("long part")
        }
        let differing = differingParts(reports.0, reports.1)
        return operation.shape + (kinds.isEmpty ? "" : " [" + kinds.joined(separator: ", ") + "]")
            + " ⇒ " + differing.joined(separator: ", ")
    }

    /// The parts of two reports that differ, in report order.
    static func differingParts(_ left: String, _ right: String) -> [String] {
        let (left, right) = (sections(of: left), sections(of: right))
        return ["status", "stdout", "stderr", "files", "git"].filter { left[$0] != right[$0] }
    }

    /// `entry`, `folder`, `entry+folder` or `missing` (`…/` when the name ends with a slash).
    static func kind(of name: String, in files: [String: [UInt8]]) -> String {
        let slash = name.hasSuffix("/")
        let trimmed = slash ? String(name.dropLast()) : name
        let path = ".password-store/" + trimmed
        let entry = files[path + ".gpg"] != nil
        let folder = files.keys.contains { $0.hasPrefix(path + "/") }
        let kind = entry && folder ? "entry+folder" : entry ? "entry" : folder ? "folder" : "missing"
        return kind + (slash ? "/" : "")
    }

    /// The folder of the `.gpg-id` nearest to `name`.
    static func recipientsFolder(of name: String, in files: [String: [UInt8]]) -> String {
        var parts = name.split(separator: "/", omittingEmptySubsequences: false).dropLast()
        while !parts.isEmpty {
            let folder = parts.joined(separator: "/")
            if files[".password-store/" + folder + "/.gpg-id"] != nil { return folder }
            parts = parts.dropLast()
        }
        return ""
    }

    /// A report's parts by name: `status`, `stdout`, `stderr`, `files` and `git` (the git lines of `files`).
    static func sections(of report: String) -> [String: [Substring]] {
        var sections: [String: [Substring]] = [:]
        var current = "status"
        for line in report.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("stdout") {
                current = "stdout"
            } else if line == "stderr:" {
                current = "stderr"
            } else if line == "files:" {
                current = "files"
            } else if current == "files" || current == "git",
                line.hasPrefix("    git  ") || line.hasPrefix("        log: ")
                    || line.hasPrefix("        status: ")
                    || line.hasPrefix("        config: ")
            {
                sections["git", default: []].append(line)
                continue
            }
            sections[current, default: []].append(line)
        }
        return sections
    }
}

/// Makes a failing sequence as short as it can within a time budget: drops runs of steps (halving their
/// length down to one) as long as the first divergence keeps its signature.
struct FuzzShrinker {
    let runner: FuzzRunner
    /// The monotonic time (``TestProcess/monotonicSeconds()``) after which shrinking stops.
    let deadline: Double

    /// The shortest sequence found and its divergence (at its last step), or why there is none.
    func shrink(_ sequence: FuzzSequence, _ divergence: FuzzDivergence) throws -> FuzzShrinkOutcome {
        var runs = 0
        var stopping = runner
        stopping.stopAtSignature = divergence.signature
        var earlier: [Int] = []
        func reproduce(_ operations: [FuzzOperation]) throws -> FuzzDivergence? {
            runs += 1
            var candidate = sequence
            candidate.operations = operations
            let found = try stopping.run(candidate).divergences
            guard let last = found.last, last.signature == divergence.signature else { return nil }
            earlier = found.dropLast().map(\.index)
            return last
        }
        var best = Array(sequence.operations[...divergence.index])
        guard var found = try reproduce(best) else { return .notReproduced }
        best = Array(best[...found.index])
        var bestEarlier = earlier
        // Most faults need only the steps that touch the same top folders, and init and git: try those first.
        let slice = Self.relevantSteps(of: best)
        if slice.count < best.count, TestProcess.monotonicSeconds() < deadline,
            let shorter = try reproduce(slice)
        {
            best = Array(slice[...shorter.index])
            found = shorter
            bestEarlier = earlier
        }
        var chunk = max(1, (best.count - 1) / 2)
        while TestProcess.monotonicSeconds() < deadline {
            var removed = false
            var start = 0
            while start < best.count - 1 && TestProcess.monotonicSeconds() < deadline {
                let end = min(start + chunk, best.count - 1)
                var candidate = best
                candidate.removeSubrange(start..<end)
                if let shorter = try reproduce(candidate) {
                    best = Array(candidate[...shorter.index])
                    found = shorter
                    bestEarlier = earlier
                    removed = true
                } else {
                    start = end
                }
            }
            if removed {
                chunk = min(chunk, max(1, (best.count - 1) / 2))
            } else if chunk == 1 {
                break
            } else {
                chunk /= 2
            }
        }
        var shrunk = sequence
        shrunk.operations = best
        return .shrunk(
            shrunk, found, earlier: bestEarlier, runs: runs,
            complete: TestProcess.monotonicSeconds() < deadline)
    }

    /// The steps that can matter to the last one: `init` and `git` steps, and those naming something in
    /// the same top folder as one of its names.
    static func relevantSteps(of operations: [FuzzOperation]) -> [FuzzOperation] {
        let top = { (name: String) in name.split(separator: "/", omittingEmptySubsequences: false).first ?? ""
        }
        let folders = Set(operations.last?.names.map(top) ?? [])
        return operations.enumerated().filter { index, operation in
            index == operations.count - 1 || ["init", "git"].contains(operation.arguments.first)
                || operation.names.contains { folders.contains(top($0)) }
        }.map(\.element)
    }

    /// A divergence for a person: seed, step, signature, the reproduction as shell and the difference.
    static func describe(
        _ sequence: FuzzSequence, _ divergence: FuzzDivergence, _ outcome: FuzzShrinkOutcome
    ) -> String {
        var reproduction = sequence
        reproduction.operations = Array(sequence.operations[...divergence.index])
        var shown = divergence
        let state: String
        switch outcome {
        case .shrunk(let shrunk, let last, let earlier, let runs, let complete):
            reproduction = shrunk
            shown = last
            state =
                "\(shrunk.operations.count) of \(divergence.index + 1) steps after \(runs) runs"
                + (complete ? "" : ", when the time for shrinking ran out")
                + (earlier.isEmpty
                    ? ""
                    : "; steps " + earlier.map { String($0 + 1) }.joined(separator: ", ")
                        + " diverge too, and coffer went on from a copy of pass's state")
        case .notReproduced:
            state = "not shrunk: the steps up to it did not diverge again on their own"
        case .notTried:
            state = "not shrunk"
        }
        let script = reproduction.script().split(separator: "\n").map { "    " + $0 }.joined(separator: "\n")
        // A runaway command (a copy into itself) can print megabytes: show the start of each line and of the
        // difference.
        var lines = shown.difference.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.count > 240 ? String(line.prefix(240)) + "…" : String(line)
        }
        if lines.count > 60 { lines = Array(lines.prefix(60)) + ["   … \(lines.count - 60) more lines"] }
        let difference = lines.joined(separator: "\n")
        return """
            seed \(sequence.seed) (\(sequence.locale.rawValue)), step \(divergence.index + 1) of \
            \(sequence.operations.count): \(divergence.signature)
            reproduction (\(state); $K1, $K2, $K3 are three keys' fingerprints):
            \(script)
            difference at the last step (- pass, + coffer):
            \(difference)
            replay the whole sequence: COFFER_FUZZ_SEED=\(sequence.seed) swift test --filter StatefulFuzzTests

            """
    }
}

/// What shrinking a divergence came to.
enum FuzzShrinkOutcome: Sendable {
    /// The shortest sequence found, its divergence (at its last step), the indexes of the steps before it
    /// that diverged as well, the runs it took and whether it finished before the deadline.
    case shrunk(FuzzSequence, FuzzDivergence, earlier: [Int], runs: Int, complete: Bool)
    /// The steps up to the divergence, run again from the start, did not diverge the same way.
    case notReproduced
    /// Shrinking was not attempted.
    case notTried
}
