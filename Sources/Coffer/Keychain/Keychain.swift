#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A keychain-style facade over a store: items are `<store>/<service>/<account>.gpg`.
///
/// ```swift
/// let keychain = try Keychain(service: "com.example.app")
/// try keychain.set("hunter2", account: "alice")
/// let password = try keychain.password(account: "alice")   // "hunter2"
/// ```
///
/// Reads return `nil` for a missing item and throw for real failures; `set` always replaces;
/// `remove` of a missing item is not an error. Items are ordinary pass entries, readable with
/// `pass show service/account` and `gpg -d`.
///
/// As with the keychain libraries for Apple platforms, subscripts read and write passwords and data,
/// items may carry a label and a comment (the fields `#label:` and `#comment:` of the entry, kept apart
/// from a stored value's own fields; an item holding data has none, see ``holdsText(_:)``), and
/// `allItems()` lists them with their dates:
///
/// ```swift
/// keychain["alice"] = "hunter2"                 // set(_:account:)
/// let password = keychain["alice"]              // String?
/// keychain["alice"] = nil                       // remove(account:)
/// try keychain.set("s3cret", account: "bob", label: "Work mail", comment: "IMAP")
/// for item in try keychain.allItems() { print(item.account, item.label ?? "", item.modified ?? "") }
/// ```
///
/// Every call that encrypts, decrypts or runs git has an `async` variant that runs it on a thread of
/// its own, so a program's main actor never waits for gpg.
public struct Keychain: Sendable {
    /// The service: a folder of the store, possibly nested (`web/github.com`).
    public let service: String
    /// The store holding the items.
    public let store: PasswordStore
    /// The error of the latest subscript access, shared by the copies of this keychain.
    private let subscriptFailure = Locked<(any Error)?>(nil)

    /// Opens the items of `service` in `store` (by default the store pass would use).
    ///
    /// - Throws: ``CofferError/Code/invalidName`` for an empty service or one that leaves the store.
    public init(service: String, store: PasswordStore = PasswordStore()) throws {
        try Self.validateService(service)
        self.service = EntryName.trimmed(service)
        self.store = store
    }

    // MARK: - Writing

    /// Stores `password` as the item's first line (`pass insert` format), replacing any item.
    ///
    /// - Throws: ``CofferError/Code/invalidArgument`` when `password` holds a line break; store such text
    ///   with `set(_:account:)` or as a ``Secret``.
    public func set(_ password: String, account: String) throws {
        guard !password.contains(where: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }) else {
            throw CofferError(.invalidArgument, "a password cannot contain a line break; store it as Data")
        }
        try write(SecureBytes(string: password + "\n"), account: account)
    }

    /// Stores `data` as the item's exact bytes, replacing any item.
    ///
    /// No call of the keychain changes them afterwards (see ``holdsText(_:)``).
    public func set(_ data: Data, account: String) throws {
        try write(SecureBytes(data), account: account)
    }

    /// Stores `secret` in the pass text format, replacing any item.
    public func set(_ secret: Secret, account: String) throws {
        try write(SecureBytes(secret.formatted()), account: account)
    }

    /// Archives `value` into the pass text format (see ``SecretEncoder``) and stores it, replacing any item.
    ///
    /// Some values are stored as the other `set` overloads store them, whatever their static type
    /// (an optional, or a generic caller's `Value`):
    /// - an optional that is `nil` removes the item, as assigning `nil` to a subscript does
    ///   (`let password: String? = nil; try keychain.set(password, account: "alice")`);
    /// - `Data` and `[UInt8]` are stored as the item's exact bytes, as by `set(_ data: Data, account:)`,
    ///   so that `data(account:)` and `gpg -d` give them back, and `value(_:account:)` reads them so;
    /// - a `String` is stored as by `set(_ password: String, account:)`.
    ///
    /// - Throws: `EncodingError` as ``SecretEncoder/encode(_:)`` does (never with the value in it), or
    ///   the errors of the overload the value is routed to.
    public func set<Value: Encodable>(_ value: Value, account: String) throws {
        if let optional = value as? any SecretOptional, optional.isSecretNil {
            try remove(account: account)
            return
        }
        if let password = value as? String, Self.isType(Value.self, String.self) {
            try set(password, account: account)
        } else if let data = Self.bytes(of: value) {
            try set(data, account: account)
        } else {
            try set(SecretEncoder().encode(value), account: account)
        }
    }

    /// Whether `type` is `wanted` or an optional of it. (A dynamic cast alone is not enough: an empty
    /// array of any element type casts to `[UInt8]`.)
    static func isType<Value, Wanted>(_ type: Value.Type, _ wanted: Wanted.Type) -> Bool {
        type == wanted || type == Wanted?.self
    }

    /// The bytes of a `Data` or `[UInt8]` value (or a non-`nil` optional of one), else `nil`.
    static func bytes<Value>(of value: Value) -> Data? {
        if let data = value as? Data, isType(Value.self, Data.self) { return data }
        if let bytes = value as? [UInt8], isType(Value.self, [UInt8].self) { return Data(bytes) }
        return nil
    }

    private func write(_ contents: SecureBytes, account: String) throws {
        let name = try itemName(account)
        try store.write(name, contents, commitMessage: "Add given password for \(name) to store.")
    }

    // MARK: - Reading

    /// The item's password (its first line), or `nil` when there is no such item.
    public func password(account: String) throws -> String? {
        try secret(account: account)?.password
    }

    /// The item's exact bytes, or `nil` when there is no such item.
    public func data(account: String) throws -> Data? {
        try read(account).map { contents in contents.withUnsafeBytes { Data($0) } }
    }

    /// The item parsed as a pass entry, or `nil` when there is no such item.
    public func secret(account: String) throws -> Secret? {
        try read(account).map { Secret(parsing: $0.bytes) }
    }

    /// The item decoded as `type` (see ``SecretDecoder``), or `nil` when there is no such item.
    ///
    /// Fields the type does not know are ignored, so people may add notes with `pass edit`; so are the
    /// keychain's own label and comment (see `setAttributes(label:comment:account:)`). `Data` and
    /// `[UInt8]` are the item's exact bytes, as `set(_:account:)` stores them.
    public func value<Value: Decodable>(_ type: Value.Type, account: String) throws -> Value? {
        if Value.self == Data.self { return try data(account: account) as! Value? }
        if Value.self == [UInt8].self { return try data(account: account).map { Array($0) } as! Value? }
        return try secret(account: account).map { try SecretDecoder().decode(type, from: $0) }
    }

    /// Whether the item exists; nothing is decrypted.
    public func contains(account: String) throws -> Bool {
        store.contains(try itemName(account))
    }

    private func read(_ account: String) throws -> SecureBytes? {
        let name = try itemName(account)
        guard store.contains(name) else { return nil }
        do {
            return try store.read(name)
        } catch let error as CofferError where error.code == .notFound {
            return nil
        }
    }

    // MARK: - One-time passwords

    /// The item's current one-time code, from its `otpauth://` URI (see ``Secret/oneTimePassword``), or
    /// `nil` when there is no such item or it holds no URI.
    ///
    /// A TOTP code is the one of `date`. For an HOTP key the counter is moved on first (see
    /// ``OneTimePassword/advanced()``), the item re-encrypted and, in a git store, committed with
    /// pass-otp's message `Increment HOTP counter for SERVICE/ACCOUNT.`, all under the store's lock; the
    /// code is the new counter's. Nothing is saved when the code cannot be made. An item holding data (see
    /// ``holdsText(_:)``) is never rewritten, so its HOTP counter cannot move.
    ///
    /// - Throws: ``OneTimePassword/ParseError`` for a malformed URI, ``OneTimePassword/CodeError`` when
    ///   its secret or parameters cannot be used, ``CofferError/Code/invalidArgument`` for an HOTP key in
    ///   an item holding data, or the store's errors (a failed commit included).
    public func oneTimeCode(account: String, at date: Date = Date()) throws -> String? {
        guard let contents = try read(account) else { return nil }
        try Self.refuseConflict(contents, account: account)
        guard let uri = contents.withUnsafeBytes({ OneTimePassword.uri(in: $0) }) else { return nil }
        let key = try OneTimePassword(uri: uri)
        guard key.kind == .hotp else { return try key.code(at: date) }
        let name = try itemName(account)
        var code: String?
        try store.update(name, commitMessage: "Increment HOTP counter for \(name).") { current in
            // Moving the counter rewrites the entry as pass-otp does (NULs dropped, final line breaks
            // folded), which data must never be.
            guard current.withUnsafeBytes({ Self.holdsText($0) }) else {
                throw CofferError(
                    .invalidArgument,
                    "\(name) holds data, not text ending with a line break, so its HOTP counter cannot move")
            }
            // Read again under the lock: another writer may have moved the counter meanwhile.
            try Self.refuseConflict(current, account: account)
            guard let uri = current.withUnsafeBytes({ OneTimePassword.uri(in: $0) }) else {
                throw CofferError(.notFound, "\(name) no longer holds an otpauth:// URI")
            }
            let key = try OneTimePassword(uri: uri)
            // A counter that cannot move on, or one below a counter this clone took, would hand out a
            // code already used.
            let next = try store.takeNextHOTPCounter(key).next
            // With SHA-1 whatever the URI says, as pass-otp (and `coffer otp`) make HOTP codes: one
            // counter, one code, from either.
            code = try next.code(counter: UInt64(bitPattern: next.counter ?? 0), algorithm: .sha1)
            var rewritten = current.withUnsafeBytes { next.replacingURIs(in: $0) }
            defer { rewritten.withUnsafeMutableBytes { wipeMemory($0.baseAddress, count: $0.count) } }
            return SecureBytes(rewritten)
        }
        return code
    }

    /// Refuses an item holding a merge conflict: the first of its keys may hand out a code already used.
    private static func refuseConflict(_ contents: SecureBytes, account: String) throws {
        guard contents.withUnsafeBytes({ EntryMerge.containsConflict($0) }) else { return }
        throw CofferError(
            .format,
            "\(Quoting.quoted(account)) holds a merge conflict; resolve it before using its one-time code")
    }

    // MARK: - Removing and listing

    /// Removes the item; removing a missing item does nothing.
    public func remove(account: String) throws {
        let name = try itemName(account)
        guard store.contains(name) else { return }
        try store.remove(name, recursive: false)
    }

    /// Removes every item of the service (not those of nested services), as one git commit.
    public func removeAll() throws {
        let accounts = try accounts()
        guard !accounts.isEmpty else { return }
        try store.remove(
            entries: try accounts.map(itemName),
            commitMessage:
                "Remove \(accounts.count == 1 ? "1 item" : "\(accounts.count) items") of \(service) "
                + "from store.")
    }

    /// The accounts of the service, in byte order; nested services are not included.
    public func accounts() throws -> [String] {
        guard store.isFolder(service) else { return [] }
        return try store.list(service).children.filter { $0.kind == .entry }.map(\.displayName)
    }

    // MARK: - Subscripts

    /// The password of `account` (its first line); assigning stores a password, assigning `nil` removes
    /// the item.
    ///
    /// A subscript cannot throw: a read that fails returns `nil` and a write that fails changes nothing,
    /// and either records its error in ``subscriptError``. Use `password(account:)`,
    /// `set(_:account:)` and `remove(account:)` to get errors thrown.
    public subscript(account: String) -> String? {
        get { recordingFailure { try password(account: account) } ?? nil }
        nonmutating set {
            recordingFailure {
                if let newValue { try set(newValue, account: account) } else { try remove(account: account) }
            }
        }
    }

    /// The exact bytes of `account`; assigning stores data, assigning `nil` removes the item.
    ///
    /// Failures are recorded in ``subscriptError``, as for ``subscript(_:)``.
    public subscript(data account: String) -> Data? {
        get { recordingFailure { try data(account: account) } ?? nil }
        nonmutating set {
            recordingFailure {
                if let newValue { try set(newValue, account: account) } else { try remove(account: account) }
            }
        }
    }

    /// The password of `account`, as ``subscript(_:)`` (spelled as KeychainAccess spells it).
    public subscript(string account: String) -> String? {
        get { self[account] }
        nonmutating set { self[account] = newValue }
    }

    /// The item of `account` with its label, comment and dates, or `nil` when there is none or reading
    /// it fails (the error is recorded in ``subscriptError``); see `item(account:)`.
    public subscript(attributes account: String) -> Item? {
        recordingFailure { try item(account: account) } ?? nil
    }

    /// The error of the latest subscript read or write made through this keychain or a copy of it, or
    /// `nil` when that access succeeded.
    public var subscriptError: (any Error)? {
        subscriptFailure.withLock { $0 }
    }

    private func recordingFailure<Result>(_ body: () throws -> Result) -> Result? {
        do {
            let result = try body()
            subscriptFailure.withLock { $0 = nil }
            return result
        } catch {
            subscriptFailure.withLock { $0 = error }
            return nil
        }
    }

    // MARK: - Sharing

    /// Shares the service with `recipients` (the keychain's access groups): writes the service folder's
    /// own `.gpg-id` and re-encrypts its items for them. Other items of the store are untouched.
    public func share(with recipients: [String]) throws {
        guard !recipients.isEmpty, !recipients.contains(where: \.isEmpty) else {
            throw CofferError(.invalidArgument, "share(with:) needs at least one recipient")
        }
        try store.initialize(recipients: recipients, subfolder: service)
    }

    /// The recipients the service's items are encrypted to (from the nearest `.gpg-id`).
    public func recipients() throws -> [String] {
        try store.recipients(forFolder: service).ids
    }

    // MARK: - Names

    /// The entry name of `account`, after checking it is one usable path component.
    func itemName(_ account: String) throws -> String {
        try Self.validateAccount(account)
        return service + "/" + account
    }

    /// Checks an account name: one path component, not empty, no `/`, NUL or other control character,
    /// no leading `-` or `.`, at most 251 bytes (so that `<account>.gpg` fits the 255-byte file-name
    /// limit).
    ///
    /// A name starting with `.` (`.`, `..`, `.env`) is refused because pass, `accounts()` and
    /// `removeAll()` skip hidden files: such an item could be neither listed nor removed with the rest.
    public static func validateAccount(_ account: String) throws {
        func refuse(_ why: String) -> CofferError {
            CofferError(.invalidName, "invalid account name: \(why)")
        }
        if account.isEmpty { throw refuse("it is empty") }
        if account.utf8.first == UInt8(ascii: ".") {
            throw refuse("it starts with '.' (hidden files are not items: pass does not list them)")
        }
        if account.utf8.contains(0x2F) { throw refuse("it contains '/'") }
        if account.utf8.contains(0) { throw refuse("it contains a NUL byte") }
        if account.utf8.contains(where: { $0 < 0x20 || $0 == 0x7f }) {
            throw refuse("it contains a control character")
        }
        if account.utf8.first == UInt8(ascii: "-") { throw refuse("it starts with '-'") }
        if account.utf8.count > 251 { throw refuse("it is longer than 251 bytes") }
    }

    /// Checks a service name: a relative folder path whose components are not empty and do not start
    /// with `-` or `.`.
    ///
    /// A component starting with `.` (`.`, `..`, `.git`, any hidden folder) is refused: items there would
    /// go into git's own folder or be hidden from pass, `accounts()` and `removeAll()`.
    public static func validateService(_ service: String) throws {
        let trimmed = EntryName.trimmed(service)
        let components = trimmed.utf8.split(separator: 0x2F, omittingEmptySubsequences: false).map {
            String(decoding: $0, as: UTF8.self)
        }
        if trimmed.isEmpty || trimmed.startsWithSlash || components.contains(where: \.isEmpty) {
            throw CofferError(.invalidName, "invalid service name: '\(service)' has an empty component")
        }
        if components.contains(where: { $0.utf8.first == UInt8(ascii: ".") }) {
            throw CofferError(
                .invalidName,
                "invalid service name: '\(service)' has a component starting with '.' (hidden folders and "
                    + ".git hold no items)")
        }
        if components.contains(where: { $0.utf8.first == UInt8(ascii: "-") })
            || trimmed.utf8.contains(where: { $0 < 0x20 || $0 == 0x7f })
        {
            throw CofferError(.invalidName, "invalid service name: '\(service)'")
        }
        if components.contains(where: { $0.utf8.count > 255 }) {
            throw CofferError(.invalidName, "invalid service name: a component is longer than 255 bytes")
        }
    }
}

extension PasswordStore {
    /// The services of the store: every folder that directly holds an entry, in byte order.
    public func services() throws -> [String] {
        guard FileSystem.isDirectory(root) else { return [] }
        var result: Set<String> = []
        for name in try allEntries() {
            let folder = Self.folder(of: name)
            if !folder.isEmpty { result.insert(folder) }
        }
        return result.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }
}
