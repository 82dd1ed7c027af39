import Coffer
import CofferTestSupport
import Testing

@testable import CofferCLI

/// The command registry is the one place commands are declared: help under both names, `COMMAND
/// --help`, the manual page and the completion scripts agree with it.
@Suite("Command registry")
struct CommandRegistryTests {
    /// Runs coffer (linked as `name`) and Debian's pass with the same arguments in one sandbox.
    static func outputs(_ arguments: [String], as name: String) throws -> (
        coffer: ChildProcessOutput, pass: ChildProcessOutput
    ) {
        let sandbox = try GPGSandbox()
        let link = sandbox.directory + "/" + name
        guard symlink(try CofferBinary.path(), link) == 0 else { throw SandboxError("cannot link \(link)") }
        var environment = sandbox.environment
        environment["PATH"] = "/usr/bin:/bin"
        let coffer = try sandbox.run([link] + arguments, environment: environment)
        let pass = try sandbox.run(["/usr/bin/pass"] + arguments, environment: environment)
        return (ChildProcessOutput(coffer), ChildProcessOutput(pass))
    }

    /// What a program printed, and its status.
    struct ChildProcessOutput: Equatable {
        let status: Int32
        let standardOutput: [UInt8]
        let standardError: [UInt8]
        init(_ output: ChildProcess.Output) {
            (status, standardOutput, standardError) = (
                output.status, output.standardOutput, output.standardError
            )
        }
        var text: String { String(decoding: standardOutput, as: UTF8.self) }
    }

    @Test(
        "Installed as pass, help and version print pass's own text byte for byte",
        arguments: [
            ["help"], ["--help"], ["version"], ["--version"],
        ])
    func passTextUnderPassName(_ arguments: [String]) throws {
        let (coffer, pass) = try Self.outputs(arguments, as: "pass")
        #expect(coffer == pass)
    }

    @Test("Under its own name, coffer's help lists every command with its usage and aliases")
    func cofferHelpListsEveryCommand() throws {
        let (coffer, _) = try Self.outputs(["help"], as: "coffer")
        #expect(coffer.status == 0)
        #expect(coffer.text.hasPrefix("coffer \(CofferRelease.version): "))
        for command in CommandRegistry.visible {
            #expect(
                coffer.text.contains("    coffer \(command.name) \(command.usage)".trimmingTrailingSpaces),
                "\(command.name)")
            for alias in command.names.dropFirst() { #expect(coffer.text.contains(alias), "\(alias)") }
        }
        #expect(!coffer.text.contains("git-merge-driver"))
        let version = try Self.outputs(["--version"], as: "coffer").coffer
        #expect(version.text.contains(CofferRelease.version))
    }

    @Test("otp --help prints pass-otp's usage, help otp coffer's entry for otp")
    func otpHelp() throws {
        let (viaOption, _) = try Self.outputs(["otp", "--help"], as: "coffer")
        #expect(viaOption.text.hasPrefix("Usage:\n\n    coffer otp [code] [--clip,-c] pass-name\n"))
        #expect(viaOption.text.hasSuffix("More information may be found in the pass-otp(1) man page.\n"))
        let (viaHelp, _) = try Self.outputs(["help", "otp"], as: "coffer")
        #expect(viaHelp.text.hasPrefix("Usage:\n    coffer otp [code] [--clip,-c] pass-name | "))
    }

    @Test("COMMAND --help and help COMMAND print that command's usage")
    func usageOfOneCommand() throws {
        for command in CommandRegistry.visible where command.name != "help" && !command.handlesHelp {
            let (viaOption, _) = try Self.outputs([command.name, "--help"], as: "coffer")
            let (viaHelp, _) = try Self.outputs(["help", command.name], as: "coffer")
            #expect(viaOption == viaHelp, "\(command.name)")
            #expect(
                viaOption.text.hasPrefix("Usage:\n    coffer \(command.name)"),
                "\(command.name): \(viaOption.text)")
        }
    }

    @Test("Names and long options are unique, and every command is reachable by each of its names")
    func namesAreUnique() {
        let names = CommandRegistry.all.flatMap(\.names)
        #expect(Set(names).count == names.count)
        for command in CommandRegistry.all {
            let longs = command.options.compactMap(\.long)
            #expect(Set(longs).count == longs.count, "\(command.name)")
            let shorts = command.options.compactMap(\.short)
            #expect(Set(shorts).count == shorts.count, "\(command.name)")
            for name in command.names { #expect(CommandRegistry.command(named: name)?.name == command.name) }
        }
    }

    @Test("The manual page shows every command with every option")
    func manualPageHasEveryCommand() throws {
        let text = try ManPageTests.plainText("man/coffer.1")
        for command in CommandRegistry.visible {
            #expect(text.contains(command.name), "coffer.1 lacks \(command.name)")
            for option in command.options {
                if let long = option.long {
                    #expect(text.contains("--" + long), "coffer.1 lacks --\(long) of \(command.name)")
                }
                if let short = option.short {
                    let letter = String(UnicodeScalar(short))
                    #expect(text.contains("-" + letter), "coffer.1 lacks -\(letter) of \(command.name)")
                }
            }
        }
    }

    @Test("The bash, zsh and fish completions offer every command and every long option")
    func completionsOfferEverything() throws {
        for file in ["coffer.bash", "_coffer", "coffer.fish"] {
            let bytes =
                try TestFiles.read(ShellCompletionTests.Fixture.completion(file))
                ?? { throw SandboxError("no \(file)") }()
            let script = String(decoding: bytes, as: UTF8.self)
            for command in CommandRegistry.visible {
                for name in command.names { #expect(script.contains(name), "\(file) lacks \(name)") }
                for option in command.options {
                    if let long = option.long {
                        #expect(script.contains(long), "\(file) lacks --\(long) of \(command.name)")
                    }
                }
            }
        }
    }
}

extension String {
    /// The text without trailing spaces.
    fileprivate var trimmingTrailingSpaces: String {
        var text = self
        while text.hasSuffix(" ") { text.removeLast() }
        return text
    }
}
