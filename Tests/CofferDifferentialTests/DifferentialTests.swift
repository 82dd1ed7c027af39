import CofferTestSupport
import Testing

@testable import CofferCLI

/// Runs every scenario of ``DifferentialTable`` with Debian's `pass` 1.7.4 and with `coffer` in identical
/// sandboxes and compares exit status, standard output, standard error, the files left behind (decrypted,
/// with their recipients) and the git history, byte for byte.
///
/// `COFFER_BIN=/usr/bin/pass` runs pass against itself (to check the harness); `COFFER_DIFF_REPORTS=dir`
/// writes both reports of every case to `dir` (`NAME.LOCALE.pass.txt`, `….coffer.txt`);
/// `COFFER_TEST_JOBS` sets how many cases run at once (default 4).
@Suite("Differential: coffer against pass 1.7.4")
struct DifferentialTests {
    @Test("Same outcome as pass", arguments: DifferentialCase.all)
    func sameOutcomeAsPass(_ testCase: DifferentialCase) async throws {
        let coffer = ProgramUnderTest(label: "coffer", path: try CofferBinary.path())
        var reports = try await BlockingGate.shared.run {
            try DifferentialRunner(testCase: testCase, coffer: coffer).run()
        }
        // gpg's keyring lock can race with the agent in either program's run ("lockfile disappeared"),
        // and the faketime wrapper meets a semaphore an earlier faketime of the same process id left in
        // /dev/shm ("faketime: sem_open: File exists"): such a run says nothing about coffer, so the case
        // runs once more, whole.
        let spoilt = (reports.pass + reports.coffer)
        if reports.pass != reports.coffer
            && (spoilt.contains("lockfile") || spoilt.contains("faketime: sem_open"))
        {
            reports = try await BlockingGate.shared.run {
                try DifferentialRunner(testCase: testCase, coffer: coffer).run()
            }
        }
        Self.save(testCase, reports)
        guard reports.pass != reports.coffer else { return }
        let message = Comment(
            rawValue: "\(testCase.testDescription): coffer differs from pass (- pass, + coffer):\n"
                + Report.difference(reports.pass, reports.coffer))
        if let reason = testCase.scenario.deliberate {
            withKnownIssue("deliberate difference: \(reason)", isIntermittent: true) {
                Issue.record(message)
            }
        } else {
            Issue.record(message)
        }
    }

    @Test("The table covers every command, at least 120 scenarios, with unique names")
    func tableIsComplete() {
        let scenarios = DifferentialTable.scenarios
        #expect(scenarios.count >= 120)
        #expect(Set(scenarios.map(\.name)).count == scenarios.count, "scenario names must be unique")
        // Every name of every command pass has, from the registry.
        let commands = CommandRegistry.all.filter { $0.origin == .pass }.flatMap(\.names)
        for command in commands {
            #expect(scenarios.contains { $0.arguments.first == command }, "no scenario runs \(command)")
        }
        let deliberate = scenarios.filter { $0.deliberate != nil }
        #expect(deliberate.count <= 10, "deliberate differences must stay very few")
        #expect(scenarios.contains { if case .terminal = $0.input { true } else { false } })
        #expect(scenarios.contains { $0.locales.contains(.c) })
    }

    private static func save(_ testCase: DifferentialCase, _ reports: (pass: String, coffer: String)) {
        guard let folder = environmentVariable("COFFER_DIFF_REPORTS"), !folder.isEmpty else { return }
        mkdir(folder, 0o755)
        let stem = folder + "/" + testCase.scenario.name + "." + testCase.locale.rawValue
        try? TestFiles.write(reports.pass, to: stem + ".pass.txt")
        try? TestFiles.write(reports.coffer, to: stem + ".coffer.txt")
    }
}
