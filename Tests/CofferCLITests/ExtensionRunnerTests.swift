import Coffer
import CofferTestSupport
import Testing

/// pass's bash extensions run by coffer installed only as `pass`, by absolute path, with `PATH` holding the
/// system's folders (where Debian's own pass also is): the prelude's helpers call coffer back by its path,
/// never whatever `pass` `PATH` finds; the system folder can be moved for tests; an extension killed by a
/// signal ends coffer the same way; and the text `clip` copies is never an argument.
@Suite("Extensions run by coffer installed as pass")
struct ExtensionRunnerTests {
    /// Writes the extension `name.bash` into `folder` (made when missing), executable.
    private func extensionFile(_ folder: String, _ name: String, _ body: String) throws {
        mkdir(folder, 0o700)
        try TestFiles.write("#!/usr/bin/env bash\n" + body, to: folder + "/" + name + ".bash", mode: 0o755)
    }

    /// Writes the extension `name.bash` into the store's own `.extensions` folder.
    private func storeExtension(_ coffer: InstalledAsPass, _ name: String, _ body: String) throws {
        try extensionFile(coffer.store + "/.extensions", name, body)
    }

    /// coffer with the entry `bank` and the store extension `name.bash`.
    private func bankWithExtension(_ name: String, _ body: String) throws -> InstalledAsPass {
        let coffer = try InstalledAsPass(entries: ["bank": "bank-pw\n"])
        try storeExtension(coffer, name, body)
        return coffer
    }

    @Test("Helpers call back the coffer that runs the extension, not the pass on PATH")
    func helpersCallCofferBack() throws {
        let coffer = try bankWithExtension(
            "probe",
            """
            printf 'ext-pw\\nnote: written by an extension\\n' | cmd_insert -m "$1"
            cmd_show "$1"
            cmd_git
            echo "git without arguments: $?"

            """)
        let output = try coffer.run(
            ["probe", "fromext"], environment: ["PASSWORD_STORE_ENABLE_EXTENSIONS": "true"])
        #expect(output.status == 0, "\(output.errorText)")
        #expect(output.outputText.contains("ext-pw\nnote: written by an extension\n"), "\(output.outputText)")
        // coffer git exits with git's status (1 without arguments); pass's would have said 0.
        #expect(output.outputText.contains("git without arguments: 1"))
        #expect(try coffer.decrypted("fromext") == "ext-pw\nnote: written by an extension\n")
        #expect(try coffer.lastCommit() == "Add given password for fromext to store.")
        // Only the extension itself is left untracked.
        #expect(try coffer.uncommitted() == "?? .extensions/probe.bash")
    }

    @Test("The system folder: COFFER_SYSTEM_EXTENSIONS_DIR, no switch needed, below the user's")
    func systemFolder() throws {
        let coffer = try InstalledAsPass()
        let system = coffer.sandbox.directory + "/system-extensions"
        try extensionFile(system, "hello", "echo \"system: $* from $SYSTEM_EXTENSION_DIR\"\n")
        let environment = ["COFFER_SYSTEM_EXTENSIONS_DIR": system]
        let output = try coffer.check(["hello", "a b"], environment: environment)
        #expect(output.outputText == "system: a b from \(system)")
        // pass's variables of cmd_extension, and no signal left ignored (coffer ignores SIGXFSZ itself).
        try extensionFile(
            system, "where", "echo \"$extension|$system_extension|$user_extension|$(trap -p XFSZ)\"\n")
        #expect(
            try coffer.check(["where"], environment: environment).outputText
                == "\(system)/where.bash|\(system)/where.bash||")
        try storeExtension(coffer, "hello", "echo user\n")
        #expect(try coffer.check(["hello"], environment: environment).outputText == "system:  from \(system)")
        var enabled = environment
        enabled["PASSWORD_STORE_ENABLE_EXTENSIONS"] = "true"
        #expect(try coffer.check(["hello"], environment: enabled).outputText == "user")
        // Names with a slash or a leading dash are extensions too, as in pass.
        try extensionFile(coffer.store + "/.extensions/team", "sync", "echo \"team sync: $COMMAND $*\"\n")
        try storeExtension(coffer, "--check", "echo \"check: $COMMAND $*\"\n")
        #expect(
            try coffer.check(["team/sync", "a"], environment: enabled).outputText == "team sync: team/sync a")
        #expect(try coffer.check(["--check", "-x"], environment: enabled).outputText == "check: --check -x")
    }

    @Test("An extension killed by a signal ends coffer by the same signal; exit statuses pass through")
    func statuses() throws {
        let coffer = try InstalledAsPass()
        try storeExtension(coffer, "killed", "echo before\nkill -TERM $$\necho after\n")
        try storeExtension(coffer, "seven", "exit 7\n")
        let enabled = ["PASSWORD_STORE_ENABLE_EXTENSIONS": "true"]
        let killed = try coffer.run(["killed"], environment: enabled)
        #expect(killed.status == 128 + SIGTERM)
        #expect(killed.outputText == "before")
        #expect(try coffer.run(["seven"], environment: enabled).status == 7)
        // A status above 128 is a status, not a signal: coffer exits with it and is not killed.
        try storeExtension(coffer, "high", "exit 139\n")
        #expect(try coffer.run(["high"], environment: enabled).termination == .exited(139))
    }

    @Test("tmpdir traps only EXIT, as pass: a SIGTERM still ends the extension, and the folder is removed")
    func tmpdirDoesNotSwallowSignals() throws {
        let coffer = try InstalledAsPass()
        try storeExtension(
            coffer, "private",
            "tmpdir\necho \"$SECURE_TMPDIR\"\nkill -TERM $$\necho after\nkill -INT $$\necho after INT\n")
        let output = try coffer.run(["private"], environment: ["PASSWORD_STORE_ENABLE_EXTENSIONS": "true"])
        #expect(output.termination == .signaled(SIGTERM), "\(output.outputText)")
        #expect(!output.outputText.contains("after"))
        #expect(output.outputText.hasPrefix("/dev/shm/pass."))
        #expect(!FileSystem.exists(output.outputText))
    }

    @Test(
        "While the extension runs, coffer ignores SIGINT and SIGQUIT, passes SIGTERM and SIGHUP on, and waits"
    )
    func waitsAsAShell() throws {
        let coffer = try InstalledAsPass(git: false)
        try storeExtension(
            coffer, "patient",
            """
            trap 'echo got INT' INT
            trap 'echo got TERM; exit 5' TERM
            echo ready
            sleep 1
            echo still here
            sleep 30 &
            wait $!

            """)
        var environment = coffer.environment
        environment["PASSWORD_STORE_ENABLE_EXTENSIONS"] = "true"
        let (pid, output) = try TestProcess.startWithOutputPipe(
            [coffer.program, "patient"], environment: environment)
        defer {
            SystemCall.close(output)
            TestProcess.stop(pid, signal: SIGKILL)
        }
        #expect(TestProcess.readLine(output, timeout: 20) == "ready")
        // Sent to coffer alone (a terminal sends Ctrl-C to the whole group; the extension handles its own).
        kill(pid, SIGINT)
        kill(pid, SIGQUIT)
        #expect(TestProcess.readLine(output, timeout: 20) == "still here")
        #expect(TestProcess.statusIfEnded(pid) == nil)
        kill(pid, SIGTERM)
        #expect(TestProcess.readLine(output, timeout: 20) == "got TERM")
        #expect(TestProcess.waitFor(pid) == 5)
    }

    @Test("clip that cannot copy ends the extension with pass's status; the next step does not run")
    func clipFailureDies() throws {
        let coffer = try bankWithExtension(
            "copydel",
            "clip \"$(cmd_show \"$1\" | head -1)\" \"$1\"\necho copied\ncmd_delete -f \"$1\"\n")
        let output = try coffer.run(
            ["copydel", "bank"],
            environment: ["PASSWORD_STORE_ENABLE_EXTENSIONS": "true", "DISPLAY": "", "WAYLAND_DISPLAY": ""])
        #expect(output.status == 1)
        #expect(output.errorText.contains("display"), "\(output.errorText)")
        #expect(!output.outputText.contains("copied"))
        #expect(try coffer.decrypted("bank") == "bank-pw\n")
    }

    @Test("cmd_git on a store without git, cmd_find and cmd_grep without arguments die as in pass")
    func helpersThatDie() throws {
        let coffer = try InstalledAsPass(git: false)
        try storeExtension(coffer, "publish", "cmd_git push\necho published\n")
        try storeExtension(coffer, "lookup", "cmd_find\necho found\n")
        try storeExtension(coffer, "scan", "cmd_grep\necho searched\n")
        let enabled = ["PASSWORD_STORE_ENABLE_EXTENSIONS": "true"]
        let git = try coffer.run(["publish"], environment: enabled)
        #expect(git.status == 1 && git.outputText.isEmpty)
        #expect(git.errorText == "Error: the password store is not a git repository. Try \"pass git init\".")
        let find = try coffer.run(["lookup"], environment: enabled)
        #expect(find.status == 1 && find.outputText.isEmpty)
        #expect(find.errorText == "Usage: pass lookup pass-names...")
        let grep = try coffer.run(["scan"], environment: enabled)
        #expect(grep.status == 1 && grep.outputText.isEmpty)
        #expect(grep.errorText == "Usage: pass scan [GREPOPTIONS] search-string")
    }

    @Test("Variables the extension sets without export reach the helpers, as pass's cmd_* read them")
    func shellVariablesReachHelpers() throws {
        let coffer = try InstalledAsPass()
        let other = coffer.sandbox.keys[1].fingerprint
        try storeExtension(
            coffer, "share",
            """
            PASSWORD_STORE_KEY=\(other)
            printf 'for-other-only\\n' | cmd_insert -m -f "shared/$1"
            PASSWORD_STORE_KEY=nobody@example.invalid
            cmd_insert -m -f "nobody/$1" <<<nobody
            echo not reached

            """)
        let output = try coffer.run(
            ["share", "x"], environment: ["PASSWORD_STORE_ENABLE_EXTENSIONS": "true"])
        #expect(output.status == 1, "\(output.errorText)")
        #expect(!output.outputText.contains("not reached"))
        #expect(!FileSystem.exists(coffer.store + "/nobody/x.gpg"))
        let packets = try coffer.sandbox.run([
            "gpg", "--batch", "--list-packets", coffer.store + "/shared/x.gpg",
        ])
        let subkey = try coffer.sandbox.check(["gpg", "--batch", "--with-colons", "--list-keys", other])
            .outputText.split(separator: "\n").first { $0.hasPrefix("sub:") }?.split(separator: ":")[4]
        #expect(subkey != nil)
        let keyIDs = packets.outputText.split(separator: "\n").filter { $0.contains("pubkey enc packet") }
        #expect(keyIDs.count == 1 && keyIDs[0].contains(String(subkey ?? "?")), "\(packets.outputText)")
    }

    @Test("reencrypt_path re-encrypts every entry it can and names the one it cannot, as pass goes on")
    func reencryptBestEffort() throws {
        let coffer = try InstalledAsPass(entries: ["team/a": "a\n", "team/c": "c\n"])
        let lost = coffer.sandbox.keys[2].fingerprint
        try coffer.sandbox.check([
            "gpg", "--batch", "--yes", "-r", lost, "-o", coffer.store + "/team/b.gpg", "-e", "/dev/null",
        ])
        try coffer.sandbox.check(["gpg", "--batch", "--yes", "--delete-secret-keys", lost])
        let before = try ["a", "b", "c"].map { try coffer.sandbox.read(coffer.store + "/team/\($0).gpg") }
        try storeExtension(
            coffer, "rekey",
            "printf '%s\\n' \"$2\" > \"$PREFIX/$1/.gpg-id\"\nreencrypt_path \"$PREFIX/$1\"\necho \"status $?\"\n"
        )
        let output = try coffer.run(
            ["rekey", "team", coffer.sandbox.keys[1].fingerprint],
            environment: ["PASSWORD_STORE_ENABLE_EXTENSIONS": "true"])
        #expect(output.status == 0, "\(output.errorText)")
        #expect(output.outputText.contains("team/a: reencrypting to"), "\(output.outputText)")
        #expect(output.outputText.contains("team/b: reencrypting to"), "\(output.outputText)")
        #expect(output.outputText.contains("team/c: reencrypting to"), "\(output.outputText)")
        #expect(output.outputText.hasSuffix("status 0"))
        #expect(output.errorText.contains("team/b"), "\(output.errorText)")
        let after = try ["a", "b", "c"].map { try coffer.sandbox.read(coffer.store + "/team/\($0).gpg") }
        #expect(after[0] != before[0] && after[2] != before[2])
        #expect(after[1] == before[1])
    }

    @Test("Under pass's name, coffer's own commands yield to an extension of the same name; pass's never do")
    func cofferCommandsYield() throws {
        let coffer = try InstalledAsPass()
        let system = coffer.sandbox.directory + "/system-extensions"
        for name in ["sync", "restore", "fsck", "show", "extension-helper"] {
            try storeExtension(coffer, name, "echo \"user \(name): $*\"\n")
        }
        try extensionFile(system, "history", "echo \"system history: $*\"\n")
        try coffer.insert("bank", "bank-pw\n")
        let enabled = [
            "PASSWORD_STORE_ENABLE_EXTENSIONS": "true", "COFFER_SYSTEM_EXTENSIONS_DIR": system,
        ]
        #expect(try coffer.run(["sync", "backup"], environment: enabled).outputText == "user sync: backup")
        #expect(
            try coffer.run(["restore", "backup"], environment: enabled).outputText == "user restore: backup")
        #expect(try coffer.run(["fsck"], environment: enabled).outputText == "user fsck: ")
        #expect(
            try coffer.run(["history", "bank"], environment: enabled).outputText == "system history: bank")
        // pass's own commands, and the hidden ones the prelude and git run, are never replaced.
        #expect(try coffer.run(["show", "bank"], environment: enabled).outputText == "bank-pw")
        #expect(
            !(try coffer.run(["extension-helper", "verify", "x"], environment: enabled).outputText.contains(
                "user")))
        // Without the switch, the user's extensions do not run: coffer's commands answer.
        let disabled = ["COFFER_SYSTEM_EXTENSIONS_DIR": system]
        #expect(!(try coffer.run(["sync"], environment: disabled).outputText.contains("user")))
        #expect(
            try coffer.run(["history", "bank"], environment: disabled).outputText == "system history: bank")
    }

    @Test("clip and qrcode take their text on a pipe: it is in no process's arguments")
    func clipTextIsNoArgument() throws {
        let coffer = try InstalledAsPass(entries: ["bank": "MARK-secret-line\n"])
        let log = coffer.sandbox.directory + "/argv.log"
        // Every program the prelude can start, wrapped to log its arguments.
        let path = try coffer.sandbox.loggingWrappers(for: ["bash", "gpg", "qrencode", "xclip"], log: log)
        try storeExtension(
            coffer, "showqr",
            "secret=\"$($GPG -d \"${GPG_OPTS[@]}\" \"$PREFIX/$1.gpg\")\"\nqrcode \"$secret\" \"$1\"\n")
        let output = try coffer.run(
            ["showqr", "bank"],
            environment: [
                "PASSWORD_STORE_ENABLE_EXTENSIONS": "true", "PATH": path, "DISPLAY": "", "TERM": "dumb",
            ])
        #expect(output.status == 0, "\(output.errorText)")
        let logged = String(decoding: TestFiles.read(log) ?? [], as: UTF8.self)
        #expect(
            logged.contains("argv: [") && logged.contains("qrencode"), "the QR code was not drawn: \(logged)")
        #expect(
            !logged.split(separator: "\n").filter { $0.hasPrefix("argv:") }.contains {
                $0.contains("MARK-secret")
            })
    }
}
