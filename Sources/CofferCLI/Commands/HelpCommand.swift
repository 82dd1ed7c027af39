/// `help [command]`, `--help`, `COMMAND --help`: what the commands are and how they are used, from
/// ``CommandRegistry``.
///
/// Under the name `pass`, `help` prints pass 1.7.4's own text byte for byte (its banner and usage, which
/// tools and people compare); under any other name, coffer's own: its version, every command including
/// those pass lacks, and its manual page.
enum HelpCommand {
    /// `help`.
    static let command = Command(
        names: ["help"], usage: "[command]", operands: .commands,
        help: { _ in ["Show this text, or the usage of one command."] }, passHead: "help",
        passLines: { _ in ["        Show this text."] },
        run: { arguments, invocation in
            if let topic = arguments.first { run(topic: topic, invocation) } else { run(invocation) }
        })

    /// Prints the help text on standard output.
    static func run(_ invocation: Invocation) {
        standardOutput.write(text(invocation))
    }

    /// The help text for the name the program was called by.
    static func text(_ invocation: Invocation) -> String {
        if invocation.speaksAsPass {
            let entries = CommandRegistry.all.compactMap { $0.passEntry(invocation) }.joined()
            return VersionCommand.passBanner + "\nUsage:\n" + entries.map { $0 + "\n" }.joined()
                + "\nMore information may be found in the pass(1) man page.\n"
        }
        let entries = CommandRegistry.visible.flatMap { $0.cofferEntry(invocation) }
        return VersionCommand.cofferBanner + "\nUsage:\n" + entries.map { $0 + "\n" }.joined()
            + "\nMore information may be found in the coffer(1) man page.\n"
    }

    /// Whether the arguments hold `--help` as an option (before any `--`).
    static func asksForHelp(_ arguments: [String]) -> Bool {
        for argument in arguments {
            if argument == "--" { return false }
            if argument == "--help" { return true }
        }
        return false
    }

    /// `help COMMAND` and `COMMAND --help`: the usage of one command; like pass, the whole text when
    /// `topic` is no command.
    static func run(topic: String, _ invocation: Invocation) {
        guard let command = CommandRegistry.command(named: topic), command.origin != .hidden else {
            run(invocation)
            return
        }
        standardOutput.write("Usage:\n" + command.cofferEntry(invocation).map { $0 + "\n" }.joined())
    }
}
