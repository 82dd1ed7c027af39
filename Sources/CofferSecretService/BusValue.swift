import Coffer

/// A value of the D-Bus type system, as the Secret Service provider reads and writes it.
///
/// Byte arrays (`ay`) are ``SecureBytes``, since secrets and session keys travel as them.
package indirect enum BusValue: Sendable {
    /// `y`
    case byte(UInt8)
    /// `b`
    case boolean(Bool)
    /// `i`
    case int32(Int32)
    /// `u`
    case uint32(UInt32)
    /// `x`
    case int64(Int64)
    /// `t`
    case uint64(UInt64)
    /// `s`
    case string(String)
    /// `o`
    case objectPath(String)
    /// `g`
    case signature(String)
    /// `ay`
    case bytes(SecureBytes)
    /// `a` of any element type but bytes and dictionary entries.
    case array(element: String, [BusValue])
    /// `a{..}`
    case dictionary(key: String, value: String, [(BusValue, BusValue)])
    /// `(..)`
    case structure([BusValue])
    /// `v`
    case variant(BusValue)

    /// The value's D-Bus type signature.
    package var signature: String {
        switch self {
        case .byte: "y"
        case .boolean: "b"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .bytes: "ay"
        case .array(let element, _): "a" + element
        case .dictionary(let key, let value, _): "a{" + key + value + "}"
        case .structure(let fields): "(" + fields.map(\.signature).joined() + ")"
        case .variant: "v"
        }
    }

    /// An array of object paths (`ao`).
    package static func objectPaths(_ paths: [String]) -> BusValue {
        .array(element: "o", paths.map(BusValue.objectPath))
    }

    /// A string dictionary (`a{ss}`).
    package static func stringDictionary(_ dictionary: [String: String]) -> BusValue {
        .dictionary(
            key: "s", value: "s",
            dictionary.sorted { $0.key < $1.key }.map { (.string($0.key), .string($0.value)) })
    }

    /// A property dictionary (`a{sv}`).
    package static func properties(_ properties: [(String, BusValue)]) -> BusValue {
        .dictionary(key: "s", value: "v", properties.map { (.string($0.0), .variant($0.1)) })
    }

    /// What a variant holds (one layer only: a variant of a variant is a variant), or the value itself.
    package var variantContent: BusValue {
        if case .variant(let inner) = self { inner } else { self }
    }

    /// The value itself, or what a variant (or a variant of a variant) holds.
    package var unwrapped: BusValue {
        if case .variant(let inner) = self { inner.unwrapped } else { self }
    }

    /// The string of `s`, `o` or `g`, or of a variant holding one.
    package var stringValue: String? {
        switch unwrapped {
        case .string(let text), .objectPath(let text), .signature(let text): text
        default: nil
        }
    }

    /// The truth value of `b`, or of a variant holding one.
    package var booleanValue: Bool? {
        if case .boolean(let value) = unwrapped { value } else { nil }
    }

    /// The elements of an array (strings and object paths, typically), or of a variant holding one.
    package var arrayValue: [BusValue]? {
        if case .array(_, let elements) = unwrapped { elements } else { nil }
    }

    /// The bytes of `ay`, or of a variant holding one.
    package var bytesValue: SecureBytes? {
        if case .bytes(let bytes) = unwrapped { bytes } else { nil }
    }

    /// A string-to-string dictionary (`a{ss}`, or a variant holding one); `nil` for another type (an
    /// empty `a{sv}` included).
    package var stringDictionaryValue: [String: String]? {
        guard case .dictionary("s", "s", _) = unwrapped else { return nil }
        return keyed { if case .string(let text) = $0 { text } else { nil } }
    }

    /// The string of `s` (or of a variant holding one) only: not an object path or a signature.
    package var textValue: String? {
        if case .string(let text) = unwrapped { text } else { nil }
    }

    /// A dictionary keyed by strings (`a{s..}`), values kept as they are.
    package var keyedValues: [String: BusValue]? {
        keyed { $0 }
    }

    /// The fields of a structure.
    package var structureFields: [BusValue]? {
        if case .structure(let fields) = unwrapped { fields } else { nil }
    }

    /// A dictionary keyed by strings (or a variant holding one) with each value made by `convert`; `nil`
    /// for another type, or when a key is not a string or `convert` gives `nil` for a value.
    private func keyed<Value>(_ convert: (BusValue) -> Value?) -> [String: Value]? {
        guard case .dictionary(_, _, let pairs) = unwrapped else { return nil }
        var result: [String: Value] = [:]
        for (key, value) in pairs {
            guard let key = key.stringValue, let converted = convert(value) else { return nil }
            result[key] = converted
        }
        return result
    }
}

/// An error that goes back to a D-Bus caller: a D-Bus error name and one line for a person.
///
/// The message never holds a secret or an attribute value.
package struct BusError: Error, Sendable, CustomStringConvertible {
    /// The D-Bus error name (`org.freedesktop.Secret.Error.NoSuchObject`).
    package let name: String
    /// What went wrong.
    package let message: String

    /// An error named `name` saying `message`.
    package init(_ name: String, _ message: String) {
        self.name = name
        self.message = message
    }

    /// `org.freedesktop.DBus.Error.InvalidArgs`.
    package static func invalidArguments(_ message: String) -> BusError {
        BusError("org.freedesktop.DBus.Error.InvalidArgs", message)
    }

    /// `org.freedesktop.DBus.Error.Failed`.
    package static func failed(_ message: String) -> BusError {
        BusError("org.freedesktop.DBus.Error.Failed", message)
    }

    /// `org.freedesktop.Secret.Error.NoSuchObject`.
    package static func noSuchObject(_ path: String) -> BusError {
        BusError("org.freedesktop.Secret.Error.NoSuchObject", "no such object: \(path)")
    }

    /// `org.freedesktop.DBus.Error.UnknownMethod`.
    package static func unknownMethod(_ interface: String, _ member: String) -> BusError {
        BusError(
            "org.freedesktop.DBus.Error.UnknownMethod", "no method \(member) in interface \(interface) here")
    }

    /// What sd-bus's negative return `code` means, for an error of `operation`.
    package static func system(_ operation: String, _ code: Int32) -> BusError {
        BusError("org.freedesktop.DBus.Error.Failed", "\(operation): \(String(cString: strerror(-code)))")
    }

    /// The name and message.
    package var description: String { "\(name): \(message)" }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
