import Coffer
import CofferTestSupport
import Testing

@testable import CofferSecretService

/// The provider's handlers called in process, without a bus: dispatch, type checks and introspection
/// come from the interface declarations alone.
@Suite("Secret Service handlers, in process")
struct SecretServiceHandlerTests {
    static let root = "/org/freedesktop/secrets"

    /// A provider over a new store, not connected to any bus, and the sandbox (kept while it is used).
    static func provider() throws -> (SecretServiceProvider, GPGSandbox) {
        let (sandbox, store) = try GPGSandbox.withStore(committing: "start")
        return (try SecretServiceProvider(store: store, connecting: false) { _ in }, sandbox)
    }

    @Test("A method added to a declaration is dispatched, checked and introspected with no other edit")
    func addedMethodNeedsNoOtherEdit() throws {
        let (provider, sandbox) = try Self.provider()
        defer { withExtendedLifetime(sandbox) {} }
        let index = try #require(
            provider.interfaceDeclarations.firstIndex { $0.name == SecretServiceProvider.serviceInterface })
        provider.interfaceDeclarations[index].methods.append(
            BusMethod("Echo", in: "text s", out: "echoed s") { _, call in [.string(try call.string(0) + "!")]
            })
        let service = SecretServiceProvider.serviceInterface
        let echoed = try provider.call(Self.root, service, "Echo", [.string("hi")], from: ":1.5")
        #expect(echoed.first?.stringValue == "hi!")
        // With no interface named, the method is found by its name.
        #expect(
            try provider.call(Self.root, "", "Echo", [.string("x")], from: ":1.5").first?.stringValue == "x!")
        #expect(throws: BusError.self) {
            try provider.call(Self.root, service, "Echo", [.uint32(3)], from: ":1.5")
        }
        let xml = try #require(
            try provider.call(
                Self.root, SecretServiceProvider.introspectableInterface, "Introspect", [], from: ":1.5"
            )
            .first?.stringValue)
        #expect(
            xml.contains(
                #"<method name="Echo"><arg name="text" type="s" direction="in"/><arg name="echoed" type="s" direction="out"/></method>"#
            ), "\(xml)")
    }

    @Test("Errors: unknown methods, objects and properties, wrong types, read-only properties")
    func errors() throws {
        let (provider, sandbox) = try Self.provider()
        defer { withExtendedLifetime(sandbox) {} }
        func error(_ path: String, _ interface: String, _ member: String, _ arguments: [BusValue]) -> String {
            do {
                _ = try provider.call(path, interface, member, arguments, from: ":1.7")
                return "no error"
            } catch let error as BusError {
                return error.name
            } catch {
                return "\(error)"
            }
        }
        let properties = SecretServiceProvider.propertiesInterface
        let unknown = "org.freedesktop.DBus.Error.UnknownMethod"
        let invalid = "org.freedesktop.DBus.Error.InvalidArgs"
        #expect(error(Self.root, SecretServiceProvider.serviceInterface, "Nothing", []) == unknown)
        #expect(error(Self.root + "/collection/none", properties, "GetAll", [.string("")]) == unknown)
        #expect(error("/elsewhere", properties, "GetAll", [.string("")]) == unknown)
        #expect(
            error(Self.root, SecretServiceProvider.serviceInterface, "ReadAlias", [.uint32(1)]) == invalid)
        let login = Self.root + "/aliases/default"
        let collection = SecretServiceProvider.collectionInterface
        #expect(
            error(login, properties, "Set", [.string(collection), .string("Label"), .variant(.uint32(3))])
                == invalid)
        #expect(
            error(login, properties, "Set", [.string(collection), .string("Created"), .variant(.uint64(3))])
                == invalid)
        #expect(error(login, properties, "Get", [.string("org.example.X"), .string("Label")]) == invalid)
        // Red team: a variant of a variant is not a value of the declared type.
        #expect(
            error(
                login, properties, "Set",
                [.string(collection), .string("Label"), .variant(.variant(.string("x")))])
                == invalid)
        #expect(error(login, properties, "Get", [.string(collection), .string("Label")]) == "no error")
        // Every object path answers Introspect, as gnome-keyring does.
        #expect(error("/", SecretServiceProvider.introspectableInterface, "Introspect", []) == "no error")
    }

    @Test("A session item is served and changed in memory, with its signals, and nothing is written")
    func sessionItemInMemory() throws {
        let (provider, sandbox) = try Self.provider()
        defer { withExtendedLifetime(sandbox) {} }
        let client = ":1.9"
        let opened = try provider.call(
            Self.root, SecretServiceProvider.serviceInterface, "OpenSession",
            [.string("plain"), .variant(.string(""))],
            from: client)
        let session = try #require(opened.last?.stringValue)
        let secret = BusValue.structure([
            .objectPath(session), .bytes(SecureBytes([])), .bytes(SecureBytes(string: "in-memory")),
            .string("text/plain"),
        ])
        let made = try provider.call(
            Self.root + "/aliases/session", SecretServiceProvider.collectionInterface, "CreateItem",
            [.properties([("org.freedesktop.Secret.Item.Label", .string("S"))]), secret, .boolean(false)],
            from: client)
        let item = try #require(made.first?.stringValue)
        #expect(item.hasPrefix(Self.root + "/collection/session/"))
        let got = try provider.call(
            item, SecretServiceProvider.itemInterface, "GetSecret", [.objectPath(session)], from: client)
        let fields = try #require(got.first?.structureFields)
        #expect(
            fields[2].bytesValue.map { String(decoding: $0.withUnsafeBytes { Array($0) }, as: UTF8.self) }
                == "in-memory")
        #expect(provider.signalsSent.contains { $0.member == "ItemCreated" })
        #expect(!TestFiles.exists(provider.items.store.root + "/secret-service"))
    }

    /// Red team: deleting the in-memory session collection dropped a stored alias of a disk folder that
    /// is named `session` too (served as `session_`).
    @Test("Deleting the session collection leaves the aliases of a disk folder named session")
    func sessionDeleteKeepsDiskAliases() throws {
        let (sandbox, store) = try GPGSandbox.withStore()
        defer { withExtendedLifetime(sandbox) {} }
        try store.write("secret-service/session/d1", SecureBytes(string: "disk\nlabel: On disk\n"))
        let provider = try SecretServiceProvider(store: store, connecting: false) { _ in }
        let service = SecretServiceProvider.serviceInterface
        _ = try provider.call(
            Self.root, service, "SetAlias",
            [.string("work"), .objectPath(Self.root + "/collection/session_")],
            from: ":1.3")
        _ = try provider.call(
            Self.root + "/collection/session", SecretServiceProvider.collectionInterface, "Delete", [],
            from: ":1.3")
        #expect(try provider.items.readAliases() == ["work": "session"])
        let read = try provider.call(Self.root, service, "ReadAlias", [.string("work")], from: ":1.3")
        #expect(read.first?.stringValue == Self.root + "/collection/session_")
    }

    /// Red team (session bus): a byte array inside a second variant was taken for the client's key.
    @Test("OpenSession takes the DH input in one variant layer only")
    func openSessionOneVariantLayer() throws {
        let (provider, sandbox) = try Self.provider()
        defer { withExtendedLifetime(sandbox) {} }
        let service = SecretServiceProvider.serviceInterface
        let key = BusValue.bytes(SecureBytes([UInt8](repeating: 7, count: 128)))
        let opened = try provider.call(
            Self.root, service, "OpenSession", [.string(SessionCipher.algorithm), .variant(key)], from: ":1.8"
        )
        #expect(opened.count == 2)
        do {
            _ = try provider.call(
                Self.root, service, "OpenSession",
                [.string(SessionCipher.algorithm), .variant(.variant(key))],
                from: ":1.8")
            Issue.record("a nested variant was accepted")
        } catch let error as BusError {
            #expect(error.name == "org.freedesktop.DBus.Error.InvalidArgs")
        }
    }
}
