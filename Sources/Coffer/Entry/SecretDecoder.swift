#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Decodes `Decodable` values from entries in pass's format, as ``SecretEncoder`` writes them.
///
/// The top-level property named ``passwordKey`` reads line 1; every other property reads the
/// first field with its key (`address.city` for nested values), ignoring case, as
/// ``Secret/field(_:)`` does. An array reads every field with its key, in order. A missing field decodes as `nil` for an optional property and throws
/// `DecodingError.keyNotFound` otherwise.
///
/// Fields the type does not know, free text and `otpauth://` lines are ignored, so a person
/// can add notes with `pass edit` and the entry still decodes. Values are read leniently:
/// blanks around numbers, dates and base64 are ignored, `Bool` accepts `true`/`false`,
/// `yes`/`no`, `on`/`off` and `1`/`0` in any case, and dates accept any ISO 8601 offset
/// (`+02:00`) or none (UTC).
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
            return try source.decode(T.self, from: source.password, name: "password (line 1)", path: [])
        }
        return try T(
            from: SecretDecodingWorker(source: source, position: .path(nil), codingPath: [], type: T.self))
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
    let fields: [Secret.Field]
    let lowercasedKeys: [String]
    let passwordKey: String
    let userInfo: [CodingUserInfoKey: Any]

    init(secret: Secret, passwordKey: String, userInfo: [CodingUserInfoKey: Any]) {
        password = secret.password
        fields = secret.fields
        lowercasedKeys = fields.map { $0.key.lowercased() }
        self.passwordKey = passwordKey
        self.userInfo = userInfo
    }

    /// The values of the fields whose key is `key`, ignoring case, in order.
    func values(forKey key: String) -> [String] {
        let lowercased = key.lowercased()
        return zip(fields, lowercasedKeys).filter { $0.1 == lowercased }.map(\.0.value)
    }

    /// Whether some field's key starts with `prefix` and a dot, ignoring case.
    func hasFields(under prefix: String) -> Bool {
        let start = prefix.lowercased() + "."
        return lowercasedKeys.contains { $0.hasPrefix(start) }
    }

    /// The keys one level below `prefix`, in the order they first appear.
    ///
    /// With `flat`, the whole rest of each key after `prefix` (dots included) is one key, as
    /// for a dictionary of single values.
    func childKeys(under prefix: String?, flat: Bool) -> [String] {
        let prefixParts =
            prefix.map { $0.lowercased().split(separator: ".", omittingEmptySubsequences: false) } ?? []
        // At the top level, line 1 stands for the password key; fields spelled like it are ignored.
        var seen: Set<String> = prefix == nil ? [passwordKey.lowercased()] : []
        var keys: [String] = prefix == nil && !password.isEmpty ? [passwordKey] : []
        for field in fields {
            let parts = field.key.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count > prefixParts.count,
                zip(parts, prefixParts).allSatisfy({ $0.lowercased() == $1 })
            else { continue }
            let rest = parts[prefixParts.count...]
            let key = flat ? rest.joined(separator: ".") : String(rest.first!)
            if seen.insert(key.lowercased()).inserted { keys.append(key) }
        }
        return keys
    }

    /// Decodes a `T` from the text of the field `name`.
    func decode<T: Decodable>(_ type: T.Type, from text: String, name: String, path: [any CodingKey]) throws
        -> T
    {
        guard let scalarType = T.self as? any SecretScalar.Type else {
            return try T(
                from: SecretDecodingWorker(source: self, position: .value(text, name: name), codingPath: path)
            )
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
}

/// The `Decoder` handed to `init(from:)`.
struct SecretDecodingWorker: Decoder {
    enum Position {
        /// At a key (`nil`: the top level), whose fields are not read yet.
        case path(String?)
        /// At one value: an array element, or a field read as a whole.
        case value(String, name: String)
    }

    let source: SecretDecodingSource
    let position: Position
    let codingPath: [any CodingKey]
    /// Whether keyed containers here treat dotted keys as one key (a dictionary of single values).
    let flatKeys: Bool

    var userInfo: [CodingUserInfoKey: Any] { source.userInfo }

    init(source: SecretDecodingSource, position: Position, codingPath: [any CodingKey], type: Any.Type? = nil)
    {
        self.source = source
        self.position = position
        self.codingPath = codingPath
        self.flatKeys = (type as? any SecretDictionary.Type)?.hasScalarValues ?? false
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        switch position {
        case .path(let prefix):
            return KeyedDecodingContainer(
                SecretKeyedDecodingContainer<Key>(
                    source: source, prefix: prefix, codingPath: codingPath, flatKeys: flatKeys
                )
            )
        case .value(_, let name):
            throw DecodingError.typeMismatch(
                [String: Any].self,
                DecodingError.Context(
                    codingPath: codingPath,
                    debugDescription: "Expected an object at \"\(name)\" but found a single value; arrays of "
                        + "objects cannot be stored in an entry."
                )
            )
        }
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        switch position {
        case .path(let key?):
            return SecretUnkeyedDecodingContainer(
                source: source, key: key, values: source.values(forKey: key), codingPath: codingPath
            )
        case .path(nil):
            throw DecodingError.typeMismatch(
                [Any].self,
                DecodingError.Context(
                    codingPath: codingPath,
                    debugDescription:
                        "An entry cannot be decoded as an array; decode a struct with an array property."
                )
            )
        case .value(_, let name):
            throw DecodingError.typeMismatch(
                [Any].self,
                DecodingError.Context(
                    codingPath: codingPath,
                    debugDescription: "Expected an array at \"\(name)\" but found a single value; arrays of "
                        + "arrays cannot be stored in an entry."
                )
            )
        }
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        switch position {
        case .path(nil):
            SecretSingleValueDecodingContainer(
                source: source, text: source.password, name: "password (line 1)", codingPath: codingPath
            )
        case .path(let key?):
            SecretSingleValueDecodingContainer(
                source: source, text: source.values(forKey: key).first, name: key, codingPath: codingPath
            )
        case .value(let text, let name):
            SecretSingleValueDecodingContainer(source: source, text: text, name: name, codingPath: codingPath)
        }
    }
}

struct SecretKeyedDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let source: SecretDecodingSource
    let prefix: String?
    let codingPath: [any CodingKey]
    let flatKeys: Bool

    var allKeys: [Key] {
        source.childKeys(under: prefix, flat: flatKeys).compactMap { Key(stringValue: $0) }
    }

    private func fullKey(_ key: any CodingKey) -> String {
        prefix.map { "\($0).\(key.stringValue)" } ?? key.stringValue
    }

    private func isPassword(_ key: Key) -> Bool {
        prefix == nil && key.stringValue == source.passwordKey
    }

    func contains(_ key: Key) -> Bool {
        if isPassword(key) { return !source.password.isEmpty }
        let full = fullKey(key)
        return !source.values(forKey: full).isEmpty || source.hasFields(under: full)
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        !contains(key)
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try decodeValue(type, forKey: key)
    }

    private func decodeValue<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        let path = codingPath + [key]
        if isPassword(key) {
            return try source.decode(T.self, from: source.password, name: "password (line 1)", path: path)
        }
        let full = fullKey(key)
        guard T.self is any SecretScalar.Type else {
            return try T(
                from: SecretDecodingWorker(
                    source: source, position: .path(full), codingPath: path, type: T.self))
        }
        guard let text = source.values(forKey: full).first else {
            throw DecodingError.keyNotFound(
                key,
                DecodingError.Context(
                    codingPath: path, debugDescription: "The entry has no field \"\(full)\".")
            )
        }
        return try source.decode(T.self, from: text, name: full, path: path)
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

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type,
        forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        KeyedDecodingContainer(
            SecretKeyedDecodingContainer<NestedKey>(
                source: source, prefix: fullKey(key), codingPath: codingPath + [key], flatKeys: false
            )
        )
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        let full = fullKey(key)
        return SecretUnkeyedDecodingContainer(
            source: source, key: full, values: source.values(forKey: full), codingPath: codingPath + [key]
        )
    }

    func superDecoder() throws -> any Decoder {
        let key = SecretCodingKey(stringValue: "super")
        return SecretDecodingWorker(
            source: source, position: .path(fullKey(key)), codingPath: codingPath + [key])
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        SecretDecodingWorker(source: source, position: .path(fullKey(key)), codingPath: codingPath + [key])
    }
}

struct SecretUnkeyedDecodingContainer: UnkeyedDecodingContainer {
    let source: SecretDecodingSource
    let key: String
    let values: [String]
    let codingPath: [any CodingKey]
    private(set) var currentIndex = 0

    init(source: SecretDecodingSource, key: String, values: [String], codingPath: [any CodingKey]) {
        self.source = source
        self.key = key
        self.values = values
        self.codingPath = codingPath
    }

    var count: Int? { values.count }
    var isAtEnd: Bool { currentIndex >= values.count }

    private var currentPath: [any CodingKey] { codingPath + [SecretCodingKey(intValue: currentIndex)] }

    private func checkNotAtEnd(_ type: Any.Type) throws {
        guard isAtEnd else { return }
        throw DecodingError.valueNotFound(
            type,
            DecodingError.Context(
                codingPath: currentPath,
                debugDescription: "The entry has only \(values.count) fields \"\(key)\"."
            )
        )
    }

    mutating func decodeNil() throws -> Bool {
        try checkNotAtEnd(Never?.self)
        return false
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try decodeValue(type)
    }

    private mutating func decodeValue<T: Decodable>(_ type: T.Type) throws -> T {
        try checkNotAtEnd(T.self)
        let value = try source.decode(
            T.self, from: values[currentIndex], name: "\(key) (value \(currentIndex + 1))", path: currentPath
        )
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

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type
    ) throws -> KeyedDecodingContainer<NestedKey> {
        throw DecodingError.typeMismatch(
            [String: Any].self,
            DecodingError.Context(
                codingPath: currentPath,
                debugDescription: "Expected an object in the array \"\(key)\"; arrays of objects cannot be "
                    + "stored in an entry."
            )
        )
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch(
            [Any].self,
            DecodingError.Context(
                codingPath: currentPath,
                debugDescription: "Expected an array in the array \"\(key)\"; arrays of arrays cannot be "
                    + "stored in an entry."
            )
        )
    }

    mutating func superDecoder() throws -> any Decoder {
        try checkNotAtEnd(Any.self)
        let decoder = SecretDecodingWorker(
            source: source,
            position: .value(values[currentIndex], name: "\(key) (value \(currentIndex + 1))"),
            codingPath: currentPath
        )
        currentIndex += 1
        return decoder
    }
}

struct SecretSingleValueDecodingContainer: SingleValueDecodingContainer {
    let source: SecretDecodingSource
    let text: String?
    let name: String
    let codingPath: [any CodingKey]

    func decodeNil() -> Bool { text == nil }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try decodeValue(type)
    }

    private func decodeValue<T: Decodable>(_ type: T.Type) throws -> T {
        guard let text else {
            throw DecodingError.valueNotFound(
                T.self,
                DecodingError.Context(
                    codingPath: codingPath, debugDescription: "The entry has no field \"\(name)\".")
            )
        }
        return try source.decode(T.self, from: text, name: name, path: codingPath)
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
}
