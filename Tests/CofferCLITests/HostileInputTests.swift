import Coffer
import CofferTestSupport
import Testing

/// What a program that starts coffer controls (standard input and output, variables) makes it fail
/// loudly, never store less than it was given or exit 0: each case from a red-team pass as that caller.
@Suite("Hostile input and output: failures are failures")
struct HostileInputTests {
    /// Runs the installed `pass` through `sh` with `redirections` (e.g. `< /`) after its arguments.
    static func run(
        _ installed: InstalledAsPass, _ arguments: [String], _ redirections: String,
        environment extra: [String: String] = [:]
    ) throws -> ChildProcess.Output {
        var environment = installed.environment
        for (name, value) in extra { environment[name] = value }
        return try installed.sandbox.run(
            ["sh", "-c", "exec \"$0\" \"$@\" \(redirections)", installed.program] + arguments,
            environment: environment)
    }

    @Test(
        "git settings from the environment (GIT_CONFIG_COUNT, GIT_CONFIG_PARAMETERS) reach no git of coffer's"
    )
    func gitSettingsFromEnvironment() throws {
        let installed = try InstalledAsPass(entries: ["keep": "k\n"])
        let hooks = installed.sandbox.directory + "/hostile-hooks"
        let marker = installed.sandbox.directory + "/hook-ran"
        try installed.sandbox.check(["mkdir", "-p", hooks])
        try TestFiles.write("#!/bin/sh\ntouch '\(marker)'\n", to: hooks + "/pre-commit", mode: 0o755)
        let variables: [[String: String]] = [
            ["GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "core.hooksPath", "GIT_CONFIG_VALUE_0": hooks],
            ["GIT_CONFIG_PARAMETERS": "'core.hooksPath'='\(hooks)'"],
        ]
        for (index, extra) in variables.enumerated() {
            let result = try installed.run(
                ["insert", "-e", "new\(index)"], input: "pw\n", environment: extra)
            #expect(result.status == 0, "\(result.errorText)")
            #expect(!TestFiles.exists(marker), "\(extra.keys.sorted()): the hook ran")
            #expect(try installed.uncommitted() == "")
        }
    }

    @Test("GIT_TEMPLATE_DIR puts no hook into a repository coffer clones")
    func templateDirectoryInstallsNoHook() throws {
        let installed = try InstalledAsPass(entries: ["keep": "k\n"])
        let template = installed.sandbox.directory + "/hostile-template"
        let marker = installed.sandbox.directory + "/hook-ran"
        try installed.sandbox.check(["mkdir", "-p", template + "/hooks"])
        for hook in ["pre-commit", "post-checkout"] {
            try TestFiles.write(
                "#!/bin/sh\ntouch '\(marker)'\n", to: template + "/hooks/" + hook, mode: 0o755)
        }
        let clone = installed.sandbox.directory + "/second"
        let cloned = try installed.run(
            ["clone", installed.store, "--path", clone], environment: ["GIT_TEMPLATE_DIR": template])
        #expect(cloned.status == 0, "\(cloned.errorText)")
        #expect(!TestFiles.exists(clone + "/.git/hooks/pre-commit"))
        let inserted = try installed.run(
            ["insert", "-e", "new"], input: "pw\n", environment: ["PASSWORD_STORE_DIR": clone])
        #expect(inserted.status == 0, "\(inserted.errorText)")
        #expect(!TestFiles.exists(marker), "a template hook ran")
    }

    @Test("insert -m or -e whose standard input cannot be read replaces nothing and exits 1")
    func unreadableInput() throws {
        let installed = try InstalledAsPass(entries: ["victim": "kept\n"])
        let head = try installed.git(["rev-parse", "HEAD"])
        for redirection in ["< /", "0>/dev/null", "<&-"] {
            for flag in ["-m", "-e"] {
                let output = try Self.run(installed, ["insert", flag, "-f", "victim"], redirection)
                #expect(output.status == 1, "\(flag) \(redirection)")
                #expect(output.errorText.contains("cannot read standard input"), "\(output.errorText)")
                #expect(try installed.decrypted("victim") == "kept\n", "\(flag) \(redirection)")
            }
        }
        #expect(try installed.git(["rev-parse", "HEAD"]) == head)
        #expect(try installed.uncommitted().isEmpty)
        // The end of the input is no error: as pass, insert -e then stores an empty password.
        let ended = try Self.run(installed, ["insert", "-e", "-f", "victim"], "< /dev/null")
        #expect(ended.status == 0, "\(ended.errorText)")
        #expect(try installed.decrypted("victim") == "\n")
    }

    @Test("generate refuses a character set with control characters, as pass fails on a newline")
    func controlCharacterSet() throws {
        let installed = try InstalledAsPass(entries: ["kept": "password\nlogin: alice\n"])
        for set in ["\n", "[:space:]", "[:cntrl:]", "a\\n"] {
            let environment = ["PASSWORD_STORE_CHARACTER_SET": set]
            let fresh = try installed.run(["generate", "new", "12"], environment: environment)
            #expect(fresh.status == 1, "\(set)")
            #expect(
                fresh.errorText.hasSuffix("Could not generate password from /dev/urandom."),
                "\(fresh.errorText)")
            let inPlace = try installed.run(["generate", "-i", "kept", "12"], environment: environment)
            #expect(inPlace.status == 1, "\(set)")
        }
        #expect(!FileSystem.exists(installed.store + "/new.gpg"))
        #expect(try installed.decrypted("kept") == "password\nlogin: alice\n")
    }

    @Test("output that cannot be written (a full disk) fails the command with one line")
    func unwritableOutput() throws {
        let installed = try InstalledAsPass(entries: ["bank": "pin\nlogin: bob\n"])
        for arguments in [["show", "bank"], ["show", "--json", "bank"], ["ls"], ["ls", "--flat"]] {
            let output = try Self.run(installed, arguments, ">/dev/full")
            #expect(output.status == 1, "\(arguments)")
            #expect(
                output.errorText == "Error: write error: No space left on device", "\(output.errorText)")
        }
        // A reader that goes away is no error to report: SIGPIPE ends coffer as it ends pass.
        let piped = try installed.sandbox.run(
            ["sh", "-c", "\"$0\" show bank | true", installed.program], environment: installed.environment)
        #expect(piped.errorText.isEmpty, "\(piped.errorText)")
    }

    @Test("a signing key set to blanks is set: writes need a signature there is none of, as in pass")
    func blankSigningKey() throws {
        let installed = try InstalledAsPass(entries: ["first": "first\n"])
        let output = try installed.run(
            ["insert", "-m", "second"], input: "x\n", environment: ["PASSWORD_STORE_SIGNING_KEY": " "])
        #expect(output.status == 1)
        #expect(output.errorText.contains("Signature for"), "\(output.errorText)")
        #expect(!FileSystem.exists(installed.store + "/second.gpg"))
    }
}
