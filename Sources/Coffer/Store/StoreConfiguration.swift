#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The settings pass reads from its environment, gathered once.
public struct StoreConfiguration: Sendable, Equatable {
    /// The store's root folder, without a trailing slash.
    public var root: String
    /// `PASSWORD_STORE_KEY`: recipients that override every `.gpg-id`.
    public var keyOverride: [String]?
    /// `PASSWORD_STORE_UMASK` (default 077).
    public var umask: mode_t
    /// `PASSWORD_STORE_SIGNING_KEY`: fingerprints that must have signed each `.gpg-id`.
    public var signingKeys: [String]
    /// `PASSWORD_STORE_GPG_OPTS`, as far as the engine can apply it.
    public var gpgOptions: GPGOptions
    /// How long a writer waits for the store lock, in seconds (`COFFER_LOCK_TIMEOUT`, default 120).
    public var lockTimeout: Double = 120
    /// The environment child processes (git) get; `nil` means this process's own.
    public var environment: [String: String]?
    /// The name messages give the command line in advice (`coffer recipients accept ...`); the command
    /// line sets it to the name it was called by (`pass`, when installed as pass).
    public var program = "coffer"

    /// Creates a configuration from explicit values.
    public init(
        root: String, keyOverride: [String]? = nil, umask: mode_t = 0o077, signingKeys: [String] = [],
        gpgOptions: GPGOptions = GPGOptions()
    ) {
        self.root = Self.normalised(root)
        self.keyOverride = keyOverride
        self.umask = umask
        self.signingKeys = signingKeys
        self.gpgOptions = gpgOptions
    }

    /// Reads the configuration from `environment` (by default this process's), as pass does.
    public init(environment: [String: String]? = nil) {
        let given = environment
        let environment = environment ?? Self.processEnvironment()
        let home = environment["HOME"] ?? "/"
        let root =
            environment["PASSWORD_STORE_DIR"].flatMap { $0.isEmpty ? nil : $0 } ?? home + "/.password-store"
        let keys = environment["PASSWORD_STORE_KEY"].map {
            $0.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).map(String.init)
        }
        // Empty counts as unset, as pass's `${PASSWORD_STORE_UMASK:-077}` takes it.
        let umaskText = environment["PASSWORD_STORE_UMASK"].flatMap { $0.isEmpty ? nil : $0 } ?? "077"
        var gpgOptions = GPGOptions(parsing: environment["PASSWORD_STORE_GPG_OPTS"] ?? "")
        gpgOptions.directDecryption = environment["COFFER_DIRECT_DECRYPT"] != "0"
        self.init(
            root: root,
            keyOverride: keys.flatMap { $0.isEmpty ? nil : $0 },
            umask: Self.umask(umaskText),
            signingKeys: Self.signingKeys(environment["PASSWORD_STORE_SIGNING_KEY"] ?? ""),
            gpgOptions: gpgOptions)
        self.environment = given
        self.lockTimeout = environment["COFFER_LOCK_TIMEOUT"].flatMap(Double.init) ?? 120
    }

    /// `PASSWORD_STORE_UMASK` as bash's `umask` takes it: one to four octal digits, at most 0777. For
    /// anything else bash refuses it and pass keeps the process's mask (022, often: entries every user
    /// may read); coffer keeps 077, its default, unless the process's own mask is stricter still.
    static func umask(_ text: String) -> mode_t {
        if (1...4).contains(text.utf8.count), text.utf8.allSatisfy({ (48...55).contains($0) }),
            let value = mode_t(text, radix: 8), value <= 0o777
        {
            return value
        }
        return inheritedUmask() | 0o077
    }

    /// `PASSWORD_STORE_SIGNING_KEY`'s keys. Set to blanks only, it is set all the same, as pass's
    /// `[[ -n $PASSWORD_STORE_SIGNING_KEY ]]` takes it: signatures are required, and none is good.
    static func signingKeys(_ text: String) -> [String] {
        let keys = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).map(String.init)
        return keys.isEmpty && !text.isEmpty ? [text] : keys
    }

    /// The mode of files the store writes.
    public var fileMode: mode_t { 0o666 & ~umask }
    /// The mode of folders the store creates.
    public var folderMode: mode_t { 0o777 & ~umask }

    /// This process's environment as a dictionary.
    package static func processEnvironment() -> [String: String] {
        ChildProcess.dictionary(ChildProcess.currentEnvironment())
    }

    private static func normalised(_ path: String) -> String {
        var path = path
        while path.utf8.count > 1 && path.endsWithSlash { path = path.withoutLastSlash }
        return path
    }
}

/// The process's file mode mask, read without changing it (two calls: the system has no other way).
private func inheritedUmask() -> mode_t {
    let inherited = umask(0o077)
    umask(inherited)
    return inherited
}
