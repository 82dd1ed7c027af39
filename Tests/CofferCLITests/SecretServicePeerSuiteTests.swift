import CofferTestSupport
import Testing

/// The Secret Service clients' own test suites, run by `scripts/peer-suites.sh` against
/// gnome-keyring-daemon and against `coffer secret-service`, each on a private session bus:
/// SecretStorage 3.3.3's tests, and keyring's `BackendBasicTests` on its SecretService and libsecret
/// backends, each on the default and the session collection.
@Suite("Secret Service: the clients' own test suites")
struct SecretServicePeerSuiteTests {
    /// The suites, as the script names them in its results file.
    static let suites = [
        "secretstorage", "keyring-SecretService-default", "keyring-SecretService-session",
        "keyring-libsecret-default", "keyring-libsecret-session",
    ]

    /// What one run gave: the outcome of each test (`pass`, `fail`, `error` or `skip`) by suite and test
    /// id, and the lines of the suites' logs that say why a test did not pass.
    struct Run {
        /// The outcomes, by suite and then test id.
        var outcomes: [String: [String: String]] = [:]
        /// The lines `SUITE TESTID OUTCOME: REASON` of the logs.
        var reasons: [String] = []

        /// Why `test` of `suite` did not pass, as its log says.
        func reason(_ suite: String, _ test: String) -> String {
            reasons.first { $0.hasPrefix("\(suite) \(test) ") } ?? "\(suite) \(test): not run"
        }
    }

    /// Runs the script for `provider` (`gnome-keyring` or `coffer:PATH`) and reads what it wrote. Its
    /// folder is removed afterwards, unless `COFFER_TEST_KEEP` is set.
    private func run(_ provider: String) throws -> Run {
        let folder = try TestFiles.temporaryFolder("coffer-peer-results")
        defer {
            if environmentVariable("COFFER_TEST_KEEP") == nil {
                _ = try? TestProcess.run(["rm", "-rf", folder], environment: ["PATH": "/usr/bin:/bin"])
            }
        }
        try TestProcess.check(
            ["bash", TestFiles.packageRoot + "/scripts/peer-suites.sh", provider, folder],
            environment: ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin"], timeout: 2400)
        var result = Run()
        let results = String(decoding: TestFiles.read(folder + "/results.txt") ?? [], as: UTF8.self)
        for line in results.split(separator: "\n") {
            let fields = line.split(separator: " ").map(String.init)
            #expect(fields.count == 3, "\(provider): not SUITE TESTID OUTCOME in results.txt: \(line)")
            guard fields.count == 3 else { continue }
            result.outcomes[fields[0], default: [:]][fields[1]] = fields[2]
        }
        for log in ["secretstorage.log", "keyring.log"] {
            let text = String(decoding: TestFiles.read(folder + "/" + log) ?? [], as: UTF8.self)
            result.reasons += text.split(separator: "\n").filter { !$0.hasPrefix(" ") }.map(String.init)
        }
        return result
    }

    @Test("Every test of the clients' suites that passes against gnome-keyring passes against coffer")
    func noneFailsThatGnomeKeyringPasses() throws {
        let gnomeKeyring = try run("gnome-keyring")
        let binary = try CofferBinary.path()
        let coffer = try run("coffer:" + binary)
        for suite in Self.suites {
            let reference = gnomeKeyring.outcomes[suite] ?? [:]
            let tested = coffer.outcomes[suite] ?? [:]
            // A skipped test did not run.
            #expect(reference.values.contains { $0 != "skip" }, "\(suite) ran no test against gnome-keyring")
            #expect(tested.values.contains { $0 != "skip" }, "\(suite) ran no test against coffer")
            for test in reference.keys.sorted() where reference[test] == "pass" && tested[test] != "pass" {
                Issue.record("passes against gnome-keyring, not coffer: \(coffer.reason(suite, test))")
            }
            let total = Set(reference.keys).union(tested.keys).count
            let passed = { (outcomes: [String: String]) in outcomes.values.filter { $0 == "pass" }.count }
            print(
                "\(suite): coffer \(passed(tested))/\(total), gnome-keyring \(passed(reference))/\(total)")
        }
    }
}
