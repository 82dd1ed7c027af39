import CofferTestSupport
import Testing

@testable import Coffer

/// The multi-clone model of `coffer sync` (``SyncModelRun``): fixed seeds in `make test`, new seeds in
/// `make soak` (`scripts/soak.sh`, the soak named sync-model).
///
/// - `COFFER_SYNC_SEED=N` runs seed N once (`seedFromEnvironment`) and prints its script.
/// - `COFFER_SYNC_SOAK_SECONDS=N` runs new seeds for N seconds (`soak`); `COFFER_SYNC_SOAK_START` fixes the
///   first one (the next are consecutive).
/// - `COFFER_SYNC_STEPS` (random steps a seed, default 30) and `COFFER_SYNC_WITHOUT` (parts to leave out,
///   see ``SyncModelOptions/without``) narrow a failure down.
/// - `COFFER_SYNC_MODEL_OUT=DIR` writes each failing seed's report and script to `DIR/seed-N.txt`.
@Suite("Sync model: three clones, random edits, syncs and kills")
struct SyncModelTests {
    /// The seeds `make test` runs.
    static let fixedSeeds: [UInt64] = [
        7019, 7003, 6072, 7060, 802_990_158_119, 116, 428_430_876_222, 129_856_858_132, 1_096_216_358_055,
        568_365_916_078, 219_779_946_139, 974_121_301_267, 417_981_608_047, 619_000_000_017,
        720_000_000_124, 990_024, 993_014, 4_200_064,
    ]

    @Test(arguments: fixedSeeds)
    func fixedSeed(_ seed: UInt64) throws {
        let outcome = try SyncModelRun(options: .fromEnvironment(seed: seed, defaultSteps: 30)).run()
        Self.record(outcome)
    }

    /// The checker is strict: a value left only in a dangling commit, and plaintext in a file, are found.
    @Test func checkerFindsAValueOnlyInADanglingCommitAndPlaintextOnDisk() throws {
        let run = try SyncModelRun(options: SyncModelOptions(seed: 42, steps: 0, without: ["sign", "kill"]))
        #expect(try run.setUp())
        run.step = 1
        try run.addEntry(0)
        let written = try #require(run.ledger.order.last)
        #expect(run.ledger.writes[written]?.step == 1)
        // What a sync that drops a local commit would leave: the entry only in a dangling commit.
        try run.shell(
            "git -C \"$S/one\" reset -q --hard HEAD~1", comment: "the new entry only in a dangling commit")
        try run.shell(
            "printf '%s\\n' \(SyncModelShell.quote(written)) > \"$S/home/leak.txt\"",
            comment: "a plaintext leak")
        run.step = 2
        try run.finalChecks(converged: try run.finalSyncs())
        let kinds = Set(run.failures.map(\.kind))
        #expect(kinds.contains("sync-lost-value"), "\(run.failures)")
        #expect(kinds.contains("plaintext-on-disk"), "\(run.failures)")
        #expect(!kinds.contains("no-convergence"), "\(run.failures)")
    }

    /// The hostile clone's checks are strict: a value written outside `team/` that Mallory's key opens,
    /// and a sync that changes a `.gpg-id` without saying so, are found.
    @Test func checkerFindsWhatTheHostileCloneCanReadAndUnreportedRecipients() throws {
        var options = SyncModelOptions(seed: 43, steps: 0, without: ["sign", "kill"])
        options.hostile = true
        let run = try SyncModelRun(options: options)
        #expect(try run.setUp())
        let key = try #require(run.hostileKey)
        run.step = 1
        // What a coffer that widened an entry would push: web/leak for clone one's key and Mallory's.
        let marker = run.newMarker()
        try run.shell(
            "mkdir -p \"$S/one/web\" && printf '%s\\n' \(marker) | gpg --batch --quiet --trust-model always -e "
                + "-r \(run.sandbox.keys[0].email) -r \(key) -o \"$S/one/web/leak.gpg\" && "
                + run.command(0, "git", ["add", "--", "web/leak.gpg"]) + " && "
                + run.command(0, "git", ["commit", "-q", "-m", "leak"]) + " && "
                + run.command(0, "git", ["push", "-q"]),
            comment: "a widened entry pushed")
        run.ledger.recordWrite(marker, clone: 0, step: 1, what: "web/leak")
        run.writtenIn[marker] = "web"
        try run.checkHostileReads()
        #expect(run.failures.map(\.kind).contains("hostile-clone-reads"), "\(run.failures)")
        // A .gpg-id the sync changed, and an output that does not say so.
        var before = run.snapshots[0]
        before.items["ünï/.gpg-id"] = run.item(Array("\(run.sandbox.keys[0].email)\n".utf8))
        var after = before
        after.items["ünï/.gpg-id"] = run.item(Array("\(run.sandbox.keys[1].email)\n".utf8))
        run.checkRecipientReport(before: before, after: after, output: "Already up to date.\n")
        #expect(run.failures.map(\.kind).contains("recipient-change-unreported"), "\(run.failures)")
        // Said, it passes (another file: a failure is reported once per file).
        before.items["web/.gpg-id"] = before.items["ünï/.gpg-id"]
        after.items["web/.gpg-id"] = after.items["ünï/.gpg-id"]
        before.items["ünï/.gpg-id"] = nil
        after.items["ünï/.gpg-id"] = nil
        let count = run.failures.count
        run.checkRecipientReport(
            before: before, after: after, output: "Recipients of web changed by commit abc\n")
        #expect(run.failures.count == count)
    }

    @Test(.enabled(if: environmentVariable("COFFER_SYNC_SEED") != nil))
    func seedFromEnvironment() throws {
        let seed = try #require(UInt64(environmentVariable("COFFER_SYNC_SEED") ?? ""))
        let outcome = try SyncModelRun(options: .fromEnvironment(seed: seed, defaultSteps: 30)).run()
        print(outcome.report)
        Self.record(outcome)
    }

    @Test(.enabled(if: environmentVariable("COFFER_SYNC_SOAK_SECONDS") != nil))
    func soak() throws {
        let budget = try #require(Double(environmentVariable("COFFER_SYNC_SOAK_SECONDS") ?? ""))
        var generator = SystemRandomNumberGenerator()
        var seed =
            environmentVariable("COFFER_SYNC_SOAK_START").flatMap { UInt64($0) }
            ?? UInt64.random(in: 1_000...UInt64(1) << 40, using: &generator)
        let start = TestProcess.monotonicSeconds()
        var figures = SyncModelFigures()
        var seeds = 0
        var failing: [UInt64] = []
        var kinds: [String: [UInt64]] = [:]
        while TestProcess.monotonicSeconds() - start < budget {
            let outcome = try SyncModelRun(options: .fromEnvironment(seed: seed, defaultSteps: 30)).run()
            seeds += 1
            figures.add(outcome.figures)
            let found = Set(outcome.failures.map(\.kind)).sorted()
            Self.say("soak seed \(seed): " + (found.isEmpty ? "ok" : found.joined(separator: ", ")))
            if !found.isEmpty {
                failing.append(seed)
                Self.save(outcome)
            }
            for kind in found { kinds[kind, default: []].append(seed) }
            seed &+= 1
        }
        let minutes = Int((TestProcess.monotonicSeconds() - start) / 60)
        var summary = "soak: \(seeds) seeds in \(minutes) min, \(failing.count) failing; \(figures.summary)\n"
        for (kind, seeds) in kinds.sorted(by: { $0.key < $1.key }) {
            summary +=
                "  \(kind): \(seeds.count) seed(s), e.g. \(seeds.prefix(5).map(String.init).joined(separator: " "))\n"
        }
        Self.say(summary)
        #expect(failing.isEmpty, "\(summary)")
    }

    /// Writes a line to standard output at once (a soak runs for long; `print` may hold it back).
    static func say(_ line: String) {
        let bytes = Array((line.hasSuffix("\n") ? line : line + "\n").utf8)
        bytes.withUnsafeBytes { _ = write(1, $0.baseAddress, $0.count) }
    }

    /// Records the outcome's failures as one issue (with the replay script) and saves the report.
    static func record(_ outcome: SyncModelOutcome) {
        guard !outcome.failures.isEmpty else { return }
        save(outcome)
        Issue.record("\(outcome.report)")
    }

    /// Writes the report to `COFFER_SYNC_MODEL_OUT/seed-N.txt` when that folder is given.
    static func save(_ outcome: SyncModelOutcome) {
        guard let folder = environmentVariable("COFFER_SYNC_MODEL_OUT"), !folder.isEmpty else { return }
        mkdir(folder, 0o755)
        try? TestFiles.write(outcome.report, to: folder + "/seed-\(outcome.seed).txt", mode: 0o600)
    }
}
