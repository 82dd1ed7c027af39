import Coffer
import CofferTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writing one entry after gpg's first message to the same recipients starts no gpg (the plan gpg's
/// choice left), and git's automatic maintenance only when it has work: what those messages are, that
/// pass and gpg read them, and that every change gpg's choice depends on (keyring, revocation,
/// configuration, expiry, the plan file itself) sends the next message through gpg again.
@Suite("Encryption plans and commits without spare processes")
struct EncryptionPlanTests {
    /// coffer installed as `pass` over a git store (``InstalledAsPass``), run by its absolute path with
    /// `PATH` holding logging `gpg` and `git` wrappers and the system's folders.
    struct Fixture {
        let installed: InstalledAsPass
        var sandbox: GPGSandbox { installed.sandbox }
        var binary: String { installed.program }
        /// The file the wrappers log each run to.
        var log: String { sandbox.directory + "/programs.log" }
        /// The wrappers' folder, then `/usr/bin:/bin`.
        var path: String { sandbox.directory + "/wrappers:/usr/bin:/bin" }

        init() throws {
            installed = try InstalledAsPass(git: true)
            _ = try sandbox.loggingWrappers(for: ["gpg", "git"], log: log)
        }

        /// Runs coffer with the wrappers first on `PATH`.
        func run(_ arguments: [String], input: String = "", environment: [String: String] = [:])
            throws -> ChildProcess.Output
        {
            var variables = environment
            variables["PATH"] = path
            return try installed.run(arguments, input: input, environment: variables)
        }

        /// Runs coffer with the clock `offset` ahead (`faketime -f +20m`); only the clock moves, not the
        /// times `stat` reports, which libfaketime would otherwise shift too.
        func runLater(_ offset: String, _ arguments: [String], input: String) throws -> ChildProcess.Output {
            var variables = sandbox.environment
            variables["PATH"] = path
            variables["NO_FAKE_STAT"] = "1"
            return try ChildProcess(
                ["faketime", "-f", offset, binary] + arguments,
                environment: variables.map { "\($0.key)=\($0.value)" }
            ).run(input: Array(input.utf8))
        }

        /// Runs coffer and expects it to succeed.
        @discardableResult
        func check(_ arguments: [String], input: String = "", environment: [String: String] = [:]) throws
            -> ChildProcess.Output
        {
            let output = try run(arguments, input: input, environment: environment)
            #expect(output.status == 0, "coffer \(arguments.joined(separator: " ")): \(output.errorText)")
            return output
        }

        /// The command lines (`argv: [program] [argument]...`) of `program` logged while `body` ran.
        func runs(of program: String, _ body: () throws -> Void) throws -> [String] {
            try sandbox.check(["sh", "-c", ": > \"$0\"", log])
            try body()
            return try sandbox.read(log).split(separator: UInt8(ascii: "\n")).map {
                String(decoding: $0, as: UTF8.self)
            }.filter { line in
                // The first word is the wrapper as it was run: by name or by a path ending in it.
                guard line.hasPrefix("argv: ["), let word = line.split(separator: " ").dropFirst().first
                else {
                    return false
                }
                return word == "[\(program)]" || word.hasSuffix("/\(program)]")
            }
        }

        /// The gpg encryptions `body` started.
        func encryptions(_ body: () throws -> Void) throws -> Int {
            try runs(of: "gpg", body).filter { $0.contains("[--encrypt]") }.count
        }

        /// Writes entries `NAME-1`, `NAME-2`, ... until one starts no gpg (three at most) and returns how
        /// many gpg encryptions they started: the first write after a change goes through gpg, and gpg's
        /// own upkeep of its trust database after a key change may cost one more.
        func writesUntilPlanned(_ name: String) throws -> Int {
            var total = 0
            for index in 1...3 {
                let started = try encryptions {
                    try check(["insert", "-m", "\(name)-\(index)"], input: "\(name) \(index)\n")
                }
                #expect(try decryptedByGPG("\(name)-\(index)") == Array("\(name) \(index)\n".utf8))
                total += started
                if started == 0 { return total }
            }
            Issue.record("three writes after a change to \(name) all ran gpg")
            return total
        }

        /// `gpg -d` of an entry, byte for byte.
        func decryptedByGPG(_ name: String) throws -> [UInt8] {
            try sandbox.check(["gpg", "--quiet", "--batch", "-d", sandbox.storeDirectory + "/\(name).gpg"])
                .standardOutput
        }

        /// The plan files of this sandbox's GnuPG home in the user's cache folder.
        func planFiles() throws -> [String] {
            let home = "h" + sandbox.gnupgHome.utf8.map { String($0, radix: 16, uppercase: true) }.joined()
            let listing = try sandbox.run([
                "sh", "-c", "grep -l -F -e \"for $0 \" \"$HOME\"/.cache/coffer/plan-* 2>/dev/null; true",
                home,
            ])
            return listing.outputText.split(separator: "\n").map(String.init)
        }
    }

    @Test func laterWritesStartNoGPGAndPassAndGPGReadThem() throws {
        let fixture = try Fixture()
        #expect(
            try fixture.encryptions { try fixture.check(["insert", "-m", "site/a"], input: "first\n") } == 1)
        #expect(try fixture.planFiles().count == 1)
        let contents = ["second\nlogin: ann\n", "third", "ünïcode\n\nurl: x\n"]
        for (index, text) in contents.enumerated() {
            let name = "site/b\(index)"
            let started = try fixture.runs(of: "gpg") {
                try fixture.check(["insert", "-m", name], input: text)
            }
            #expect(started.isEmpty, "insert ran gpg: \(started)")
            #expect(try fixture.decryptedByGPG(name) == Array(text.utf8))
            let shown = try fixture.sandbox.check(["pass", "show", name])
            #expect(shown.standardOutput == Array(text.utf8))
        }
        var generated: ChildProcess.Output?
        #expect(
            try fixture.runs(of: "gpg") { generated = try fixture.check(["generate", "site/g", "24"]) }
                .isEmpty)
        let password = try fixture.sandbox.check(["pass", "show", "site/g"]).outputText
        #expect(password.count == 24 && generated?.outputText.contains(password) == true)
        // Every change is committed, one commit each, and the store is clean.
        let log = try fixture.sandbox.check([
            "git", "-C", fixture.sandbox.storeDirectory, "log", "--format=%s",
        ])
        #expect(log.outputText.split(separator: "\n").count == 2 + 1 + contents.count + 1)
        let status = try fixture.sandbox.check([
            "git", "-C", fixture.sandbox.storeDirectory, "status", "--porcelain",
        ])
        #expect(status.outputText.isEmpty)

        // A plan holds for an hour at most: two hours on (only the clock moved), gpg is asked again.
        var later: ChildProcess.Output?
        let asked = try fixture.encryptions {
            later = try fixture.runLater("+2h", ["insert", "-m", "site/later"], input: "later\n")
        }
        #expect(asked == 1 && later?.status == 0, "\(later?.errorText ?? "")")
        #expect(try fixture.decryptedByGPG("site/later") == Array("later\n".utf8))

        // Turned off, every write goes through gpg.
        let off = try fixture.encryptions {
            try fixture.check(
                ["insert", "-m", "site/off"], input: "x\n", environment: ["COFFER_DIRECT_DECRYPT": "0"])
        }
        #expect(off == 1)
    }

    @Test func aChangedConfigurationOrKeyringSendsTheNextMessageThroughGPG() throws {
        let fixture = try Fixture()
        let gnupg = fixture.sandbox.gnupgHome
        try fixture.check(["insert", "-m", "one"], input: "1\n")
        #expect(try fixture.encryptions { try fixture.check(["insert", "-m", "two"], input: "2\n") } == 0)

        // gpg.conf (a versioned one too) changes gpg's cipher choice: gpg encrypts again, once.
        try fixture.sandbox.check([
            "sh", "-c", "echo 'personal-cipher-preferences AES128' > \"$0\"", gnupg + "/gpg.conf",
        ])
        #expect(try fixture.writesUntilPlanned("three") >= 1)
        // The plan follows gpg's new choice, AES-128, in the messages made without gpg too.
        #expect(try fixture.encryptions { try fixture.check(["insert", "-m", "four"], input: "4\n") } == 0)
        let decrypted = try fixture.sandbox.check([
            "gpg", "--batch", "--status-fd", "2", "-d", fixture.sandbox.storeDirectory + "/four.gpg",
        ])
        #expect(decrypted.errorText.contains("DECRYPTION_INFO 2 7 0"), "\(decrypted.errorText)")
        #expect(decrypted.standardOutput == Array("4\n".utf8))
        try fixture.sandbox.check(["sh", "-c", ": > \"$0\"", gnupg + "/gpg.conf-2.2"])
        #expect(try fixture.writesUntilPlanned("five") >= 1)

        // A key added changes the keyring.
        try fixture.sandbox.check([
            "gpg", "--batch", "--quiet", "--passphrase", "", "--quick-gen-key", "New <new@coffer.test>",
            "ed25519", "sign", "never",
        ])
        #expect(try fixture.writesUntilPlanned("six") >= 1)

        // A plan file another user could write, or one that is not a plan, is not used.
        for plan in try fixture.planFiles() { chmod(plan, 0o666) }
        #expect(try fixture.encryptions { try fixture.check(["insert", "-m", "seven"], input: "7\n") } == 1)
        for plan in try fixture.planFiles() {
            try fixture.sandbox.check(["sh", "-c", "sed -i 's/^cipher .*/cipher 1/' \"$0\"", plan])
        }
        #expect(try fixture.encryptions { try fixture.check(["insert", "-m", "eight"], input: "8\n") } == 1)
        #expect(try fixture.decryptedByGPG("eight") == Array("8\n".utf8))
        // A plan that claims more than an hour, or a FIFO in a plan's place (which must not hang the write).
        for plan in try fixture.planFiles() {
            try fixture.sandbox.check(["sh", "-c", "sed -i 's/^until .*/until 9999999999/' \"$0\"", plan])
        }
        #expect(
            try fixture.encryptions { try fixture.check(["insert", "-m", "eight-b"], input: "8\n") } == 1)
        for plan in try fixture.planFiles() {
            try fixture.sandbox.check(["sh", "-c", "rm \"$0\" && mkfifo -m 600 \"$0\"", plan])
            var written: ChildProcess.Output?
            let started = try fixture.encryptions {
                written = try fixture.sandbox.run(
                    ["timeout", "60", fixture.binary, "insert", "-m", "eight-c"], input: Array("8\n".utf8),
                    environment: ["PATH": fixture.path])
            }
            #expect(started == 1 && written?.status == 0, "\(written?.errorText ?? "")")
            try fixture.sandbox.check(["rm", "-f", plan])
        }

        // The key revoked: gpg refuses, as pass's gpg does, and the entry is not written.
        let fingerprint = fixture.sandbox.keys[0].fingerprint
        let certificate = try fixture.sandbox.read(gnupg + "/openpgp-revocs.d/\(fingerprint).rev")
        // gpg keeps the certificate with a ':' in front of its armor so that it is not imported by mistake.
        let armored = String(decoding: certificate, as: UTF8.self).split(
            separator: "\n", omittingEmptySubsequences: false
        ).map {
            $0.hasPrefix(":-----") ? $0.dropFirst() : $0
        }.joined(separator: "\n")
        try fixture.sandbox.check(["gpg", "--batch", "--import"], input: Array(armored.utf8))
        var refused: ChildProcess.Output?
        #expect(
            try fixture.encryptions { refused = try fixture.run(["insert", "-m", "nine"], input: "9\n") } == 1
        )
        #expect(refused.map { $0.status != 0 } == true)
        #expect(!FileSystem.exists(fixture.sandbox.storeDirectory + "/nine.gpg"))
        let byPass = try fixture.sandbox.run(["pass", "insert", "-m", "nine"], input: Array("9\n".utf8))
        #expect(byPass.status != 0)
    }

    @Test func keysValidThroughSignaturesOrOtherFilesAlwaysGoThroughGPG() throws {
        let fixture = try Fixture()
        // A colleague's key, made in another keyring and certified here: valid through a signature,
        // which can expire, so every write asks gpg.
        let other = fixture.sandbox.directory + "/colleague"
        let colleague = ["GNUPGHOME": other]
        try fixture.sandbox.check(["mkdir", "-m", "700", other])
        try fixture.sandbox.check(
            [
                "gpg", "--batch", "--quiet", "--passphrase", "", "--quick-gen-key",
                "Colleague <col@coffer.test>",
                "ed25519", "sign", "never",
            ], environment: colleague)
        let listing = try fixture.sandbox.check(
            ["gpg", "--with-colons", "--list-keys", "col@coffer.test"], environment: colleague
        ).outputText
        let fingerprint = try #require(
            listing.split(separator: "\n").first { $0.hasPrefix("fpr:") }.map {
                String($0.split(separator: ":", omittingEmptySubsequences: false)[9])
            })
        try fixture.sandbox.check(
            [
                "gpg", "--batch", "--quiet", "--passphrase", "", "--quick-add-key", fingerprint, "cv25519",
                "encr",
            ],
            environment: colleague)
        let exported = try fixture.sandbox.check(["gpg", "--export", fingerprint], environment: colleague)
        try fixture.sandbox.check(["gpg", "--batch", "--quiet", "--import"], input: exported.standardOutput)
        try fixture.sandbox.check(["gpg", "--batch", "--quiet", "--yes", "--quick-lsign-key", fingerprint])
        _ = try fixture.sandbox.run(["gpgconf", "--kill", "all"], environment: colleague)
        try fixture.check(["init", "-p", "team", fixture.sandbox.keys[0].email, fingerprint])
        for index in 0..<3 {
            let runs = try fixture.runs(of: "gpg") {
                try fixture.check(["insert", "-m", "team/e\(index)"], input: "t\(index)\n")
            }
            #expect(
                runs.filter { $0.contains("[--encrypt]") }.count == 1,
                "write \(index) to a key valid through a signature")
            // Only the first asks gpg for the keys: that no plan can be made is kept too.
            if index > 0 { #expect(!runs.contains { $0.contains("[--list-keys]") }, "\(runs)") }
        }
        // The user's own key alone is planned.
        #expect(try fixture.writesUntilPlanned("own") >= 1)
        // gpg.conf naming another trust database (or keyring): every write asks gpg.
        try fixture.sandbox.check([
            "sh", "-c", "echo \"trustdb-name $0/trustdb.gpg\" > \"$0/gpg.conf\"", fixture.sandbox.gnupgHome,
        ])
        for index in 0..<3 {
            let started = try fixture.encryptions {
                try fixture.check(["insert", "-m", "conf\(index)"], input: "c\(index)\n")
            }
            #expect(started == 1, "write \(index) with trustdb-name in gpg.conf")
        }
    }

    @Test func anExpiringKeyBoundsThePlan() throws {
        let fixture = try Fixture()
        let fingerprint = fixture.sandbox.keys[0].fingerprint
        // The encryption subkey expires in ten minutes, well inside a plan's hour.
        let listing = try fixture.sandbox.check(["gpg", "--with-colons", "--list-keys", fingerprint])
            .outputText
        let subkey = listing.split(separator: "\n").drop { !$0.hasPrefix("sub:") }.first {
            $0.hasPrefix("fpr:")
        }
        .map { String($0.split(separator: ":", omittingEmptySubsequences: false)[9]) }
        let subkeyFingerprint = try #require(subkey)
        try fixture.sandbox.check([
            "gpg", "--batch", "--quick-set-expire", fingerprint, "seconds=600", subkeyFingerprint,
        ])
        #expect(try fixture.writesUntilPlanned("now") >= 1)
        // Twenty minutes later the subkey has expired: gpg is asked again, and refuses, as for pass.
        var refused: ChildProcess.Output?
        let started = try fixture.runs(of: "gpg") {
            refused = try fixture.runLater("+20m", ["insert", "-m", "late"], input: "3\n")
        }
        #expect(started.contains { $0.contains("[--encrypt]") }, "\(started)")
        #expect(refused.map { $0.status != 0 } == true, "\(refused?.errorText ?? "")")
        #expect(!FileSystem.exists(fixture.sandbox.storeDirectory + "/late.gpg"))
    }

    @Test func gitMaintainsTheRepositoryWhenItHasWorkAndOnlyThen() throws {
        let fixture = try Fixture()
        let store = fixture.sandbox.storeDirectory
        func commits(_ name: String) throws -> [String] {
            try fixture.runs(of: "git") { try fixture.check(["insert", "-m", name], input: "x\n") }
                .filter { $0.contains("[commit]") }
        }
        // Few loose objects and no setting for maintenance: git is told not to look.
        let quiet = try commits("a")
        #expect(quiet.count == 1 && quiet[0].contains("[-c] [maintenance.auto=false]"), "\(quiet)")

        // A setting of gc or maintenance anywhere: git decides, as under pass.
        for section in [
            "[gc]\n\tauto = 100\n", "[maintenance \"gc\"]\n\tenabled = true\n", "[include]\n\tpath = x\n",
        ] {
            let config = store + "/.git/config"
            let original = try fixture.sandbox.read(config)
            try fixture.sandbox.check(["sh", "-c", "printf '%s' \"$1\" >> \"$0\"", config, section])
            let decided = try commits("s\(section.count)")
            #expect(decided.count == 1 && !decided[0].contains("maintenance.auto"), "\(section): \(decided)")
            try fixture.sandbox.check(["sh", "-c", "cat > \"$0\"", config], input: original)
        }
        // Headers git reads that do not start a line: after another header, after a byte-order mark.
        // (A byte-order mark counts only at the very start of the file, so that text goes first.)
        for text in ["[core][gc]\n\tauto = 100\n", "\u{FEFF}[gc]\n\tauto = 100\n"] {
            let config = store + "/.git/config"
            let original = try fixture.sandbox.read(config)
            try fixture.sandbox.check(
                ["sh", "-c", "cat > \"$0\"", config], input: Array(text.utf8) + original)
            #expect(try fixture.sandbox.check(["git", "-C", store, "config", "gc.auto"]).outputText == "100")
            let decided = try commits("t\(text.utf8.count)")
            #expect(decided.count == 1 && !decided[0].contains("maintenance.auto"), "\(text): \(decided)")
            try fixture.sandbox.check(["sh", "-c", "cat > \"$0\"", config], input: original)
        }
        // A value that merely contains the letters (a credential helper named gcloud) changes nothing.
        try fixture.sandbox.check(["git", "-C", store, "config", "credential.helper", "gcloud.sh"])
        #expect(try commits("b").allSatisfy { $0.contains("[maintenance.auto=false]") })

        // 28 loose objects in objects/17 is more than git's default allows: git gets to maintain, and
        // packs the objects.
        let script = """
            import hashlib, os, sys
            found, n = 0, 0
            os.makedirs(sys.argv[1], exist_ok=True)
            while found < 28:
                body = ("filler %d\\n" % n).encode()
                n += 1
                if hashlib.sha1(b"blob %d\\0" % len(body) + body).hexdigest().startswith("17"):
                    open(os.path.join(sys.argv[1], "f%d" % n), "wb").write(body)
                    found += 1
            """
        try fixture.sandbox.check(["python3", "-c", script, store + "/filler"])
        try fixture.sandbox.check(["git", "-C", store, "add", "filler"])
        // Committed without git's own maintenance, which would pack them now.
        try fixture.sandbox.check([
            "git", "-C", store, "-c", "maintenance.auto=false", "commit", "-qm", "filler",
        ])
        let loose = try fixture.sandbox.check(["sh", "-c", "ls \"$0\" | wc -l", store + "/.git/objects/17"])
        #expect(Int(loose.outputText.filter(\.isNumber)) ?? 0 > 27)
        let busy = try commits("c")
        #expect(busy.count == 1 && !busy[0].contains("maintenance.auto"), "\(busy)")
        // git's gc runs in the background: wait for its pack.
        var packed = false
        for _ in 0..<200 where !packed {
            let packs = try fixture.sandbox.run([
                "sh", "-c", "ls \"$0\"/*.pack", store + "/.git/objects/pack",
            ])
            packed = packs.status == 0
            if !packed { usleep(100_000) }
        }
        #expect(packed)
        let status = try fixture.sandbox.check(["git", "-C", store, "status", "--porcelain"])
        #expect(status.outputText.isEmpty)
    }
}
