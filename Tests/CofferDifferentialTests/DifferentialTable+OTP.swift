import CofferTestSupport

// `otp`, built into coffer, against Debian's pass with pass-otp 1.2 (pass-extension-otp, which runs
// oathtool): every subcommand, its options and its failures. TOTP scenarios run with libfaketime, so that
// both programs (and pass-otp's oathtool) see the same clock.

extension DifferentialTable {
    /// ``basicGit`` plus entries holding `otpauth://` URIs: TOTP with each algorithm, digits and period,
    /// HOTP, an indented URI, two URIs, malformed ones and a name with a space.
    static let otpStore =
        basicGit + #"""
            ins totp 'totp-password\nurl: https://example.com\notpauth://totp/Example:alice@example.com?secret=JBSWY3DPEHPK3PXP&issuer=Example\n'
            ins sha256 'otpauth://totp/ACME%20Co:bob?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQGEZA&algorithm=SHA256&digits=8&period=60\n'
            ins sha512 'pw\notpauth://totp/carol?secret=gezd gnbv gy3t qojq&algorithm=sha512&digits=7&period=45\n'
            ins hotp 'hotp-password\nlogin: carol\notpauth://hotp/Bank:carol?secret=JBSWY3DPEHPK3PXP&counter=5\n'
            ins hotp8 'otpauth://hotp/Bank:dave?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&digits=8&counter=0&algorithm=SHA256\n'
            ins hotp-blank 'pw\notpauth://hotp/a:b?secret=JBSWY3DPEHPK3PXP&counter=41\n\nnotes\n\n\n'
            ins two-uris 'pw\notpauth://hotp/a:b?secret=JBSWY3DPEHPK3PXP&counter=9\notpauth://totp/c:d?secret=JB\n'
            ins indented 'pw\n   otpauth://totp/a:b?secret=JBSWY3DPEHPK3PXP more words\n'
            ins 'with space/my token' 'otpauth://totp/My%20Issuer:me?secret=JBSWY3DPEHPK3PXP&period=30\n'
            ins bad-secret 'otpauth://totp/x:y?secret=JB1\n'
            ins bad-digits 'otpauth://totp/x:y?secret=JBSWY3DPEHPK3PXP&digits=abc\n'
            ins octal-digits 'otpauth://totp/x:y?secret=JBSWY3DPEHPK3PXP&digits=010\n'
            ins bad-period 'otpauth://totp/x:y?secret=JBSWY3DPEHPK3PXP&period=1m\n'
            ins no-account 'otpauth://totp?secret=JBSWY3DPEHPK3PXP\n'
            ins no-counter 'otpauth://hotp/x:y?secret=JBSWY3DPEHPK3PXP\n'
            ins no-secret 'otpauth://totp/x:y?issuer=z\n'
            ins padded 'otpauth://totp/x:y?secret=JBSWY3DPEHPK3PX=\n'

            """#

    /// The environment that, with ``clocked(_:)``, gives the command under test and pass-otp's oathtool
    /// the same clock (and nothing else a fake one).
    static let fixedClock: [String: String?] = ["FAKETIME_ONLY_CMDS": "oathtool,coffer"]

    /// `scenario` run through libfaketime's `faketime`, its clock starting 5 seconds into a 30, 45 and 60
    /// second period; the clock is shared by the processes it starts.
    static func clocked(_ scenario: DifferentialScenario) -> DifferentialScenario {
        var scenario = scenario
        scenario.launcher = ["faketime", "-f", "@2030-01-01 00:00:05"]
        return scenario
    }

    private static let uri = "otpauth://totp/Example:alice?secret=JBSWY3DPEHPK3PXP&issuer=Example\n"

    /// The `otp` scenarios.
    static let otp: [DifferentialScenario] = [
        // code
        clocked(make("otp.code-totp", otpStore, ["otp", "totp"], environment: fixedClock, locales: both)),
        clocked(make("otp.code-word", otpStore, ["otp", "code", "sha256"], environment: fixedClock)),
        clocked(make("otp.show-word", otpStore, ["otp", "show", "sha512"], environment: fixedClock)),
        make("otp.code-hotp", otpStore, ["otp", "hotp"], locales: both),
        make("otp.code-hotp-sha256-8-digits", otpStore, ["otp", "code", "hotp8"]),
        make("otp.code-hotp-blank-lines", otpStore, ["otp", "hotp-blank"]),
        clocked(make("otp.code-indented-uri", otpStore, ["otp", "indented"], environment: fixedClock)),
        clocked(
            make(
                "otp.code-name-with-space", otpStore, ["otp", "with space/my token"], environment: fixedClock)
        ),
        clocked(make("otp.code-trailing-slash", otpStore, ["otp", "totp/"], environment: fixedClock)),
        clocked(make("otp.code-padded-secret", otpStore, ["otp", "padded"], environment: fixedClock)),
        clocked(make("otp.code-octal-digits", otpStore, ["otp", "octal-digits"], environment: fixedClock)),
        make("otp.code-no-uri", otpStore, ["otp", "bank"]),
        make("otp.code-missing", otpStore, ["otp", "nope"]),
        make("otp.code-sneaky", otpStore, ["otp", "../x"]),
        make("otp.code-no-name", otpStore, ["otp"]),
        make("otp.code-two-names", otpStore, ["otp", "code", "totp", "hotp"]),
        make("otp.code-bad-option", otpStore, ["otp", "-x", "totp"]),
        make("otp.code-qrcode-option", otpStore, ["otp", "-q", "totp"]),
        make("otp.code-bad-secret", otpStore, ["otp", "bad-secret"]),
        make("otp.code-bad-digits", otpStore, ["otp", "bad-digits"]),
        make("otp.code-bad-period", otpStore, ["otp", "bad-period"]),
        make("otp.code-no-account", otpStore, ["otp", "no-account"]),
        make("otp.code-no-counter", otpStore, ["otp", "no-counter"]),
        make("otp.code-no-secret", otpStore, ["otp", "no-secret"]),
        clocked(
            make("otp.code-clip-without-display", otpStore, ["otp", "-c", "totp"], environment: fixedClock)),
        make("otp.code-hotp-clip-without-display", otpStore, ["otp", "--clip", "hotp"]),
        make("otp.code-no-store", "", ["otp", "totp"]),
        // insert
        make("otp.insert-uri", otpStore, ["otp", "insert", "new/token"], input: .pipe(uri)),
        make("otp.add-alias", otpStore, ["otp", "add", "new/token/"], input: .pipe(uri)),
        make("otp.insert-name-from-label", otpStore, ["otp", "insert"], input: .pipe(uri), locales: both),
        make(
            "otp.insert-name-from-label-without-issuer", otpStore, ["otp", "insert"],
            input: .pipe("otpauth://hotp/just%20me?secret=JBSWY3DPEHPK3PXP&counter=3\n")),
        make(
            "otp.insert-two-names-use-label", otpStore, ["otp", "insert", "a", "b"],
            input: .pipe("  otpauth://totp/Issuer:acct?secret=JB  \n")),
        make("otp.insert-over-entry", otpStore, ["otp", "insert", "bank"], input: .pipe(uri)),
        make("otp.insert-force", otpStore, ["otp", "insert", "-f", "totp"], input: .pipe(uri)),
        make(
            "otp.insert-secret", otpStore,
            ["otp", "insert", "-s", "-i", "GitHub", "-a", "alice@example.com", "gh"],
            input: .pipe("JBSWY3DPEHPK3PXP\n")),
        make(
            "otp.insert-secret-issuer-only", otpStore, ["otp", "insert", "--secret", "--issuer=My Bank"],
            input: .pipe("gezdgnbvgy3tqojq\n"), locales: both),
        make(
            "otp.insert-secret-account-only", otpStore, ["otp", "insert", "-s", "-a", "bob", "acct"],
            input: .pipe("JBSWY3DPEHPK3PXP")),
        make(
            "otp.insert-secret-unicode", otpStore, ["otp", "insert", "-s", "-i", "Bank 中", "-a", "me"],
            input: .pipe("JBSWY3DPEHPK3PXP\n"), locales: both),
        make(
            "otp.insert-secret-without-issuer-or-account", otpStore, ["otp", "insert", "-s", "x"],
            input: .pipe("JBSWY3DPEHPK3PXP\n")),
        make(
            "otp.insert-secret-issuer-false", otpStore, ["otp", "insert", "-s", "-i", "false", "x"],
            input: .pipe("JBSWY3DPEHPK3PXP\n")),
        make(
            "otp.insert-not-a-uri", otpStore, ["otp", "insert", "x"], input: .pipe("https://example.com\n")),
        make("otp.insert-no-input", otpStore, ["otp", "insert", "x"]),
        make(
            "otp.insert-no-secret", otpStore, ["otp", "insert", "x"],
            input: .pipe("otpauth://totp/a:b?digits=8\n")),
        make(
            "otp.insert-quotes", otpStore, ["otp", "insert", "x"],
            input: .pipe("otpauth://totp/a`b:c\"d?secret=JB\n")),
        make(
            "otp.insert-unicode-name", otpStore, ["otp", "insert", "wéb/ünï çødé"], input: .pipe(uri),
            locales: both),
        make("otp.insert-beside-folder", otpStore, ["otp", "insert", "email"], input: .pipe(uri)),
        make(
            "otp.insert-abbreviated-options", otpStore,
            ["otp", "insert", "--sec", "--iss=Org", "--acc", "me", "x"],
            input: .pipe("JBSWY3DPEHPK3PXP\n")),
        make("otp.insert-option-without-value", otpStore, ["otp", "insert", "-s", "-i"], input: .pipe(uri)),
        make(
            "otp.append-indented-uri-is-appended", otpStore, ["otp", "append", "indented"], input: .pipe(uri)),
        make("otp.code-clip-with-value", otpStore, ["otp", "--clip=2", "totp"]),
        make("otp.code-folder", otpStore, ["otp", "email"]),
        clocked(
            make("otp.code-after-double-dash", otpStore, ["otp", "--", "totp"], environment: fixedClock)),
        make("otp.insert-sneaky", otpStore, ["otp", "insert", "../x"], input: .pipe(uri)),
        make("otp.insert-bad-option", otpStore, ["otp", "insert", "-z", "x"], input: .pipe(uri)),
        make("otp.insert-no-git", basic, ["otp", "insert", "deep/er/token"], input: .pipe(uri)),
        make(
            "otp.insert-terminal-hidden", otpStore, ["otp", "insert", "new"],
            input: .terminal([
                .wait("Enter otpauth:// URI for new: "), .type(uri.replacing("\n", with: "\r")),
                .wait("Retype otpauth:// URI for new: "), .type(uri.replacing("\n", with: "\r")),
            ])),
        make(
            "otp.insert-terminal-mismatch", otpStore, ["otp", "insert", "-s", "-a", "me", "new"],
            input: .terminal([
                .wait("Enter secret for new: "), .type("JBSWY3DPEHPK3PXP\r"),
                .wait("Retype secret for new: "),
                .type("JBSWY3DPEHPK3PXQ\r"),
            ])),
        make(
            "otp.insert-terminal-echo-label-no", otpStore, ["otp", "insert", "-e"],
            input: .terminal([
                .wait("Enter otpauth:// URI for this token: "), .type(uri.replacing("\n", with: "\r")),
                .wait("Insert into Example/alice? [y/N] "), .type("n\r"),
            ])),
        make(
            "otp.insert-terminal-overwrite-yes", otpStore, ["otp", "insert", "-e", "bank"],
            input: .terminal([
                .wait("Enter otpauth:// URI for bank: "), .type(uri.replacing("\n", with: "\r")),
                .wait("Overwrite it? [y/N] "), .type("y\r"),
            ])),
        // append
        make("otp.append", otpStore, ["otp", "append", "email/work"], input: .pipe(uri)),
        make("otp.append-replaces", otpStore, ["otp", "append", "two-uris/"], input: .pipe(uri)),
        make(
            "otp.append-secret", otpStore, ["otp", "append", "-e", "-s", "-a", "me", "bank"],
            input: .pipe("JBSWY3DPEHPK3PXP\n")),
        make("otp.append-missing", otpStore, ["otp", "append", "nope"], input: .pipe(uri)),
        make("otp.append-no-name", otpStore, ["otp", "append"], input: .pipe(uri)),
        make("otp.append-bad-uri", otpStore, ["otp", "append", "bank"], input: .pipe("otpauth://totp/x\n")),
        make(
            "otp.append-secret-without-issuer-or-account", otpStore, ["otp", "append", "-s", "totp"],
            input: .pipe("JBSWY3DPEHPK3PXP\n")),
        make(
            "otp.append-terminal-overwrite-no", otpStore, ["otp", "append", "totp"],
            input: .terminal([
                .wait("An OTP secret already exists for totp. Overwrite it? [y/N] "), .type("n\r"),
            ])),
        // uri
        make("otp.uri", otpStore, ["otp", "uri", "totp"], locales: both),
        make("otp.uri-first-word", otpStore, ["otp", "uri", "indented"]),
        make("otp.uri-none", otpStore, ["otp", "uri", "bank"]),
        make("otp.uri-missing", otpStore, ["otp", "uri", "nope"]),
        make("otp.uri-trailing-slash", otpStore, ["otp", "uri", "totp/"]),
        make("otp.uri-malformed", otpStore, ["otp", "uri", "no-secret"]),
        make("otp.uri-qrcode", otpStore, ["otp", "uri", "-q", "sha256"]),
        make("otp.uri-no-name", otpStore, ["otp", "uri"]),
        make(
            "otp.uri-clip", otpStore, ["otp", "uri", "-c", "totp"],
            deliberate:
                "otp uri --clip copies the URI, as pass-otp's usage says; pass-otp 1.2 refuses -c there"),
        // validate
        make("otp.validate", empty, ["otp", "validate", uri.replacing("\n", with: "")]),
        make(
            "otp.validate-hotp-without-counter", empty, ["otp", "validate", "otpauth://hotp/a:b?secret=JB"]),
        make("otp.validate-no-secret", empty, ["otp", "validate", "otpauth://totp/a:b?secret=&digits=6"]),
        make("otp.validate-no-account", empty, ["otp", "validate", "otpauth://totp/Issuer:?secret=JB"]),
        make("otp.validate-not-a-uri", empty, ["otp", "validate", "otpauth://totp/a:b:c?secret=JB"]),
        make("otp.validate-quotes", empty, ["otp", "validate", "otpauth://totp/\"a`?secret=JB"]),
        make("otp.validate-nothing", empty, ["otp", "validate"]),
        make(
            "otp.insert-decoded-label", otpStore, ["otp", "insert"],
            input: .pipe("otpauth://totp/%41%5a+x:%5Cn%0a?secret=JB&issuer=%E4%B8%AD\n"), locales: both),
        // help, version
        make("otp.help", empty, ["otp", "help"]),
        make("otp.help-option", empty, ["otp", "--help"], environment: ["PASSWORD_STORE_CLIP_TIME": "9"]),
        make("otp.help-short", empty, ["otp", "-h"]),
        make("otp.version", empty, ["otp", "version"]),
        make("otp.version-option", empty, ["otp", "--version"]),
    ]
}
