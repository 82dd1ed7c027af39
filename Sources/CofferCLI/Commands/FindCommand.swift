/// `find`, `search`: the store's tree pruned to the names that contain any of the terms, ignoring case.
enum FindCommand {
    /// Runs the command.
    static func run(_ arguments: [String], _ invocation: Invocation) throws {
        guard !arguments.isEmpty else { throw invocation.usage("pass-names...") }
        standardOutput.line("Search Terms: " + arguments.joined(separator: ","))
        let pattern = arguments.map { "*" + $0 + "*" }.joined(separator: "|")
        var listing = TreeListing(
            pattern: TreePattern(Array(pattern.utf8), ignoreCase: true), environment: invocation.environment)
        standardOutput.write(bytes: listing.render(invocation.prefix))
    }
}
