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

    /// The string of `s`, `o` or `g`, or of a variant holding one.
    package var stringValue: String? {
        switch self {
        case .string(let text), .objectPath(let text), .signature(let text): text
        case .variant(let inner): inner.stringValue
        default: nil
        }
    }

    /// The truth value of `b`, or of a variant holding one.
    package var booleanValue: Bool? {
        switch self {
        case .boolean(let value): value
        case .variant(let inner): inner.booleanValue
        default: nil
        }
    }

    /// The elements of an array (strings and object paths, typically), or of a variant holding one.
    package var arrayValue: [BusValue]? {
        switch self {
        case .array(_, let elements): elements
        case .variant(let inner): inner.arrayValue
        default: nil
        }
    }

    /// The bytes of `ay`, or of a variant holding one.
    package var bytesValue: SecureBytes? {
        switch self {
        case .bytes(let bytes): bytes
        case .variant(let inner): inner.bytesValue
        default: nil
        }
    }

    /// A string-to-string dictionary (`a{ss}`, or a variant holding one); `nil` for another type.
    package var stringDictionaryValue: [String: String]? {
        switch self {
        case .dictionary(_, _, let pairs):
            var result: [String: String] = [:]
            for (key, value) in pairs {
                guard let key = key.stringValue, case .string(let text) = value else { return nil }
                result[key] = text
            }
            return result
        case .variant(let inner): return inner.stringDictionaryValue
        default: return nil
        }
    }

    /// A dictionary keyed by strings (`a{s..}`), values kept as they are.
    package var keyedValues: [String: BusValue]? {
        switch self {
        case .dictionary(_, _, let pairs):
            var result: [String: BusValue] = [:]
            for (key, value) in pairs {
                guard let key = key.stringValue else { return nil }
                result[key] = value
            }
            return result
        case .variant(let inner): return inner.keyedValues
        default: return nil
        }
    }

    /// The fields of a structure.
    package var structureFields: [BusValue]? {
        switch self {
        case .structure(let fields): fields
        case .variant(let inner): inner.structureFields
        default: nil
        }
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
