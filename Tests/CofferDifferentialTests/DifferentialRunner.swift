import Coffer
import CofferTestSupport

@testable import CofferCLI

/// Runs one case with pass and with coffer and renders both outcomes as comparable text.
struct DifferentialRunner {
    let testCase: DifferentialCase
    let coffer: ProgramUnderTest

    var scenario: DifferentialScenario { testCase.scenario }

    /// The two reports, pass's first.
    func run() throws -> (pass: String, coffer: String) {
        let sandbox = try DifferentialSandbox(locale: testCase.locale)
        let pristine = sandbox.directory + ".pristine"
        defer {
            sandbox.stopAgent()
            _ = try? TestProcess.run(["rm", "-rf", pristine], environment: sandbox.baseEnvironment)
        }
        // Many scenarios share a setup: it runs once per process in a sandbox of its own, and each case copies
        // the resulting home and keyring (a store holds no absolute path of its sandbox).
        let template = try SetupCache.shared.folder(for: scenario.setup) { folder in
            let builder = try DifferentialSandbox(locale: .utf8)
            defer { builder.stopAgent() }
            let setup = try TestProcess.run(
                ["bash", "-c", DifferentialSandbox.prelude + scenario.setup],
                environment: builder.baseEnvironment,
                directory: builder.home, timeout: 120)
            builder.stopAgent()
            guard setup.status == 0 else {
                throw TestProcess.Failure(
                    description:
                        "setup of \(scenario.name) failed (\(setup.status)):\n\(setup.outputText)\(setup.errorText)"
                )
            }
            try TestProcess.check(
                ["cp", "-a", builder.home, builder.keys.gnupgHome, folder],
                environment: builder.baseEnvironment)
        }
        try TestProcess.check(
            ["rm", "-rf", sandbox.home, sandbox.keys.gnupgHome], environment: sandbox.baseEnvironment)
        try TestProcess.check(
            ["cp", "-a", template + "/home", template + "/gnupg", sandbox.directory],
            environment: sandbox.baseEnvironment)
        // Both programs run in copies of the same pristine folder, at the same absolute path, so that even
        // the order in which the file system lists a folder is the same for both.
        try TestProcess.check(["mv", sandbox.directory, pristine], environment: sandbox.baseEnvironment)
        var outcomes: [(result: ProcessResult, files: [String], generated: [String])] = []
        for program in [ProgramUnderTest.pass, coffer] {
            try TestProcess.check(["rm", "-rf", sandbox.directory], environment: sandbox.baseEnvironment)
            try TestProcess.check(
                ["cp", "-a", pristine, sandbox.directory], environment: sandbox.baseEnvironment)
            try sandbox.link(program.path)
            let result = try execute(in: sandbox)
            let generatedPasswords = try collectGenerated(in: sandbox, pristine: pristine)
            var snapshot = StoreSnapshot(
                root: sandbox.home, pristineRoot: pristine + "/home", temporary: sandbox.temporary,
                environment: sandbox.baseEnvironment, generated: scenario.generated)
            let files = try snapshot.render()
            sandbox.stopAgent()
            outcomes.append((result, files, generatedPasswords))
        }
        outcomes[0].files = outcomes[0].files.map(Tolerance.correctingPassOTP)
        var tolerated = outcomes[1]
        Tolerance.apply(to: &tolerated.result, files: &tolerated.files, reference: outcomes[0])
        let reports = [outcomes[0], tolerated].map {
            Report.render(result: $0.result, files: $0.files, generated: $0.generated, scenario: scenario)
        }
        return (reports[0], reports[1])
    }

    /// The environment of the command: the sandbox's, then the scenario's.
    func commandEnvironment(_ sandbox: DifferentialSandbox) -> [String: String] {
        sandbox.commandEnvironment(scenario.environment)
    }

    private func execute(in sandbox: DifferentialSandbox) throws -> ProcessResult {
        let arguments = scenario.arguments.map(sandbox.expand)
        let environment = commandEnvironment(sandbox)
        switch scenario.input {
        case .pipe(let bytes):
            return try TestProcess.run(
                scenario.launcher + ["coffer"] + arguments, environment: environment, directory: sandbox.home,
                input: bytes,
                timeout: 30)
        case .terminal(let steps):
            return try converse(
                steps,
                command: ["env", "LC_ALL=\(sandbox.locale.rawValue)"] + scenario.launcher + ["coffer"]
                    + arguments,
                environment: environment, in: sandbox)
        case .terminalStderrOnly(let steps):
            let file = sandbox.directory + "/terminal-stdout"
            let command =
                [
                    "sh", "-c", #"exec "$@" > "$0""#, file, "env", "LC_ALL=\(sandbox.locale.rawValue)",
                ] + scenario.launcher + ["coffer"]
            var result = try converse(
                steps, command: command + arguments, environment: environment, in: sandbox)
            result.standardError = result.standardOutput + result.standardError
            result.standardOutput = TestFiles.read(file) ?? Array("<no standard output file>".utf8)
            return result
        }
    }

    private func converse(
        _ steps: [DifferentialScenario.Interaction], command: [String], environment: [String: String],
        in sandbox: DifferentialSandbox
    ) throws -> ProcessResult {
        let script = sandbox.directory + "/conversation.exp"
        let expanded = steps.map { step -> DifferentialScenario.Interaction in
            switch step {
            case .wait(let text): return .wait(sandbox.expand(text))
            case .type(let text): return .type(sandbox.expand(text))
            }
        }
        try TestFiles.write(Self.expectScript(expanded), to: script)
        var expectEnvironment = environment
        expectEnvironment["LC_ALL"] = "C"
        return try TestProcess.run(
            ["expect", "-f", script, "--"] + command, environment: expectEnvironment, directory: sandbox.home,
            timeout: 60)
    }

    /// An expect script that runs its arguments on a pseudo-terminal, has the conversation, and exits
    /// with the program's status; everything the program printed goes to standard output.
    static func expectScript(_ steps: [DifferentialScenario.Interaction]) -> String {
        var lines = [
            "log_user 1", "set timeout 20", "fconfigure stdout -translation binary",
            "spawn -noecho {*}$argv",
        ]
        for step in steps {
            switch step {
            case .wait(let text):
                let literal = tclLiteral(text)
                lines.append(
                    """
                    expect {
                        -exact \(literal) {}
                        timeout { puts "\\n<<timed out waiting for \(tclEscapes(text))>>"; exit 124 }
                        eof { puts "\\n<<ended while waiting for \(tclEscapes(text))>>" }
                    }
                    """)
                lines.append("sleep 0.15")
            case .type(let text):
                lines.append("send -- \(tclLiteral(text))")
            }
        }
        lines.append(
            """
            expect {
                eof {}
                timeout { puts "\\n<<timed out waiting for the end>>"; exit 124 }
            }
            set result [wait]
            if {[llength $result] > 4} { puts "\\n<<killed: [lrange $result 4 end]>>"; exit 125 }
            exit [lindex $result 3]
            """)
        return lines.joined(separator: "\n") + "\n"
    }

    private static func tclEscapes(_ text: String) -> String {
        text.unicodeScalars.map { scalar in
            if scalar.isASCII, let value = Optional(scalar.value),
                value >= 0x30 && value <= 0x39
                    || value >= 0x41 && value <= 0x5a || value >= 0x61 && value <= 0x7a || value == 0x20
            {
                return String(scalar)
            }
            let hex = String(scalar.value, radix: 16)
            return "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
        }.joined()
    }

    private static func tclLiteral(_ text: String) -> String { "\"" + tclEscapes(text) + "\"" }

    /// The first lines of the entries that a generate case wrote (new or rewritten `.gpg` files).
    private func collectGenerated(in sandbox: DifferentialSandbox, pristine: String) throws -> [String] {
        guard scenario.generated != nil else { return [] }
        var passwords: [String] = []
        let listing = try TestProcess.check(
            [
                "find", sandbox.home, "-name", ".git", "-prune", "-o", "-type", "f", "-name", "*.gpg",
                "-print0",
            ],
            environment: sandbox.baseEnvironment)
        for path in listing.standardOutput.split(separator: 0).map({ String(decoding: $0, as: UTF8.self) }) {
            let relative = String(path.dropFirst(sandbox.home.count))
            if let old = TestFiles.read(pristine + "/home" + relative), old == TestFiles.read(path) {
                continue
            }
            let decrypted = try TestProcess.run(
                ["gpg", "--batch", "--quiet", "-d", path], environment: sandbox.baseEnvironment)
            let first =
                decrypted.standardOutput.split(
                    separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false
                )
                .first ?? []
            passwords.append(String(decoding: first, as: UTF8.self))
        }
        return passwords
    }
}

/// The results of setup scripts, made once per test process: folders holding `home` and `gnupg`, under one
/// folder that is removed when the process exits.
final class SetupCache: Sendable {
    static let shared = SetupCache()

    /// One setup's folder, built once; its lock is held while it is built.
    private final class Entry: Sendable {
        let folder: String
        let result = Locked<Result<String, any Error>?>(nil)
        init(folder: String) { self.folder = folder }
    }

    private let state = Locked<(entries: [String: Entry], root: String?)>(([:], nil))
    nonisolated(unsafe) private static var rootToRemove: String?

    /// The folder made by `build` for this setup (built by the first caller; the others wait for it).
    func folder(for setup: String, build: (String) throws -> Void) throws -> String {
        let entry = try state.withLock { state in
            if let existing = state.entries[setup] { return existing }
            let parent = try state.root ?? Self.makeRoot()
            state.root = parent
            let made = Entry(folder: parent + "/setup-\(state.entries.count)")
            state.entries[setup] = made
            return made
        }
        return try entry.result.withLock { result in
            if result == nil {
                result = Result {
                    mkdir(entry.folder, 0o700)
                    try build(entry.folder)
                    return entry.folder
                }
            }
            return try result!.get()
        }
    }

    private static func makeRoot() throws -> String {
        let made = try TestFiles.temporaryFolder("coffer-setups")
        rootToRemove = made
        atexit {
            guard let folder = SetupCache.rootToRemove else { return }
            _ = try? TestProcess.run(["rm", "-rf", folder], environment: ["PATH": "/usr/bin:/bin"])
        }
        return made
    }
}

/// The differences that coffer makes on purpose everywhere, removed from coffer's outcome before comparing
/// (each is in ``DifferentialTable/deliberateDifferences``).
enum Tolerance {
    /// The rules, with their reasons.
    static let rules = [
        (
            "help and version text",
            "coffer speaks as coffer under its own name: its banner, version and help (every command, those "
                + "pass lacks included) stand where pass prints its own; coffer run as `pass` prints pass's "
                + "text byte for byte (checked by the CLI tests)"
        ),
        (
            "program name",
            "where pass names itself `pass` whatever it is called (`Try \"pass init\"`, `a sneaky path to "
                + "pass`), coffer uses the name it was called by"
        ),
        (
            "pass-otp's HOTP counter under bash 5.2",
            "pass-otp 1.2 moves an HOTP counter on with `${uri/&counter=N/&counter=M}`, where bash 5.2 reads "
                + "`&` in the replacement as the matched text and writes `&counter=Ncounter=M` (an entry it then "
                + "refuses); pass's entries are compared as pass-otp means them, `&counter=M`"
        ),
        (
            "OTP secrets in error messages",
            "pass-otp prints a URI it cannot use whole, secret included; coffer prints it with the value of "
                + "`secret=` as `<hidden>`: pass's message is compared with its secret hidden the same way"
        ),
        (
            "git merge driver",
            "`coffer git init` also configures git's `merge.coffer.*` driver for entries, and merges by hand "
                + "without directory rename detection, as sync merges: those configuration lines are ignored"
        ),
        (
            "encryption plans",
            "coffer remembers gpg's choice for a recipient list in `~/.cache/coffer/` (fingerprints and file "
                + "identities, nothing secret) so that later writes start no gpg: that folder is ignored"
        ),
    ]

    /// coffer's standard error with pass's where they differ only in the secrets of OTP URIs that coffer
    /// hides in its error messages.
    static func revealingOTPSecrets(_ bytes: [UInt8], reference: [UInt8]) -> [UInt8] {
        let ours = String(decoding: bytes, as: UTF8.self)
        let theirs = String(decoding: reference, as: UTF8.self)
        guard ours.contains("secret=<hidden>"), ours != theirs else { return bytes }
        let lines = theirs.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.contains("URI") && line.contains("otpauth://")
                ? OneTimePassword.masked(String(line)) : String(line)
        }
        return lines.joined(separator: "\n") == ours ? reference : bytes
    }

    /// A line of pass's files with pass-otp's HOTP counter as pass-otp means it: `&counter=Ncounter=M`
    /// (bash 5.2's pattern substitution) read as `&counter=M`.
    static func correctingPassOTP(_ line: String) -> String {
        guard line.contains("otpauth://hotp/") else { return line }
        return line.replacing(/&counter=[0-9]+counter=([0-9]+)/) { "&counter=" + $0.output.1 }
    }

    static func apply(
        to result: inout ProcessResult, files: inout [String],
        reference: (result: ProcessResult, files: [String], generated: [String])
    ) {
        result.standardOutput = speakingAsPass(
            result.standardOutput, reference: reference.result.standardOutput)
        result.standardError = speakingAsPass(result.standardError, reference: reference.result.standardError)
        result.standardError = revealingOTPSecrets(
            result.standardError, reference: reference.result.standardError)
        files.removeAll { line in
            ["    config: merge.coffer.", "    config: merge.directoryrenames="]
                .contains { line.hasPrefix($0) } && !reference.files.contains(line)
        }
        files = withoutEncryptionPlans(files, reference: reference.files)
    }

    /// The file lines without coffer's `.cache/coffer` folder (and `.cache` when pass has none), and
    /// without the content lines (`    | ...`) of the files in it.
    static func withoutEncryptionPlans(_ files: [String], reference: [String]) -> [String] {
        var kept: [String] = []
        var dropping = false
        for line in files {
            if line.hasPrefix("    |") {
                if !dropping { kept.append(line) }
                continue
            }
            let path = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst(2).first
            dropping =
                path == ".cache/coffer" || path?.hasPrefix(".cache/coffer/") == true
                || (path == ".cache" && !reference.contains(line))
            if !dropping { kept.append(line) }
        }
        return kept
    }

    /// coffer's output with its own help text, banner and program name replaced by what pass printed in
    /// their place (the reference), so that everything else compares byte for byte.
    static func speakingAsPass(_ bytes: [UInt8], reference: [UInt8]) -> [UInt8] {
        var text = String(decoding: bytes, as: UTF8.self)
        // Output that is not text (an entry's bytes) is left exactly as it is.
        guard Array(text.utf8) == bytes else { return bytes }
        let passText = String(decoding: reference, as: UTF8.self)
        let passBanner = (
            start:
                "============================================\n= pass: the standard unix password manager =",
            end:
                "=      http://www.passwordstore.org/       =\n============================================\n"
        )
        let cofferBanner = (start: "coffer ", marker: ": a password store that pass can read", end: ")\n")
        let help = (
            pass: "More information may be found in the pass(1) man page.\n",
            coffer: "More information may be found in the coffer(1) man page.\n"
        )
        func block(in text: String, from start: String, through end: String) -> Range<String.Index>? {
            guard let begin = text.firstRange(of: start) else { return nil }
            return text[begin.lowerBound...].firstRange(of: end).map { begin.lowerBound..<$0.upperBound }
        }
        // coffer's help (banner, usage) where pass printed its help; else its banner where pass's stood.
        if let ours = block(in: text, from: cofferBanner.start, through: help.coffer),
            text[ours].contains(cofferBanner.marker),
            let theirs = block(in: passText, from: passBanner.start, through: help.pass)
        {
            text.replaceSubrange(ours, with: passText[theirs])
        } else if let ours = block(in: text, from: cofferBanner.start, through: cofferBanner.end),
            text[ours].contains(cofferBanner.marker),
            let theirs = block(in: passText, from: passBanner.start, through: passBanner.end)
        {
            text.replaceSubrange(ours, with: passText[theirs])
        }
        text = text.replacing("a sneaky path to coffer. Go home.", with: "a sneaky path to pass. Go home.")
        text = text.replacing("Try \"coffer init\".", with: "Try \"pass init\".")
        return Array(text.utf8)
    }

    private static func lines(_ bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        var lines: [ArraySlice<UInt8>] = []
        var start = bytes.startIndex
        while start < bytes.endIndex {
            let end = bytes[start...].firstIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? bytes.endIndex
            lines.append(bytes[start..<end])
            start = end
        }
        return lines
    }
}
