import Coffer
import CofferTestSupport
import Testing

/// Bad input gets a short, clear message on stderr, a non-zero exit, and leaves the store exactly as it was.
@Suite("Bad input leaves the store untouched")
struct BadInputTests {
    /// One bad request: what to prepare, the command, its standard input and the words its error must use.
    struct Case: Sendable, CustomStringConvertible {
        let description: String
        var prepare: String = ""
        let arguments: [String]
        var input: String = ""
        let mentions: String
        var shell: String?
    }

    static let cases: [Case] = [
        Case(
            description: "name with a newline", arguments: ["insert", "-e", "bad\nname"], input: "x\n",
            mentions: "control character"),
        Case(
            description: "name with a tab", arguments: ["insert", "-e", "bad\tname"], input: "x\n",
            mentions: "control character"),
        // Red team (hostile arguments): init -p made these folders and committed them.
        Case(
            description: "init -p folder with an escape sequence",
            arguments: ["init", "-p", "esc\u{1b}]0;owned\u{07}", "x@coffer.test"],
            mentions: "control character"),
        Case(
            description: "init -p folder with a newline",
            arguments: ["init", "-p", "two\nlines", "x@coffer.test"],
            mentions: "control character"),
        Case(
            description: "init -p git's own folder", arguments: ["init", "-p", ".git", "x@coffer.test"],
            mentions: "git's own folder"),
        Case(
            description: "init -p a new folder named .git",
            arguments: ["init", "-p", "sub/.git", "x@coffer.test"],
            mentions: ".git"),
        Case(
            description: "name component over 255 bytes",
            arguments: [
                "insert", "-e", String(repeating: "n", count: 300),
            ], input: "x\n", mentions: "255"),
        Case(
            description: "name with a newline inside a new folder",
            arguments: ["insert", "-e", "new/bad\nname"],
            input: "x\n", mentions: "control character"),
        Case(
            description: "name over PATH_MAX", arguments: ["insert", "-e", longName], input: "x\n",
            mentions: "system's limit"),
        Case(
            description: "name with a leading dash, taken as options", arguments: ["insert", "-e", "-name"],
            input: "x\n", mentions: "invalid option"),
        Case(
            description: "sneaky path", arguments: ["insert", "-e", "../outside"], input: "x\n",
            mentions: "sneaky path"),
        Case(
            description: "sneaky path in the middle", arguments: ["insert", "-e", "a/../../outside"],
            input: "x\n", mentions: "sneaky path"),
        Case(
            description: "sneaky move destination", arguments: ["mv", "good", "../outside"],
            mentions: "sneaky path"),
        Case(
            description: "sneaky copy source", arguments: ["cp", "good/..", "copy"], mentions: "sneaky path"),
        Case(description: "sneaky removal", arguments: ["rm", "-rf", ".."], mentions: "sneaky path"),
        Case(
            description: "write through a symlink leaving the store",
            prepare: "ln -s \"$SANDBOX\" \"$STORE/escape\"", arguments: ["insert", "-e", "escape/x"],
            input: "x\n",
            mentions: "outside the password store"),
        Case(
            description: "write through a file symlink leaving the store",
            prepare: "touch \"$SANDBOX/outside.gpg\" && ln -s \"$SANDBOX/outside.gpg\" \"$STORE/link.gpg\"",
            arguments: ["insert", "-e", "link"], input: "x\n", mentions: "outside the password store"),
        Case(
            description: "no .gpg-id", prepare: "rm \"$STORE/.gpg-id\"", arguments: ["insert", "-e", "new"],
            input: "x\n", mentions: "init your-gpg-id"),
        Case(
            description: "zero-length entry", prepare: ": > \"$STORE/empty.gpg\"",
            arguments: ["show", "empty"],
            mentions: "gpg"),
        Case(
            description: "truncated entry", prepare: "head -c 40 \"$STORE/good.gpg\" > \"$STORE/cut.gpg\"",
            arguments: ["show", "cut"], mentions: "gpg"),
        Case(
            description: "corrupt entry", prepare: "printf 'not openpgp' > \"$STORE/junk.gpg\"",
            arguments: ["show", "junk"], mentions: "gpg"),
        Case(
            description: "entry for someone else's key",
            prepare: "printf 'x' | gpg -q --batch -e -r \"$OTHER\" -o \"$STORE/theirs.gpg\" && "
                + "gpg --batch --yes --delete-secret-keys \"$OTHER\"",
            arguments: ["show", "theirs"], mentions: "secret key"),
        Case(
            description: ".gpg-id naming an unknown key",
            prepare: "echo nobody@nowhere.test > \"$STORE/.gpg-id\"",
            arguments: ["insert", "-e", "new"], input: "x\n", mentions: "nobody@nowhere.test"),
        Case(
            description: ".gpg-id naming an expired key",
            prepare: "gpg -q --batch --passphrase '' --faked-system-time 20200101T000000 --quick-gen-key "
                + "'Old <old@coffer.test>' ed25519 sign 1d 2>/dev/null && F=$(gpg --with-colons -k old@coffer.test "
                + "| awk -F: '/^fpr/ {print $10; exit}') && gpg -q --batch --passphrase '' --faked-system-time "
                + "20200101T000000 --quick-add-key $F cv25519 encr 1d 2>/dev/null; "
                + "echo old@coffer.test > \"$STORE/.gpg-id\"",
            arguments: ["insert", "-e", "new"], input: "x\n", mentions: "expired"),
        Case(
            description: ".gpg-id naming a revoked key",
            prepare:
                "sed 's/^:-----/-----/' \"$GNUPGHOME/openpgp-revocs.d/$OTHER.rev\" | gpg -q --batch --import "
                + "2>/dev/null; echo \"$OTHER\" > \"$STORE/.gpg-id\"",
            arguments: ["insert", "-e", "new"], input: "x\n", mentions: "revoked"),
        Case(
            description: "agent that cannot start",
            prepare: "gpgconf --kill all; echo 'agent-program /bin/false' >> \"$GNUPGHOME/gpg.conf\"",
            arguments: ["show", "good"], mentions: "gpg"),
        Case(
            description: "pinentry that is cancelled",
            prepare: "gpg -q --batch --pinentry-mode loopback --passphrase hunter2 --quick-gen-key "
                + "'Locked <locked@coffer.test>' ed25519 sign never 2>/dev/null && F=$(gpg --with-colons -k "
                + "locked@coffer.test | awk -F: '/^fpr/ {print $10; exit}') && gpg -q --batch --pinentry-mode "
                + "loopback --passphrase hunter2 --quick-add-key $F cv25519 encr never && printf 'pw\\n' | gpg -q "
                + "--batch -e -r locked@coffer.test -o \"$STORE/locked.gpg\" && " + cancellingPinentry,
            arguments: ["show", "locked"], mentions: "cancelled"),
        Case(
            description: "read-only store", prepare: "chmod -R a-w \"$STORE\"",
            arguments: ["insert", "-e", "new"],
            input: "x\n", mentions: "new.gpg': Permission denied", shell: asUnprivilegedUser),
        Case(
            description: "git stopped in the middle of a rebase", prepare: stopped("git rebase other"),
            arguments: ["insert", "-e", "new"], input: "x\n", mentions: "in the middle of a rebase"),
        Case(
            description: "sync while git is stopped in the middle of a rebase",
            prepare: stopped("git rebase other"),
            arguments: ["sync"], mentions: "git rebase --abort"),
        Case(
            description: "git stopped in the middle of a merge",
            prepare: stopped("git merge -q other"),
            arguments: ["rm", "good"], mentions: "in the middle of a merge"),
        Case(
            description: "disk full (file size limit)", arguments: ["insert", "-m", "big"],
            input: String(repeating: "0123456789abcdef\n", count: 4096), mentions: "big",
            shell: "ulimit -f 8; exec"),
        Case(
            description: "argument that is not UTF-8", arguments: [], mentions: "UTF-8",
            shell: "exec \"$COFFER\" show \"$(printf 'bad\\377')\" #"),
    ]

    /// A name of short parts whose path is longer than `PATH_MAX`.
    static let longName = String(repeating: "abcdefgh/", count: 600) + "x"

    /// A pinentry that answers every passphrase request with "cancelled", installed for a fresh agent.
    static let cancellingPinentry =
        "printf '#!/bin/sh\\necho OK\\nwhile read -r c rest; do case \"$c\" in GETPIN) "
        + "echo \"ERR 83886179 Operation cancelled\";; BYE) echo OK; exit 0;; *) echo OK;; esac; done\\n' "
        + "> \"$SANDBOX/pinentry\" && chmod +x \"$SANDBOX/pinentry\" && echo \"pinentry-program $SANDBOX/pinentry\" "
        + ">> \"$GNUPGHOME/gpg-agent.conf\" && gpgconf --kill gpg-agent"

    /// The store as a git repository where `command` (a rebase or a merge of branch `other`) stopped on a
    /// conflict in a file that is not an entry.
    static func stopped(_ command: String) -> String {
        "cd \"$STORE\" && git init -q && git add -A && git commit -qm start && git checkout -qb other && "
            + "echo a > note && git add note && git commit -qm a && git checkout -q main && echo b > note && "
            + "git add note && git commit -qm b && { \(command) >/dev/null 2>&1; test -e .git/MERGE_HEAD "
            + "|| test -d .git/rebase-merge; }"
    }

    /// Runs coffer as `nobody` when the tests run as root (root writes through any mode), with the sandbox
    /// handed to that user and a copy of coffer it can execute; as anyone else, runs it as is.
    static let asUnprivilegedUser =
        "unprivileged() { if [ \"$(id -u)\" != 0 ]; then \"$@\"; return; fi; shift; gpgconf --kill all; "
        + "cp \"$COFFER\" \"$SANDBOX/coffer\" && chown -R 65534:65534 \"$SANDBOX\" && "
        + "setpriv --reuid=65534 --regid=65534 --clear-groups \"$SANDBOX/coffer\" \"$@\"; status=$?; "
        + "setpriv --reuid=65534 --regid=65534 --clear-groups gpgconf --kill all; return $status; }; unprivileged"

    @Test(arguments: cases)
    func refusedCleanly(_ badCase: Case) throws {
        let sandbox = try GPGSandbox()
        let coffer = try CofferBinary.path()
        let store = sandbox.storeDirectory
        try sandbox.check([coffer, "init", sandbox.keys[0].email])
        try sandbox.check([coffer, "insert", "-m", "good"], input: Array("pw\nlogin: a\n".utf8))
        var environment = [
            "STORE": store, "SANDBOX": sandbox.directory, "OTHER": sandbox.keys[1].fingerprint,
            "COFFER": coffer,
        ]
        if !badCase.prepare.isEmpty {
            try sandbox.check(["sh", "-c", badCase.prepare], environment: environment)
        }
        environment["LC_ALL"] = "C.UTF-8"
        let before = try snapshot(sandbox)
        let command = badCase.shell.map { ["sh", "-c", "\($0) \"$@\"", "sh", coffer] } ?? [coffer]
        let output = try sandbox.run(
            command + badCase.arguments, input: Array(badCase.input.utf8), environment: environment)
        #expect(output.status != 0, "exit status 0 for \(badCase)")
        // Short and clear; where pass prints gpg's own lines for the situation, coffer prints the same ones.
        let lines = output.errorText.split(separator: "\n")
        #expect((1...3).contains(lines.count), "stderr: \(output.errorText)")
        #expect(output.errorText.contains(badCase.mentions), "stderr: \(output.errorText)")
        #expect(try snapshot(sandbox) == before, "the store changed")
    }

    /// Every file of the store (dotfiles and temporary files included) with its bytes.
    func snapshot(_ sandbox: GPGSandbox) throws -> String {
        try sandbox.check([
            "sh", "-c",
            "cd \"$PASSWORD_STORE_DIR\" && find . -path ./escape -prune -o -print | sort "
                + "| while read -r f; do if [ -f \"$f\" ]; then echo \"$f $(sha256sum < \"$f\")\"; "
                + "else echo \"$f\"; fi; done",
        ]).outputText
    }

    /// Content is bytes: invalid UTF-8, NUL bytes and empty content are stored and shown unchanged, as by pass.
    @Test(arguments: ["\\377\\376not utf-8\\300\\n", "nul\\000byte\\n", ""])
    func unusualContentRoundTrips(_ content: String) throws {
        try expectRoundTrip(of: "printf '\(content)'")
    }

    @Test func twentyMebibyteEntryRoundTrips() throws {
        try expectRoundTrip(of: "head -c 20971520 /dev/urandom")
    }

    /// Inserts what the shell command `source` prints and expects `coffer show` and `gpg -d` to give it back.
    func expectRoundTrip(of source: String) throws {
        let sandbox = try GPGSandbox()
        let coffer = try CofferBinary.path()
        try sandbox.check([coffer, "init", sandbox.keys[0].email])
        let script =
            "\(source) > \"$2\" && \"$1\" insert -m entry < \"$2\" >/dev/null && \"$1\" show entry | cmp - \"$2\" "
            + "&& gpg -q -d \"$PASSWORD_STORE_DIR/entry.gpg\" | cmp - \"$2\""
        let output = try sandbox.run(["sh", "-c", script, "sh", coffer, sandbox.directory + "/content"])
        #expect(output.status == 0, "\(output.errorText)")
    }
}
