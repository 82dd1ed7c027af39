import Coffer
import CofferTestSupport
import Testing

/// `coffer otp` where the differential table cannot show it: coffer installed as `pass` beside Debian's
/// pass-otp, failed commits, what coffer does beyond pass-otp 1.2, and the clipboard under Xvfb.
@Suite("otp")
struct OTPCommandTests {
    /// RFC 4226's key as base32.
    static let rfcSecret = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"

    @Test("A failed commit while an HOTP counter moves on fails the command and prints no code")
    func failedCommitFails() throws {
        let installed = try InstalledAsPass(git: true)
        try installed.insert("bank", "pw\notpauth://hotp/Bank:me?secret=\(Self.rfcSecret)&counter=0\n")
        let hook = installed.store + "/.git/hooks/pre-commit"
        try TestFiles.write("#!/bin/sh\necho refused by hook >&2\nexit 1\n", to: hook, mode: 0o755)
        let failed = try installed.run(["otp", "bank"])
        #expect(failed.status != 0)
        #expect(!failed.outputText.contains("287082"), "no code after a failed commit: \(failed.outputText)")
        #expect(failed.errorText.contains("refused by hook"))
        #expect(try installed.git(["log", "--format=%s", "-1"]) == "Add given password for bank to store.")
        // insert and append too.
        let uri = "otpauth://totp/a:b?secret=JBSWY3DPEHPK3PXP\n"
        #expect(try installed.run(["otp", "insert", "new"], input: uri).status != 0)
        #expect(try installed.run(["otp", "append", "-f", "bank"], input: uri).status != 0)
        #expect(try installed.git(["log", "--format=%s", "-1"]) == "Add given password for bank to store.")
        // The entry as committed (the failed runs left their writes uncommitted).
        try installed.git(["checkout", "--", "bank.gpg"])
        // Once git commits again, the code of the counter after the one the failed run took is printed and
        // committed: counter 1 stays taken (its code was never shown, and is never shown now).
        unlink(hook)
        let next = try installed.check(["otp", "bank"])
        #expect(next.outputText.hasSuffix("\n359152"), "\(next.outputText)")
        #expect(next.errorText.contains("moving on from 1"), "\(next.errorText)")
        #expect(try installed.git(["log", "--format=%s", "-1"]) == "Increment HOTP counter for bank.")
        #expect(
            try installed.decrypted("bank")
                == "pw\notpauth://hotp/Bank:me?secret=\(Self.rfcSecret)&counter=2\n")
    }

    @Test(
        "Seeded sequences of otp insert, append, code and uri keep every entry and counter right",
        arguments: [UInt64(13), 1226])
    func seededSequences(seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        let installed = try InstalledAsPass(git: true)
        /// The model: each entry's text before its URI, and its URI.
        var entries: [String: (head: String, uri: String)] = [:]
        func randomURI() -> String {
            let bytes = (0..<(10 + random.below(30))).map { _ in UInt8.random(in: 0...255, using: &random) }
            let secret = base32Encoded(bytes)
            let counter = random.below(1_000_000)
            let digits = random.pick([6, 7, 8])
            let extra = random.chance(0.3) ? "&algorithm=SHA256" : ""
            return
                "otpauth://hotp/Issuer\(random.below(9)):user?secret=\(secret)&counter=\(counter)&digits=\(digits)\(extra)"
        }
        let names = ["plain", "web/site", "deep/er/ünï", "with space"]
        for step in 0..<24 {
            let name = random.pick(names)
            let label = "seed \(seed) step \(step) \(name)"
            switch (entries[name], random.below(4)) {
            case (nil, 0), (nil, 1):
                // A password entry first, then its URI appended below it.
                let head = "pw-\(step)\nlogin: user \(step)\n"
                try installed.insert(name, head)
                let uri = randomURI()
                try installed.check(["otp", "append", name], input: uri + "\n")
                entries[name] = (head, uri)
                #expect(
                    try installed.git(["log", "--format=%s", "-1"]) == "Append OTP secret for \(name).",
                    "\(label)")
            case (nil, _), (_, 0):
                let uri = randomURI()
                try installed.check(["otp", "insert", "-f", name], input: uri + "\n")
                entries[name] = ("", uri)
                #expect(
                    try installed.git(["log", "--format=%s", "-1"]) == "Add OTP secret for \(name) to store.",
                    "\(label)")
            case (let entry?, 1):
                let uri = randomURI()
                try installed.check(["otp", "append", name], input: uri + "\n")
                entries[name] = (entry.head, uri)
                #expect(
                    try installed.git(["log", "--format=%s", "-1"]) == "Replace OTP secret for \(name).",
                    "\(label)")
            case (let entry?, 2):
                #expect(try installed.check(["otp", "uri", name]).outputText == entry.uri, "\(label)")
            case (let entry?, _):
                let key = try OneTimePassword(uri: entry.uri)
                let counter = try #require(key.counter) + 1
                let digits = try key.digits
                // pass-otp makes HOTP codes with SHA-1 whatever the URI says; so does coffer otp.
                let expected = try installed.sandbox.check([
                    "oathtool", "-b", "--hotp", "--counter=\(counter)", "--digits=\(digits)", key.secret,
                ]).outputText
                let output = try installed.check(["otp", name]).outputText
                #expect(output.split(separator: "\n").last.map(String.init) == expected, "\(label)")
                entries[name] = (entry.head, key.advanced().uri)
                #expect(
                    try installed.git(["log", "--format=%s", "-1"]) == "Increment HOTP counter for \(name).",
                    "\(label)")
            }
            for (entryName, entry) in entries {
                #expect(
                    try installed.decrypted(entryName) == entry.head + entry.uri + "\n",
                    "\(label): \(entryName)")
            }
            #expect(try installed.git(["status", "--porcelain"]).isEmpty, "\(label)")
        }
    }

    @Test("HOTP runs at the same time each take a counter of their own: no code twice, no counter lost")
    func concurrentHOTP() throws {
        let installed = try InstalledAsPass(git: true)
        try installed.insert("bank", "pw\notpauth://hotp/Bank:me?secret=\(Self.rfcSecret)&counter=0\n")
        let folder = installed.sandbox.directory
        try installed.sandbox.check(
            [
                "sh", "-c",
                #"for i in 1 2 3 4 5 6; do "$0" otp bank >"$1/out.$i" 2>"$1/err.$i" & done; wait"#,
                installed.program, folder,
            ], environment: installed.environment)
        var codes: [String] = []
        for index in 1...6 {
            let output = String(decoding: TestFiles.read(folder + "/out.\(index)") ?? [], as: UTF8.self)
            codes.append(output.split(separator: "\n").last.map(String.init) ?? "")
            #expect(TestFiles.read(folder + "/err.\(index)") == [], "run \(index)")
        }
        // RFC 4226's values for counters 1 to 6.
        #expect(Set(codes) == ["287082", "359152", "969429", "338314", "254676", "287922"])
        #expect(
            try installed.decrypted("bank")
                == "pw\notpauth://hotp/Bank:me?secret=\(Self.rfcSecret)&counter=6\n")
        let log = try installed.git(["log", "--format=%s"]).split(separator: "\n")
        #expect(log.filter { $0 == "Increment HOTP counter for bank." }.count == 6)
    }

    @Test("A folder whose .gpg-id names a key not in the keyring: nothing written, no code, status 1")
    func missingRecipientKey() throws {
        let installed = try InstalledAsPass(git: true)
        try installed.insert("team/bank", "pw\notpauth://hotp/Bank:me?secret=\(Self.rfcSecret)&counter=0\n")
        let before = TestFiles.read(installed.store + "/team/bank.gpg")
        try TestFiles.write("nobody@nowhere.test\n", to: installed.store + "/team/.gpg-id", mode: 0o600)
        let code = try installed.run(["otp", "team/bank"])
        #expect(code.status == 1)
        #expect(!code.outputText.contains("287082"), "\(code.outputText)")
        #expect(code.errorText.hasSuffix("OTP secret encryption aborted."), "\(code.errorText)")
        #expect(TestFiles.read(installed.store + "/team/bank.gpg") == before)
        let insert = try installed.run(
            ["otp", "insert", "team/new"], input: "otpauth://totp/a:b?secret=JB\n")
        #expect(insert.status == 1)
        #expect(insert.errorText.hasSuffix("OTP secret encryption aborted."), "\(insert.errorText)")
        #expect(!TestFiles.exists(installed.store + "/team/new.gpg"))
    }

    @Test("The built-in otp answers before an otp.bash in the user's and the system's extension folders")
    func builtInBeforeExtensions() throws {
        let installed = try InstalledAsPass(git: false)
        let user = installed.store + "/.extensions"
        let system = installed.sandbox.directory + "/system-extensions"
        for folder in [user, system] {
            mkdir(folder, 0o700)
            try TestFiles.write("echo the extension ran\nexit 7\n", to: folder + "/otp.bash", mode: 0o755)
        }
        let environment = [
            "PASSWORD_STORE_ENABLE_EXTENSIONS": "true", "COFFER_SYSTEM_EXTENSIONS_DIR": system,
        ]
        let output = try installed.run(
            ["otp", "validate", "otpauth://totp/a:b?secret=JB"], environment: environment)
        #expect(output.status == 0 && output.outputText.isEmpty, "\(output.outputText)\(output.errorText)")
        #expect(try installed.run(["otp", "version"], environment: environment).outputText == "1.1.1")
    }

    @Test("Under the name pass, otp --help prints pass-otp's text byte for byte")
    func helpAsPass() throws {
        let installed = try InstalledAsPass(git: false)
        let environment = ["PASSWORD_STORE_CLIP_TIME": "12"]
        let ours = try installed.check(["otp", "--help"], environment: environment)
        var variables = installed.environment
        for (name, value) in environment { variables[name] = value }
        let theirs = try installed.sandbox.check(["/usr/bin/pass", "otp", "--help"], environment: variables)
        #expect(ours.standardOutput == theirs.standardOutput)
        #expect(ours.outputText.contains("cleared in 12 seconds"))
    }

    @Test("Codes of 9 and 10 digits (oathtool makes 6 to 8); other lengths are refused")
    func longCodes() throws {
        let installed = try InstalledAsPass(git: false)
        // RFC 4226's 31-bit value for counter 1 is 1094287082.
        for (digits, expected) in [(9, "094287082"), (10, "1094287082")] {
            try installed.insert(
                "d\(digits)", "otpauth://hotp/a:b?secret=\(Self.rfcSecret)&counter=0&digits=\(digits)\n")
            #expect(try installed.check(["otp", "d\(digits)"]).outputText == expected)
        }
        for digits in ["5", "11"] {
            try installed.insert("bad", "otpauth://totp/a:b?secret=\(Self.rfcSecret)&digits=\(digits)\n")
            let output = try installed.run(["otp", "bad"])
            #expect(output.status == 1)
            #expect(
                output.errorText
                    == "/usr/bin/oathtool: only digits 6 to 10 are supported\nbad: failed to generate OTP code."
            )
        }
    }

    @Test("An HOTP counter written first among the parameters moves on too")
    func counterFirst() throws {
        let installed = try InstalledAsPass(git: true)
        try installed.insert("first", "otpauth://hotp/a:b?counter=0&secret=\(Self.rfcSecret)\n")
        #expect(try installed.check(["otp", "first"]).outputText.hasSuffix("287082"))
        #expect(try installed.check(["otp", "first"]).outputText.hasSuffix("359152"))
        #expect(try installed.decrypted("first") == "otpauth://hotp/a:b?counter=2&secret=\(Self.rfcSecret)\n")
    }

    @Test("An HOTP code rewrites only the URI it used: other URIs, notes and what follows on the line stay")
    func hotpKeepsTheRest() throws {
        let installed = try InstalledAsPass(git: true)
        let secret = Self.rfcSecret
        try installed.insert(
            "two",
            "pw\n  otpauth://hotp/a:b?secret=\(secret)&counter=0  # phone\notpauth://totp/c:d?secret=JB\nnote\n"
        )
        #expect(try installed.check(["otp", "two"]).outputText.hasSuffix("287082"))
        #expect(
            try installed.decrypted("two")
                == "pw\n  otpauth://hotp/a:b?secret=\(secret)&counter=1  # phone\notpauth://totp/c:d?secret=JB\nnote\n"
        )
        // A counter named twice moves on everywhere; one at the largest value is refused, nothing written.
        try installed.insert("twice", "otpauth://hotp/a:b?counter=1&secret=\(secret)&counter=1\n")
        try installed.check(["otp", "twice"])
        #expect(
            try installed.decrypted("twice") == "otpauth://hotp/a:b?counter=2&secret=\(secret)&counter=2\n")
        try installed.insert("last", "otpauth://hotp/a:b?secret=\(secret)&counter=9223372036854775807\n")
        // And one written past it, which would wrap round to the codes of small counters.
        try installed.insert("past", "otpauth://hotp/a:b?secret=\(secret)&counter=18446744073709551615\n")
        let head = try installed.git(["rev-parse", "HEAD"])
        #expect(try installed.run(["otp", "last"]).status == 1)
        #expect(try installed.run(["otp", "past"]).status == 1)
        #expect(try installed.git(["rev-parse", "HEAD"]) == head)
    }

    @Test("otp insert -s takes a secret typed in groups whole")
    func secretInGroupsAndAppendUnderLock() throws {
        let installed = try InstalledAsPass(git: true)
        try installed.check(["otp", "insert", "-s", "-a", "me", "grouped"], input: "JBSW Y3DP EHPK 3PXP\n")
        #expect(try installed.decrypted("grouped") == "otpauth://totp/me?secret=JBSWY3DPEHPK3PXP\n")
        #expect(
            try installed.check(["otp", "uri", "grouped"]).outputText
                == "otpauth://totp/me?secret=JBSWY3DPEHPK3PXP")
    }

    @Test("append keeps a last line without a newline and never rewrites an entry it cannot decrypt")
    func appendKeepsEverything() throws {
        let installed = try InstalledAsPass(git: true)
        try installed.insert("nonl", "pw")
        let uri = "otpauth://totp/a:b?secret=JBSWY3DPEHPK3PXP\n"
        try installed.check(["otp", "append", "nonl"], input: uri)
        #expect(try installed.decrypted("nonl") == "pw\n" + uri)
        #expect(try installed.git(["log", "--format=%s", "-1"]) == "Append OTP secret for nonl.")

        let garbage = Array("not an OpenPGP message\n".utf8)
        try TestFiles.write(garbage, to: installed.store + "/broken.gpg", mode: 0o600)
        let output = try installed.run(["otp", "append", "broken"], input: uri)
        #expect(output.status != 0)
        #expect(TestFiles.read(installed.store + "/broken.gpg") == garbage)
    }

    @Test("A label that decodes to bytes that are not UTF-8 is refused, and nothing is written")
    func labelNotUTF8() throws {
        let installed = try InstalledAsPass(git: false)
        let output = try installed.run(["otp", "insert"], input: "otpauth://totp/Caf%E9:me?secret=JB\n")
        #expect(output.status == 1)
        #expect(
            output.errorText == "Error: the URI's label is not UTF-8 text once decoded; give a pass-name.")
        let listing = try installed.sandbox.check(["find", installed.store, "-name", "*.gpg"]).outputText
        #expect(listing.isEmpty)
        // Named, the same URI is stored.
        try installed.check(["otp", "insert", "cafe"], input: "otpauth://totp/Caf%E9:me?secret=JB\n")
        #expect(try installed.decrypted("cafe") == "otpauth://totp/Caf%E9:me?secret=JB\n")
    }
}
