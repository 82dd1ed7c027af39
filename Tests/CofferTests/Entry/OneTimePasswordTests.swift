import CofferTestSupport
import Testing

@testable import Coffer

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `OneTimePassword`: codes equal to RFC 4226's and RFC 6238's test vectors and to oathtool's for seeded
/// keys, base32 read as oathtool reads it, and URIs parsed as pass-otp 1.2 parses them.
@Suite("One-time passwords")
struct OneTimePasswordTests {
    // MARK: - Helpers

    /// What oathtool prints (its code), or `nil` when it fails.
    static func oathtool(_ arguments: [String]) throws -> String? {
        let output = try ChildProcess(
            ["oathtool"] + arguments, environment: ["PATH=/usr/bin:/bin", "TZ=UTC"]
        )
        .run()
        guard output.status == 0 else { return nil }
        var text = output.outputText
        while text.hasSuffix("\n") { text.removeLast() }
        return text
    }

    /// oathtool's code for `counter` with `algorithm` (through TOTP with a one-second step, as oathtool's
    /// HOTP mode knows only SHA-1).
    static func oathtoolCode(secret: String, counter: UInt64, algorithm: String, digits: Int) throws
        -> String?
    {
        if algorithm == "sha1" {
            return try oathtool(["-b", "--hotp", "--counter=\(counter)", "--digits=\(digits)", secret])
        }
        return try oathtool([
            "-b", "--totp=\(algorithm)", "-s", "1s", "-N", "@\(counter)", "--digits=\(digits)", secret,
        ])
    }

    static let rfcKeys = (
        sha1: "12345678901234567890", sha256: "12345678901234567890123456789012",
        sha512: "1234567890123456789012345678901234567890123456789012345678901234"
    )

    // MARK: - Test vectors

    @Test("RFC 4226 appendix D: HOTP values for counters 0 to 9, as oathtool gives them")
    func rfc4226() throws {
        let secret = base32Encoded(Array(Self.rfcKeys.sha1.utf8))
        let expected = [
            "755224", "287082", "359152", "969429", "338314", "254676", "287922", "162583", "399871",
            "520489",
        ]
        for (counter, value) in expected.enumerated() {
            let key = try OneTimePassword(uri: "otpauth://hotp/RFC:4226?secret=\(secret)&counter=\(counter)")
            #expect(try key.code(at: Date()) == value, "counter \(counter)")
            #expect(try key.code(counter: UInt64(counter)) == value)
            #expect(
                try Self.oathtoolCode(secret: secret, counter: UInt64(counter), algorithm: "sha1", digits: 6)
                    == value)
        }
    }

    @Test("RFC 6238 appendix B: TOTP values with SHA-1, SHA-256 and SHA-512, as oathtool gives them")
    func rfc6238() throws {
        let rows: [(time: Int64, sha1: String, sha256: String, sha512: String)] = [
            (59, "94287082", "46119246", "90693936"),
            (1_111_111_109, "07081804", "68084774", "25091201"),
            (1_111_111_111, "14050471", "67062674", "99943326"),
            (1_234_567_890, "89005924", "91819424", "93441116"),
            (2_000_000_000, "69279037", "90698825", "38618901"),
            (20_000_000_000, "65353130", "77737706", "47863826"),
        ]
        let keys = [
            ("SHA1", Self.rfcKeys.sha1), ("SHA256", Self.rfcKeys.sha256), ("SHA512", Self.rfcKeys.sha512),
        ]
        for row in rows {
            for (index, (algorithm, ascii)) in keys.enumerated() {
                let secret = base32Encoded(Array(ascii.utf8))
                let key = try OneTimePassword(
                    uri: "otpauth://totp/RFC:6238?secret=\(secret)&algorithm=\(algorithm)&digits=8&period=30")
                let expected = [row.sha1, row.sha256, row.sha512][index]
                let date = Date(timeIntervalSince1970: Double(row.time))
                #expect(try key.code(at: date) == expected, "\(algorithm) at \(row.time)")
                let oathtool = try Self.oathtool([
                    "-b", "--totp=\(algorithm.lowercased())", "--digits=8", "-N", "@\(row.time)", secret,
                ])
                #expect(oathtool == expected, "oathtool \(algorithm) at \(row.time)")
            }
        }
    }

    @Test(
        "Seeded keys: SHA1/256/512, 6, 7 and 8 digits, 30 and 60 s periods and HOTP counters, as oathtool",
        arguments: [UInt64(4226), 6238, 2026])
    func seededKeysMatchOathtool(seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        for round in 0..<25 {
            let bytes = (0..<(1 + random.below(64))).map { _ in UInt8.random(in: 0...255, using: &random) }
            var secret = base32Encoded(bytes)
            // Spellings oathtool accepts: lower case, spaces, the padding of the last group.
            if random.chance(0.3) { secret = secret.lowercased() }
            if random.chance(0.2) {
                secret = secret.enumerated().map { $0.offset % 4 == 3 ? "\($0.element) " : "\($0.element)" }
                    .joined()
            }
            let algorithm = random.pick(["sha1", "sha256", "sha512"])
            let digits = random.pick([6, 7, 8])
            let label = "Issuer\(round):user\(round)"
            if random.chance(0.5) {
                let counter = UInt64(random.below(1 << 32))
                let key = try OneTimePassword(
                    uri:
                        "otpauth://hotp/\(label)?secret=\(secret.replacing(" ", with: ""))&counter=\(counter)&digits=\(digits)&algorithm=\(algorithm.uppercased())"
                )
                let expected = try Self.oathtoolCode(
                    secret: secret, counter: counter, algorithm: algorithm, digits: digits)
                #expect(expected?.count == digits, "oathtool made no code")
                #expect(
                    try key.code(at: Date()) == expected,
                    "seed \(seed) round \(round): hotp \(algorithm) \(counter)")
                // The next code is the one of the counter after.
                let next = key.advanced()
                #expect(next.counter == Int64(counter) + 1)
                #expect(
                    try next.code(at: Date())
                        == Self.oathtoolCode(
                            secret: secret, counter: counter + 1, algorithm: algorithm, digits: digits))
            } else {
                let period = random.pick([30, 60, 1 + random.below(600)])
                let time = Int64(random.below(4_000_000_000))
                let key = try OneTimePassword(
                    uri:
                        "otpauth://totp/\(label)?secret=\(secret.replacing(" ", with: ""))&algorithm=\(algorithm)&digits=\(digits)&period=\(period)"
                )
                let expected = try Self.oathtool([
                    "-b", "--totp=\(algorithm)", "--digits=\(digits)", "-s", "\(period)s", "-N", "@\(time)",
                    secret,
                ])
                #expect(expected?.count == digits, "oathtool made no code")
                #expect(
                    try key.code(at: Date(timeIntervalSince1970: Double(time))) == expected,
                    "seed \(seed) round \(round): totp \(algorithm) \(digits) digits, \(period) s at \(time)")
            }
        }
    }

    @Test("9 and 10 digits end with oathtool's 8 digits (oathtool makes no more)")
    func nineAndTenDigits() throws {
        let secret = base32Encoded(Array(Self.rfcKeys.sha1.utf8))
        for counter in [UInt64(0), 1, 77, 1 << 40] {
            let eight = try #require(
                try Self.oathtoolCode(secret: secret, counter: counter, algorithm: "sha1", digits: 8))
            for digits in [9, 10] {
                let key = try OneTimePassword(
                    uri: "otpauth://hotp/a:b?secret=\(secret)&counter=\(counter)&digits=\(digits)")
                let code = try key.code(at: Date())
                #expect(
                    code.count == digits && code.hasSuffix(eight), "\(digits) digits at \(counter): \(code)")
            }
        }
        // RFC 4226's 31-bit value itself, for counter 0: 1284755224.
        let ten = try OneTimePassword(uri: "otpauth://hotp/a:b?secret=\(secret)&counter=0&digits=10")
        #expect(try ten.code(at: Date()) == "1284755224")
    }

    // MARK: - Base32

    @Test(
        "Base32 is accepted and decoded exactly as oathtool does (seeded spellings)",
        arguments: [UInt64(32), 64])
    func base32LikeOathtool(seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        let characters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567abcxyz  ===18")
        var accepted = 0
        for round in 0..<60 {
            let secret = String((0..<random.below(20)).map { _ in random.pick(characters) })
            let decoded = Base32.decode(secret)
            let expected = try Self.oathtool(["-b", "--hotp", secret])
            #expect((decoded != nil) == (expected != nil), "seed \(seed) round \(round): '\(secret)'")
            guard decoded != nil, let expected else { continue }
            accepted += 1
            let key = try OneTimePassword(
                uri: "otpauth://hotp/a:b?secret=\(secret.isEmpty ? "x" : secret)&counter=0")
            if !secret.isEmpty { #expect(try key.code(counter: 0) == expected, "'\(secret)'") }
        }
        #expect(accepted > 5)
    }

    @Test("Base32 corner cases: padding only where a group ends, spaces and case ignored, others refused")
    func base32Corners() {
        #expect(
            Base32.decode("JBSWY3DPEHPK3PXP")?.bytes == [
                0x48, 0x65, 0x6C, 0x6C, 0x6F, 0x21, 0xDE, 0xAD, 0xBE, 0xEF,
            ])
        #expect(Base32.decode("jbsw y3dp ehpk 3pxp")?.bytes == Base32.decode("JBSWY3DPEHPK3PXP")?.bytes)
        #expect(Base32.decode("JBSWY3DPEHPK3PX=") != nil)
        #expect(Base32.decode("JBSWY3DPEHPK3PXP====") == nil)
        #expect(Base32.decode("JB=") == nil)
        #expect(Base32.decode("JBSW\tY3DP") == nil)
        #expect(Base32.decode("JBSWY3DPEHPK3PX1") == nil)
        #expect(Base32.decode("")?.bytes == [])
    }

    // MARK: - Parsing

    @Test("URIs are parsed as pass-otp parses them")
    func parsing() throws {
        let key = try OneTimePassword(
            uri:
                "otpauth://totp/ACME%20Co:john.doe%40email.com?secret=JBSWY3DPEHPK3PXP&issuer=ACME+Corp&digits=8&period=60&algorithm=sha256"
        )
        #expect(key.kind == .totp)
        #expect(key.issuer == "ACME Corp" && key.account == "john.doe@email.com")
        #expect(key.label == "ACME%20Co:john.doe%40email.com")
        #expect(try key.digits == 8 && key.period == 60 && key.algorithm == .sha256)
        #expect(!key.description.contains("JBSW") && !"\(key)".contains("JBSW"))

        let bare = try OneTimePassword(uri: "otpauth://totp/alice?secret=JB")
        #expect(bare.issuer == nil && bare.account == "alice")
        #expect(try bare.digits == 6 && bare.period == 30 && bare.algorithm == .sha1)
        #expect(try OneTimePassword(uri: "otpauth://totp/a?secret=JB&period=0").period == 30)
        #expect(try OneTimePassword(uri: "otpauth://totp/a?secret=JB&digits=0x8").digits == 8)
        #expect(try OneTimePassword(uri: "otpauth://totp/a?secret=JB&algorithm=MD5").algorithm == .sha1)
        #expect(
            try OneTimePassword(uri: "otpauth://totp/a`b?secret=JB").uri == "otpauth://totp/a%60b?secret=JB")

        let failures: [(String, OneTimePassword.ParseError)] = [
            ("https://example.com", .unparsable(uri: "https://example.com")),
            // The URI an error carries has its secret hidden.
            ("otpauth://totp/a:b:c?secret=JB", .unparsable(uri: "otpauth://totp/a:b:c?secret=<hidden>")),
            ("otpauth://totp/a?", .unparsable(uri: "otpauth://totp/a?")),
            ("otpauth://totp?secret=JB", .missingAccount(uri: "otpauth://totp?secret=<hidden>")),
            ("otpauth://totp/a?secret=", .missingSecret(uri: "otpauth://totp/a?secret=")),
            ("otpauth://hotp/a?secret=JB", .missingCounter(uri: "otpauth://hotp/a?secret=<hidden>")),
            (
                "otpauth://hotp/a?secret=JB&counter=-1",
                .missingCounter(uri: "otpauth://hotp/a?secret=<hidden>&counter=-1")
            ),
        ]
        for (uri, error) in failures {
            #expect(throws: error, "\(uri)") { try OneTimePassword(uri: uri) }
        }
        let codeFailures: [(String, OneTimePassword.CodeError)] = [
            ("otpauth://totp/a?secret=JB1", .invalidSecret),
            ("otpauth://totp/a?secret=JB&digits=abc", .invalidDigits("abc")),
            ("otpauth://totp/a?secret=JB&digits=5", .unsupportedDigits("5")),
            ("otpauth://totp/a?secret=JB&digits=11", .unsupportedDigits("11")),
            ("otpauth://totp/a?secret=JB&period=1m", .invalidPeriod("1m")),
            ("otpauth://totp/a?secret=JB1&digits=x", .invalidDigits("x")),
            ("otpauth://totp/a?secret=JB1&digits=5", .invalidSecret),
        ]
        for (uri, error) in codeFailures {
            #expect(throws: error, "\(uri)") { try OneTimePassword(uri: uri).code(at: Date()) }
        }
    }

    @Test("urldecode and urlencode as pass-otp's, in both kinds of locale")
    func uriText() {
        #expect(URIText.decode("a+b%20c%2") == "a b c\u{2}")
        #expect(URIText.decode("%E4%B8%AD") == "中")
        #expect(URIText.decode("x%0a%0a") == "x")
        #expect(URIText.decode("%5Cn") == "\\n")
        #expect(URIText.decode("a\\tb") == "a\tb")
        #expect(URIText.decode("stop\\chere") == "stop")
        #expect(URIText.encode("My Bank.~_-", utf8Locale: true) == "My+Bank.~_-")
        #expect(URIText.encode("é中", utf8Locale: true) == "%E9%4E2D")
        #expect(URIText.encode("é中", utf8Locale: false) == "%C3%A9%E4%B8%AD")
    }

    @Test("The URI of an entry, its counter moved on, and the entry rewritten as pass-otp rewrites it")
    func entries() throws {
        let text = Array("pw\n  otpauth://hotp/a:b?secret=JB&counter=7 note\notpauth://x\n\n\n".utf8)
        #expect(OneTimePassword.uri(in: text) == "otpauth://hotp/a:b?secret=JB&counter=7")
        #expect(OneTimePassword.uri(in: Array("pw\nOTPAUTH://totp/a?secret=JB\n".utf8)) == nil)
        let key = try OneTimePassword(uri: "otpauth://hotp/a:b?secret=JB&counter=7&digits=6")
        let next = key.advanced()
        #expect(next.uri == "otpauth://hotp/a:b?secret=JB&counter=8&digits=6" && next.counter == 8)
        // A counter first among the parameters moves on too (pass-otp leaves it).
        #expect(try OneTimePassword(uri: "otpauth://hotp/a?counter=41&secret=JB").advanced().counter == 42)
        #expect(
            try OneTimePassword(uri: "otpauth://totp/a?secret=JB").advanced().uri
                == "otpauth://totp/a?secret=JB")
        let rewritten = next.replacingURIs(in: Array("pw\notpauth://hotp/old\n  otpauth://kept\n\n\n".utf8))
        #expect(String(decoding: rewritten, as: UTF8.self) == "pw\n\(next.uri)\n  otpauth://kept\n")

        let secret = Secret(parsing: "pw\nlogin: me\notpauth://totp/Site:me?secret=JBSWY3DPEHPK3PXP\n")
        #expect(try secret.oneTimePassword?.account == "me")
        #expect(try Secret(parsing: "pw\n").oneTimePassword == nil)
        #expect(throws: OneTimePassword.ParseError.self) {
            try Secret(parsing: "otpauth://totp/x\n").oneTimePassword
        }
    }

    @Test("insert --secret's URI: label, blanks out of the secret, issuer again; append's line editing")
    func buildingAndSettingURIs() {
        let secret = SecureBytes(string: "JBSW Y3DP\tEHPK")
        #expect(
            OneTimePassword.totpURI(issuer: "Ex Co", account: "al@x", secret: secret, utf8Locale: true)
                == "otpauth://totp/Ex+Co:al%40x?secret=JBSWY3DPEHPK&issuer=Ex+Co")
        #expect(
            OneTimePassword.totpURI(issuer: nil, account: "al", secret: secret, utf8Locale: true)
                == "otpauth://totp/al?secret=JBSWY3DPEHPK")
        let added = OneTimePassword.settingURI(
            "otpauth://totp/n?secret=A", in: SecureBytes(string: "pw\nuser: u"))
        #expect(!added.replaced && added.text.string == "pw\nuser: u\notpauth://totp/n?secret=A\n")
        let replaced = OneTimePassword.settingURI(
            "otpauth://totp/n?secret=B", in: SecureBytes(string: "pw\notpauth://totp/o?secret=A\nnote\n"))
        #expect(replaced.replaced && replaced.text.string == "pw\notpauth://totp/n?secret=B\nnote\n")
        #expect(
            OneTimePassword.settingURI("otpauth://x", in: SecureBytes([])).text.string == "\notpauth://x\n")
        #expect(OneTimePassword.hasURILine(SecureBytes(string: "pw\n\u{0}otpauth://totp/a?secret=A\n")))
        #expect(!OneTimePassword.hasURILine(SecureBytes(string: "pw\n otpauth://totp/a\n")))
    }
}
