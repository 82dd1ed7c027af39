import Coffer

/// `git-credential get|store|erase`, also run as `git-credential-coffer`: git's credential helper
/// (`git config credential.helper coffer`) over the store's `git-credentials/` folder (see
/// ``GitCredentials``). git's attributes come on standard input; `get` answers `username=` and
/// `password=` on standard output, nothing when it has no match; unknown actions are ignored, as git's
/// protocol asks.
enum GitCredentialCommand {
    /// `git-credential`.
    static let command = Command(
        names: ["git-credential"], usage: "get|store|erase", origin: .coffer, operands: .none,
        help: { _ in
            [
                "git's credential helper (git config credential.helper coffer): get, store and erase",
                "credentials in git-credentials/HOST/USERNAME; git's attributes on standard input.",
            ]
        }, run: run)

    /// Runs the command.
    static func run(_ arguments: [String], _ invocation: Invocation) throws {
        guard arguments.count == 1 else { throw invocation.usage("get|store|erase") }
        let action = arguments[0]
        guard ["get", "store", "erase"].contains(action) else { return }
        let input = try SystemCall.readAllSecret(0)
        // Bytes that are not UTF-8 would be replaced in the text: a different password kept, and given
        // back, as if it were the one git used.
        guard let text = input.withUnsafeBytes({ String(validating: $0, as: UTF8.self) }) else {
            guard action == "store" else { return }
            throw Exit.die("\(invocation.program): cannot keep this credential: it is not UTF-8 text")
        }
        let request = GitCredentials.Request(parsing: text)
        let credentials = GitCredentials(store: invocation.store)
        do {
            switch action {
            case "get":
                guard let found = try credentials.get(request) else { return }
                var answer = Array("username=\(found.username)\npassword=".utf8)
                found.password.withUnsafeBytes { answer += $0 }
                answer.append(UInt8(ascii: "\n"))
                answer.withUnsafeBytes { standardOutput.write($0) }
                answer.withUnsafeMutableBytes { wipeMemory($0.baseAddress, count: $0.count) }
            case "store":
                try credentials.store(request)
            default:
                try credentials.erase(request)
            }
        } catch let error as CofferError {
            throw Exit.die("\(invocation.program): \(error.message)")
        }
    }
}
