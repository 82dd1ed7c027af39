import Coffer
import CofferSecretService

/// `secret-service [--replace]`: serves the store's `secret-service/` folder on the session bus as the
/// freedesktop Secret Service (`org.freedesktop.secrets`), for libsecret, secret-tool, Python's keyring
/// and every program that keeps its passwords there. Runs until the bus closes or another provider
/// takes the name.
enum SecretServiceCommand {
    static let replaceFlag = Flag(nil, "replace", "take the bus name from the provider that owns it").exact

    /// `secret-service`.
    static let command = Command(
        names: ["secret-service"],
        options: Command.options(replaceFlag),
        usage: "[--replace]", origin: .coffer, operands: .none,
        help: { _ in
            [
                "Serve the store as the desktop's Secret Service (org.freedesktop.secrets) on the",
                "session bus; items are entries under secret-service/COLLECTION/.",
            ]
        }, run: run)

    /// Runs the command.
    static func run(_ arguments: [String], _ invocation: Invocation) throws {
        let (parsed, failed) = invocation.parseOptions(arguments, Self.command.options)
        guard !failed, parsed.operands.isEmpty else { throw invocation.usage("[--replace]") }
        #if os(Linux)
            let program = invocation.program
            do {
                let provider = try SecretServiceProvider(store: invocation.store) { event in
                    switch event {
                    case .serving(let items, let unreadable):
                        standardError.line(
                            "\(program): serving \(items) item\(items == 1 ? "" : "s") as \(SecretServiceProvider.busName)"
                                + (unreadable > 0 ? " (\(unreadable) entries could not be decrypted)" : ""))
                    case .stopping(let signal):
                        standardError.line("\(program): \(signal) received; stopping")
                    case .replaced:
                        standardError.line(
                            "\(program): another provider took \(SecretServiceProvider.busName); stopping")
                    case .refreshed:
                        break
                    case .indexNotWritten(let reason):
                        standardError.line("\(program): the index of the items was not kept: \(reason)")
                    }
                }
                try provider.run(replace: parsed[replaceFlag])
            } catch ProviderFailure.nameTaken(let pid, let command, let triedReplace) {
                var owner = ""
                if let pid, pid > 0 {
                    owner = " (" + (command.map { $0.isEmpty ? "" : $0 + ", " } ?? "") + "pid \(pid))"
                }
                throw Exit.die(
                    "\(program): \(SecretServiceProvider.busName) is already owned by another provider\(owner)"
                        + (triedReplace
                            ? ", which does not allow it to be replaced; stop it first"
                            : "; stop it, or run \(program) secret-service --replace"))
            } catch let error as BusError {
                throw Exit.die("\(program): \(error.message)")
            } catch let error as CofferError {
                throw Exit.die("\(program): \(error.message)")
            }
        #else
            throw Exit.die("\(invocation.program): the Secret Service is a freedesktop (Linux) service")
        #endif
    }
}
