import Coffer
import CofferTestSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A program the differential cases run: the real pass, or coffer.
struct ProgramUnderTest: Sendable {
    /// `pass` or `coffer`, for reports.
    var label: String
    /// The executable; it is always started through a symbolic link named `coffer`, so that both print
    /// the same program name.
    var path: String

    /// Debian's pass 1.7.4.
    static let pass = ProgramUnderTest(label: "pass", path: "/usr/bin/pass")
}

/// The sandbox of one case: keys, `HOME`, a `bin` folder first on `PATH` (the `coffer` link and the
/// scripted editors) and a `TMPDIR`, all under one folder whose absolute path both programs see.
struct DifferentialSandbox {
    let keys: GPGSandbox
    let locale: TestLocale

    var directory: String { keys.directory }
    var home: String { keys.home }
    var bin: String { directory + "/bin" }
    var temporary: String { directory + "/tmp" }
    var store: String { keys.storeDirectory }

    init(locale: TestLocale) throws {
        keys = try GPGSandbox()
        self.locale = locale
        // Never look keys up on the network (WKD): the sandbox has none, and the answer would vary.
        var configuration = TestFiles.read(keys.gnupgHome + "/gpg.conf") ?? []
        configuration += Array("auto-key-locate local\n".utf8)
        try TestFiles.write(configuration, to: keys.gnupgHome + "/gpg.conf", mode: 0o600)
        mkdir(bin, 0o755)
        mkdir(temporary, 0o700)
        for (name, script) in Self.editors {
            try TestFiles.write("#!/bin/sh\n" + script + "\n", to: bin + "/" + name, mode: 0o755)
        }
    }

    /// The scripted editors, by name, placed in `$SANDBOX/bin`. `editor` is what both programs run when
    /// `EDITOR` is unset.
    static let editors: [(String, String)] = [
        ("editor", #"printf 'written by editor\n' >> "$1""#),
        ("edit-append", #"printf 'appended: line\n' >> "$1""#),
        ("edit-replace", #"printf 'replaced-password\nurl: https://new.example\n' > "$1""#),
        ("edit-nothing", "exit 0"),
        ("edit-fail", "exit 3"),
        ("edit-change-then-fail", #"printf 'changed before failing\n' > "$1"; exit 1"#),
        ("edit-delete", #"rm -f -- "$1""#),
        (
            "edit-report",
            #"""
            printf 'editor: %s\n' "$(printf %s "$1" | sed -E 's#^/dev/shm/([^/.]+)\.[A-Za-z0-9]{13}/[A-Za-z0-9]{6}-#/dev/shm/\1.RANDOM13/RANDOM6-#')" >&2
            printf 'mode: %s\n' "$(stat -c %a "$1" 2>/dev/null || echo none)" >&2
            printf 'folder mode: %s\n' "$(stat -c %a "$(dirname "$1")")" >&2
            [ -f "$1" ] && sed 's/^/was: /' "$1" >&2
            printf 'reported\n' >> "$1"
            """#
        ),
        (
            "edit-args",
            #"printf 'arguments: %s, first: %s\n' "$#" "$1" >&2; shift $(($# - 1)); printf 'with arguments\n' > "$1""#
        ),
        ("edit-binary", #"printf 'bin\001\002\377ary' > "$1""#),
    ]

    /// Bash put before every setup script.
    static let prelude = #"""
        set -euo pipefail
        cd "$HOME"
        # ins NAME CONTENT: stores CONTENT (printf %b escapes, so '\n' is a newline) with the real pass.
        ins() { printf '%b' "$2" | pass insert -m -f -- "$1" >/dev/null; }
        # gitstore: makes the store a git repository with pass.
        gitstore() { pass git init >/dev/null; }

        """#

    /// Runs a setup script (bash with ``prelude``, the real pass) in this sandbox, then stops the agent.
    func runSetup(_ script: String) throws {
        defer { stopAgent() }
        try TestProcess.check(
            ["bash", "-c", Self.prelude + script], environment: baseEnvironment, directory: home, timeout: 120
        )
    }

    /// Points `$SANDBOX/bin/coffer` at `program`.
    func link(_ program: String) throws {
        let link = bin + "/coffer"
        unlink(link)
        guard symlink(program, link) == 0 else {
            throw TestProcess.Failure(description: "cannot link \(link) to \(program)")
        }
    }

    /// Names substituted in scenario text.
    var substitutions: [(String, String)] {
        [
            ("$SANDBOX", directory), ("$HOME", home), ("$STORE", store),
            ("$K1", keys.keys[0].fingerprint), ("$K2", keys.keys[1].fingerprint),
            ("$K3", keys.keys[2].fingerprint), ("$E1", keys.keys[0].email), ("$E2", keys.keys[1].email),
            ("$E3", keys.keys[2].email),
        ]
    }

    func expand(_ text: String) -> String {
        var result = text
        for (name, value) in substitutions where result.contains(name) {
            result = result.replacing(name, with: value)
        }
        return result
    }

    /// The environment of setups and commands, before a scenario's own variables.
    var baseEnvironment: [String: String] {
        var environment = [
            "HOME": home, "GNUPGHOME": keys.gnupgHome, "PASSWORD_STORE_DIR": store,
            "PATH": bin + ":/usr/local/bin:/usr/bin:/bin", "LC_ALL": locale.rawValue, "TZ": "UTC",
            "TMPDIR": temporary, "GIT_CONFIG_NOSYSTEM": "1", "TERM": "xterm",
            "GIT_AUTHOR_NAME": "Coffer Test", "GIT_AUTHOR_EMAIL": "test@coffer.test",
            "GIT_COMMITTER_NAME": "Coffer Test", "GIT_COMMITTER_EMAIL": "test@coffer.test",
            "GIT_AUTHOR_DATE": "1700000000 +0000", "GIT_COMMITTER_DATE": "1700000000 +0000",
            "SANDBOX": directory, "STORE": store,
        ]
        for (index, key) in keys.keys.enumerated() {
            environment["K\(index + 1)"] = key.fingerprint
            environment["E\(index + 1)"] = key.email
        }
        return environment
    }

    /// Stops the gpg-agent of the sandbox's keyring (if one runs).
    func stopAgent() {
        guard
            TestFiles.exists(keys.gnupgHome + "/S.gpg-agent")
                || TestFiles.exists(keys.gnupgHome + "/S.dirmngr")
        else { return }
        _ = try? TestProcess.run(["gpgconf", "--kill", "all"], environment: baseEnvironment, timeout: 20)
    }
}

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
        var tolerated = outcomes[1]
        Tolerance.apply(to: &tolerated.result, files: &tolerated.files, reference: outcomes[0])
        let reports = [outcomes[0], tolerated].map {
            Report.render(result: $0.result, files: $0.files, generated: $0.generated, scenario: scenario)
        }
        return (reports[0], reports[1])
    }

    /// The environment of the command: the sandbox's, then the scenario's.
    func commandEnvironment(_ sandbox: DifferentialSandbox) -> [String: String] {
        var environment = sandbox.baseEnvironment
        environment["SANDBOX"] = nil
        environment["STORE"] = nil
        for name in ["K1", "K2", "K3", "E1", "E2", "E3"] { environment[name] = nil }
        for (name, value) in scenario.environment {
            environment[name] = value.map(sandbox.expand)
        }
        return environment
    }

    private func execute(in sandbox: DifferentialSandbox) throws -> ProcessResult {
        let arguments = scenario.arguments.map(sandbox.expand)
        let environment = commandEnvironment(sandbox)
        switch scenario.input {
        case .pipe(let bytes):
            return try TestProcess.run(
                ["coffer"] + arguments, environment: environment, directory: sandbox.home, input: bytes,
                timeout: 30)
        case .terminal(let steps):
            return try converse(
                steps, command: ["env", "LC_ALL=\(sandbox.locale.rawValue)", "coffer"] + arguments,
                environment: environment, in: sandbox)
        case .terminalStderrOnly(let steps):
            let file = sandbox.directory + "/terminal-stdout"
            let command = [
                "sh", "-c", #"exec "$@" > "$0""#, file, "env", "LC_ALL=\(sandbox.locale.rawValue)", "coffer",
            ]
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

/// The files under the sandbox's home after a command, as text lines: folders, files with their mode,
/// `.gpg` files decrypted with their recipients' key ids (or `unchanged`), links, and each git
/// repository's log, status and local configuration; plus anything left in `TMPDIR`.
struct StoreSnapshot {
    let root: String
    let pristineRoot: String
    let temporary: String
    let environment: [String: String]
    let generated: GeneratedPassword?

    mutating func render() throws -> [String] {
        let listing = try TestProcess.check(
            [
                "find", root, "-mindepth", "1", "-name", ".git", "-prune", "-printf", "G\\0%P\\0", "-o",
                "-type", "l", "-printf", "L\\0%P\\0%l\\0", "-o", "-type", "d", "-printf", "D\\0%m\\0%P\\0",
                "-o", "-printf", "F\\0%m\\0%P\\0",
            ], environment: environment)
        var fields = listing.standardOutput.split(separator: 0, omittingEmptySubsequences: false)
            .map { String(decoding: $0, as: UTF8.self) }[...]
        var entries: [(path: String, lines: [String])] = []
        while let kind = fields.popFirst(), !kind.isEmpty {
            switch kind {
            case "G":
                let path = fields.popFirst() ?? ""
                entries.append((path, try gitLines(path)))
            case "L":
                let path = fields.popFirst() ?? ""
                let target = fields.popFirst() ?? ""
                entries.append((path, ["link \(Report.escape(path)) -> \(Report.escape(target))"]))
            case "D":
                let mode = fields.popFirst() ?? ""
                let path = fields.popFirst() ?? ""
                entries.append((path, ["dir  \(mode) \(Report.escape(path))"]))
            default:
                let mode = fields.popFirst() ?? ""
                let path = fields.popFirst() ?? ""
                entries.append((path, try fileLines(path, mode: mode)))
            }
        }
        var lines = entries.sorted { Array($0.path.utf8).lexicographicallyPrecedes(Array($1.path.utf8)) }
            .flatMap(\.lines)
        let leftovers = try TestProcess.check(
            ["find", temporary, "-mindepth", "1", "-printf", "%P\\n"], environment: environment)
        for leftover in leftovers.outputText.split(separator: "\n").sorted() {
            lines.append("left in TMPDIR: \(Report.escape(String(leftover)))")
        }
        return lines
    }

    private func fileLines(_ path: String, mode: String) throws -> [String] {
        let bytes = TestFiles.read(root + "/" + path) ?? []
        let before = TestFiles.read(pristineRoot + "/" + path)
        let header = "file \(mode) \(Report.escape(path))"
        if before == bytes { return [header + " unchanged"] }
        let state = before == nil ? "new" : "rewritten"
        if path.hasSuffix(".sig") {
            // A detached signature differs at every signing (it holds the time): show who signed what.
            let verified = try TestProcess.run(
                [
                    "gpg", "--batch", "--status-fd=1", "--verify", root + "/" + path,
                    root + "/" + path.dropLast(4),
                ],
                environment: environment)
            let status = verified.outputText.split(separator: "\n").compactMap { line -> String? in
                let words = line.split(separator: " ")
                guard words.count > 2, ["VALIDSIG", "BADSIG", "ERRSIG", "NO_PUBKEY"].contains(words[1]) else {
                    return nil
                }
                return words[1] + " " + words[2]
            }
            return [header + " \(state) signature: " + status.joined(separator: ", ")]
        }
        guard path.hasSuffix(".gpg") else {
            return [header + " \(state)"] + Report.contentLines(bytes)
        }
        let format = bytes.starts(with: Array("-----BEGIN PGP".utf8)) ? "armored" : "binary"
        let decrypted = try TestProcess.run(
            ["gpg", "--batch", "-v", "--keyid-format", "long", "-d", root + "/" + path],
            environment: environment)
        let keys = decrypted.errorText.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("gpg: public key is ") else { return nil }
            return String(line.dropFirst("gpg: public key is ".count))
        }.sorted()
        var lines = [
            header + " \(state) \(format) to " + (keys.isEmpty ? "(no key ids)" : keys.joined(separator: ","))
        ]
        guard decrypted.status == 0 else {
            return lines + ["    <gpg cannot decrypt it: status \(decrypted.status)>"]
        }
        var content = decrypted.standardOutput
        if let generated {
            let firstEnd = content.firstIndex(of: UInt8(ascii: "\n")) ?? content.endIndex
            let password = String(decoding: content[..<firstEnd], as: UTF8.self)
            content.replaceSubrange(..<firstEnd, with: Array(generated.mask(password).utf8))
        }
        lines += Report.contentLines(content)
        return lines
    }

    private func gitLines(_ path: String) throws -> [String] {
        let worktree = root + "/" + String(path.dropLast(".git".count))
        var lines = ["git  \(Report.escape(path))"]
        let log = try TestProcess.run(
            ["git", "-C", worktree, "log", "--format=%G? %an <%ae> %s"], environment: environment)
        lines +=
            log.status == 0
            ? log.outputText.split(separator: "\n").map { "    log: " + Report.escape(String($0)) }
            : ["    log: (none)"]
        let status = try TestProcess.run(
            ["git", "-C", worktree, "status", "--porcelain", "--untracked-files=all"],
            environment: environment)
        lines += status.outputText.split(separator: "\n").map { "    status: " + Report.escape(String($0)) }
        let config = try TestProcess.run(
            ["git", "-C", worktree, "config", "--local", "--list"], environment: environment)
        lines += config.outputText.split(separator: "\n").map { "    config: " + Report.escape(String($0)) }
        return lines
    }
}

/// Renders and compares reports.
enum Report {
    /// The text of one program's outcome.
    static func render(
        result: ProcessResult, files: [String], generated: [String], scenario: DifferentialScenario
    ) -> String {
        var lines = ["status: \(result.status)" + (result.timedOut ? " (killed after the time limit)" : "")]
        var output = normalise(result.standardOutput, generated: generated, scenario: scenario)
        if scenario.unordered {
            // The order is the file system's (readdir or inode order), which differs between copies.
            lines.append("stdout (lines sorted):")
            var lines: [ArraySlice<UInt8>] = []
            var start = output.startIndex
            while start < output.endIndex {
                let end =
                    output[start...].firstIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? output.endIndex
                lines.append(output[start..<end])
                start = end
            }
            output = lines.sorted { $0.lexicographicallyPrecedes($1) }.flatMap { $0 }
        } else {
            lines.append("stdout:")
        }
        lines += contentLines(output)
        lines.append("stderr:")
        lines += contentLines(normalise(result.standardError, generated: generated, scenario: scenario))
        lines.append("files:")
        lines += files.map { "    " + $0 }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Masks what legitimately differs between two runs: git's abbreviated commit hashes (dates and identity
    /// are fixed, but every encryption makes a different ciphertext, so the trees differ), git's line counts
    /// for ciphertexts, and generated passwords (and their QR codes).
    static func normalise(_ bytes: [UInt8], generated: [String], scenario: DifferentialScenario) -> [UInt8] {
        guard var text = String(validating: bytes, as: UTF8.self) else { return bytes }
        text = text.replacing(#/\[([^\] \n]+)( \(root-commit\))? [0-9a-f]{7,40}\]/#) { match in
            "[\(match.output.1)\(match.output.2 ?? "") HASH]"
        }
        // Whether git counts lines in a ciphertext without a diff attribute depends on its random bytes.
        text = text.replacing(
            #/(?m)^( \d+ files? changed)(, \d+ insertions?\(\+\))?(, \d+ deletions?\(-\))?$/#
        ) {
            match in "\(match.output.1), <counts>"
        }
        if let shape = scenario.generated {
            for password in generated where !password.isEmpty {
                text = text.replacing(password, with: shape.mask(password))
            }
            text = text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
                line.contains(where: { "█▀▄".contains($0) })
                    ? "<QR code line of \(line.count) characters>" : line
            }.joined(separator: "\n")
        }
        return Array(text.utf8)
    }

    /// Bytes as escaped lines, one per line of the text; the last shows whether a newline ends it.
    static func contentLines(_ bytes: [UInt8]) -> [String] {
        if bytes.isEmpty { return ["    (empty)"] }
        var lines: [String] = []
        var start = bytes.startIndex
        while start < bytes.endIndex {
            let end = bytes[start...].firstIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? bytes.endIndex
            lines.append("    | " + escape(bytes[start..<end]))
            start = end
        }
        return lines
    }

    /// Text with control characters, backslashes and invalid UTF-8 escaped.
    static func escape(_ text: String) -> String { escape(Array(text.utf8)[...]) }

    static func escape(_ bytes: ArraySlice<UInt8>) -> String {
        var result = ""
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let lead = bytes[index]
            let width = lead < 0xc0 ? 1 : lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2
            let end = min(bytes.endIndex, index + width)
            guard let decoded = String(validating: bytes[index..<end], as: UTF8.self),
                let scalar = decoded.unicodeScalars.first
            else {
                result += "\\x" + hex(lead)
                index += 1
                continue
            }
            index = end
            switch scalar {
            case "\n": result += "\\n"
            case "\t": result += "\\t"
            case "\r": result += "\\r"
            case "\u{1b}": result += "\\e"
            case "\\": result += "\\\\"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7f {
                    result += "\\x" + hex(UInt8(scalar.value))
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789abcdef")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 15)]])
    }

    /// A line diff of two reports (`-` pass, `+` coffer) with a little context.
    static func difference(_ left: String, _ right: String, context: Int = 2) -> String {
        let a = left.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let b = right.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in stride(from: a.count - 1, through: 0, by: -1) {
            for j in stride(from: b.count - 1, through: 0, by: -1) {
                table[i][j] = a[i] == b[j] ? table[i + 1][j + 1] + 1 : max(table[i + 1][j], table[i][j + 1])
            }
        }
        var operations: [(Character, String)] = []
        var i = 0
        var j = 0
        while i < a.count || j < b.count {
            if i < a.count && j < b.count && a[i] == b[j] {
                operations.append((" ", a[i]))
                i += 1
                j += 1
            } else if j < b.count && (i == a.count || table[i][j + 1] >= table[i + 1][j]) {
                operations.append(("+", b[j]))
                j += 1
            } else {
                operations.append(("-", a[i]))
                i += 1
            }
        }
        var shown = Set<Int>()
        for (index, operation) in operations.enumerated() where operation.0 != " " {
            for near in max(0, index - context)...min(operations.count - 1, index + context) {
                shown.insert(near)
            }
        }
        var output: [String] = []
        var previous = -1
        for index in shown.sorted() {
            if previous >= 0 && index > previous + 1 { output.append("   …") }
            output.append("\(operations[index].0) \(operations[index].1)")
            previous = index
        }
        return output.joined(separator: "\n")
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
            "git merge driver",
            "`coffer git init` also configures git's `merge.coffer.*` driver for entries: those configuration "
                + "lines are ignored"
        ),
    ]

    static func apply(
        to result: inout ProcessResult, files: inout [String],
        reference: (result: ProcessResult, files: [String], generated: [String])
    ) {
        result.standardOutput = speakingAsPass(
            result.standardOutput, reference: reference.result.standardOutput)
        result.standardError = speakingAsPass(result.standardError, reference: reference.result.standardError)
        files.removeAll { line in
            line.hasPrefix("    config: merge.coffer.") && !reference.files.contains(line)
        }
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
