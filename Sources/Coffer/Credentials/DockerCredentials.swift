/// docker's credential-helper protocol over the store, in the layout docker-credential-pass uses, so that
/// both read and write the same entries: `docker-credential-helpers/BASE64URL(SERVER URL)/USERNAME`, the
/// entry holding the secret alone.
package struct DockerCredentials: Sendable {
    /// The folder of the store that holds docker's credentials.
    package static let folder = "docker-credential-helpers"

    /// The store.
    package let store: PasswordStore

    /// Credentials kept in `store`.
    package init(store: PasswordStore) {
        self.store = store
    }

    /// One credential: a registry's URL, the username and the secret.
    package struct Credential: Sendable {
        /// The registry's URL as docker names it.
        package var serverURL: String
        /// The username.
        package var username: String
        /// The password or token.
        package var secret: SecureBytes

        /// A credential for `serverURL`.
        package init(serverURL: String, username: String, secret: SecureBytes) {
            self.serverURL = serverURL
            self.username = username
            self.secret = secret
        }
    }

    /// Saves a credential, replacing what the registry had (another username's entry goes).
    package func store(_ credential: Credential) throws {
        guard !credential.serverURL.isEmpty else {
            throw CofferError(.invalidArgument, "no credentials server URL")
        }
        guard EntryName.isPlainPart(credential.username) else {
            throw CofferError(.invalidArgument, "no credentials username")
        }
        let folder = Self.folderName(credential.serverURL)
        let name = folder + "/" + credential.username
        if store.contains(name) {
            let stored = try store.read(name)
            let same = stored.withUnsafeBytes { old in
                credential.secret.withUnsafeBytes { Array(old) == Array($0) }
            }
            if same { return }
        }
        try store.write(name, credential.secret)
        for other in try usernames(in: folder) where other != credential.username {
            try store.remove(folder + "/" + other, recursive: false)
        }
    }

    /// The credential of a registry, or `nil` when there is none.
    package func get(_ serverURL: String) throws -> Credential? {
        let folder = Self.folderName(serverURL)
        guard let username = try usernames(in: folder).first else { return nil }
        // An entry made or edited by hand ends with a newline that is no part of the token (as
        // docker-credential-pass reads it).
        var secret = try store.read(folder + "/" + username).withUnsafeBytes { Array($0) }
        defer { wipeMemory(&secret, count: secret.count) }
        if secret.last == UInt8(ascii: "\n") { secret.removeLast() }
        return Credential(serverURL: serverURL, username: username, secret: SecureBytes(secret))
    }

    /// Removes a registry's credential; `false` when there was none.
    @discardableResult
    package func erase(_ serverURL: String) throws -> Bool {
        let folder = Self.folderName(serverURL)
        guard store.isFolder(folder) else { return false }
        try store.remove(folder, recursive: true)
        return true
    }

    /// Every registry with its username.
    package func list() throws -> [(serverURL: String, username: String)] {
        guard store.isFolder(Self.folder) else { return [] }
        return try store.list(Self.folder).children.filter { $0.kind == .folder }.compactMap { node in
            guard let url = Self.decode(node.name),
                let username = try usernames(in: Self.folder + "/" + node.name).first
            else { return nil }
            return (url, username)
        }
    }

    /// The usernames stored for a registry's folder, in byte order.
    private func usernames(in folder: String) throws -> [String] {
        guard store.isFolder(folder) else { return [] }
        return try store.list(folder).children.filter { $0.kind == .entry }.map(\.displayName)
    }

    /// `docker-credential-helpers/` and the URL in base64 with the URL-safe alphabet and padding, as
    /// docker-credential-pass names it.
    static func folderName(_ serverURL: String) -> String {
        folder + "/" + encode(Array(serverURL.utf8))
    }

    private static let alphabet = Array(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var output: [UInt8] = []
        var index = 0
        while index < bytes.count {
            let chunk = Array(bytes[index..<min(index + 3, bytes.count)])
            let value = chunk.enumerated().reduce(UInt32(0)) {
                $0 | UInt32($1.element) << (16 - 8 * UInt32($1.offset))
            }
            for position in 0..<4 {
                output.append(
                    position <= chunk.count
                        ? alphabet[Int(value >> (18 - 6 * UInt32(position)) & 63)] : UInt8(ascii: "="))
            }
            index += 3
        }
        return String(decoding: output, as: UTF8.self)
    }

    static func decode(_ text: String) -> String? {
        var value: UInt32 = 0
        var bits = 0
        var output: [UInt8] = []
        for byte in text.utf8 where byte != UInt8(ascii: "=") {
            guard let digit = alphabet.firstIndex(of: byte) else { return nil }
            value = value << 6 | UInt32(digit)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: value >> UInt32(bits)))
            }
        }
        return String(validating: output, as: UTF8.self)
    }

}
