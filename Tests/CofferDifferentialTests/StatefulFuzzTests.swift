import CofferTestSupport
import Testing

/// The stateful differential fuzzer: seeded sequences of 20–60 operations that change a store, run by
/// Debian's `pass` 1.7.4 and by `coffer` in twin sandboxes, compared after every step (exit status,
/// standard output and error, the files decrypted with their recipients and modes, `git status
/// --porcelain`, `git log`). A divergence is reported with its seed and a reproduction shrunk to the
/// fewest steps; then coffer's twin goes on from a copy of pass's state.
///
/// Some entries hold NULs or bytes that are not UTF-8: an `insert -m` that exits 0 must store its input
/// exactly, and `show` must print exactly what the entry holds. Some writes coffer first runs alone in a
/// copy of its store with a ``FuzzHazard`` (killed by a pre-commit hook or after a delay, on a full tmpfs,
/// under `prlimit --fsize`), then `fsck --fix` or the next write: exit 0 only with the change whole and
/// committed; otherwise nothing staged, and after the recovery the store exactly as before (files, HEAD,
/// status) or, killed after its commit, changed whole; every entry still decrypts.
///
/// - `swift test --filter StatefulFuzzTests` runs the fixed seeds (part of `make test`).
/// - `COFFER_FUZZ_SEED=N` runs seed `N` as well, shrinking every divergence it finds.
/// - `COFFER_SOAK_SECONDS=N` runs new seeds for `N` seconds (`make soak SECONDS=N`), writing what it found
///   to `COFFER_SOAK_REPORT` when set.
/// - `COFFER_FUZZ_SHRINK_SECONDS` is the time given to shrinking one divergence (20 for the fixed seeds,
///   120 otherwise); `COFFER_BIN=/usr/bin/pass` runs pass against itself, to check the fuzzer.
@Suite("Stateful differential fuzzer: coffer against pass 1.7.4")
struct StatefulFuzzTests {
    /// Seeds that together exercise every operation, flag and kind of name (see
    /// ``fixedSeedsCoverEverything()``).
    static let fixedSeeds: [UInt64] = [824, 2850, 1842]
    /// Seeds soaks found diverging, kept once fixed: killed rm -r, cp and init of new folders, cp from a
    /// folder with no `.gpg-id` above it, an insert into a new folder on a full disk, a killed mv whose
    /// destination folder pass re-encrypts, an `init ''` that removes the store under a file size limit,
    /// a killed cp and mv -f into a folder holding untracked entries (which the commit stages), an insert
    /// -e into a new folder whose first-use record hit a full disk (the folder stayed), a killed mv into
    /// a folder whose index held an entry the work tree had lost (the undoing staged its removal).
    static let regressionSeeds: [UInt64] = [
        17_430_972_865_994_640_052, 11_920_337_861_226_153_272, 8_969_534_410_621_220_876,
        13_478_305_076_691_096_827, 13_826_741_535_637_550_726, 4_390_843_342_102_965_873,
        3_900_611_599_076_981_281, 1_544_685_573_001_031_978, 14_567_382_348_152_383_587,
        8_858_096_989_085_870_777, 12_212_971_275_084_182_636, 7_092_323_767_408_090_391,
        1_778_884_567_989_342_917, 15_532_850_711_906_744_126,
    ]

    @Test("Same outcome as pass after every step", arguments: fixedSeeds + regressionSeeds)
    func fixedSeed(_ seed: UInt64) async throws {
        let sequence = FuzzGenerator.sequence(seed: seed)
        let (result, reports) = try await Self.run(
            sequence, shrinkSeconds: Self.shrinkSeconds(default: 20), shrinkAtMost: 2)
        for report in reports { Issue.record(Comment(rawValue: report)) }
        #expect(result.steps == sequence.operations.count)
    }

    @Test("The fixed seeds cover every command, flag and kind of name that changes a store")
    func fixedSeedsCoverEverything() {
        let sequences = Self.fixedSeeds.map(FuzzGenerator.sequence(seed:))
        let covered = Set(sequences.flatMap(FuzzCoverage.features(of:)))
        let missing = FuzzCoverage.required.filter { !covered.contains($0) }
        #expect(missing.isEmpty, "the fixed seeds never exercise: \(missing.joined(separator: "; "))")
        for sequence in sequences {
            #expect((20...60).contains(sequence.operations.count))
        }
    }

    /// When the generator changes, `COFFER_FUZZ_PICK_SEEDS=N` prints a small set of seeds below `N` that
    /// covers everything (greedily: the most new features, then the fewest steps), for ``fixedSeeds``.
    @Test("Pick fixed seeds", .enabled(if: environmentVariable("COFFER_FUZZ_PICK_SEEDS") != nil))
    func pickSeeds() throws {
        let limit = try #require(environmentVariable("COFFER_FUZZ_PICK_SEEDS").flatMap(UInt64.init))
        let candidates = (1..<limit).map { seed in
            let sequence = FuzzGenerator.sequence(seed: seed)
            return (seed, Set(FuzzCoverage.features(of: sequence)), sequence.operations.count)
        }
        var missing = Set(FuzzCoverage.required)
        var picked: [(UInt64, Int)] = []
        while !missing.isEmpty {
            guard
                let best = candidates.max(by: { left, right in
                    let (a, b) = (left.1.intersection(missing).count, right.1.intersection(missing).count)
                    return a != b ? a < b : left.2 > right.2
                }), !best.1.intersection(missing).isEmpty
            else { break }
            picked.append((best.0, best.2))
            missing.subtract(best.1)
        }
        print("stateful fuzzer: seeds \(picked.map { "\($0.0) (\($0.1) steps)" }.joined(separator: ", "))")
        #expect(missing.isEmpty, "no seed below \(limit) exercises \(missing.sorted())")
    }

    @Test("A seed always makes the same sequence, and different seeds different ones")
    func seedsAreReproducible() {
        for seed in Self.fixedSeeds + [0, 99, .max] {
            #expect(
                FuzzGenerator.sequence(seed: seed).operations == FuzzGenerator.sequence(seed: seed).operations
            )
        }
        #expect(FuzzGenerator.sequence(seed: 5).operations != FuzzGenerator.sequence(seed: 6).operations)
    }

    @Test("Shell reproductions quote every name")
    func shellLines() {
        let operation = FuzzOperation(
            arguments: ["insert", "-m", "--", "it's a $x", "$K1"], input: Array("a\\b%'\u{1}\n".utf8),
            environment: ["EDITOR": "$SANDBOX/bin/edit-append", "X": nil], shape: "insert")
        #expect(
            operation.shellLine
                == #"printf 'a\\b%%'\''\001\n' | EDITOR="$SANDBOX/bin/edit-append" env -u X pass insert -m -- "#
                + #"'it'\''s a $x' "$K1""#)
    }

    @Test(
        "Seed from COFFER_FUZZ_SEED", .enabled(if: environmentVariable("COFFER_FUZZ_SEED") != nil))
    func chosenSeed() async throws {
        let text = environmentVariable("COFFER_FUZZ_SEED") ?? ""
        let seed = try #require(UInt64(text), "COFFER_FUZZ_SEED=\(text) is not a number")
        let sequence = FuzzGenerator.sequence(seed: seed)
        print("stateful fuzzer: seed \(seed), \(sequence.operations.count) steps:\n\(sequence.script())")
        let (result, reports) = try await Self.run(
            sequence, shrinkSeconds: Self.shrinkSeconds(default: 120), shrinkAtMost: .max)
        print(
            "stateful fuzzer: seed \(seed): \(result.steps) steps, \(result.divergences.count) divergences, "
                + "\(result.tolerated.count) deliberate differences, \(result.races) gpg races, "
                + "\(result.hazards) steps also run killed or out of room; pass's exit "
                + "statuses: \(result.passStatuses.map(String.init).joined(separator: " "))")
        for report in reports {
            print(report)
            Issue.record(Comment(rawValue: report))
        }
    }

    @Test("Soak: new seeds for COFFER_SOAK_SECONDS", .enabled(if: Self.soakSeconds != nil))
    func soak() async throws {
        let seconds = Self.soakSeconds ?? 0
        let coffer = ProgramUnderTest(label: "coffer", path: try CofferBinary.path())
        let deadline = TestProcess.monotonicSeconds() + seconds
        var seeds = SeededRandom(seed: Self.soakStartSeed())
        var findings = SoakFindings()
        while TestProcess.monotonicSeconds() < deadline {
            let sequence = FuzzGenerator.sequence(seed: seeds.next())
            let result = try await BlockingGate.shared.run { try FuzzRunner(coffer: coffer).run(sequence) }
            findings.add(result)
            for divergence in result.divergences where findings.isNew(divergence) {
                let shrinker = FuzzShrinker(
                    runner: FuzzRunner(coffer: coffer),
                    deadline: TestProcess.monotonicSeconds() + Self.shrinkSeconds(default: 120))
                let outcome = try await BlockingGate.shared.run { try shrinker.shrink(sequence, divergence) }
                let report = FuzzShrinker.describe(sequence, divergence, outcome)
                findings.reports[divergence.family] = report
                print("stateful fuzzer soak: new divergence\n" + report)
                findings.write()
            }
        }
        findings.write()
        print("stateful fuzzer soak: " + findings.summary)
        for family in findings.families {
            Issue.record(Comment(rawValue: findings.reports[family] ?? family))
        }
    }

    // MARK: - Helpers

    /// Runs a sequence and describes its divergences, shrinking the first `shrinkAtMost` distinct ones.
    static func run(
        _ sequence: FuzzSequence, shrinkSeconds: Double, shrinkAtMost: Int
    ) async throws -> (FuzzRunResult, [String]) {
        let coffer = ProgramUnderTest(label: "coffer", path: try CofferBinary.path())
        let result = try await BlockingGate.shared.run { try FuzzRunner(coffer: coffer).run(sequence) }
        var seen = Set<String>()
        var reports: [String] = []
        for divergence in result.divergences where seen.insert(divergence.signature).inserted {
            var outcome = FuzzShrinkOutcome.notTried
            if seen.count <= shrinkAtMost {
                let shrinker = FuzzShrinker(
                    runner: FuzzRunner(coffer: coffer),
                    deadline: TestProcess.monotonicSeconds() + shrinkSeconds)
                outcome = try await BlockingGate.shared.run { try shrinker.shrink(sequence, divergence) }
            }
            reports.append(FuzzShrinker.describe(sequence, divergence, outcome))
        }
        let repeated = result.divergences.count - seen.count
        if repeated > 0 {
            reports.append("seed \(sequence.seed): \(repeated) more divergences with the signatures above")
        }
        return (result, reports)
    }

    static func shrinkSeconds(default value: Double) -> Double {
        environmentVariable("COFFER_FUZZ_SHRINK_SECONDS").flatMap(Double.init) ?? value
    }

    static var soakSeconds: Double? { environmentVariable("COFFER_SOAK_SECONDS").flatMap(Double.init) }

    /// `COFFER_SOAK_SEED` when set (to repeat a soak), else a seed from the clock and the process id.
    static func soakStartSeed() -> UInt64 {
        if let text = environmentVariable("COFFER_SOAK_SEED"), let seed = UInt64(text) { return seed }
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        let seed = UInt64(time.tv_sec) &* 1_000_000_007 &+ UInt64(time.tv_nsec) ^ (UInt64(getpid()) << 40)
        print("stateful fuzzer soak: COFFER_SOAK_SEED=\(seed) repeats this soak")
        return seed
    }

}

/// What a soak found: its figures, and the divergences by family (``FuzzDivergence/family``), the first
/// of each shrunk and described.
struct SoakFindings {
    var sequences = 0
    var steps = 0
    var divergences = 0
    var tolerated = 0
    var races = 0
    var hazards = 0
    /// The families in the order they were found.
    private(set) var families: [String] = []
    /// The signatures seen in each family, with how often.
    private(set) var signatures: [String: [String: Int]] = [:]
    /// The description of the first divergence of each family.
    var reports: [String: String] = [:]

    mutating func add(_ result: FuzzRunResult) {
        sequences += 1
        steps += result.steps
        divergences += result.divergences.count
        tolerated += result.tolerated.count
        races += result.races
        hazards += result.hazards
    }

    /// Records a divergence; true when its family is new (it is then to be shrunk and described).
    mutating func isNew(_ divergence: FuzzDivergence) -> Bool {
        let new = signatures[divergence.family] == nil
        if new { families.append(divergence.family) }
        signatures[divergence.family, default: [:]][divergence.signature, default: 0] += 1
        return new
    }

    var summary: String {
        let distinct = signatures.values.reduce(0) { $0 + $1.count }
        return
            "\(sequences) sequences, \(steps) steps, \(divergences) divergences (\(families.count) families, "
            + "\(distinct) signatures), \(tolerated) deliberate differences tolerated, \(races) steps spoilt by "
            + "gpg lockfile races, \(hazards) steps also run killed or out of room"
    }

    /// Writes the findings to `COFFER_SOAK_REPORT`, when set.
    func write() {
        guard let path = environmentVariable("COFFER_SOAK_REPORT"), !path.isEmpty else { return }
        var text = "# Stateful fuzzer soak\n\n" + summary + "\n\n"
        for family in families {
            text += "## \(family)\n\n"
            for (signature, count) in (signatures[family] ?? [:]).sorted(by: { $0.key < $1.key }) {
                text += "- \(signature): \(count)\n"
            }
            text += "\n```\n\(reports[family] ?? "(being shrunk)\n")```\n\n"
        }
        try? TestFiles.write(text, to: path)
    }
}

/// What a sequence exercises, for checking that the fixed seeds cover everything issue 12 lists.
enum FuzzCoverage {
    /// Everything the fixed seeds must exercise.
    static let required = [
        "insert -e", "insert -m", "insert (hidden)", "insert -f", "generate", "generate -n", "generate -i",
        "generate -f", "edit EDITOR=:", "edit EDITOR=edit-append", "edit EDITOR=edit-replace",
        "edit EDITOR=(unset)", "edit EDITOR=edit-fail", "rm -r", "rm -f", "rm", "mv source entry",
        "mv source folder", "mv onto existing entry", "mv onto existing folder", "mv onto itself",
        "mv onto folder with its own .gpg-id", "cp source entry", "cp source folder",
        "cp onto existing entry",
        "cp onto itself", "cp onto folder with its own .gpg-id", "init -p 1 key(s)", "init -p 2 key(s)",
        "init -p \"\"", "init 2 key(s)", "git init", "git revert", "git reset", "git log", "git status",
        "name with a space", "unicode name", "name with a glob character", "part of 226 bytes or more",
        "part of 251 bytes", "nesting of 3 or more", "name with a leading dash", "plain store", "git store",
        "C locale", "insert -m binary", "show binary entry", "cp binary entry", "mv binary entry",
        "rm binary entry", "edit binary entry", "grep with binary entries", "killed at commit",
        "killed after a delay", "full disk", "file size limit", "recovered by fsck --fix",
        "recovered by the next write",
    ]

    /// The features of one sequence.
    static func features(of sequence: FuzzSequence) -> [String] {
        var features: [String] = []
        for operation in sequence.operations {
            features.append(operation.shape)
            features += operation.features
            let flags = operation.shape.split(separator: " ")
            if flags.first == "insert" || flags.first == "generate" || flags.first == "rm" {
                features += flags.dropFirst().map { flags[0] + " " + $0 }
            }
            if operation.arguments.first == "git" {
                features.append("git " + operation.arguments[1])
            }
            for name in operation.names {
                let parts = name.split(separator: "/")
                if name.contains(" ") { features.append("name with a space") }
                if name.unicodeScalars.contains(where: { !$0.isASCII }) { features.append("unicode name") }
                if name.contains(where: { "*?[{".contains($0) }) {
                    features.append("name with a glob character")
                }
                if parts.contains(where: { $0.utf8.count >= 226 }) {
                    features.append("part of 226 bytes or more")
                }
                if parts.contains(where: { $0.utf8.count == 251 }) { features.append("part of 251 bytes") }
                if parts.count >= 3 { features.append("nesting of 3 or more") }
                if parts.contains(where: { $0.hasPrefix("-") }) {
                    features.append("name with a leading dash")
                }
            }
        }
        features.append(sequence.operations.contains { $0.shape == "git init" } ? "git store" : "plain store")
        if sequence.locale == .c { features.append("C locale") }
        return features
    }
}
