import Coffer

/// `find`, `search`: the store's tree pruned to the names that contain any of the terms, ignoring case.
enum FindCommand {
    /// `find`, `search`.
    static let command = Command(
        names: ["find", "search"], usage: "pass-names...", operands: .text,
        help: { _ in ["List passwords that match pass-names."] }, passHead: "find pass-names...",
        passLines: { _ in ["    \tList passwords that match pass-names."] }, run: run)

    /// Runs the command.
    static func run(_ arguments: [String], _ invocation: Invocation) throws {
        guard !arguments.isEmpty else { throw invocation.usage("pass-names...") }
        standardOutput.line("Search Terms: " + arguments.joined(separator: ","))
        var listing = TreeListing(pattern: TreePattern.search(arguments), environment: invocation.environment)
        standardOutput.write(bytes: listing.render(invocation.prefix))
    }
}
