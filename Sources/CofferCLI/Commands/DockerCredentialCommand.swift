import Coffer

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `docker-credential store|get|erase|list|version`, also run as `docker-credential-coffer`: docker's
/// credential helper (`"credsStore": "coffer"` in `~/.docker/config.json`) over the layout
/// docker-credential-pass uses (see ``DockerCredentials``), so both work on the same entries.
///
/// As docker's protocol has it: `store` reads `{"ServerURL", "Username", "Secret"}`, `get` and `erase` read
/// the server URL, `get` prints the credential as JSON, `list` prints `{URL: username}`; a missing
/// credential prints `credentials not found in native keychain` and exits 1.
enum DockerCredentialCommand {
    /// `docker-credential`.
    static let command = Command(
        names: ["docker-credential"], usage: "store|get|erase|list|version", origin: .coffer, operands: .none,
        help: { _ in
            [
                "docker's credential helper (\"credsStore\": \"coffer\"): store, get, erase and list",
                "registry logins in docker-credential-pass's layout; requests on standard input.",
            ]
        }, run: run)

    private struct Stored: Codable {
        var ServerURL: String
        var Username: String
        var Secret: String
    }

    static let notFound = "credentials not found in native keychain"

    /// Runs the command.
    static func run(_ arguments: [String], _ invocation: Invocation) throws {
        guard arguments.count == 1 else { throw invocation.usage("store|get|erase|list|version") }
        let credentials = DockerCredentials(store: invocation.store)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes, .sortedKeys]
        do {
            switch arguments[0] {
            case "store":
                let input = try SystemCall.readAllSecret(0)
                let request = try input.withUnsafeBytes {
                    try JSONDecoder().decode(Stored.self, from: Data($0))
                }
                try credentials.store(
                    DockerCredentials.Credential(
                        serverURL: request.ServerURL, username: request.Username,
                        secret: SecureBytes(Array(request.Secret.utf8))))
            case "get":
                guard let found = try credentials.get(try serverURL()) else { throw fail(notFound) }
                let secret = found.secret.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
                let answer = try encoder.encode(
                    Stored(ServerURL: found.serverURL, Username: found.username, Secret: secret))
                standardOutput.line(String(decoding: answer, as: UTF8.self))
            case "erase":
                guard try credentials.erase(try serverURL()) else { throw fail(notFound) }
            case "list":
                var all: [String: String] = [:]
                for (url, username) in try credentials.list() { all[url] = username }
                standardOutput.line(String(decoding: try encoder.encode(all), as: UTF8.self))
            case "version":
                standardOutput.line("docker-credential-coffer (coffer \(CofferRelease.version))")
            default:
                throw invocation.usage("store|get|erase|list|version")
            }
        } catch let error as CofferError {
            throw fail(error.message)
        } catch is DecodingError {
            throw fail("the request is not docker's credential JSON")
        }
    }

    /// docker reads a helper's error from its standard output: the message goes there, the status is 1.
    private static func fail(_ message: String) -> Exit {
        standardOutput.line(message)
        return Exit(1)
    }

    /// The server URL on standard input, without surrounding blanks.
    private static func serverURL() throws -> String {
        let input = try SystemCall.readAll(0)
        let blanks: Set<UInt8> = [9, 10, 13, 32]
        let url = String(
            decoding: input.drop(while: blanks.contains).reversed().drop(while: blanks.contains).reversed(),
            as: UTF8.self)
        guard !url.isEmpty else { throw CofferError(.invalidArgument, "no credentials server URL") }
        return url
    }
}
