/// `help`, `--help`: the banner and pass's usage text, with the program name and settings filled in.
enum HelpCommand {
    /// Prints the usage on standard output.
    static func run(_ invocation: Invocation) {
        standardOutput.write(VersionCommand.banner + "\n" + text(invocation))
    }

    /// The usage text after the banner.
    static func text(_ invocation: Invocation) -> String {
        let program = invocation.program
        let clipTime = invocation.clipTime
        return """
            Usage:
                \(program) init [--path=subfolder,-p subfolder] gpg-id...
                    Initialize new password storage and use gpg-id for encryption.
                    Selectively reencrypt existing passwords using new gpg-id.
                \(program) [ls] [subfolder]
                    List passwords.
                \(program) find pass-names...
                \tList passwords that match pass-names.
                \(program) [show] [--clip[=line-number],-c[line-number]] pass-name
                    Show existing password and optionally put it on the clipboard.
                    If put on the clipboard, it will be cleared in \(clipTime) seconds.
                \(program) grep [GREPOPTIONS] search-string
                    Search for password files containing search-string when decrypted.
                \(program) insert [--echo,-e | --multiline,-m] [--force,-f] pass-name
                    Insert new password. Optionally, echo the password back to the console
                    during entry. Or, optionally, the entry may be multiline. Prompt before
                    overwriting existing password unless forced.
                \(program) edit pass-name
                    Insert a new password or edit an existing password using \(invocation.editorName).
                \(program) generate [--no-symbols,-n] [--clip,-c] [--in-place,-i | --force,-f] pass-name [pass-length]
                    Generate a new password of pass-length (or \(invocation.generatedLength) if unspecified) with optionally no symbols.
                    Optionally put it on the clipboard and clear board after \(clipTime) seconds.
                    Prompt before overwriting existing password unless forced.
                    Optionally replace only the first line of an existing file with a new password.
                \(program) rm [--recursive,-r] [--force,-f] pass-name
                    Remove existing password or directory, optionally forcefully.
                \(program) mv [--force,-f] old-path new-path
                    Renames or moves old-path to new-path, optionally forcefully, selectively reencrypting.
                \(program) cp [--force,-f] old-path new-path
                    Copies old-path to new-path, optionally forcefully, selectively reencrypting.
                \(program) git git-command-args...
                    If the password store is a git repository, execute a git command
                    specified by git-command-args.
                \(program) help
                    Show this text.
                \(program) version
                    Show version information.

            More information may be found in the pass(1) man page.

            """
    }

    /// The commands coffer has beyond pass, for `help COMMAND` (the plain `help` text stays pass's own,
    /// byte for byte, as tools and tests compare it).
    static func extraText(_ invocation: Invocation) -> String {
        let program = invocation.program
        return """
            Usage:
                \(program) history pass-name
                    Show the commits that changed pass-name, following renames.
                \(program) show --revision,-r rev pass-name
                    Show pass-name as it was in the git revision rev.
                \(program) restore --revision,-r rev pass-name
                    Write back pass-name as it was in rev, re-encrypted, as a new commit.
                \(program) sync
                    Pull (rebase), merge entries field by field, and push the store.
                \(program) clone url [--path,-p dir]
                    Clone a store and set up the entry merge driver.
                \(program) fsck [--fix,-f]
                    Check permissions, recipients, decryption and git state; optionally repair.
                \(program) help [command]
                    Show the usage, or the usage of one command.

            """
    }

    /// The commands `help COMMAND` knows, each with the aliases that share its usage block.
    static let topics: [(names: [String], blocks: [String])] = [
        (["init"], ["init"]), (["ls", "list"], ["[ls]"]), (["find", "search"], ["find"]),
        (["show"], ["[show]", "show"]), (["grep"], ["grep"]), (["insert", "add"], ["insert"]),
        (["edit"], ["edit"]),
        (["generate"], ["generate"]), (["rm", "remove", "delete"], ["rm"]), (["mv", "rename"], ["mv"]),
        (["cp", "copy"], ["cp"]), (["git"], ["git"]), (["history"], ["history"]), (["restore"], ["restore"]),
        (["sync"], ["sync"]), (["clone"], ["clone"]), (["fsck"], ["fsck"]), (["help"], ["help"]),
        (["version"], ["version"]),
    ]

    /// Whether `command` has a usage block.
    static func knows(_ command: String) -> Bool {
        topics.contains { $0.names.contains(command) }
    }

    /// Whether the arguments hold `--help` as an option (before any `--`).
    static func asksForHelp(_ arguments: [String]) -> Bool {
        for argument in arguments {
            if argument == "--" { return false }
            if argument == "--help" { return true }
        }
        return false
    }

    /// `help COMMAND` and `COMMAND --help`: the usage lines of one command.
    static func run(topic: String, _ invocation: Invocation) throws {
        guard let blocks = topics.first(where: { $0.names.contains(topic) })?.blocks else {
            // Like pass, which ignores what follows `help`.
            run(invocation)
            return
        }
        let lines = (text(invocation) + extraText(invocation)).split(
            separator: "\n", omittingEmptySubsequences: false)
        let heads = blocks.map { "    \(invocation.program) \($0)" }
        var output = "Usage:\n"
        var inside = false
        for line in lines {
            if line.hasPrefix("    \(invocation.program) ") && !line.hasPrefix("        ") {
                inside = heads.contains { line == $0 || line.hasPrefix($0 + " ") }
            } else if !line.hasPrefix("        ") && !line.hasPrefix("    \t") {
                inside = false
            }
            if inside { output += line + "\n" }
        }
        standardOutput.write(output)
    }
}
