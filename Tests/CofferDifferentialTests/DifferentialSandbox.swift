import CofferTestSupport

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

    /// The environment of a command under test: ``baseEnvironment`` without the names that only setups
    /// use, then `extra` (a value with `$SANDBOX`… expanded, or `nil` to remove the variable).
    func commandEnvironment(_ extra: [String: String?]) -> [String: String] {
        var environment = baseEnvironment
        environment["SANDBOX"] = nil
        environment["STORE"] = nil
        for name in ["K1", "K2", "K3", "E1", "E2", "E3"] { environment[name] = nil }
        for (name, value) in extra {
            environment[name] = value.map(expand)
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
