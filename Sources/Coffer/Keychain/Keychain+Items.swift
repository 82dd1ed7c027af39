#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension Keychain {
    /// One item of a keychain: its account, label, comment and dates.
    public struct Item: Sendable, Hashable {
        /// The account: the entry's name inside the service folder.
        public var account: String
        /// The value of the entry's `#label:` field (``Keychain/labelKey``), exactly as given to `set` or
        /// `setAttributes`, or `nil` when it has none or holds data (see ``Keychain/holdsText(_:)``). A
        /// stored value's own `label` property is not it.
        public var label: String?
        /// The value of the entry's `#comment:` field (``Keychain/commentKey``), exactly as given, or `nil`
        /// when it has none or holds data. A stored value's own `comment` property is not it.
        public var comment: String?
        /// When the item was created: the author date of the commit that added the file (since it was
        /// last removed), or `nil` when the store is not a git repository or the file is not committed.
        public var created: Date?
        /// When the item last changed: the author date of the last commit that changed the file, else the
        /// file's modification time.
        public var modified: Date?

        /// Creates an item description.
        public init(
            account: String, label: String? = nil, comment: String? = nil, created: Date? = nil,
            modified: Date? = nil
        ) {
            self.account = account
            self.label = label
            self.comment = comment
            self.created = created
            self.modified = modified
        }
    }

    /// The field key that holds an item's label: `#label`.
    ///
    /// The key starts with `#`, so it can never be a stored value's own field: the archive writes a key
    /// component starting with `#` in quotes (`"#label"`), and decoding skips fields whose key starts
    /// with `#`. A value may therefore have `label` and `comment` properties of its own, and the
    /// keychain's label and comment neither change them nor show up in them.
    public static let labelKey = "#label"
    /// The field key that holds an item's comment: `#comment` (see ``labelKey``).
    public static let commentKey = "#comment"

    /// Whether an item's bytes are text, which may carry a label and a comment: UTF-8 without a NUL,
    /// ending with a line break.
    ///
    /// Any other item holds data, such as what `set(_ data: Data, account:)` stores, and the keychain keeps
    /// its bytes exactly: it has no label or comment, `setAttributes(label:comment:account:)` refuses to
    /// give it one, and `oneTimeCode(account:at:)` does not move an HOTP counter in it. (A label would add
    /// a line, and for bytes without a final line break a line break too; a line of data that looks like
    /// `#label: ...` is not a label.)
    public static func holdsText(_ bytes: some BidirectionalCollection<UInt8>) -> Bool {
        bytes.last == SecretSyntax.newline && !bytes.contains(0)
            && String(validating: bytes, as: UTF8.self) != nil
    }

    /// Whether a parsed item is text (see ``holdsText(_:)``).
    static func holdsText(_ secret: Secret) -> Bool {
        var bytes = secret.formatted()
        defer { bytes.withUnsafeMutableBytes { wipeMemory($0.baseAddress, count: $0.count) } }
        return holdsText(bytes)
    }

    // MARK: - Writing with attributes

    /// Stores `password` with a label and a comment, replacing any item:
    /// `password`, then `#label: ...` and `#comment: ...` (left out when `nil`).
    ///
    /// - Throws: ``CofferError/Code/invalidArgument`` when `password` holds a line break, or when the
    ///   label or comment cannot be a field value (it starts with a blank or has a carriage return at
    ///   the end of a line).
    public func set(_ password: String, account: String, label: String?, comment: String?) throws {
        guard !password.contains(where: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }) else {
            throw CofferError(.invalidArgument, "a password cannot contain a line break; store it as Data")
        }
        var secret = try Secret(password: password)
        try Self.setAttributes(of: &secret, label: label, comment: comment, replacing: false)
        try set(secret, account: account)
    }

    /// Archives `value` (see ``SecretEncoder``) with a label and a comment and stores it, replacing any
    /// item: the value's fields, then `#label: ...` and `#comment: ...` (left out when `nil`).
    ///
    /// The label and comment are kept apart from the value: a value with `label` or `comment` properties
    /// of its own keeps them, and `value(_:account:)` never reads the label or comment into it.
    ///
    /// - Throws: `EncodingError` as ``SecretEncoder/encode(_:)`` does; ``CofferError/Code/invalidArgument``
    ///   when the label or comment cannot be a field value, when `value` is a `nil` optional (there is
    ///   nothing to label; use `remove(account:)`), or when it is `Data` or `[UInt8]` with a label or
    ///   comment (those are stored as the item's exact bytes, which have no fields).
    public func set<Value: Encodable>(_ value: Value, account: String, label: String?, comment: String?)
        throws
    {
        if let optional = value as? any SecretOptional, optional.isSecretNil {
            throw CofferError(
                .invalidArgument,
                "a nil value cannot be stored with a label or comment; remove the item instead")
        }
        if Self.bytes(of: value) != nil {
            guard label == nil && comment == nil else {
                throw CofferError(
                    .invalidArgument,
                    "data is stored as the item's exact bytes and cannot carry a label or comment")
            }
            return try set(value, account: account)
        }
        var secret = try SecretEncoder().encode(value)
        try Self.setAttributes(of: &secret, label: label, comment: comment, replacing: false)
        try set(secret, account: account)
    }

    /// Changes the label and comment of an existing item, keeping every other line: a `nil` removes the
    /// field. Nothing is written when they are already so.
    ///
    /// Only the `#label:` and `#comment:` fields (``labelKey``, ``commentKey``) are touched; a stored
    /// value's own `label` or `comment` fields are left as they are. An item holding data (see
    /// ``holdsText(_:)``) is never rewritten: it has neither, so clearing both does nothing, and a label or
    /// comment is refused.
    ///
    /// - Throws: ``CofferError/Code/notFound`` when there is no such item;
    ///   ``CofferError/Code/invalidArgument`` when a value cannot be a field value, or when the item holds
    ///   data and a label or comment is given.
    public func setAttributes(label: String?, comment: String?, account: String) throws {
        let name = try itemName(account)
        // Ends the update without a write.
        struct Unchanged: Error {}
        do {
            try store.update(name, commitMessage: "Edit \(name) in store.") { contents in
                guard contents.withUnsafeBytes({ Self.holdsText($0) }) else {
                    guard label == nil && comment == nil else {
                        throw CofferError(
                            .invalidArgument,
                            "\(name) holds data, not text ending with a line break, so it cannot carry a "
                                + "label or comment: they would change its bytes")
                    }
                    throw Unchanged()
                }
                var secret = Secret(parsing: contents.bytes)
                let before = secret
                try Self.setAttributes(of: &secret, label: label, comment: comment, replacing: true)
                guard secret != before else { throw Unchanged() }
                return SecureBytes(secret.formatted())
            }
        } catch is Unchanged {
            return
        }
    }

    private static func setAttributes(
        of secret: inout Secret, label: String?, comment: String?, replacing: Bool
    ) throws {
        for (key, value) in [(labelKey, label), (commentKey, comment)] {
            guard let value else {
                if replacing { secret.removeField(key) }
                continue
            }
            let name = key.dropFirst()  // "label", "comment"
            if !replacing && secret.field(key) != nil {
                throw CofferError(.invalidArgument, "the entry already has a field '\(key)'")
            }
            do {
                try secret.setField(key, value)
            } catch let error as CofferError {
                throw CofferError(.invalidArgument, "the \(name) cannot be stored: \(error.message)")
            }
        }
    }

    // MARK: - Listing items

    /// The item of `account` with its label, comment and dates, or `nil` when there is no such item.
    public func item(account: String) throws -> Item? {
        guard let secret = try secret(account: account) else { return nil }
        let dates = try itemDates()
        return makeItem(account: account, secret: secret, dates: dates)
    }

    /// Every item of the service (not of nested services) with its label, comment and dates, in the
    /// order of `accounts()`.
    ///
    /// Each item is decrypted to read its label and comment (on all processors); the dates come from one
    /// `git log` when the store is a git repository.
    public func allItems() throws -> [Item] {
        let accounts = try accounts()
        guard !accounts.isEmpty else { return [] }
        let dates = try itemDates()
        var items: [Item] = []
        let keychain = self
        try Parallel.forEach(accounts) { account in
            try keychain.secret(account: account)
        } consume: { index, result in
            // An item removed meanwhile is left out.
            guard let secret = try result.get() else { return }
            items.append(makeItem(account: accounts[index], secret: secret, dates: dates))
        }
        return items
    }

    private func makeItem(account: String, secret: Secret, dates: ItemDates) -> Item {
        let path = store.entryPath(service + "/" + account)
        var item = Item(account: account)
        if Self.holdsText(secret) {
            item.label = secret.field(Self.labelKey)
            item.comment = secret.field(Self.commentKey)
        }
        if let committed = dates.committed[dates.repository?.pathspec(path) ?? ""] {
            item.created = Date(timeIntervalSince1970: TimeInterval(committed.added))
            item.modified = Date(timeIntervalSince1970: TimeInterval(committed.changed))
        } else {
            item.modified = Self.modificationTime(path)
        }
        return item
    }

    /// The dates git knows for the service's files.
    private struct ItemDates {
        var repository: GitRepository?
        var committed: [String: (added: Int, changed: Int)] = [:]
    }

    private func itemDates() throws -> ItemDates {
        let folder = store.root + "/" + service
        guard let repository = store.git(for: folder + "/.") else { return ItemDates() }
        // A repository without commits has no dates yet.
        guard repository.resolve("HEAD") != nil else { return ItemDates(repository: repository) }
        return ItemDates(
            repository: repository, committed: try repository.fileDates(under: repository.pathspec(folder)))
    }

    private static func modificationTime(_ path: String) -> Date? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        #if canImport(Darwin)
            let time = status.st_mtimespec
        #else
            let time = status.st_mtim
        #endif
        return Date(timeIntervalSince1970: TimeInterval(time.tv_sec) + TimeInterval(time.tv_nsec) / 1e9)
    }
}
