/// git's credential-helper protocol over the store: what `git-credential-coffer get|store|erase` does.
///
/// A credential is an ordinary entry, `git-credentials/HOST/USERNAME` (with git's
/// `credential.useHttpPath`, `git-credentials/HOST/PATH/USERNAME`; `HOST` keeps its `:PORT`): the password
/// on line 1, then `login: USERNAME` and `url: PROTOCOL://HOST/PATH`, as people and browser extensions
/// read entries.
package struct GitCredentials: Sendable {
    /// The folder of the store that holds git's credentials.
    package static let folder = "git-credentials"

    /// The store.
    package let store: PasswordStore

    /// Credentials kept in `store`.
    package init(store: PasswordStore) {
        self.store = store
    }

    /// One request or answer of git's protocol: `key=value` lines.
    package struct Request: Sendable {
        /// The attributes git sent, by name (the last of a repeated name wins).
        package var attributes: [String: String] = [:]

        /// Parses git's lines (up to an empty line or the end); lines without `=` are left out. Lines
        /// end at a line feed, a carriage return before it included (Swift takes CR LF as one
        /// character, which a split on "\n" never finds).
        package init(parsing text: String) {
            let lines = text.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map {
                let bytes = $0.last == UInt8(ascii: "\r") ? $0.dropLast() : $0
                return Substring(decoding: bytes, as: UTF8.self)
            }
            for line in lines {
                if line.isEmpty { break }
                guard let equals = line.firstIndex(of: "=") else { continue }
                attributes[String(line[..<equals])] = String(line[line.index(after: equals)...])
            }
            // git may send a whole URL instead of its parts.
            if let url = attributes["url"], attributes["host"] == nil, let scheme = url.firstRange(of: "://")
            {
                attributes["protocol"] = attributes["protocol"] ?? String(url[..<scheme.lowerBound])
                let rest = url[scheme.upperBound...]
                let slash = rest.firstIndex(of: "/") ?? rest.endIndex
                var host = String(rest[..<slash])
                if let at = host.lastIndex(of: "@") {
                    // `user:password@host`: the password is never part of a name.
                    let userinfo = host[..<at]
                    let colon = userinfo.firstIndex(of: ":")
                    let user = URIText.decode(String(userinfo[..<(colon ?? userinfo.endIndex)]))
                    if attributes["username"] == nil { attributes["username"] = user }
                    if let colon, attributes["password"] == nil {
                        attributes["password"] = URIText.decode(
                            String(userinfo[userinfo.index(after: colon)...]))
                    }
                    host = String(host[host.index(after: at)...])
                }
                attributes["host"] = host
                if slash < rest.endIndex { attributes["path"] = String(rest[rest.index(after: slash)...]) }
            }
        }

        /// An attribute, `nil` when absent or empty.
        package subscript(_ name: String) -> String? {
            attributes[name].flatMap { $0.isEmpty ? nil : $0 }
        }
    }

    /// What `get` answers: the username and password, or `nil` when nothing matches.
    ///
    /// With a username, that entry; without one, the only entry of the host (and path): with several,
    /// none, so that git asks for a username and comes back with it.
    package func get(_ request: Request) throws -> (username: String, password: SecureBytes)? {
        guard let folder = try folderName(request) else { return nil }
        let candidates: [String]
        if let username = request["username"] {
            guard EntryName.isPlainPart(username) else { return nil }
            candidates = store.contains(folder + "/" + username) ? [username] : []
        } else if store.isFolder(folder) {
            let names = try store.list(folder).children.filter { $0.kind == .entry }.map(\.displayName)
            candidates = names.count == 1 ? names : []
        } else {
            candidates = []
        }
        guard let username = candidates.first else { return nil }
        let secret = Secret(parsing: try store.read(folder + "/" + username).withUnsafeBytes { Array($0) })
        // An entry made for another protocol (http against https) is not given out.
        if Self.isForAnotherProtocol(secret, request) { return nil }
        return (secret.field("login") ?? username, SecureBytes(secret.passwordBytes))
    }

    /// What `store` does: saves the credential git has just used, unless the entry already holds it (git
    /// stores after every successful use, which must not make a commit each time). Returns whether it
    /// wrote.
    ///
    /// - Throws: ``CofferError`` when git sent a credential that cannot be kept as an entry (a host,
    ///   path part or username that cannot be one part of a name, a password with a line break), so
    ///   that the helper fails rather than seem to have kept it.
    @discardableResult
    package func store(_ request: Request) throws -> Bool {
        // git stores what it has just used; without a host, username and password there is nothing.
        guard request["host"] != nil, let username = request["username"],
            let password = request.attributes["password"], !password.isEmpty
        else { return false }
        guard let folder = try folderName(request) else {
            throw CofferError(
                .invalidName,
                "cannot keep this credential: its host or path has a part that cannot be part of an entry name"
            )
        }
        guard EntryName.isPlainPart(username) else {
            throw CofferError(
                .invalidName,
                "cannot keep this credential: its username cannot be part of an entry name "
                    + "(it has a '/' or a control character, or is '.' or '..')")
        }
        guard !password.contains("\n") && !password.contains("\r") else {
            throw CofferError(
                .invalidName,
                "cannot keep this credential: its password has a line break (line 1 of an entry)")
        }
        let name = folder + "/" + username
        var secret = Secret(parsing: [])
        if store.contains(name) {
            secret = Secret(parsing: try store.read(name).withUnsafeBytes { Array($0) })
            // The entry of another protocol (https, when git stores for http) is kept: nothing is written.
            if Self.isForAnotherProtocol(secret, request) { return false }
            if Self.sameBytes(secret.password, password) && secret.field("login") == username
                && secret.field("url") == url(request)
            {
                return false
            }
        }
        try secret.setPassword(password)
        try secret.setField("login", username)
        try secret.setField("url", url(request))
        var bytes = secret.formatted()
        if bytes.last != UInt8(ascii: "\n") { bytes.append(UInt8(ascii: "\n")) }
        try store.write(name, SecureBytes(bytes))
        return true
    }

    /// What `erase` does: removes the entry git says failed, only when it holds the password git sent (an
    /// erase for a password that has since been changed leaves the new one alone). Returns whether it
    /// removed.
    @discardableResult
    package func erase(_ request: Request) throws -> Bool {
        guard let folder = try folderName(request), let username = request["username"],
            let password = request.attributes["password"], EntryName.isPlainPart(username)
        else { return false }
        let name = folder + "/" + username
        guard store.contains(name) else { return false }
        let secret = Secret(parsing: try store.read(name).withUnsafeBytes { Array($0) })
        guard !Self.isForAnotherProtocol(secret, request), Self.sameBytes(secret.password, password) else {
            return false
        }
        try store.remove(name, recursive: false)
        return true
    }

    /// `git-credentials/HOST[/PATH]`, or `nil` without a host; a host or path that would leave the
    /// folder (`..`, an absolute path) is refused.
    private func folderName(_ request: Request) throws -> String? {
        guard let host = request["host"], EntryName.isPlainPart(host) else { return nil }
        var name = Self.folder + "/" + host
        if let path = request["path"] {
            let parts = path.pathParts
            guard parts.allSatisfy(EntryName.isPlainPart) else { return nil }
            if !parts.isEmpty { name += "/" + parts.joined(separator: "/") }
        }
        try EntryName.validate(name)
        return name
    }

    /// Whether the entry's `url:` names another protocol than the request (http against https).
    private static func isForAnotherProtocol(_ secret: Secret, _ request: Request) -> Bool {
        guard let url = secret.field("url"), let wanted = request["protocol"],
            let scheme = url.firstRange(of: "://")
        else { return false }
        return url[..<scheme.lowerBound].lowercased() != wanted.lowercased()
    }

    /// Whether two passwords are the same bytes (Swift's `==` takes canonically equivalent texts as
    /// equal, which two passwords are not).
    private static func sameBytes(_ one: String?, _ other: String) -> Bool {
        one.map { $0.utf8.elementsEqual(other.utf8) } ?? false
    }

    /// `PROTOCOL://HOST[/PATH]`, for the entry's `url:` field.
    private func url(_ request: Request) -> String {
        let path = request["path"].map { "/" + $0 } ?? ""
        return (request["protocol"] ?? "https") + "://" + (request["host"] ?? "") + path
    }

}
