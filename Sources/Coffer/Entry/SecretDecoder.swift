#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Decodes `Decodable` values from entries in pass's format, as ``SecretEncoder`` writes them.
///
/// The top-level property named ``passwordKey`` reads line 1; every other property reads the
/// first field with its key (`address.city` for nested values, `servers.0.host` for an element of
/// an array). A key component matches one spelled the same (even when its value is `~`), else one that
/// differs only in case, unless the type has a key of that exact spelling (then the field is that
/// key's). An array reads the fields under its indexes (`servers.0`, `servers.1`, ...) in numeric order,
/// or, when there are none, every field with its key in order. A missing field, or `~`, decodes as `nil`
/// for an optional property; a missing field throws `DecodingError.keyNotFound` otherwise, for arrays,
/// dictionaries and structs too (the encoder writes `[]` and `{}` for empty ones): only a type that
/// asks whether it is `nil` through a single value container, as `Optional` does, decodes from absence.
/// A class's superclass part, read with `superDecoder()` at the top level, reads its password from
/// line 1, as ``SecretEncoder`` writes it.
///
/// Decoding is lenient with what people add by hand: fields the type does not know, fields whose key
/// starts with `#` (comments), blank lines, free text and `otpauth://` lines are ignored; blanks around
/// keys, key components and the colon are ignored; a `[]` line among an array's fields is skipped;
/// in a dictionary of single values, `github.com: token` reads as the key `github.com`. Values are read
/// leniently too: blanks around numbers, dates and base64 are ignored, `Bool` accepts `true`/`false`,
/// `yes`/`no`, `on`/`off` and `1`/`0` in any case, and dates accept any ISO 8601 offset (`+02:00`)
/// or none (UTC). Where a value cannot be `nil`, `~` is the text `~`.
public struct SecretDecoder: Sendable {
    /// The top-level key whose value is read from line 1 instead of from a field.
    public var passwordKey: String
    /// Values made available to `init(from:)` implementations through `Decoder.userInfo`.
    public var userInfo: [CodingUserInfoKey: any Sendable] = [:]

    /// Creates a decoder that reads the top-level `passwordKey` from line 1.
    public init(passwordKey: String = "password") {
        self.passwordKey = passwordKey
    }

    /// Decodes a value of `type` from `secret`.
    ///
    /// A single value type (a `String`, say) decodes from the password.
    ///
    /// - Throws: `DecodingError` when a required field is missing or a field's text is not a
    ///   valid value of its type, with a `debugDescription` naming the field.
    public func decode<T: Decodable>(_ type: T.Type, from secret: Secret) throws -> T {
        let source = SecretDecodingSource(
            secret: secret,
            passwordKey: passwordKey,
            userInfo: userInfo.mapValues { $0 as Any }
        )
        if T.self is any SecretScalar.Type {
            return try source.scalar(T.self, from: source.password, name: "password (line 1)", path: [])
        }
        return try T(from: SecretDecodingWorker(source: source, position: .top, codingPath: [], type: T.self))
    }

    /// Decodes a value of `type` from the bytes of an entry.
    ///
    /// The same as `decode(type, from: Secret(parsing: bytes))`.
    ///
    /// - Throws: `DecodingError`, as ``decode(_:from:)-(_,Secret)`` does.
    public func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        try decode(type, from: Secret(parsing: bytes))
    }
}

/// The parsed entry every container of one decoding reads from.
final class SecretDecodingSource {
    let password: String
    let root: SecretFieldNode
    let passwordKey: String
    let userInfo: [CodingUserInfoKey: Any]

    init(secret: Secret, passwordKey: String, userInfo: [CodingUserInfoKey: Any]) {
        password = secret.password
        root = SecretFieldNode(fields: secret.fields)
        self.passwordKey = passwordKey
        self.userInfo = userInfo
    }

    /// The fields under the top-level password key (for a password that is an object or an array).
    var passwordNode: SecretFieldNode? { root.exactChild(passwordKey) }

    /// Decodes a single value of `type` from the text `text` (line 1, or a field's text unescaped).
    func scalar<T: Decodable>(_ type: T.Type, from text: String, name: String, path: [any CodingKey]) throws
        -> T
    {
        guard let scalarType = T.self as? any SecretScalar.Type else {
            preconditionFailure("scalar(_:from:name:path:) is only called for single value types")
        }
        guard let value = scalarType.parseSecretText(text) else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: path,
                    debugDescription: "The field \"\(name)\" does not hold a valid \(T.self): expected "
                        + "\(scalarType.secretTextExample)."
                )
            )
        }
        return value as! T
    }

    /// Decodes a `T` from the field node `node` (the key `name`).
    func decode<T: Decodable>(_ type: T.Type, at node: SecretFieldNode?, name: String, path: [any CodingKey])
        throws
        -> T
    {
        guard T.self is any SecretScalar.Type else {
            return try T(
                from: SecretDecodingWorker(
                    source: self, position: .node(node, name: name), codingPath: path, type: T.self))
        }
        guard let written = node?.lines.first else {
            throw DecodingError.keyNotFound(
                path.last ?? SecretCodingKey(stringValue: name),
                DecodingError.Context(
                    codingPath: path, debugDescription: "The entry has no field \"\(name)\".")
            )
        }
        return try scalar(T.self, from: SecretArchive.unescapedValue(written), name: name, path: path)
    }

    /// Decodes a `T` from one field text of an array written as repeated fields.
    func decode<T: Decodable>(_ type: T.Type, written: String, name: String, path: [any CodingKey]) throws
        -> T
    {
        guard T.self is any SecretScalar.Type else {
            return try T(
                from: SecretDecodingWorker(
                    source: self, position: .value(written, name: name), codingPath: path, type: T.self))
        }
        return try scalar(T.self, from: SecretArchive.unescapedValue(written), name: name, path: path)
    }

    /// The key `child` continues `name` with, for messages.
    static func name(_ name: String, _ child: String) -> String {
        let component = SecretArchive.quotedComponent(child)
        return name.isEmpty ? component : name + "." + component
    }
}

/// The `Decoder` handed to `init(from:)`.
struct SecretDecodingWorker: Decoder {
    enum Position {
        /// The whole entry.
        case top
        /// The top-level password key: line 1 for a single value, else the fields under the key.
        case password
        /// The fields at or under a key (`nil` when the entry has none).
        case node(SecretFieldNode?, name: String)
        /// One element of an array written as repeated fields.
        case value(String, name: String)
    }

    let source: SecretDecodingSource
    let position: Position
    let codingPath: [any CodingKey]
    /// Whether keyed containers here also read dotted keys as one key (a dictionary of single values).
    let flatKeys: Bool
    /// Whether this is the superclass part of the top-level value (`superDecoder()`), whose password
    /// key reads line 1 as the top level's does.
    let isTopSuper: Bool

    var userInfo: [CodingUserInfoKey: Any] { source.userInfo }

    init(
        source: SecretDecodingSource, position: Position, codingPath: [any CodingKey], type: Any.Type? = nil,
        isTopSuper: Bool = false
    ) {
        self.source = source
        self.position = position
        self.codingPath = codingPath
        self.flatKeys = (type as? any SecretDictionary.Type)?.hasScalarValues ?? false
        self.isTopSuper = isTopSuper
    }

    /// The error for an object or array whose field is missing: only a type that asks whether it is
    /// `nil` (through a single value container, as `Optional` does) decodes from an absent field.
    private func missing(_ name: String) -> DecodingError {
        DecodingError.keyNotFound(
            codingPath.last ?? SecretCodingKey(stringValue: name),
            DecodingError.Context(
                codingPath: codingPath, debugDescription: "The entry has no field \"\(name)\"."))
    }

    private func mismatch(_ type: Any.Type, _ what: String, _ name: String) -> DecodingError {
        DecodingError.typeMismatch(
            type,
            DecodingError.Context(
                codingPath: codingPath,
                debugDescription:
                    "Expected \(what) at \"\(name)\" but found the text of a field; the fields of "
                    + "an array's \(what == "an object" ? "objects" : "arrays") are written under its indexes "
                    + "(key.0.field)."
            )
        )
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        let node: SecretFieldNode?
        let name: String
        switch position {
        case .top: (node, name) = (source.root, "")
        case .password: (node, name) = (source.passwordNode, source.passwordKey)
        case .node(let found, let key): (node, name) = (found, key)
        case .value(_, let key): throw mismatch([String: Any].self, "an object", key)
        }
        // The superclass part of the top level may have written nothing but line 1.
        if node == nil && !isTopSuper { throw missing(name) }
        return KeyedDecodingContainer(
            SecretKeyedDecodingContainer<Key>(
                source: source, node: node, name: name,
                isTop: isTopSuper || { if case .top = position { true } else { false } }(),
                codingPath: codingPath, flatKeys: flatKeys)
        )
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        switch position {
        case .top:
            return SecretUnkeyedDecodingContainer(source: source, node: source.root, name: "", codingPath: [])
        case .password:
            guard source.passwordNode != nil else { throw missing(source.passwordKey) }
            return SecretUnkeyedDecodingContainer(
                source: source, node: source.passwordNode, name: source.passwordKey, codingPath: codingPath)
        case .node(let node, let name):
            guard node != nil else { throw missing(name) }
            return SecretUnkeyedDecodingContainer(
                source: source, node: node, name: name, codingPath: codingPath)
        case .value(_, let name): throw mismatch([Any].self, "an array", name)
        }
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SecretSingleValueDecodingContainer(worker: self)
    }
}

struct SecretKeyedDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let source: SecretDecodingSource
    let node: SecretFieldNode?
    /// The key of the object, as written (empty at the top level).
    let name: String
    let isTop: Bool
    let codingPath: [any CodingKey]
    let flatKeys: Bool

    var allKeys: [Key] {
        var names: [String] = []
        var seen: Set<String> = []
        if isTop {
            seen.insert(source.passwordKey)
            if !source.password.isEmpty || source.passwordNode?.hasContent == true {
                names.append(source.passwordKey)
            }
        }
        if flatKeys {
            // A dictionary of single values: every field below, dotted keys written by hand included.
            for (key, _) in node?.flattened() ?? [] where seen.insert(key).inserted { names.append(key) }
        } else {
            for child in node?.childNames ?? [] where seen.insert(child).inserted { names.append(child) }
        }
        return names.compactMap { Key(stringValue: $0) }
    }

    private func isPassword(_ key: Key) -> Bool {
        isTop && key.stringValue == source.passwordKey
    }

    private func child(_ key: Key) -> SecretFieldNode? {
        // A field whose key differs only in case is used only when the type has no key spelled so:
        // `Name: Bob` is the field of a property `Name`, never that of a nil property `name`.
        if let found = node?.child(key.stringValue, isOwnKey: { Key(stringValue: $0) != nil }) {
            return found
        }
        guard flatKeys, let node else { return nil }
        return node.flattened().first { $0.key == key.stringValue }?.node
    }

    private func childName(_ key: Key) -> String { SecretDecodingSource.name(name, key.stringValue) }

    func contains(_ key: Key) -> Bool {
        if isPassword(key) { return !source.password.isEmpty || source.passwordNode?.hasContent == true }
        return child(key)?.hasContent == true
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        if isPassword(key) { return !contains(key) }
        guard let found = child(key), found.hasContent else { return true }
        return found.isNil
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try decodeValue(type, forKey: key)
    }

    private func decodeValue<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        let path = codingPath + [key]
        if isPassword(key) {
            if T.self is any SecretScalar.Type {
                return try source.scalar(T.self, from: source.password, name: "password (line 1)", path: path)
            }
            return try T(
                from: SecretDecodingWorker(
                    source: source, position: .password, codingPath: path, type: T.self))
        }
        return try source.decode(T.self, at: child(key), name: childName(key), path: path)
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        try decodeValueIfPresent(type, forKey: key)
    }

    private func decodeValueIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        if isPassword(key) {
            let present =
                T.self is any SecretScalar.Type ? !source.password.isEmpty : try !decodeNil(forKey: key)
            return present ? try decodeValue(T.self, forKey: key) : nil
        }
        guard let found = child(key), found.hasContent else { return nil }
        // `~` is nil, unless the type is itself optional: then it is that optional's nil (`.some(nil)`).
        if found.isNil && !(T.self is any SecretOptional.Type) { return nil }
        return try decodeValue(T.self, forKey: key)
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try decodeValue(type, forKey: key) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try decodeValue(type, forKey: key) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try decodeValue(type, forKey: key) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try decodeValue(type, forKey: key) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try decodeValue(type, forKey: key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try decodeValue(type, forKey: key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try decodeValue(type, forKey: key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try decodeValue(type, forKey: key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try decodeValue(type, forKey: key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try decodeValue(type, forKey: key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try decodeValue(type, forKey: key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try decodeValue(type, forKey: key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try decodeValue(type, forKey: key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try decodeValue(type, forKey: key) }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    func decode(_ type: Int128.Type, forKey key: Key) throws -> Int128 { try decodeValue(type, forKey: key) }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    func decode(_ type: UInt128.Type, forKey key: Key) throws -> UInt128 {
        try decodeValue(type, forKey: key)
    }

    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
        try decodeValueIfPresent(type, forKey: key)
    }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        try decodeValueIfPresent(type, forKey: key)
    }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
        try decodeValueIfPresent(type, forKey: key)
    }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? {
        try decodeValueIfPresent(type, forKey: key)
    }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? {
        try decodeValueIfPresent(type, forKey: key)
    }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? {
        try decodeValueIfPresent(type, forKey: key)
    }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? {
        try decodeValueIfPresent(type, forKey: key)
    }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? {
        try decodeValueIfPresent(type, forKey: key)
    }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? {
        try decodeValueIfPresent(type, forKey: key)
    }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? {
        try decodeValueIfPresent(type, forKey: key)
    }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? {
        try decodeValueIfPresent(type, forKey: key)
    }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? {
        try decodeValueIfPresent(type, forKey: key)
    }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? {
        try decodeValueIfPresent(type, forKey: key)
    }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? {
        try decodeValueIfPresent(type, forKey: key)
    }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    func decodeIfPresent(_ type: Int128.Type, forKey key: Key) throws -> Int128? {
        try decodeValueIfPresent(type, forKey: key)
    }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    func decodeIfPresent(_ type: UInt128.Type, forKey key: Key) throws -> UInt128? {
        try decodeValueIfPresent(type, forKey: key)
    }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type,
        forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try decoder(forKey: key, isSuper: false).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try decoder(forKey: key, isSuper: false).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        let key = SecretCodingKey(stringValue: "super")
        return SecretDecodingWorker(
            source: source,
            position: .node(
                node?.exactChild(key.stringValue), name: SecretDecodingSource.name(name, "super")),
            codingPath: codingPath + [key], isTopSuper: isTop)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        decoder(forKey: key, isSuper: true)
    }

    /// The decoder of the value at `key`; a superclass part of the top level reads line 1 as its password.
    private func decoder(forKey key: Key, isSuper: Bool) -> SecretDecodingWorker {
        if isPassword(key) {
            return SecretDecodingWorker(source: source, position: .password, codingPath: codingPath + [key])
        }
        return SecretDecodingWorker(
            source: source, position: .node(child(key), name: childName(key)), codingPath: codingPath + [key],
            isTopSuper: isSuper && isTop)
    }
}

struct SecretUnkeyedDecodingContainer: UnkeyedDecodingContainer {
    /// Where the elements are.
    private enum Elements {
        /// Under the array's key and their indexes (`servers.0`, `servers.1`, ...).
        case indexed([SecretFieldNode])
        /// The texts of the fields with the array's key, one per element.
        case repeated([String])
    }

    let source: SecretDecodingSource
    /// The key of the array, as written (empty at the top level).
    let name: String
    let codingPath: [any CodingKey]
    private let elements: Elements
    private(set) var currentIndex = 0

    init(source: SecretDecodingSource, node: SecretFieldNode?, name: String, codingPath: [any CodingKey]) {
        self.source = source
        self.name = name
        self.codingPath = codingPath
        let indexed = node?.indexedChildren ?? []
        if !indexed.isEmpty {
            elements = .indexed(indexed)
        } else {
            let lines = node?.lines ?? []
            elements = .repeated(lines.filter { !SecretArchive.isMarker($0, SecretArchive.emptyArrayMarker) })
        }
    }

    var count: Int? {
        switch elements {
        case .indexed(let nodes): nodes.count
        case .repeated(let texts): texts.count
        }
    }

    var isAtEnd: Bool { currentIndex >= count! }

    private var currentPath: [any CodingKey] { codingPath + [SecretCodingKey(intValue: currentIndex)] }

    private var currentName: String {
        switch elements {
        case .indexed: SecretDecodingSource.name(name, String(currentIndex))
        case .repeated: "\(name) (value \(currentIndex + 1))"
        }
    }

    private func checkNotAtEnd(_ type: Any.Type) throws {
        guard isAtEnd else { return }
        let what = name.isEmpty ? "The entry" : "The array \"\(name)\""
        throw DecodingError.valueNotFound(
            type,
            DecodingError.Context(
                codingPath: currentPath,
                debugDescription: "\(what) has only \(count!) \(count == 1 ? "element" : "elements")."
            )
        )
    }

    mutating func decodeNil() throws -> Bool {
        try checkNotAtEnd(Never?.self)
        let isNil: Bool
        switch elements {
        case .indexed(let nodes): isNil = nodes[currentIndex].isNil
        case .repeated(let texts):
            isNil = SecretArchive.isMarker(texts[currentIndex], SecretArchive.nilMarker)
        }
        if isNil { currentIndex += 1 }
        return isNil
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try decodeValue(type)
    }

    private mutating func decodeValue<T: Decodable>(_ type: T.Type) throws -> T {
        try checkNotAtEnd(T.self)
        let value: T
        switch elements {
        case .indexed(let nodes):
            value = try source.decode(T.self, at: nodes[currentIndex], name: currentName, path: currentPath)
        case .repeated(let texts):
            value = try source.decode(
                T.self, written: texts[currentIndex], name: currentName, path: currentPath)
        }
        currentIndex += 1
        return value
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try decodeValue(type) }
    mutating func decode(_ type: String.Type) throws -> String { try decodeValue(type) }
    mutating func decode(_ type: Double.Type) throws -> Double { try decodeValue(type) }
    mutating func decode(_ type: Float.Type) throws -> Float { try decodeValue(type) }
    mutating func decode(_ type: Int.Type) throws -> Int { try decodeValue(type) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try decodeValue(type) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try decodeValue(type) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try decodeValue(type) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try decodeValue(type) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try decodeValue(type) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try decodeValue(type) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try decodeValue(type) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try decodeValue(type) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try decodeValue(type) }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func decode(_ type: Int128.Type) throws -> Int128 { try decodeValue(type) }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func decode(_ type: UInt128.Type) throws -> UInt128 { try decodeValue(type) }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try superDecoder().container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try superDecoder().unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder {
        try checkNotAtEnd(Any.self)
        let decoder: SecretDecodingWorker
        switch elements {
        case .indexed(let nodes):
            decoder = SecretDecodingWorker(
                source: source, position: .node(nodes[currentIndex], name: currentName),
                codingPath: currentPath)
        case .repeated(let texts):
            decoder = SecretDecodingWorker(
                source: source, position: .value(texts[currentIndex], name: currentName),
                codingPath: currentPath)
        }
        currentIndex += 1
        return decoder
    }
}

struct SecretSingleValueDecodingContainer: SingleValueDecodingContainer {
    let worker: SecretDecodingWorker

    var codingPath: [any CodingKey] { worker.codingPath }

    func decodeNil() -> Bool {
        let source = worker.source
        switch worker.position {
        case .top: return source.password.isEmpty && !source.root.hasContent
        case .password: return source.password.isEmpty
        case .node(let node, _): return node?.hasContent != true || node?.isNil == true
        case .value(let written, _): return SecretArchive.isMarker(written, SecretArchive.nilMarker)
        }
    }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try decodeValue(type)
    }

    private func decodeValue<T: Decodable>(_ type: T.Type) throws -> T {
        guard T.self is any SecretScalar.Type else {
            return try T(
                from: SecretDecodingWorker(
                    source: worker.source, position: worker.position, codingPath: codingPath, type: T.self))
        }
        let source = worker.source
        switch worker.position {
        case .top, .password:
            return try source.scalar(
                T.self, from: source.password, name: "password (line 1)", path: codingPath)
        case .node(let node, let name):
            return try source.decode(T.self, at: node, name: name, path: codingPath)
        case .value(let written, let name):
            return try source.decode(T.self, written: written, name: name, path: codingPath)
        }
    }

    func decode(_ type: Bool.Type) throws -> Bool { try decodeValue(type) }
    func decode(_ type: String.Type) throws -> String { try decodeValue(type) }
    func decode(_ type: Double.Type) throws -> Double { try decodeValue(type) }
    func decode(_ type: Float.Type) throws -> Float { try decodeValue(type) }
    func decode(_ type: Int.Type) throws -> Int { try decodeValue(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try decodeValue(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try decodeValue(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try decodeValue(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try decodeValue(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try decodeValue(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try decodeValue(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try decodeValue(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try decodeValue(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try decodeValue(type) }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    func decode(_ type: Int128.Type) throws -> Int128 { try decodeValue(type) }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    func decode(_ type: UInt128.Type) throws -> UInt128 { try decodeValue(type) }
}
