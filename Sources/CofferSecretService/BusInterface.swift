#if canImport(CSDBus)
    import Coffer

    /// One D-Bus interface as the provider serves it, declared once: its methods (names, argument types
    /// and handlers), properties (types, getters, setters) and signals. Dispatch, the checks of argument
    /// and property types, and the introspection XML all come from the declaration.
    struct BusInterface: Sendable {
        /// The interface name (`org.freedesktop.Secret.Service`).
        let name: String
        var methods: [BusMethod] = []
        var properties: [BusProperty] = []
        var signals: [BusSignal] = []

        /// The method called `name`, if the interface has one.
        func method(_ name: String) -> BusMethod? { methods.first { $0.name == name } }

        /// The property called `name`, if the interface has one.
        func property(_ name: String) -> BusProperty? { properties.first { $0.name == name } }

        /// The interface's part of an introspection document.
        var xml: String {
            var text = "  <interface name=\"\(name)\">\n"
            for method in methods {
                let arguments =
                    method.input.map { "<arg name=\"\($0.name)\" type=\"\($0.type)\" direction=\"in\"/>" }
                    + method.output.map { "<arg name=\"\($0.name)\" type=\"\($0.type)\" direction=\"out\"/>" }
                text +=
                    arguments.isEmpty
                    ? "    <method name=\"\(method.name)\"/>\n"
                    : "    <method name=\"\(method.name)\">\(arguments.joined())</method>\n"
            }
            for signal in signals {
                let arguments = signal.arguments.map { "<arg name=\"\($0.name)\" type=\"\($0.type)\"/>" }
                text += "    <signal name=\"\(signal.name)\">\(arguments.joined())</signal>\n"
            }
            for property in properties {
                let access = property.set == nil ? "read" : "readwrite"
                text +=
                    "    <property name=\"\(property.name)\" type=\"\(property.type)\" access=\"\(access)\"/>\n"
            }
            return text + "  </interface>\n"
        }

        /// An introspection document: `interfaces`, and `children` (path elements) as nodes.
        static func document(_ interfaces: [BusInterface], children: [String]) -> String {
            "<!DOCTYPE node PUBLIC \"-//freedesktop//DTD D-BUS Object Introspection 1.0//EN\"\n"
                + "\"http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd\">\n<node>\n"
                + interfaces.map(\.xml).joined() + children.map { "  <node name=\"\($0)\"/>\n" }.joined()
                + "</node>\n"
        }
    }

    /// A named argument of a method or signal.
    struct BusArgument: Sendable, Equatable {
        let name: String
        /// Its D-Bus type signature.
        let type: String

        /// The arguments `list` spells: `name type` pairs separated by commas (`"algorithm s, input v"`).
        static func list(_ list: String) -> [BusArgument] {
            list.split(separator: ",").map { pair in
                let parts = pair.split(separator: " ")
                return BusArgument(name: String(parts[0]), type: String(parts[1]))
            }
        }
    }

    /// A method: its arguments each way, and what handles a call once the arguments have the declared types.
    struct BusMethod: Sendable {
        let name: String
        let input: [BusArgument]
        let output: [BusArgument]
        let handler: @Sendable (SecretServiceProvider, BusCall) throws -> [BusValue]

        /// `name`, taking `input` and giving `output` (``BusArgument/list(_:)``), handled by `handler`.
        init(
            _ name: String, in input: String = "", out output: String = "",
            _ handler: @escaping @Sendable (SecretServiceProvider, BusCall) throws -> [BusValue]
        ) {
            self.name = name
            self.input = BusArgument.list(input)
            self.output = BusArgument.list(output)
            self.handler = handler
        }

        var inputSignature: String { input.map(\.type).joined() }
        var outputSignature: String { output.map(\.type).joined() }
    }

    /// A property: its type, how it is read on an object, and how it is set (`nil`: read-only).
    struct BusProperty: Sendable {
        let name: String
        let type: String
        let get: @Sendable (SecretServiceProvider, SecretServiceProvider.Object) -> BusValue
        let set: (@Sendable (SecretServiceProvider, SecretServiceProvider.Object, BusValue) throws -> Void)?

        /// A property; `set` is given a value of the declared type.
        init(
            _ name: String, _ type: String,
            get: @escaping @Sendable (SecretServiceProvider, SecretServiceProvider.Object) -> BusValue,
            set: (@Sendable (SecretServiceProvider, SecretServiceProvider.Object, BusValue) throws -> Void)? =
                nil
        ) {
            self.name = name
            self.type = type
            self.get = get
            self.set = set
        }
    }

    /// A signal and its arguments.
    struct BusSignal: Sendable {
        let name: String
        let arguments: [BusArgument]

        /// `name` with `arguments` (``BusArgument/list(_:)``).
        init(_ name: String, _ arguments: String) {
            self.name = name
            self.arguments = BusArgument.list(arguments)
        }
    }

    /// A method call whose arguments have the method's declared types: the object it is made on, and
    /// the arguments read by type.
    struct BusCall {
        let object: SecretServiceProvider.Object
        /// The object's path.
        let path: String
        let arguments: [BusValue]

        /// Argument `index` as a string (`s`, `o`).
        func string(_ index: Int) throws -> String {
            guard let text = arguments[index].stringValue else { throw Self.wrongType(index) }
            return text
        }

        /// Argument `index` as an array of object paths (`ao`).
        func objectPaths(_ index: Int) throws -> [String] {
            guard let elements = arguments[index].arrayValue else { throw Self.wrongType(index) }
            return elements.compactMap(\.stringValue)
        }

        /// Argument `index` as a string dictionary (`a{ss}`).
        func stringDictionary(_ index: Int) throws -> [String: String] {
            guard let dictionary = arguments[index].stringDictionaryValue else { throw Self.wrongType(index) }
            return dictionary
        }

        /// Argument `index` as a property dictionary (`a{sv}`).
        func properties(_ index: Int) throws -> [String: BusValue] {
            guard let dictionary = arguments[index].keyedValues else { throw Self.wrongType(index) }
            return dictionary
        }

        /// Argument `index` as a truth value (`b`).
        func boolean(_ index: Int) throws -> Bool {
            guard let value = arguments[index].booleanValue else { throw Self.wrongType(index) }
            return value
        }

        /// The collection (its path element) the call is made on.
        func collection() throws -> String {
            guard case .collection(let element) = object else { throw BusError.noSuchObject(path) }
            return element
        }

        /// The item (collection and item path elements) the call is made on.
        func item() throws -> (collection: String, item: String) {
            guard case .item(let collection, let item) = object else { throw BusError.noSuchObject(path) }
            return (collection, item)
        }

        private static func wrongType(_ index: Int) -> BusError {
            BusError.invalidArguments("argument \(index + 1) is not of its declared type")
        }
    }

    extension SecretServiceProvider {
        /// `org.freedesktop.DBus.Introspectable`, on every object.
        static let introspectable = BusInterface(
            name: introspectableInterface,
            methods: [
                BusMethod("Introspect", out: "xml_data s") { provider, call in
                    [.string(provider.introspection(of: call.object))]
                }
            ])

        /// `org.freedesktop.DBus.Properties`, on every object: the properties of the object's own
        /// interface, by its declaration.
        static let properties = BusInterface(
            name: propertiesInterface,
            methods: [
                BusMethod("Get", in: "interface s, name s", out: "value v") { provider, call in
                    let property = try provider.property(
                        try call.string(1), of: call.object, named: call.string(0))
                    return [.variant(property.get(provider, call.object))]
                },
                BusMethod("GetAll", in: "interface s", out: "properties a{sv}") { provider, call in
                    let own = try provider.ownInterface(of: call.object, named: call.string(0))
                    return [.properties(provider.properties(of: call.object, in: own))]
                },
                BusMethod("Set", in: "interface s, name s, value v") { provider, call in
                    let name = try call.string(1)
                    let property = try provider.property(name, of: call.object, named: call.string(0))
                    guard let set = property.set else {
                        throw BusError.invalidArguments("the property \(Quoting.inQuotes(name)) is read-only")
                    }
                    // One layer: a variant holding a variant is not a value of the declared type.
                    let value = call.arguments[2].variantContent
                    guard value.signature == property.type else {
                        throw BusError.invalidArguments(
                            "\(name) is of type \(property.type), not \(value.signature)")
                    }
                    try set(provider, call.object, value)
                    return []
                },
            ],
            signals: [BusSignal("PropertiesChanged", "interface s, changed a{sv}, invalidated as")])

        /// Every interface the provider serves, as declared.
        static let declarations = [introspectable, properties, service, collection, item, session, prompt]

        /// The interfaces `object` has (from ``interfaceDeclarations``), its own last.
        func interfaces(of object: Object) -> [BusInterface] {
            let own: String? =
                switch object {
                case .service: Self.serviceInterface
                case .collection: Self.collectionInterface
                case .item: Self.itemInterface
                case .session: Self.sessionInterface
                case .prompt: Self.promptInterface
                case .folder: nil
                }
            let names = [Self.introspectableInterface, Self.propertiesInterface] + (own.map { [$0] } ?? [])
            return names.compactMap { name in interfaceDeclarations.first { $0.name == name } }
        }

        /// Runs a call on `object` as its interfaces declare it: UnknownMethod for a method it does not
        /// have, InvalidArgs for arguments of other types than declared.
        func dispatch(
            _ object: Object, path: String, interface: String, member: String, _ arguments: [BusValue]
        )
            throws -> [BusValue]
        {
            let method = try method(of: object, interface: interface, member: member)
            try Self.check(arguments.map(\.signature).joined(), against: method)
            let results = try method.handler(self, BusCall(object: object, path: path, arguments: arguments))
            let made = results.map(\.signature).joined()
            guard made == method.outputSignature else {
                throw BusError.failed("\(member) made (\(made)), not (\(method.outputSignature))")
            }
            return results
        }

        /// The method `member` of `object`'s interface `interface` (empty: any); UnknownMethod when there
        /// is none.
        func method(of object: Object, interface: String, member: String) throws -> BusMethod {
            let available = interfaces(of: object)
            let found =
                interface.isEmpty
                ? available.lazy.compactMap { $0.method(member) }.first
                : available.first { $0.name == interface }?.method(member)
            guard let found else { throw BusError.unknownMethod(interface, member) }
            return found
        }

        /// Refuses arguments of signature `given` unless they are what `method` takes (InvalidArgs).
        static func check(_ given: String, against method: BusMethod) throws {
            guard given == method.inputSignature else {
                throw BusError.invalidArguments(
                    "expected arguments of type (\(method.inputSignature)), got (\(given))")
            }
        }

        /// The object's own interface (the one with properties), checked against the name a Properties
        /// call gives (empty: any).
        func ownInterface(of object: Object, named name: String) throws -> BusInterface? {
            let own = interfaces(of: object).dropFirst(2).first
            guard name.isEmpty || name == own?.name else {
                throw BusError.invalidArguments("no interface \(Quoting.inQuotes(name)) here")
            }
            return own
        }

        /// The property `name` of `object`'s interface `interface` (empty: any); InvalidArgs when there is none.
        func property(_ name: String, of object: Object, named interface: String) throws -> BusProperty {
            guard let property = try ownInterface(of: object, named: interface)?.property(name) else {
                throw BusError.invalidArguments("no property \(Quoting.inQuotes(name)) here")
            }
            return property
        }

        /// Every property of `object` in `interface`, in the declaration's order.
        func properties(of object: Object, in interface: BusInterface?) -> [(String, BusValue)] {
            (interface?.properties ?? []).map { ($0.name, $0.get(self, object)) }
        }
    }
#endif
