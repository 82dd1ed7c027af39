#if canImport(CSDBus)
    import CSDBus
    import Coffer

    #if canImport(Glibc)
        import Glibc
    #endif

    /// One D-Bus message (a call, a reply or a signal), read and written one value at a time through
    /// sd-bus.
    package final class BusMessage {
        /// The sd-bus message, referenced for this object's life.
        let pointer: OpaquePointer

        /// Takes a reference to `pointer`.
        init(retaining pointer: OpaquePointer) {
            self.pointer = sd_bus_message_ref(pointer)
        }

        /// Adopts a message created with a reference of its own.
        init(adopting pointer: OpaquePointer) {
            self.pointer = pointer
        }

        deinit { sd_bus_message_unref(pointer) }

        /// The object path the message is about.
        package var path: String { sd_bus_message_get_path(pointer).map { String(cString: $0) } ?? "" }
        /// The interface of the call or signal.
        package var interface: String {
            sd_bus_message_get_interface(pointer).map { String(cString: $0) } ?? ""
        }
        /// The method or signal name.
        package var member: String { sd_bus_message_get_member(pointer).map { String(cString: $0) } ?? "" }
        /// The unique bus name of the sender.
        package var sender: String { sd_bus_message_get_sender(pointer).map { String(cString: $0) } ?? "" }
        /// The signature of the body.
        package var bodySignature: String {
            sd_bus_message_get_signature(pointer, 1).map { String(cString: $0) } ?? ""
        }
        /// Whether the message is a method call.
        package var isMethodCall: Bool { sd_bus_message_is_method_call(pointer, nil, nil) > 0 }

        // MARK: - Reading

        /// Every value of the body, in order.
        package func readAll() throws -> [BusValue] {
            var values: [BusValue] = []
            while let value = try read() { values.append(value) }
            return values
        }

        /// The next value, or `nil` at the end of the body or of the container being read.
        package func read() throws -> BusValue? {
            var type: CChar = 0
            var contents: UnsafePointer<CChar>?
            let peeked = sd_bus_message_peek_type(pointer, &type, &contents)
            guard peeked > 0 else {
                if peeked < 0 { throw BusError.system("reading a message", peeked) }
                return nil
            }
            let inner = contents.map { String(cString: $0) } ?? ""
            switch UInt8(bitPattern: type) {
            case UInt8(ascii: "s"), UInt8(ascii: "o"), UInt8(ascii: "g"):
                var text: UnsafePointer<CChar>?
                try check(sd_bus_message_read_basic(pointer, type, &text))
                let string = text.map { String(cString: $0) } ?? ""
                switch UInt8(bitPattern: type) {
                case UInt8(ascii: "s"): return .string(string)
                case UInt8(ascii: "o"): return .objectPath(string)
                default: return .signature(string)
                }
            case UInt8(ascii: "y"): return .byte(try readBasic(type, UInt8(0)))
            case UInt8(ascii: "b"): return .boolean(try readBasic(type, Int32(0)) != 0)
            case UInt8(ascii: "i"): return .int32(try readBasic(type, Int32(0)))
            case UInt8(ascii: "u"): return .uint32(try readBasic(type, UInt32(0)))
            case UInt8(ascii: "x"): return .int64(try readBasic(type, Int64(0)))
            case UInt8(ascii: "t"): return .uint64(try readBasic(type, UInt64(0)))
            case UInt8(ascii: "n"): return .int32(Int32(try readBasic(type, Int16(0))))
            case UInt8(ascii: "q"): return .uint32(UInt32(try readBasic(type, UInt16(0))))
            case UInt8(ascii: "h"): return .int32(try readBasic(type, Int32(0)))
            case UInt8(ascii: "d"): return .uint64(try readBasic(type, Double(0)).bitPattern)
            case UInt8(ascii: "a"):
                if inner == "y" {
                    var bytes: UnsafeRawPointer?
                    var size = 0
                    try check(sd_bus_message_read_array(pointer, CChar(UInt8(ascii: "y")), &bytes, &size))
                    return .bytes(
                        SecureBytes(UnsafeRawBufferPointer(start: bytes, count: bytes == nil ? 0 : size)))
                }
                try check(sd_bus_message_enter_container(pointer, type, contents))
                var elements: [BusValue] = []
                while let element = try read() { elements.append(element) }
                try check(sd_bus_message_exit_container(pointer))
                if inner.hasPrefix("{") {
                    let entry = inner.dropFirst().dropLast()
                    let pairs = elements.compactMap { element -> (BusValue, BusValue)? in
                        guard case .structure(let parts) = element, parts.count == 2 else { return nil }
                        return (parts[0], parts[1])
                    }
                    return .dictionary(
                        key: String(entry.prefix(1)), value: String(entry.dropFirst()), pairs)
                }
                return .array(element: inner, elements)
            case UInt8(ascii: "r"), UInt8(ascii: "e"), UInt8(ascii: "v"):
                try check(sd_bus_message_enter_container(pointer, type, contents))
                var fields: [BusValue] = []
                while let field = try read() { fields.append(field) }
                try check(sd_bus_message_exit_container(pointer))
                if UInt8(bitPattern: type) == UInt8(ascii: "v") {
                    guard let value = fields.first else {
                        throw BusError.invalidArguments("an empty variant")
                    }
                    return .variant(value)
                }
                return .structure(fields)
            default:
                throw BusError.invalidArguments(
                    "a value of D-Bus type '\(Character(Unicode.Scalar(UInt8(bitPattern: type))))' is not expected here"
                )
            }
        }

        /// Reads one fixed-size basic value.
        private func readBasic<Value>(_ type: CChar, _ initial: Value) throws -> Value {
            var value = initial
            try check(withUnsafeMutablePointer(to: &value) { sd_bus_message_read_basic(pointer, type, $0) })
            return value
        }

        // MARK: - Writing

        /// Appends `values` to the body.
        package func append(_ values: [BusValue]) throws {
            for value in values { try append(value) }
        }

        /// Appends one value to the body.
        package func append(_ value: BusValue) throws {
            switch value {
            case .string(let text): try appendText("s", text)
            case .objectPath(let text): try appendText("o", text)
            case .signature(let text): try appendText("g", text)
            case .byte(let byte): try appendBasic("y", byte)
            case .boolean(let flag): try appendBasic("b", Int32(flag ? 1 : 0))
            case .int32(let number): try appendBasic("i", number)
            case .uint32(let number): try appendBasic("u", number)
            case .int64(let number): try appendBasic("x", number)
            case .uint64(let number): try appendBasic("t", number)
            case .bytes(let bytes):
                try bytes.withUnsafeBytes { buffer in
                    try check(
                        sd_bus_message_append_array(
                            pointer, type("y"), buffer.baseAddress ?? UnsafeRawPointer(bitPattern: 1),
                            buffer.count))
                }
            case .array(let element, let elements):
                try withContainer("a", element) { for element in elements { try append(element) } }
            case .dictionary(let key, let valueType, let pairs):
                try withContainer("a", "{" + key + valueType + "}") {
                    for (entryKey, entryValue) in pairs {
                        try withContainer("e", key + valueType) {
                            try append(entryKey)
                            try append(entryValue)
                        }
                    }
                }
            case .structure(let fields):
                try withContainer("r", fields.map(\.signature).joined()) {
                    for field in fields { try append(field) }
                }
            case .variant(let inner):
                try withContainer("v", inner.signature) { try append(inner) }
            }
        }

        /// Opens a container, appends what `body` appends, and closes it.
        private func withContainer(_ kind: Character, _ contents: String, _ body: () throws -> Void) throws {
            try check(contents.withCString { sd_bus_message_open_container(pointer, type(kind), $0) })
            try body()
            try check(sd_bus_message_close_container(pointer))
        }

        /// Appends a string-like value.
        private func appendText(_ kind: Character, _ text: String) throws {
            try check(text.withCString { sd_bus_message_append_basic(pointer, type(kind), $0) })
        }

        /// Appends a fixed-size basic value.
        private func appendBasic<Value>(_ kind: Character, _ value: Value) throws {
            try check(withUnsafePointer(to: value) { sd_bus_message_append_basic(pointer, type(kind), $0) })
        }

        /// The C character of a type code.
        private func type(_ kind: Character) -> CChar { CChar(bitPattern: kind.asciiValue ?? 0) }

        /// Throws for a negative sd-bus return.
        private func check(_ result: Int32) throws {
            if result < 0 { throw BusError.system("a D-Bus message", result) }
        }
    }
#endif
