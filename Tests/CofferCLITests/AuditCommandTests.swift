import Coffer
import CofferTestSupport
import Testing

/// `coffer audit` on stores seeded with known weak, reused, old (commits with faked dates) and breached
/// (a generated list in Have I Been Pwned's format) passwords: each is found and nothing else; the JSON
/// is read back by Python's parser; weak and reused agree with Debian's pass-audit on the same store; no
/// secret is printed without `--show-passwords`; a bad breached list or an entry that does not decrypt is
/// an error (exit 2), never a silent skip.
@Suite("audit")
struct AuditCommandTests {
    /// coffer under its own name (under pass's, pass's audit extension would run), by absolute path.
    struct AuditSandbox {
        let sandbox: GPGSandbox
        let coffer: String

        init(git: Bool = true) throws {
            sandbox = try GPGSandbox()
            coffer = try CofferBinary.path()
            try check(["init", sandbox.keys[0].fingerprint])
            if git { try check(["git", "init"]) }
        }

        var store: String { sandbox.storeDirectory }

        @discardableResult
        func run(_ arguments: [String], input: [UInt8] = [], environment: [String: String] = [:]) throws
            -> ChildProcess.Output
        {
            var variables = environment
            variables["PATH"] = variables["PATH"] ?? "/usr/bin:/bin"
            return try sandbox.run([coffer] + arguments, input: input, environment: variables)
        }

        @discardableResult
        func check(_ arguments: [String], input: [UInt8] = [], environment: [String: String] = [:]) throws
            -> ChildProcess.Output
        {
            try run(arguments, input: input, environment: environment)
                .exitedZero("coffer \(arguments.joined(separator: " "))")
        }

        /// Stores `text` as `name`, committed at `date` (author and committer) when one is given.
        func insert(_ name: String, _ text: String, date: String? = nil) throws {
            try insert(name, bytes: Array(text.utf8), date: date)
        }

        func insert(_ name: String, bytes: [UInt8], date: String? = nil) throws {
            var environment: [String: String] = [:]
            if let date {
                environment["GIT_AUTHOR_DATE"] = date
                environment["GIT_COMMITTER_DATE"] = date
            }
            try check(["insert", "-m", "-f", name], input: bytes, environment: environment)
        }

        /// The report as lines `KIND<TAB>DETAIL`, sorted, read by Python's JSON parser from `audit --json`.
        func jsonFindings(_ arguments: [String], expectStatus status: Int32) throws -> [String] {
            let output = try run(["audit", "--json"] + arguments)
            #expect(output.status == status, "\(output.errorText)")
            let script = """
                import json, sys
                report = json.load(sys.stdin)
                lines = []
                lines += ["weak\\t" + w["entry"] for w in report["weak"]]
                lines += ["reused\\t" + " | ".join(r["entries"]) for r in report["reused"]]
                lines += ["old\\t" + o["entry"] for o in report["old"]]
                lines += ["breached\\t%s\\t%d" % (b["entry"], b["count"]) for b in report["breached"]]
                lines += ["without\\t" + e for e in report["withoutPassword"]]
                lines += ["error\\t" + e["entry"] for e in report["errors"]]
                lines += ["checked\\tage=%s breaches=%s entries=%d" % (report["checkedAge"], report["checkedBreaches"], report["entries"])]
                print("\\n".join(sorted(lines)))
                """
            let parsed = try sandbox.run(["/usr/bin/python3", "-c", script], input: output.standardOutput)
            #expect(parsed.status == 0, "not JSON: \(output.outputText) \(parsed.errorText)")
            let validated = try sandbox.run(["jq", "-e", ".entries"], input: output.standardOutput)
            #expect(validated.status == 0, "jq: \(validated.errorText)")
            return parsed.outputText.split(separator: "\n").map(String.init)
        }
    }

    /// What a seeded store holds, and what an audit must find in it.
    struct SeededStore {
        var passwords: [String] = []
        var weak: [String] = []
        var reused: [[String]] = []
        var old: [String] = []
        var breached: [String: Int] = [:]
        var withoutPassword: [String] = []
        var entries = 0
        /// The breached list (SHA-1 of the breached passwords, of others not in the store, and random ones).
        var breachedList = ""
    }

    /// Passwords that pass-audit's zxcvbn (score 2 or less) and coffer both call weak.
    static let weakPasswords = [
        "password", "123456", "qwerty123", "Summer2019!", "dragon1985", "iloveyou2020", "abc123abc123",
        "letmein!", "zxcvbnm123", "london2012", "Basketball#1", "trustno1", "sunshine99", "1qaz2wsx",
    ]

    static func randomPassword(_ random: inout SeededRandom, length: Int = 20) -> String {
        let alphabet = Array("abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789!#%&*+=?@^")
        return String((0..<length).map { _ in random.pick(alphabet) })
    }

    static let oldDate = "2019-03-01T12:00:00Z"

    /// Builds the store: strong unique passwords, `weakCount` weak ones, two groups of reused strong ones,
    /// old ones (unchanged since 2019; one since changed, one edited only below its password, one moved
    /// since), breached ones, and entries without a password.
    static func seed(_ audit: AuditSandbox, seed: UInt64) throws -> SeededStore {
        var random = SeededRandom(seed: seed)
        var result = SeededStore()
        let folders = ["web", "mail", "café/clé", "bank accounts", "ünï/cødé"]
        var counter = 0
        func name() -> String {
            counter += 1
            return random.pick(folders) + "/entry \(counter)"
        }
        func add(_ name: String, _ password: String, rest: String = "", date: String? = nil) throws {
            try audit.insert(name, password + "\n" + rest, date: date)
            result.passwords.append(password)
            result.entries += 1
        }
        for _ in 0..<(4 + random.below(4)) {
            try add(name(), randomPassword(&random), rest: "login: someone\n")
        }
        var weak = weakPasswords
        weak.shuffle(using: &random)
        for password in weak.prefix(3 + random.below(3)) {
            let entry = name()
            try add(entry, password)
            result.weak.append(entry)
        }
        for size in [3, 2] {
            let shared = randomPassword(&random)
            let group = (0..<size).map { _ in name() }
            for entry in group { try add(entry, shared, rest: "url: https://example.com\n") }
            result.reused.append(group.sorted())
        }
        for _ in 0..<2 {
            let entry = name()
            try add(entry, randomPassword(&random), date: oldDate)
            result.old.append(entry)
        }
        // Changed since: the password of 2019 is gone, so it is not old.
        let changed = name()
        try add(changed, randomPassword(&random), date: oldDate)
        result.passwords.removeLast()
        result.entries -= 1
        try add(changed, randomPassword(&random))
        // Only the notes changed since: still old.
        let notes = name()
        try add(notes, randomPassword(&random), rest: "note: first\n", date: oldDate)
        try audit.insert(notes, result.passwords.last! + "\nnote: second\n")
        result.entries -= 0
        result.old.append(notes)
        // Moved since (a commit of today): still old, under its new name.
        let before = name()
        try add(before, randomPassword(&random), date: oldDate)
        let moved = "moved/" + before
        try audit.check(["mv", before, moved])
        result.old.append(moved)
        var hashes: [String: Int] = [:]
        for count in [4242, 31337] {
            let entry = name()
            let password = randomPassword(&random)
            try add(entry, password)
            result.breached[entry] = count
            hashes[password] = count
        }
        for entry in ["notes/empty", "notes/only notes"] {
            try audit.insert(entry, entry == "notes/empty" ? "\n" : "\nsome notes\n")
            result.withoutPassword.append(entry)
            result.entries += 1
        }
        // The list: the breached passwords, decoys (passwords not in the store, a stored password with its
        // line end), and random hashes.
        var decoys = (0..<300).map { _ in randomPassword(&random, length: 12) }
        decoys.append(result.passwords[0] + "\n")
        let script = """
            import hashlib, random, sys
            rows = {}
            lines = sys.stdin.read().split("\\x1e")
            r = random.Random(\(seed))
            for line in lines:
                if not line: continue
                password, count = line.rsplit("\\x1f", 1)
                rows[hashlib.sha1(password.encode()).hexdigest().upper()] = int(count)
            for _ in range(5000):
                rows["%040X" % r.getrandbits(160)] = r.randint(1, 999)
            sys.stdout.write("".join("%s:%d\\r\\n" % (h, rows[h]) for h in sorted(rows)))
            """
        let input =
            hashes.map { "\($0.key)\u{1f}\($0.value)" }.joined(separator: "\u{1e}") + "\u{1e}"
            + decoys.map { "\($0)\u{1f}7" }.joined(separator: "\u{1e}")
        let generated = try audit.sandbox.check(["/usr/bin/python3", "-c", script], input: Array(input.utf8))
        result.breachedList = audit.sandbox.directory + "/pwned-passwords-sha1-ordered-by-hash.txt"
        try TestFiles.write(generated.standardOutput, to: result.breachedList)
        return result
    }

    /// The sections of the human report: title (without the count) → the entries listed under it.
    static func sections(_ text: String) -> [String: [String]] {
        var result: [String: [String]] = [:]
        var title: String?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasSuffix("):"), !line.hasPrefix(" "), let open = line.lastIndex(of: "(") {
                title = String(line[..<open]).trimmingSuffix(" ")
                result[title!] = []
            } else if line.hasPrefix("  "), let current = title {
                var item = String(line.dropFirst(2))
                if let detail = item.firstRange(of: "  (") { item = String(item[..<detail.lowerBound]) }
                result[current]!.append(item)
            } else {
                title = nil
            }
        }
        return result
    }

    @Test(
        "every seeded finding is found and nothing else, in JSON and in words", arguments: [UInt64(11), 12])
    func seededFindings(seed: UInt64) throws {
        let audit = try AuditSandbox()
        let store = try Self.seed(audit, seed: seed)
        let lines = try audit.jsonFindings(["--breached", store.breachedList], expectStatus: 1)
        var expected = store.weak.map { "weak\t\($0)" } + store.old.map { "old\t\($0)" }
        expected += store.reused.map { "reused\t" + $0.joined(separator: " | ") }
        expected += store.breached.map { "breached\t\($0.key)\t\($0.value)" }
        expected += store.withoutPassword.map { "without\t\($0)" }
        expected.append("checked\tage=True breaches=True entries=\(store.entries)")
        #expect(lines == expected.sorted())

        let human = try audit.run(["audit", "--breached", store.breachedList])
        #expect(human.status == 1)
        #expect(human.errorText.isEmpty)
        let sections = Self.sections(human.outputText)
        #expect(Set(sections["Weak passwords"] ?? []) == Set(store.weak))
        #expect(
            Set((sections["Reused passwords"] ?? []).map { $0.split(separator: ", ").map(String.init) })
                == Set(store.reused))
        #expect(Set(sections["Old passwords, unchanged for more than 365 days"] ?? []) == Set(store.old))
        #expect(Set(sections["Breached passwords"] ?? []) == Set(store.breached.keys))
        #expect(human.outputText.contains("seen 4242 times"))
        // The same list on standard input, as a decompressor would give it.
        let piped = try audit.run(
            ["audit", "--breached", "-", "--age", "0", "--json"],
            input: TestFiles.read(store.breachedList) ?? [])
        #expect(piped.status == 1)
        for (entry, count) in store.breached {
            #expect(piped.outputText.contains("{\"entry\": \"\(entry)\", \"count\": \(count)}"))
        }
        #expect(human.outputText.contains("(unchanged since 2019-03-01, "))

        // Without the list, and with a longer age, those findings go; a clean folder exits 0.
        let fewer = try audit.jsonFindings(["--age", "100000"], expectStatus: 1)
        #expect(!fewer.contains { $0.hasPrefix("old\t") || $0.hasPrefix("breached\t") })
        #expect(fewer.contains("checked\tage=True breaches=False entries=\(store.entries)"))
        try audit.insert("clean/one", "Vq8#pL2!zR7@mK4$wX9&\n")
        try audit.insert("clean/two", "another-Long-passphrase-42-Xq\n")
        let clean = try audit.run(["audit", "clean"])
        #expect(clean.status == 0, "\(clean.outputText)")
        #expect(clean.outputText.hasPrefix("No weak, reused, old or breached passwords among 2 entries.\n"))
    }

    @Test(
        "weak and reused passwords agree with Debian's pass-audit on the same store",
        arguments: [UInt64(21), 22])
    func agreesWithPassAudit(seed: UInt64) throws {
        let audit = try AuditSandbox()
        let store = try Self.seed(audit, seed: seed)
        let stub = audit.sandbox.directory + "/stub"
        mkdir(stub, 0o755)
        try TestFiles.write(TestFiles.pwnedRangeStub, to: stub + "/requests.py")
        let passAudit = try audit.sandbox.run(
            ["/usr/bin/pass", "audit"],
            environment: ["PYTHONPATH": stub, "PYTHONDONTWRITEBYTECODE": "1", "PATH": "/usr/bin:/bin"])
        let text = passAudit.outputText.replacing(/\u{1b}\[[0-9;]*m/, with: "")
        #expect(text.contains("Weak password detected"), "\(text)\(passAudit.errorText)")
        var theirWeak: [String] = []
        var theirReused: [[String]] = []
        for line in text.split(separator: "\n") {
            if line.contains("Weak password detected: "), let from = line.ranges(of: " from ").last,
                let end = line.firstRange(of: " might be weak.")
            {
                theirWeak.append(String(line[from.upperBound..<end.lowerBound]))
            }
            if let found = line.firstRange(of: "Duplicated passwords detected in ") {
                theirReused.append(line[found.upperBound...].split(separator: ", ").map(String.init).sorted())
            }
        }
        let ours = try audit.jsonFindings([], expectStatus: 1)
        let ourWeak = ours.filter { $0.hasPrefix("weak\t") }.map { String($0.dropFirst(5)) }
        let ourReused = ours.filter { $0.hasPrefix("reused\t") }.map {
            $0.dropFirst(7).split(separator: " | ").map(String.init)
        }
        #expect(Set(theirWeak) == Set(ourWeak))
        #expect(Set(theirWeak) == Set(store.weak))
        #expect(Set(theirReused) == Set(ourReused))
        #expect(Set(theirReused) == Set(store.reused))
    }

    @Test(
        "installed as pass, pass's audit extension runs where there is one, coffer's audit where there is none"
    )
    func underPassName() throws {
        let installed = try InstalledAsPass(git: false)
        try installed.insert("weak", "password\n")
        try installed.insert("strong", "Vq8#pL2!zR7@mK4$wX9&\n")
        let stub = installed.sandbox.directory + "/stub"
        mkdir(stub, 0o755)
        try TestFiles.write(TestFiles.pwnedRangeStub, to: stub + "/requests.py")
        let extensionRun = try installed.run(
            ["audit"], environment: ["PYTHONPATH": stub, "PYTHONDONTWRITEBYTECODE": "1"])
        #expect(extensionRun.outputText.contains("Weak password detected"), "\(extensionRun.errorText)")
        let empty = installed.sandbox.directory + "/no-extensions"
        mkdir(empty, 0o755)
        let builtIn = try installed.run(
            ["audit", "--json"], environment: ["COFFER_SYSTEM_EXTENSIONS_DIR": empty])
        #expect(builtIn.status == 1)
        #expect(builtIn.outputText.contains("\"weak\": [\n    {\"entry\": \"weak\""), "\(builtIn.outputText)")
    }

    @Test("no password, and no hash of one, is printed without --show-passwords")
    func secretsStayHidden() throws {
        let audit = try AuditSandbox()
        let store = try Self.seed(audit, seed: 31)
        let temporary = audit.sandbox.directory + "/tmp"
        mkdir(temporary, 0o700)
        var secrets: [String] = []
        for password in store.passwords {
            let hash = try audit.sandbox.check(["sha1sum"], input: Array(password.utf8)).outputText.prefix(40)
            secrets += [password, hash.uppercased(), hash.lowercased(), String(hash.uppercased().prefix(10))]
        }
        for arguments in [
            ["audit"], ["audit", "--json"], ["audit", "--breached", store.breachedList, "--json"],
            ["audit", "--breached", store.breachedList],
        ] {
            let output = try audit.run(arguments, environment: ["TMPDIR": temporary])
            #expect(output.status == 1)
            let printed = output.outputText + output.errorText
            for secret in secrets { #expect(!printed.contains(secret), "\(arguments): a secret was printed") }
        }
        #expect(try FileSystem.contents(of: temporary).isEmpty, "nothing written to TMPDIR")
        // With the option, they are.
        let shown = try audit.run(["audit", "--show-passwords", "--breached", store.breachedList])
        #expect(shown.status == 1)
        let weakPasswords = Self.weakPasswords.filter { store.passwords.contains($0) }
        #expect(!weakPasswords.isEmpty)
        for password in weakPasswords { #expect(shown.outputText.contains("password: \(password)\n")) }
        let json = try audit.run(["audit", "--show-passwords", "--json"])
        for password in weakPasswords { #expect(json.outputText.contains(password)) }
    }

    @Test("a breached list out of order, malformed, missing or a folder: one line, exit 2, nothing decrypted")
    func badBreachedLists() throws {
        let audit = try AuditSandbox(git: false)
        try audit.insert("weak", "password\n")
        let folder = audit.sandbox.directory
        let sorted = (10...60).map { "\($0)" + String(repeating: "A", count: 38) + ":\($0)" }
        try TestFiles.write(
            sorted.reversed().joined(separator: "\r\n") + "\r\n", to: folder + "/reversed.txt")
        try TestFiles.write(
            sorted.prefix(10).joined(separator: "\n") + "\nnot a hash\n", to: folder + "/garbage.txt")
        try TestFiles.write(
            sorted.map { $0.lowercased() }.joined(separator: "\n") + "\n", to: folder + "/lower.txt")
        let cases = [
            ("reversed.txt", "is out of order"), ("garbage.txt", "line 11 is not HASH:COUNT"),
            ("lower.txt", "line 1 is not HASH:COUNT"), ("missing.txt", "No such file or directory"),
            ("", "Is a directory"),
        ]
        for (name, words) in cases {
            for json in [false, true] {
                let output = try audit.run(
                    ["audit", "--breached", folder + "/" + name] + (json ? ["--json"] : []))
                #expect(output.status == 2, "\(name)")
                #expect(output.outputText.isEmpty, "\(name): \(output.outputText)")
                let lines = output.errorText.split(separator: "\n")
                #expect(
                    lines.count == 1 && lines[0].hasPrefix("Error: ") && lines[0].contains(words),
                    "\(name): \(output.errorText)")
            }
        }
    }

    @Test("an entry that does not decrypt is an error (exit 2) and the rest is still reported")
    func undecryptableEntry() throws {
        let audit = try AuditSandbox()
        try audit.insert("weak", "password\n")
        try audit.insert("strong", "Vq8#pL2!zR7@mK4$wX9&\n")
        try TestFiles.write(Array("not OpenPGP at all".utf8), to: audit.store + "/broken.gpg", mode: 0o600)
        try TestFiles.write([], to: audit.store + "/empty.gpg", mode: 0o600)
        let output = try audit.run(["audit"])
        #expect(output.status == 2)
        #expect(Self.sections(output.outputText)["Weak passwords"] == ["weak"])
        let errors = output.errorText.split(separator: "\n")
        #expect(errors.count == 2)
        #expect(errors.first?.hasPrefix("Error: cannot audit broken: ") == true, "\(output.errorText)")
        #expect(errors.last?.hasPrefix("Error: cannot audit empty: ") == true, "\(output.errorText)")
        let lines = try audit.jsonFindings([], expectStatus: 2)
        #expect(
            lines.contains("error\tbroken") && lines.contains("error\tempty") && lines.contains("weak\tweak"))
    }

    @Test("an old version that does not decrypt ends the history: the password dates from the next one")
    func undecryptableOldVersion() throws {
        let audit = try AuditSandbox()
        try TestFiles.write(Array("garbage".utf8), to: audit.store + "/entry.gpg", mode: 0o600)
        try audit.sandbox.check(
            ["git", "-C", audit.store, "add", "entry.gpg"])
        try audit.sandbox.check(
            ["git", "-C", audit.store, "commit", "-qm", "garbage"],
            environment: [
                "GIT_AUTHOR_DATE": "2018-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2018-01-01T00:00:00Z",
            ])
        try audit.insert("entry", "Vq8#pL2!zR7@mK4$wX9&\n", date: "2019-06-01T00:00:00Z")
        try audit.insert("entry", "Vq8#pL2!zR7@mK4$wX9&\nnote: later\n", date: "2020-06-01T00:00:00Z")
        let output = try audit.run(["audit"])
        #expect(output.status == 1, "\(output.errorText)")
        #expect(output.outputText.contains("  entry  (unchanged since 2019-06-01, "), "\(output.outputText)")
    }

    @Test("odd entries: names with spaces and non-ASCII, a lone newline, binary bytes; a store without git")
    func oddEntriesAndNoGit() throws {
        let audit = try AuditSandbox(git: false)
        var random = SeededRandom(seed: 41)
        let binary = (0..<32).map { _ in UInt8(random.below(256)) }.map { $0 == 10 ? 11 : $0 } + [10, 0, 1]
        try audit.insert("bin/raw bytes", bytes: binary)
        try audit.insert("café/mot de passe ü", "Summer2019!\n")
        try audit.insert("lone newline", "\n")
        try audit.insert("dup one", bytes: Array(binary.prefix(32)) + [10])
        let lines = try audit.jsonFindings([], expectStatus: 1)
        #expect(
            lines == [
                "checked\tage=False breaches=False entries=4", "reused\tbin/raw bytes | dup one",
                "weak\tcafé/mot de passe ü", "without\tlone newline",
            ])
        let human = try audit.run(["audit"])
        #expect(human.outputText.contains("Ages not checked: the store is not a git repository.\n"))
        #expect(human.outputText.contains("  café/mot de passe ü  ("))
    }

    @Test("usage and a missing folder are errors (exit 2), not findings")
    func usageErrors() throws {
        let audit = try AuditSandbox()
        try audit.insert("weak", "password\n")
        for arguments in [
            ["audit", "a", "b"], ["audit", "--age", "soon"], ["audit", "--min-bits", "-3"],
            ["audit", "--bogus"],
            ["audit", "nosuch"], ["audit", "../outside"], ["audit", "--breached"],
        ] {
            let output = try audit.run(arguments)
            #expect(output.status == 2, "\(arguments): \(output.status) \(output.errorText)")
            #expect(output.outputText.isEmpty)
            #expect(!output.errorText.isEmpty)
        }
        #expect(
            try audit.run(["audit", "nosuch"]).errorText == "Error: nosuch is not in the password store.")
        // --min-bits moves the line: nothing in this store is over 1000 bits, or under 0.
        try audit.insert("strong", "Vq8#pL2!zR7@mK4$wX9&\n")
        #expect(
            try audit.jsonFindings(["--min-bits", "1000"], expectStatus: 1).filter { $0.hasPrefix("weak") }
                .count == 2)
        #expect(try audit.run(["audit", "--min-bits", "0"]).status == 1, "a common password stays weak")
        let huge = try audit.run(["audit", "--age", "999999999999999999", "--min-bits", "0.5"])
        #expect(huge.status == 1 && huge.outputText.contains("fewer than 0.5") == false, "\(huge.errorText)")
        #expect(try audit.run(["audit", "--age", "99999999999999999999999"]).status == 2)
    }
}

extension String {
    /// The text without `suffix` repeated at its end.
    fileprivate func trimmingSuffix(_ suffix: Character) -> String {
        var text = self
        while text.last == suffix { text.removeLast() }
        return text
    }
}
