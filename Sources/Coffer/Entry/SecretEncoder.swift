#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Encodes `Encodable` values as entries in pass's format.
///
/// The top-level property named ``passwordKey`` becomes line 1; every other value becomes
/// `key: value` fields in declaration order, so `pass show` and every pass client shows them:
///
/// ```swift
/// struct Login: Codable {
///     var password: String
///     var login: String
///     var url: URL?
///     var tags: [String]
///     var servers: [Server]      // struct Server: Codable { var host: String; var port: Int }
///     var extra: [String: String]
/// }
/// // hunter2
/// // login: alice
/// // url: https://example.com
/// // tags: work
/// // tags: mail
/// // servers.0.host: h1
/// // servers.0.port: 22
/// // servers.1.host: h2
/// // servers.1.port: 2222
/// // extra."github.com": token
/// ```
///
/// - Nested values use dotted keys (`address.city`). An array of single values writes its key once
///   per element; any other array writes each element under its index (`servers.0.host`, `matrix.1`).
///   A dictionary writes its entries sorted by key (numerically when every key is a whole number).
/// - A key component that is empty, starts with `#`, starts or ends with a blank, or holds `.`, `"`,
///   `\`, `:` or a control character is written in double quotes with JSON's escapes
///   (`extra."github.com"`).
/// - Strings, numbers and `Decimal` are written as text, `Bool` as `true`/`false`, `Date` as ISO 8601
///   in UTC (`2024-05-01T12:00:00Z`, with fractional seconds only when needed), `Data` as standard
///   base64 and `URL` as its absolute string. A string with line breaks, or the string `|`, is written
///   as a multi-line field (`key: |` followed by lines indented by two spaces).
/// - A class that encodes its superclass with `superEncoder()` writes the superclass's properties under
///   `super.`; at the top level, the superclass's password property is line 1 all the same.
/// - A `nil` property writes nothing. A `nil` that must be seen (in an array, a dictionary, or the
///   inner `nil` of a nested optional) is written `~`; an empty array `[]` and an empty object or
///   struct `{}`, so that every value below the top level writes at least one field and reads back
///   as present.
/// - A value text that is `~`, `[]` or `{}`, or starts with a blank, gets a leading `\` (as does one
///   that already starts with backslashes followed by one of those or by `"`); a text with a carriage
///   return at the end of a line is written as `\` followed by a JSON string.
///
/// coffer-store(5) describes the format exactly. The encoder throws `EncodingError.invalidValue` rather
/// than write a file that would read back differently: a password (line 1) with a line break or a
/// carriage return at its end; an empty or `nil` password from an optional or a dictionary (an empty
/// line 1 reads back as no password); two values under the same key; a date outside the years
/// 0–9999; a top-level optional whose value writes nothing.
public struct SecretEncoder: Sendable {
    /// The top-level key whose value is written as line 1 instead of as a field.
    public var passwordKey: String
    /// Values made available to `encode(to:)` implementations through `Encoder.userInfo`.
    public var userInfo: [CodingUserInfoKey: any Sendable] = [:]

    /// Creates an encoder that writes the top-level `passwordKey` as line 1.
    public init(passwordKey: String = "password") {
        self.passwordKey = passwordKey
    }

    /// Encodes `value` as an entry.
    ///
    /// A top-level single value (a `String`, say) becomes the password and nothing else.
    ///
    /// - Throws: `EncodingError.invalidValue` when the value cannot be written so that it reads
    ///   back unchanged, with a `debugDescription` naming the field and saying why. The error's value
    ///   is a placeholder, never the value itself, so printing or logging the error shows no password.
    public func encode<T: Encodable>(_ value: T) throws -> Secret {
        let root = SecretEncodingWorker(
            codingPath: [],
            userInfo: userInfo.mapValues { $0 as Any },
            dictionaryValuesAreScalar: nil
        )
        var layout = SecretLayout(passwordKey: passwordKey)
        try layout.addTopLevel(root.box(value, at: []))
        if layout.isEmpty, let optional = value as? any SecretOptional, !optional.isSecretNil {
            throw EncodingError.invalidValue(
                SecretHiddenValue(),
                EncodingError.Context(
                    codingPath: [],
                    debugDescription:
                        "Cannot encode \(T.self): the value writes nothing (an empty line 1 and "
                        + "no fields), so it would read back as nil."
                )
            )
        }
        return layout.secret()
    }

    /// Encodes `value` as the bytes of an entry.
    ///
    /// The same as `encode(value).formatted()`.
    ///
    /// - Throws: `EncodingError.invalidValue`, as ``encode(_:)`` does.
    public func encodeBytes<T: Encodable>(_ value: T) throws -> [UInt8] {
        try encode(value).formatted()
    }
}

/// A dictionary, whose keyed containers are written sorted by key.
protocol SecretDictionary {
    /// Whether the values are written as single fields, so keys may contain `.`.
    static var hasScalarValues: Bool { get }
}

extension Dictionary: SecretDictionary {
    static var hasScalarValues: Bool { Value.self is any SecretScalar.Type }
}

/// A coding key made from text or an array index.
struct SecretCodingKey: CodingKey {
    var stringValue: String
    var intValue: Int?

    init(stringValue: String) {
        self.stringValue = stringValue
        self.intValue = nil
    }

    init(intValue: Int) {
        self.stringValue = String(intValue)
        self.intValue = intValue
    }
}

/// What a value encoded to: the tree the layout turns into lines.
enum SecretEncodedValue {
    case scalar(String)
    case null
    case keyed(SecretKeyedStorage)
    case unkeyed(SecretUnkeyedStorage)
    case deferred(SecretEncodingWorker)
}

/// The entries of a keyed container, filled while encoding.
final class SecretKeyedStorage {
    struct Entry {
        let key: any CodingKey
        let value: SecretEncodedValue
        /// Whether the value must write at least one line: it came from an optional or a dictionary.
        let mustAppear: Bool
        /// Whether the value is a superclass's part, from `superEncoder()` or `superEncoder(forKey:)`.
        var isSuper = false
    }

    /// `nil` for a struct or class; for a dictionary, whether its values are single values.
    let dictionaryValuesAreScalar: Bool?
    var entries: [Entry] = []

    init(dictionaryValuesAreScalar: Bool?) {
        self.dictionaryValuesAreScalar = dictionaryValuesAreScalar
    }
}

/// The elements of an unkeyed container, filled while encoding.
final class SecretUnkeyedStorage {
    var elements: [SecretEncodedValue] = []
}

/// The `Encoder` handed to `encode(to:)`.
final class SecretEncodingWorker: Encoder {
    let codingPath: [any CodingKey]
    let userInfo: [CodingUserInfoKey: Any]
    let dictionaryValuesAreScalar: Bool?
    var value: SecretEncodedValue?

    init(codingPath: [any CodingKey], userInfo: [CodingUserInfoKey: Any], dictionaryValuesAreScalar: Bool?) {
        self.codingPath = codingPath
        self.userInfo = userInfo
        self.dictionaryValuesAreScalar = dictionaryValuesAreScalar
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let storage: SecretKeyedStorage
        if case .keyed(let existing) = value {
            storage = existing
        } else {
            storage = SecretKeyedStorage(dictionaryValuesAreScalar: dictionaryValuesAreScalar)
            value = .keyed(storage)
        }
        return KeyedEncodingContainer(
            SecretKeyedEncodingContainer<Key>(worker: self, storage: storage, codingPath: codingPath)
        )
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let storage: SecretUnkeyedStorage
        if case .unkeyed(let existing) = value {
            storage = existing
        } else {
            storage = SecretUnkeyedStorage()
            value = .unkeyed(storage)
        }
        return SecretUnkeyedEncodingContainer(worker: self, storage: storage, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SecretSingleValueEncodingContainer(worker: self)
    }

    /// Encodes `value`, found at `path`, into the tree.
    func box<T: Encodable>(_ value: T, at path: [any CodingKey]) throws -> SecretEncodedValue {
        if let scalar = value as? any SecretScalar {
            guard let text = scalar.secretText() else {
                throw EncodingError.invalidValue(
                    SecretHiddenValue(),
                    EncodingError.Context(
                        codingPath: path,
                        debugDescription: "Cannot encode \(T.self) \"\(SecretLayout.name(of: path))\": "
                            + "only dates in the years 0 to 9999 can be written."
                    )
                )
            }
            return .scalar(text)
        }
        let child = SecretEncodingWorker(
            codingPath: path,
            userInfo: userInfo,
            dictionaryValuesAreScalar: (T.self as? any SecretDictionary.Type)?.hasScalarValues
        )
        try value.encode(to: child)
        return child.value ?? .keyed(SecretKeyedStorage(dictionaryValuesAreScalar: nil))
    }

    /// A worker for `superEncoder()`, whose value is read when the layout is made.
    func deferredWorker(at path: [any CodingKey]) -> SecretEncodingWorker {
        SecretEncodingWorker(codingPath: path, userInfo: userInfo, dictionaryValuesAreScalar: nil)
    }
}

struct SecretKeyedEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let worker: SecretEncodingWorker
    let storage: SecretKeyedStorage
    let codingPath: [any CodingKey]

    private var inDictionary: Bool { storage.dictionaryValuesAreScalar != nil }

    private func put<T: Encodable>(_ value: T, _ key: Key) throws {
        let boxed = try worker.box(value, at: codingPath + [key])
        storage.entries.append(.init(key: key, value: boxed, mustAppear: inDictionary))
    }

    /// Encodes a non-nil optional, which must then write at least one field to read back as non-nil.
    private func putIfPresent<T: Encodable>(_ value: T?, _ key: Key) throws {
        guard let value else { return }
        let boxed = try worker.box(value, at: codingPath + [key])
        storage.entries.append(.init(key: key, value: boxed, mustAppear: true))
    }

    mutating func encodeNil(forKey key: Key) throws {
        storage.entries.append(.init(key: key, value: .null, mustAppear: inDictionary))
    }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try put(value, key)
    }

    mutating func encode(_ value: Bool, forKey key: Key) throws { try put(value, key) }
    mutating func encode(_ value: String, forKey key: Key) throws { try put(value, key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { try put(value, key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { try put(value, key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { try put(value, key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { try put(value, key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { try put(value, key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { try put(value, key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { try put(value, key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { try put(value, key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { try put(value, key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { try put(value, key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { try put(value, key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { try put(value, key) }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func encode(_ value: Int128, forKey key: Key) throws { try put(value, key) }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func encode(_ value: UInt128, forKey key: Key) throws { try put(value, key) }

    mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
        try putIfPresent(value, key)
    }

    mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws { try putIfPresent(value, key) }
    mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws { try putIfPresent(value, key) }
    mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws { try putIfPresent(value, key) }
    mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws { try putIfPresent(value, key) }
    mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws { try putIfPresent(value, key) }
    mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) throws { try putIfPresent(value, key) }
    mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) throws { try putIfPresent(value, key) }
    mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws { try putIfPresent(value, key) }
    mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws { try putIfPresent(value, key) }
    mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws { try putIfPresent(value, key) }
    mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws { try putIfPresent(value, key) }
    mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws { try putIfPresent(value, key) }
    mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws { try putIfPresent(value, key) }
    mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws { try putIfPresent(value, key) }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func encodeIfPresent(_ value: Int128?, forKey key: Key) throws { try putIfPresent(value, key) }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func encodeIfPresent(_ value: UInt128?, forKey key: Key) throws { try putIfPresent(value, key) }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type,
        forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        let nested = SecretKeyedStorage(dictionaryValuesAreScalar: nil)
        storage.entries.append(.init(key: key, value: .keyed(nested), mustAppear: inDictionary))
        return KeyedEncodingContainer(
            SecretKeyedEncodingContainer<NestedKey>(
                worker: worker, storage: nested, codingPath: codingPath + [key])
        )
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let nested = SecretUnkeyedStorage()
        storage.entries.append(.init(key: key, value: .unkeyed(nested), mustAppear: inDictionary))
        return SecretUnkeyedEncodingContainer(worker: worker, storage: nested, codingPath: codingPath + [key])
    }

    mutating func superEncoder() -> any Encoder {
        superEncoder(withKey: SecretCodingKey(stringValue: "super"))
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        superEncoder(withKey: key)
    }

    private func superEncoder(withKey key: any CodingKey) -> any Encoder {
        let nested = worker.deferredWorker(at: codingPath + [key])
        storage.entries.append(
            .init(key: key, value: .deferred(nested), mustAppear: inDictionary, isSuper: true))
        return nested
    }
}

/// A container without keys (unkeyed or single value) that encodes a value of every type, the primitive
/// ones included, through ``store(_:)``: the `encode` overloads both container protocols ask for.
protocol SecretValueEncoding {
    /// Encodes `value` as this container's next (or only) value.
    func store<T: Encodable>(_ value: T) throws
}

/// The `encode` overloads of `UnkeyedEncodingContainer` and `SingleValueEncodingContainer`, through `store`
/// (but for `Int128` and `UInt128`, which the standard library's own defaults would make ambiguous here).
extension SecretValueEncoding {
    mutating func encode<T: Encodable>(_ value: T) throws { try store(value) }
    mutating func encode(_ value: Bool) throws { try store(value) }
    mutating func encode(_ value: String) throws { try store(value) }
    mutating func encode(_ value: Double) throws { try store(value) }
    mutating func encode(_ value: Float) throws { try store(value) }
    mutating func encode(_ value: Int) throws { try store(value) }
    mutating func encode(_ value: Int8) throws { try store(value) }
    mutating func encode(_ value: Int16) throws { try store(value) }
    mutating func encode(_ value: Int32) throws { try store(value) }
    mutating func encode(_ value: Int64) throws { try store(value) }
    mutating func encode(_ value: UInt) throws { try store(value) }
    mutating func encode(_ value: UInt8) throws { try store(value) }
    mutating func encode(_ value: UInt16) throws { try store(value) }
    mutating func encode(_ value: UInt32) throws { try store(value) }
    mutating func encode(_ value: UInt64) throws { try store(value) }
}

struct SecretUnkeyedEncodingContainer: UnkeyedEncodingContainer, SecretValueEncoding {
    let worker: SecretEncodingWorker
    let storage: SecretUnkeyedStorage
    let codingPath: [any CodingKey]

    var count: Int { storage.elements.count }

    private var nextPath: [any CodingKey] { codingPath + [SecretCodingKey(intValue: count)] }

    /// Appends `value` as the next element.
    func store<T: Encodable>(_ value: T) throws {
        storage.elements.append(try worker.box(value, at: nextPath))
    }

    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func encode(_ value: Int128) throws { try store(value) }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func encode(_ value: UInt128) throws { try store(value) }

    mutating func encodeNil() throws { storage.elements.append(.null) }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type
    ) -> KeyedEncodingContainer<NestedKey> {
        let path = nextPath
        let nested = SecretKeyedStorage(dictionaryValuesAreScalar: nil)
        storage.elements.append(.keyed(nested))
        return KeyedEncodingContainer(
            SecretKeyedEncodingContainer<NestedKey>(worker: worker, storage: nested, codingPath: path)
        )
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let path = nextPath
        let nested = SecretUnkeyedStorage()
        storage.elements.append(.unkeyed(nested))
        return SecretUnkeyedEncodingContainer(worker: worker, storage: nested, codingPath: path)
    }

    mutating func superEncoder() -> any Encoder {
        let nested = worker.deferredWorker(at: nextPath)
        storage.elements.append(.deferred(nested))
        return nested
    }
}

struct SecretSingleValueEncodingContainer: SingleValueEncodingContainer, SecretValueEncoding {
    let worker: SecretEncodingWorker

    var codingPath: [any CodingKey] { worker.codingPath }

    /// Makes `value` the container's value.
    func store<T: Encodable>(_ value: T) throws {
        worker.value = try worker.box(value, at: codingPath)
    }

    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func encode(_ value: Int128) throws { try store(value) }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func encode(_ value: UInt128) throws { try store(value) }

    mutating func encodeNil() throws { worker.value = .null }
}

/// Turns the encoded tree into the password and the field lines (coffer-store(5), THE CODABLE ARCHIVE).
struct SecretLayout {
    let passwordKey: String
    private var password: String?
    private var fields: [(key: String, value: String)] = []
    /// The keys of single fields and of arrays written as repeated fields.
    private var leafKeys: Set<String> = []
    /// The keys that other keys continue with a `.`.
    private var innerKeys: Set<String> = []

    init(passwordKey: String) {
        self.passwordKey = passwordKey
    }

    /// Whether nothing was written: line 1 is empty and there are no fields.
    var isEmpty: Bool { (password ?? "").isEmpty && fields.isEmpty }

    /// The entry: the password (or an empty line 1), then the fields, then a newline.
    func secret() -> Secret {
        var lines: [[UInt8]] = [Array((password ?? "").utf8)]
        for field in fields {
            lines += SecretSyntax.renderField(
                key: Array(field.key.utf8),
                value: Array(field.value.utf8),
                indentation: SecretSyntax.defaultIndentation,
                lineEnding: []
            )
        }
        return Secret(lines: lines, endsWithNewline: true)
    }

    /// `value` with a deferred worker replaced by what was encoded into it.
    func resolved(_ value: SecretEncodedValue) -> SecretEncodedValue {
        guard case .deferred(let worker) = value else { return value }
        return resolved(worker.value ?? .keyed(SecretKeyedStorage(dictionaryValuesAreScalar: nil)))
    }

    /// The dotted name of the value at `path`, for messages.
    static func name(of path: [any CodingKey]) -> String {
        path.isEmpty ? "(top level)" : path.map(\.stringValue).joined(separator: ".")
    }

    /// The error for a value at `path` that cannot be written. It never carries the value itself (a
    /// password, say), only a placeholder, so printing or logging the error shows no secret.
    private func failure(_ path: [any CodingKey], _ message: String) -> EncodingError {
        EncodingError.invalidValue(
            SecretHiddenValue(), EncodingError.Context(codingPath: path, debugDescription: message))
    }

    /// Writes the top-level value: a single value is line 1, an object its fields, an array its elements
    /// under their indexes (`0: ...`); `nil` writes an empty entry.
    mutating func addTopLevel(_ value: SecretEncodedValue) throws {
        switch resolved(value) {
        case .scalar(let text):
            try setPassword(text, mustAppear: false, path: [])
        case .null:
            break
        case .keyed(let storage):
            try addObject(storage, key: [], path: [], passwordIsLine1: true)
        case .unkeyed(let list):
            try addList(list, key: [], path: [])
        case .deferred:
            preconditionFailure("resolved(_:) never returns a deferred value")
        }
    }

    private mutating func setPassword(_ text: String, mustAppear: Bool, path: [any CodingKey]) throws {
        if let problem = SecretSyntax.passwordProblem(Array(text.utf8)) {
            throw failure(path, "Cannot encode the password (line 1): \(problem)")
        }
        if mustAppear && text.isEmpty {
            throw failure(
                path,
                "Cannot encode an empty password from an optional or a dictionary: an empty line 1 "
                    + "reads back as no password (nil)."
            )
        }
        password = text
    }

    /// Writes the value at the field key `key` (its components, unquoted).
    private mutating func addValue(_ value: SecretEncodedValue, key: [String], path: [any CodingKey]) throws {
        switch resolved(value) {
        case .scalar(let text):
            try addField(key, SecretArchive.escapedValue(text), path: path)
        case .null:
            try addField(key, SecretArchive.nilMarker, path: path)
        case .keyed(let storage):
            try addObject(storage, key: key, path: path)
        case .unkeyed(let list):
            try addList(list, key: key, path: path)
        case .deferred:
            preconditionFailure("resolved(_:) never returns a deferred value")
        }
    }

    /// Writes an object's entries under `key`. When `passwordIsLine1` (the top level, and the superclass
    /// part of the top level written through `superEncoder()`), a single value under the password key
    /// is line 1, so a class hierarchy whose base class holds the password keeps it there.
    private mutating func addObject(
        _ storage: SecretKeyedStorage, key: [String], path: [any CodingKey], passwordIsLine1: Bool = false
    ) throws {
        var entries = storage.entries
        if storage.dictionaryValuesAreScalar != nil {
            let numeric = entries.allSatisfy { $0.key.intValue != nil }
            entries.sort { left, right in
                if numeric, left.key.intValue != right.key.intValue {
                    return left.key.intValue! < right.key.intValue!
                }
                return left.key.stringValue.utf8.lexicographicallyPrecedes(right.key.stringValue.utf8)
            }
        }
        if entries.isEmpty && !key.isEmpty {
            try addField(key, SecretArchive.emptyObjectMarker, path: path)
            return
        }
        for entry in entries {
            let name = entry.key.stringValue
            let entryPath = path + [entry.key]
            let value = resolved(entry.value)
            if passwordIsLine1 && name == passwordKey {
                switch value {
                case .scalar(let text):
                    try claim([name], path: entryPath)
                    try setPassword(text, mustAppear: entry.mustAppear, path: entryPath)
                    continue
                case .null:
                    guard entry.mustAppear else { continue }
                    throw failure(
                        entryPath,
                        "Cannot encode a nil password (line 1) from a dictionary or a nested optional: an "
                            + "empty line 1 reads back as no password.")
                default:
                    break  // An object or array under the password key is written as fields.
                }
            }
            if passwordIsLine1 && entry.isSuper, case .keyed(let part) = value {
                try addObject(part, key: key + [name], path: entryPath, passwordIsLine1: true)
                continue
            }
            try addValue(value, key: key + [name], path: entryPath)
        }
    }

    private mutating func addList(_ list: SecretUnkeyedStorage, key: [String], path: [any CodingKey]) throws {
        let elements = list.elements.map(resolved)
        if elements.isEmpty {
            if !key.isEmpty { try addField(key, SecretArchive.emptyArrayMarker, path: path) }
            return
        }
        let texts = elements.compactMap { element -> String? in
            if case .scalar(let text) = element { return text }
            return nil
        }
        if !key.isEmpty && texts.count == elements.count {
            // An array of single values: one `key: value` field per element, as pass users write them.
            try claim(key, path: path)
            for (index, text) in texts.enumerated() {
                try appendField(
                    key, SecretArchive.escapedValue(text), path: path + [SecretCodingKey(intValue: index)])
            }
            return
        }
        for (index, element) in elements.enumerated() {
            try addValue(element, key: key + [String(index)], path: path + [SecretCodingKey(intValue: index)])
        }
    }

    private mutating func addField(_ key: [String], _ written: String, path: [any CodingKey]) throws {
        try claim(key, path: path)
        try appendField(key, written, path: path)
    }

    private mutating func appendField(_ key: [String], _ written: String, path: [any CodingKey]) throws {
        let spelled = SecretArchive.key(key)
        if let problem = SecretSyntax.keyProblem(spelled) ?? SecretSyntax.valueProblem(Array(written.utf8)) {
            // The escaping rules make this unreachable; it guards against writing what reads back differently.
            throw failure(path, "Cannot encode \"\(spelled)\": \(problem)")
        }
        fields.append((spelled, written))
    }

    /// Reserves the key `key` for one value: no other value may have the same key or continue it.
    private mutating func claim(_ key: [String], path: [any CodingKey]) throws {
        let spelled = SecretArchive.key(key)
        var clash = leafKeys.contains(spelled) || innerKeys.contains(spelled)
        for length in 1..<max(1, key.count)
        where leafKeys.contains(SecretArchive.key(Array(key.prefix(length)))) {
            clash = true
        }
        if clash {
            throw failure(
                path,
                "Cannot encode two values under the field key \"\(spelled)\" (or one inside the other).")
        }
        leafKeys.insert(spelled)
        for length in 1..<max(1, key.count) { innerKeys.insert(SecretArchive.key(Array(key.prefix(length)))) }
    }
}

/// Stands for the value in `EncodingError.invalidValue`, so that the error never holds a password or
/// any other value of the archive: Swift prints that value in the error's description.
struct SecretHiddenValue: CustomStringConvertible, CustomDebugStringConvertible {
    var description: String { "<value not shown>" }
    var debugDescription: String { description }
}
