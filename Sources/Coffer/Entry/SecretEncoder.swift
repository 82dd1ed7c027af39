#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Encodes `Encodable` values as entries in pass's format.
///
/// The top-level property named ``passwordKey`` becomes line 1; every other value becomes
/// `key: value` fields in declaration order:
///
/// ```swift
/// struct Login: Codable {
///     var password: String
///     var login: String
///     var url: URL?
///     var address: Address   // struct Address: Codable { var city: String }
///     var tags: [String]
/// }
/// // hunter2
/// // login: alice
/// // url: https://example.com
/// // address.city: Paris
/// // tags: work
/// // tags: mail
/// ```
///
/// - Keys are written exactly as the `CodingKey` spells them (`userName: x`); the decoder
///   matches keys ignoring case, so files edited to `username: x` still decode, and two keys
///   that differ only in case throw. Use lowercase coding keys to get the lowercase keys pass
///   clients show best.
/// - Strings, integers, floating-point numbers and `Bool` (`true`/`false`) are written as
///   text, `Date` as ISO 8601 in UTC (`2024-05-01T12:00:00Z`, with fractional seconds only
///   when needed), `Data` as standard base64 and `URL` as its absolute string.
/// - Nested values use dotted keys (`address.city`); an array writes its key once per
///   element; `nil` writes nothing; dictionaries write their entries sorted by key.
/// - A string with line breaks, or the string `|`, is written as a multi-line field
///   (`key: |` followed by lines indented by two spaces) and reads back unchanged.
///
/// The encoder throws `EncodingError.invalidValue` rather than write a file that would read
/// back differently: a key that is empty, contains `:` or a line break, or starts or ends with
/// a blank; a value that starts with a space or a tab or has a `\r` at the end of a line; a
/// password with a line break; arrays of objects, of arrays or containing `nil`; a `nil` in a
/// dictionary; an optional or dictionary value that writes no line (an empty array or an
/// object whose properties are all `nil`, or an empty password), since it would read back as
/// absent; a dictionary key containing `.` unless the dictionary's values are single values;
/// two values under the same key (ignoring case); a date outside the years 0–9999; and a
/// top-level value that is not a struct, class, dictionary or single value.
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
    ///   back unchanged, with a `debugDescription` saying why.
    public func encode<T: Encodable>(_ value: T) throws -> Secret {
        let root = SecretEncodingWorker(
            codingPath: [],
            userInfo: userInfo.mapValues { $0 as Any },
            dictionaryValuesAreScalar: nil
        )
        var layout = SecretLayout(passwordKey: passwordKey)
        switch try layout.resolved(root.box(value, at: [])) {
        case .scalar(let text):
            try layout.setPassword(.scalar(text), mustAppear: false, path: [])
        case .keyed(let storage):
            try layout.addObject(storage, prefix: nil, path: [])
        default:
            throw EncodingError.invalidValue(
                value,
                EncodingError.Context(
                    codingPath: [],
                    debugDescription:
                        "Cannot encode \(T.self) as an entry: the top-level value must be a struct, "
                        + "a class, a dictionary or a single value such as a String."
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
                    value,
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
        storage.entries.append(.init(key: key, value: .deferred(nested), mustAppear: inDictionary))
        return nested
    }
}

struct SecretUnkeyedEncodingContainer: UnkeyedEncodingContainer {
    let worker: SecretEncodingWorker
    let storage: SecretUnkeyedStorage
    let codingPath: [any CodingKey]

    var count: Int { storage.elements.count }

    private var nextPath: [any CodingKey] { codingPath + [SecretCodingKey(intValue: count)] }

    private func add<T: Encodable>(_ value: T) throws {
        storage.elements.append(try worker.box(value, at: nextPath))
    }

    mutating func encodeNil() throws { storage.elements.append(.null) }
    mutating func encode<T: Encodable>(_ value: T) throws { try add(value) }
    mutating func encode(_ value: Bool) throws { try add(value) }
    mutating func encode(_ value: String) throws { try add(value) }
    mutating func encode(_ value: Double) throws { try add(value) }
    mutating func encode(_ value: Float) throws { try add(value) }
    mutating func encode(_ value: Int) throws { try add(value) }
    mutating func encode(_ value: Int8) throws { try add(value) }
    mutating func encode(_ value: Int16) throws { try add(value) }
    mutating func encode(_ value: Int32) throws { try add(value) }
    mutating func encode(_ value: Int64) throws { try add(value) }
    mutating func encode(_ value: UInt) throws { try add(value) }
    mutating func encode(_ value: UInt8) throws { try add(value) }
    mutating func encode(_ value: UInt16) throws { try add(value) }
    mutating func encode(_ value: UInt32) throws { try add(value) }
    mutating func encode(_ value: UInt64) throws { try add(value) }

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

struct SecretSingleValueEncodingContainer: SingleValueEncodingContainer {
    let worker: SecretEncodingWorker

    var codingPath: [any CodingKey] { worker.codingPath }

    private func set<T: Encodable>(_ value: T) throws {
        worker.value = try worker.box(value, at: codingPath)
    }

    mutating func encodeNil() throws { worker.value = .null }
    mutating func encode<T: Encodable>(_ value: T) throws { try set(value) }
    mutating func encode(_ value: Bool) throws { try set(value) }
    mutating func encode(_ value: String) throws { try set(value) }
    mutating func encode(_ value: Double) throws { try set(value) }
    mutating func encode(_ value: Float) throws { try set(value) }
    mutating func encode(_ value: Int) throws { try set(value) }
    mutating func encode(_ value: Int8) throws { try set(value) }
    mutating func encode(_ value: Int16) throws { try set(value) }
    mutating func encode(_ value: Int32) throws { try set(value) }
    mutating func encode(_ value: Int64) throws { try set(value) }
    mutating func encode(_ value: UInt) throws { try set(value) }
    mutating func encode(_ value: UInt8) throws { try set(value) }
    mutating func encode(_ value: UInt16) throws { try set(value) }
    mutating func encode(_ value: UInt32) throws { try set(value) }
    mutating func encode(_ value: UInt64) throws { try set(value) }
}

/// Turns the encoded tree into the password and the field lines, checking that everything
/// reads back unchanged.
struct SecretLayout {
    let passwordKey: String
    private var password: String?
    private var fields: [(key: String, value: String)] = []
    private var usedKeys: Set<String> = []

    init(passwordKey: String) {
        self.passwordKey = passwordKey
    }

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

    private func failure(_ value: Any, _ path: [any CodingKey], _ message: String) -> EncodingError {
        EncodingError.invalidValue(value, EncodingError.Context(codingPath: path, debugDescription: message))
    }

    mutating func setPassword(_ value: SecretEncodedValue, mustAppear: Bool, path: [any CodingKey]) throws {
        switch value {
        case .scalar(let text):
            if let problem = SecretSyntax.passwordProblem(Array(text.utf8)) {
                throw failure(text, path, "Cannot encode the password (line 1): \(problem)")
            }
            if mustAppear && text.isEmpty {
                throw failure(
                    text, path,
                    "Cannot encode an empty password from an optional or a dictionary: an empty line 1 "
                        + "reads back as no password (nil)."
                )
            }
            password = text
        case .null:
            if mustAppear {
                throw failure(SecretNilValue(), path, "Cannot encode a nil password in a dictionary.")
            }
        default:
            throw failure(
                Self.name(of: path), path,
                "Cannot encode \"\(Self.name(of: path))\" as the password (line 1): it must be a single value "
                    + "such as a String, not an object or an array."
            )
        }
    }

    mutating func addObject(_ storage: SecretKeyedStorage, prefix: String?, path: [any CodingKey]) throws {
        var entries = storage.entries
        if storage.dictionaryValuesAreScalar != nil {
            entries.sort { $0.key.stringValue.utf8.lexicographicallyPrecedes($1.key.stringValue.utf8) }
        }
        for entry in entries {
            let name = entry.key.stringValue
            let entryPath = path + [entry.key]
            let value = resolved(entry.value)
            if prefix == nil && name == passwordKey {
                try claim(name, path: entryPath)
                try setPassword(value, mustAppear: entry.mustAppear, path: entryPath)
                continue
            }
            if let problem = SecretSyntax.keyProblem(name) {
                throw failure(
                    name, entryPath, "Cannot encode the key \"\(Self.name(of: entryPath))\": \(problem)")
            }
            try checkDictionaryKey(name, storage: storage, path: entryPath)
            let key = prefix.map { "\($0).\(name)" } ?? name
            let linesBefore = fields.count
            switch value {
            case .scalar(let text):
                try claim(key, path: entryPath)
                try addField(key, text, path: entryPath)
            case .null:
                if entry.mustAppear {
                    throw failure(
                        SecretNilValue(), entryPath,
                        "Cannot encode nil for \"\(key)\": a nil dictionary value or nested optional writes "
                            + "nothing and would read back as absent."
                    )
                }
            case .keyed(let nested):
                try addObject(nested, prefix: key, path: entryPath)
            case .unkeyed(let list):
                try claim(key, path: entryPath)
                try addList(list, key: key, path: entryPath)
            case .deferred:
                preconditionFailure("resolved(_:) never returns a deferred value")
            }
            if entry.mustAppear && fields.count == linesBefore {
                throw failure(
                    key, entryPath,
                    "Cannot encode \"\(key)\": the value writes no field (an empty array, or an object whose "
                        + "properties are all nil), so it would read back as nil or absent. Store nil instead, "
                        + "or make the property non-optional."
                )
            }
        }
    }

    private mutating func addList(_ list: SecretUnkeyedStorage, key: String, path: [any CodingKey]) throws {
        for (index, element) in list.elements.enumerated() {
            let elementPath = path + [SecretCodingKey(intValue: index)]
            switch resolved(element) {
            case .scalar(let text):
                try addField(key, text, path: elementPath)
            case .null:
                throw failure(
                    SecretNilValue(), elementPath,
                    "Cannot encode nil inside the array \"\(key)\": an array becomes one field per element "
                        + "and nil has no field."
                )
            default:
                throw failure(
                    key, elementPath,
                    "Cannot encode the array \"\(key)\": only arrays of single values (text, numbers, dates, "
                        + "...) can be written, as one \"\(key): value\" field per element; arrays of objects "
                        + "or of arrays cannot."
                )
            }
        }
    }

    private mutating func addField(_ key: String, _ text: String, path: [any CodingKey]) throws {
        if let problem = SecretSyntax.valueProblem(Array(text.utf8)) {
            throw failure(text, path, "Cannot encode the value of \"\(key)\": \(problem)")
        }
        fields.append((key, text))
    }

    /// Reserves `key` for one value (a single field or an array); keys are read ignoring case.
    private mutating func claim(_ key: String, path: [any CodingKey]) throws {
        guard usedKeys.insert(key.lowercased()).inserted else {
            throw failure(
                key, path,
                "Cannot encode two values under the same field key \"\(key)\"; keys are read ignoring case."
            )
        }
    }

    private func checkDictionaryKey(_ name: String, storage: SecretKeyedStorage, path: [any CodingKey]) throws
    {
        guard storage.dictionaryValuesAreScalar == false, name.contains(".") else { return }
        throw failure(
            name, path,
            "Cannot encode the dictionary key \"\(name)\": '.' separates nested keys, so it is only allowed "
                + "in dictionaries whose values are single values."
        )
    }
}

/// Stands for `nil` in `EncodingError.invalidValue`.
struct SecretNilValue: CustomStringConvertible {
    var description: String { "nil" }
}
