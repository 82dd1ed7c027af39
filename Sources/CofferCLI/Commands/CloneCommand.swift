import Coffer

/// `clone URL [--path DIR]`: clones a store, installs the merge driver, checks the keys.
enum CloneCommand {
    static let pathOption = ValueOption.required("p", "path", "clone into this folder instead of the store")

    /// `clone`.
    static let command = Command(
        names: ["clone"], options: Command.options(pathOption),
        usage: "url [--path,-p dir]", origin: .coffer, operands: .url,
        help: { _ in ["Clone a store and set up the entry merge driver."] }, run: run)

    /// Runs the command.
    static func run(_ arguments: [String], _ invocation: Invocation) throws {
        let (parsed, failed) = invocation.parseOptions(arguments, Self.command.options)
        guard !failed, parsed.operands.count == 1 else { throw invocation.usage("URL [--path,-p DIR]") }
        var configuration = invocation.store.configuration
        if let path = parsed[pathOption] { configuration.root = StoreConfiguration(root: path).root }
        var store = PasswordStore(configuration: configuration)
        store.notices = { Invocation.report($0, always: true) }
        let unreadable = try store.clone(from: parsed.operands[0], mergeDriver: ownExecutable)
        standardOutput.line("Cloned \(parsed.operands[0]) into \(store.root).")
        if !unreadable.isEmpty {
            // The recipients are the cloned repository's text: quoted, so that they cannot drive the terminal.
            standardError.line(
                "Warning: no secret key for \(unreadable.map(Quoting.quoted).joined(separator: ", ")) is in your keyring; "
                    + "its entries will not decrypt here.")
        }
    }
}
