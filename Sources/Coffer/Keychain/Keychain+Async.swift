#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The `async` variants: each runs its synchronous counterpart on a thread of its own, so that the
/// caller's actor (the main actor of an app) and Swift's cooperative threads never wait for gpg or git.
/// They behave exactly as the synchronous calls do; a cancelled task still finishes the call.
extension Keychain {
    /// Stores `password` as the item's first line, replacing any item; see `set(_:account:)`.
    public func set(_ password: String, account: String) async throws {
        try await Parallel.offload { try self.set(password, account: account) }
    }

    /// Stores `password` with a label and a comment; see `set(_:account:label:comment:)`.
    public func set(_ password: String, account: String, label: String?, comment: String?) async throws {
        try await Parallel.offload {
            try self.set(password, account: account, label: label, comment: comment)
        }
    }

    /// Stores `data` as the item's exact bytes; see `set(_:account:)`.
    public func set(_ data: Data, account: String) async throws {
        try await Parallel.offload { try self.set(data, account: account) }
    }

    /// Stores `secret` in the pass text format; see `set(_:account:)`.
    public func set(_ secret: Secret, account: String) async throws {
        try await Parallel.offload { try self.set(secret, account: account) }
    }

    /// Archives `value` and stores it; see `set(_:account:)`.
    public func set<Value: Encodable & Sendable>(_ value: Value, account: String) async throws {
        try await Parallel.offload { try self.set(value, account: account) }
    }

    /// Archives `value` with a label and a comment; see
    /// `set(_:account:label:comment:)`.
    public func set<Value: Encodable & Sendable>(
        _ value: Value, account: String, label: String?, comment: String?
    ) async throws {
        try await Parallel.offload { try self.set(value, account: account, label: label, comment: comment) }
    }

    /// Changes an item's label and comment; see `setAttributes(label:comment:account:)`.
    public func setAttributes(label: String?, comment: String?, account: String) async throws {
        try await Parallel.offload {
            try self.setAttributes(label: label, comment: comment, account: account)
        }
    }

    /// The item's password, or `nil`; see `password(account:)`.
    public func password(account: String) async throws -> String? {
        try await Parallel.offload { try self.password(account: account) }
    }

    /// The item's exact bytes, or `nil`; see `data(account:)`.
    public func data(account: String) async throws -> Data? {
        try await Parallel.offload { try self.data(account: account) }
    }

    /// The item parsed as a pass entry, or `nil`; see `secret(account:)`.
    public func secret(account: String) async throws -> Secret? {
        try await Parallel.offload { try self.secret(account: account) }
    }

    /// The item decoded as `type`, or `nil`; see `value(_:account:)`.
    public func value<Value: Decodable & Sendable>(_ type: Value.Type, account: String) async throws -> Value?
    {
        try await Parallel.offload { try self.value(type, account: account) }
    }

    /// The item of `account` with its label, comment and dates; see `item(account:)`.
    public func item(account: String) async throws -> Item? {
        try await Parallel.offload { try self.item(account: account) }
    }

    /// Every item of the service with its label, comment and dates; see `allItems()`.
    public func allItems() async throws -> [Item] {
        try await Parallel.offload { try self.allItems() }
    }

    /// Removes the item; see `remove(account:)`.
    public func remove(account: String) async throws {
        try await Parallel.offload { try self.remove(account: account) }
    }

    /// Removes every item of the service in one commit; see `removeAll()`.
    public func removeAll() async throws {
        try await Parallel.offload { try self.removeAll() }
    }

    /// Shares the service with `recipients`, re-encrypting its items; see `share(with:)`.
    public func share(with recipients: [String]) async throws {
        try await Parallel.offload { try self.share(with: recipients) }
    }
}
