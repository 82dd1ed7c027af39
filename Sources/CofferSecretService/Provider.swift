#if canImport(CSDBus)
    import Coffer

    #if canImport(Glibc)
        import Glibc
    #endif

    /// What the provider reports to the program that runs it (which words it).
    package enum ProviderEvent: Sendable, Equatable {
        /// The name is owned and calls are served: items indexed, entries that did not decrypt.
        case serving(items: Int, unreadable: Int)
        /// A SIGTERM, SIGINT or SIGHUP came: the call in progress was finished and answered; the provider stops.
        case stopping(signal: String)
        /// Another provider took the name (`--replace`); the provider stops.
        case replaced
        /// The store changed on disk and the index was read again.
        case refreshed(items: Int)
    }

    /// Why the provider could not start.
    package enum ProviderFailure: Error, Sendable, Equatable {
        /// Another connection owns `org.freedesktop.secrets` (and, with `--replace`, kept it): its process
        /// id and command name when the bus tells them.
        case nameTaken(pid: Int32?, command: String?, triedReplace: Bool)
    }

    /// The freedesktop Secret Service (`org.freedesktop.secrets`) served from the password store: the
    /// objects, methods, properties and signals of the specification, over sd-bus, on one thread.
    package final class SecretServiceProvider {
        /// The well-known bus name.
        package static let busName = "org.freedesktop.secrets"
        /// The root of the object paths.
        static let root = "/org/freedesktop/secrets"
        static let serviceInterface = "org.freedesktop.Secret.Service"
        static let collectionInterface = "org.freedesktop.Secret.Collection"
        static let itemInterface = "org.freedesktop.Secret.Item"
        static let sessionInterface = "org.freedesktop.Secret.Session"
        static let promptInterface = "org.freedesktop.Secret.Prompt"
        static let propertiesInterface = "org.freedesktop.DBus.Properties"
        static let introspectableInterface = "org.freedesktop.DBus.Introspectable"

        /// An item in the index: its entry id and what is known without decrypting.
        struct Item {
            var id: String
            var metadata: ItemMetadata
        }

        /// A collection in the index.
        struct Collection {
            /// The folder name under `secret-service/`.
            var id: String
            var label: String
            var created: UInt64
            var modified: UInt64
            /// The items, by object-path element.
            var items: [String: Item] = [:]
            var locked = false
            /// Whether it is the `session` collection: kept in memory only, never written to the store.
            var inMemory = false
            /// The secrets of an in-memory collection's items, by item id (wiped when freed).
            var secrets: [String: SecureBytes] = [:]
        }

        /// The alias of the collection kept in memory only (libsecret's `SECRET_COLLECTION_SESSION`).
        static let sessionAlias = "session"

        /// A client's session: who opened it and how secrets travel in it.
        struct Session {
            var owner: String
            var cipher: SessionCipher?
        }

        /// What a prompt does when the client runs it.
        enum PromptAction {
            /// Unlocks these objects and completes with them.
            case unlock([String])
        }

        /// A pending prompt.
        struct Prompt {
            var owner: String
            var action: PromptAction
        }

        let items: ItemStore
        /// The connection (set once, in `init`, after the index is read).
        private(set) var bus: BusConnection!
        let onEvent: (ProviderEvent) -> Void
        /// The collections, by object-path element.
        var collections: [String: Collection] = [:]
        /// Aliases to collections' path elements (`default` to `login`, `session` to the in-memory one).
        var aliases: [String: String] = ["default": "login"]
        /// The aliases kept in the store (alias to collection folder), as last read or written.
        var storedAliases: [String: String] = [:]
        /// The stamp of the aliases entry when it was last read.
        var aliasesStamp: ItemStore.FileStamp?
        var sessions: [String: Session] = [:]
        var prompts: [String: Prompt] = [:]
        var counter = 0
        /// The metadata read from each entry, with its file's stamp.
        var cache: ItemStore.Cache = [:]
        var running = true
        /// The sender of the call being handled.
        var caller = ""
        /// Signals raised while a call is handled, sent after its reply.
        var pendingSignals: [BusMessage] = []
        /// Whether a call is being handled.
        var handling = false
        /// Processes started in the background (telling gpg-agent to forget), reaped when they end.
        var children: [pid_t] = []
        /// The signals that stop the provider between calls (held back from before any thread starts).
        let stopSignals: StopSignals

        /// A provider for `store`, its index read; nothing is served until ``run(replace:)``.
        ///
        /// The bus is connected (and the connection made ready, so that it is not closed while a large
        /// store is read), then the index read: every entry decrypted once.
        package init(store: PasswordStore, onEvent: @escaping (ProviderEvent) -> Void) throws {
            stopSignals = StopSignals()
            items = ItemStore(store: store)
            self.onEvent = onEvent
            bus = try BusConnection()
            try bus.waitUntilReady()
            unreadable = try loadIndex()
            makeSessionCollection()
        }

        /// The bus daemon's own name: the sender of its signals, which no client can take.
        static let busDaemon = "org.freedesktop.DBus"

        /// How many entries did not decrypt when the index was first read.
        private var unreadable = 0

        /// Reads the index, takes the name and serves until the bus closes or another provider replaces it.
        package func run(replace: Bool) throws {
            // Every path, so that a call to an object that is not there gets gnome-keyring's answer
            // (UnknownMethod, which clients take for "not found") rather than sd-bus's UnknownObject.
            try bus.addFallback("/") { [unowned self] message in handle(message) }
            try bus.matchSignal(
                sender: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                interface: "org.freedesktop.DBus",
                member: "NameOwnerChanged"
            ) { [unowned self] message in
                // Only the bus itself says who left: a client may send this signal to us directly.
                if message.sender == Self.busDaemon { nameOwnerChanged(message) }
                return true
            }
            try bus.matchSignal(
                sender: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                interface: "org.freedesktop.DBus",
                member: "NameLost"
            ) { [unowned self] message in
                if message.sender == Self.busDaemon, (try? message.read())??.stringValue == Self.busName {
                    running = false
                    onEvent(.replaced)
                }
                return true
            }
            if try bus.requestName(Self.busName, replace: replace) == .taken {
                let owner = bus.owner(of: Self.busName)
                throw ProviderFailure.nameTaken(
                    pid: owner?.pid, command: owner?.command, triedReplace: replace)
            }
            onEvent(
                .serving(items: collections.values.reduce(0) { $0 + $1.items.count }, unreadable: unreadable))
            let watcher = StoreWatcher(
                root: items.store.root + "/" + ItemStore.folder, storeRoot: items.store.root)
            // Calls are handled one at a time: a stop signal is taken between them, so that a write and its
            // commit are finished and answered before the provider exits.
            while running {
                guard try bus.processPending(), running else { break }
                if let signal = stopSignals.received() {
                    onEvent(
                        .stopping(
                            signal: [SIGTERM: "SIGTERM", SIGINT: "SIGINT", SIGHUP: "SIGHUP"][signal]
                                ?? "signal \(signal)"))
                    break
                }
                let ready = bus.wait(
                    extra: [watcher.descriptor, stopSignals.descriptor].compactMap { $0 },
                    timeout: children.isEmpty ? 60_000 : 200)
                if let descriptor = watcher.descriptor, ready.contains(descriptor), watcher.drain() {
                    refresh()
                }
                children = children.filter { waitpid($0, nil, WNOHANG) == 0 }
            }
            bus.flush()
        }

        // MARK: - The index

        /// Reads every item's metadata; returns how many entries did not decrypt.
        func loadIndex() throws -> Int {
            let loaded = try items.load(cache: &cache)
            var fresh: [String: Collection] = [:]
            for stored in loaded.collections {
                // Without a `.collection` entry, `login` is labelled as gnome-keyring labels it, others by folder.
                let label = stored.label ?? (stored.id == "login" ? "Login" : stored.id)
                var collection = Collection(
                    id: stored.id, label: label, created: stored.created, modified: stored.created)
                let element = Self.diskElement(stored.id)
                for (id, metadata) in stored.items {
                    collection.items[Self.pathElement(id)] = Item(id: id, metadata: metadata)
                    collection.modified = max(collection.modified, metadata.modified)
                }
                // A collection keeps its lock state across refreshes. One first seen with entries that do
                // not decrypt (its key's passphrase not given yet) is locked: served as unlocked, it would
                // look empty, and a client could write over what it cannot see.
                collection.locked = collections[element]?.locked ?? (stored.unreadable > 0)
                fresh[element] = collection
            }
            for (element, collection) in collections where collection.inMemory { fresh[element] = collection }
            // The aliases kept in the store, read again when their entry changed (a sync brought it).
            let stamp = ItemStore.FileStamp(path: items.store.entryPath(ItemStore.aliasesEntry))
            if stamp != aliasesStamp || stamp == nil {
                let read = (try? items.readAliases()) ?? storedAliases
                for name in storedAliases.keys where read[name] == nil { aliases[name] = nil }
                storedAliases = read.filter { Self.isStoredAlias($0.key) }
                aliasesStamp = stamp
            }
            for (name, id) in storedAliases { aliases[name] = Self.diskElement(id) }
            if fresh["login"] == nil && aliases["default"] == "login" {
                fresh["login"] = Collection(id: "login", label: "Login", created: 0, modified: 0)
            }
            collections = fresh
            return loaded.unreadable
        }

        /// The path element of the collection in folder `id` of `secret-service/`: its name as an element,
        /// but never `session`, the in-memory collection's (`session_` is no element of a name).
        static func diskElement(_ id: String) -> String {
            let element = pathElement(id)
            return element == sessionAlias ? element + "_" : element
        }

        /// Makes the empty `session` collection, kept in memory only, and points its alias to it.
        func makeSessionCollection() {
            var collection = Collection(id: Self.sessionAlias, label: "", created: 0, modified: 0)
            collection.inMemory = true
            collections[Self.sessionAlias] = collection
            aliases[Self.sessionAlias] = Self.sessionAlias
        }

        /// Reads the index again after a change on disk, and tells clients what changed.
        func refresh() {
            let before = collections
            guard (try? loadIndex()) != nil else { return }
            for (element, collection) in collections {
                let path = Self.collectionPath(element)
                guard let old = before[element] else {
                    emit(Self.root, Self.serviceInterface, "CollectionCreated", [.objectPath(path)])
                    continue
                }
                for (itemElement, item) in collection.items {
                    let itemPath = path + "/" + itemElement
                    if let previous = old.items[itemElement] {
                        if previous.metadata != item.metadata {
                            emit(path, Self.collectionInterface, "ItemChanged", [.objectPath(itemPath)])
                        }
                    } else {
                        emit(path, Self.collectionInterface, "ItemCreated", [.objectPath(itemPath)])
                    }
                }
                for itemElement in old.items.keys where collection.items[itemElement] == nil {
                    emit(
                        path, Self.collectionInterface, "ItemDeleted", [.objectPath(path + "/" + itemElement)]
                    )
                }
            }
            for element in before.keys where collections[element] == nil {
                emit(
                    Self.root, Self.serviceInterface, "CollectionDeleted",
                    [.objectPath(Self.collectionPath(element))])
            }
            onEvent(.refreshed(items: collections.values.reduce(0) { $0 + $1.items.count }))
        }

        // MARK: - Paths

        /// `text` as one element of an object path: letters and digits kept, anything else `_XX`.
        static func pathElement(_ text: String) -> String {
            guard !text.isEmpty else { return "_" }
            var output = ""
            for byte in text.utf8 {
                if (48...57).contains(byte) || (65...90).contains(byte) || (97...122).contains(byte) {
                    output.append(Character(Unicode.Scalar(byte)))
                } else {
                    output += "_" + String(byte >> 4, radix: 16) + String(byte & 0xF, radix: 16)
                }
            }
            return output
        }

        static func collectionPath(_ element: String) -> String { root + "/collection/" + element }

        /// What an object path names.
        enum Object {
            case service
            case collection(String)
            case item(String, String)
            case session(String)
            case prompt(String)
            /// A folder of the path tree (`/org/freedesktop/secrets/collection`), for introspection.
            case folder([String])
        }

        /// The object at `path`, `nil` when there is none.
        func resolve(_ path: String) -> Object? {
            if path == Self.root { return .service }
            guard path.isPath(inside: Self.root) else { return nil }
            let parts = path.droppingPathPrefix(Self.root).split(
                separator: "/", omittingEmptySubsequences: false
            )
            .map(String.init)
            switch (parts.first, parts.count) {
            case ("collection", 1): return .folder(collections.keys.sorted())
            case ("aliases", 1): return .folder(aliases.keys.sorted())
            case ("session", 1):
                return .folder(sessions.keys.map { String($0.split(separator: "/").last!) }.sorted())
            case ("prompt", 1): return .folder([])
            case ("collection", 2), ("aliases", 2):
                let element = parts[0] == "aliases" ? aliases[parts[1]] : parts[1]
                guard let element, collections[element] != nil else { return nil }
                return .collection(element)
            case ("collection", 3), ("aliases", 3):
                let element = parts[0] == "aliases" ? aliases[parts[1]] : parts[1]
                guard let element, collections[element]?.items[parts[2]] != nil else { return nil }
                return .item(element, parts[2])
            case ("session", 2): return sessions[path] != nil ? .session(path) : nil
            case ("prompt", 2): return prompts[path] != nil ? .prompt(path) : nil
            default: return nil
            }
        }

        /// The collection and item element of an item path, checked.
        func itemAt(_ path: String) throws -> (collection: String, item: String) {
            guard case .item(let collection, let item) = resolve(path) else {
                throw BusError.noSuchObject(path)
            }
            return (collection, item)
        }

        /// A new object path under `kind` (`session`, `prompt`).
        func newPath(_ kind: String) -> String {
            counter += 1
            return Self.root + "/" + kind + "/" + String(counter)
        }

        // MARK: - Calls

        /// Answers one method call; `false` for messages that are not calls.
        func handle(_ message: BusMessage) -> Bool {
            guard message.isMethodCall else { return false }
            caller = message.sender
            handling = true
            defer {
                handling = false
                for signal in pendingSignals { try? bus.send(signal) }
                pendingSignals = []
            }
            do {
                let arguments = try message.readAll()
                guard let object = resolve(message.path) else {
                    let results = try missingObjectCall(message.path, message.interface, message.member)
                    let reply = try bus.reply(to: message)
                    try reply.append(results)
                    try bus.send(reply)
                    return true
                }
                let results = try call(
                    object, message.interface, message.member, arguments, path: message.path)
                let reply = try bus.reply(to: message)
                try reply.append(results)
                try bus.send(reply)
            } catch let error as BusError {
                bus.replyError(to: message, error)
            } catch let error as CofferError {
                bus.replyError(to: message, .failed(error.message))
            } catch {
                bus.replyError(to: message, .failed(String(describing: error)))
            }
            return true
        }

        /// A call to a path where no object is: as gnome-keyring answers, `Introspect` gives a node (with
        /// the next element towards the service's root as its child, so that a client can walk there),
        /// and anything else is UnknownMethod.
        func missingObjectCall(_ path: String, _ interface: String, _ member: String) throws -> [BusValue] {
            guard member == "Introspect", interface == Self.introspectableInterface || interface.isEmpty
            else {
                throw BusError(
                    "org.freedesktop.DBus.Error.UnknownMethod",
                    "no interface \(Quoting.inQuotes(interface)) on an object at \(Quoting.inQuotes(path))")
            }
            let prefix = path == "/" ? "/" : path + "/"
            let children =
                Self.root.hasPrefix(prefix)
                ? [String(Self.root.dropFirst(prefix.count).split(separator: "/").first ?? "")] : []
            return [.string(Introspection.xml(for: .folder(children), children: children))]
        }

        /// Runs `member` of `interface` on `object`.
        func call(
            _ object: Object, _ interface: String, _ member: String, _ arguments: [BusValue], path: String
        )
            throws -> [BusValue]
        {
            if interface == Self.introspectableInterface || (interface.isEmpty && member == "Introspect") {
                guard member == "Introspect" else { throw BusError.unknownMethod(interface, member) }
                let children: [String]
                switch object {
                case .service: children = ["aliases", "collection", "prompt", "session"]
                case .collection(let element): children = collections[element]?.items.keys.sorted() ?? []
                case .folder(let names): children = names
                default: children = []
                }
                return [.string(Introspection.xml(for: object, children: children))]
            }
            if interface == Self.propertiesInterface {
                return try propertiesCall(object, member, arguments)
            }
            switch object {
            case .service: return try serviceCall(member, interface, arguments)
            case .collection(let element): return try collectionCall(element, member, interface, arguments)
            case .item(let collection, let item):
                return try itemCall(collection, item, member, interface, arguments)
            case .session(let path):
                guard member == "Close", interface == Self.sessionInterface || interface.isEmpty else {
                    throw BusError.unknownMethod(interface, member)
                }
                try checkOwner(sessions[path]?.owner)
                sessions[path] = nil
                return []
            case .prompt(let path): return try promptCall(path, member, interface, arguments)
            case .folder: throw BusError.unknownMethod(interface, member)
            }
        }

        /// Refuses a call from someone else than `owner`.
        func checkOwner(_ owner: String?) throws {
            guard owner == caller else {
                throw BusError(
                    "org.freedesktop.DBus.Error.AccessDenied", "this object belongs to another client")
            }
        }

        /// Throws unless `arguments` match `signature`.
        static func expect(_ arguments: [BusValue], _ signature: String) throws {
            let given = arguments.map(\.signature).joined()
            guard given == signature else {
                throw BusError.invalidArguments("expected arguments of type (\(signature)), got (\(given))")
            }
        }

        // MARK: Service

        func serviceCall(_ member: String, _ interface: String, _ arguments: [BusValue]) throws -> [BusValue]
        {
            guard interface == Self.serviceInterface || interface.isEmpty else {
                throw BusError.unknownMethod(interface, member)
            }
            switch member {
            case "OpenSession":
                try Self.expect(arguments, "sv")
                let algorithm = arguments[0].stringValue ?? ""
                let path = newPath("session")
                switch algorithm {
                case "plain":
                    sessions[path] = Session(owner: caller, cipher: nil)
                    return [.variant(.string("")), .objectPath(path)]
                case SessionCipher.algorithm:
                    guard let input = arguments[1].bytesValue else {
                        throw BusError.invalidArguments("the session input must be a byte array")
                    }
                    let (cipher, output) = try SessionCipher.negotiate(clientPublicKey: input)
                    sessions[path] = Session(owner: caller, cipher: cipher)
                    return [.variant(.bytes(output)), .objectPath(path)]
                default:
                    throw BusError(
                        "org.freedesktop.DBus.Error.NotSupported",
                        "the algorithm \(algorithm) is not supported")
                }
            case "CreateCollection":
                try Self.expect(arguments, "a{sv}s")
                let alias = arguments[1].stringValue ?? ""
                if !alias.isEmpty { try Self.checkAlias(alias) }
                let properties = arguments[0].keyedValues ?? [:]
                let label = try Self.text(properties[Self.collectionInterface + ".Label"], "Label")
                return [
                    .objectPath(try createCollection(label: label, alias: arguments[1].stringValue ?? "")),
                    .objectPath("/"),
                ]
            case "SearchItems":
                try Self.expect(arguments, "a{ss}")
                let wanted = arguments[0].stringDictionaryValue ?? [:]
                var unlocked: [String] = []
                var locked: [String] = []
                for (element, collection) in collections.sorted(by: { $0.key < $1.key }) {
                    let found = Self.search(collection, wanted).map {
                        Self.collectionPath(element) + "/" + $0
                    }
                    if collection.locked { locked += found } else { unlocked += found }
                }
                return [.objectPaths(unlocked), .objectPaths(locked)]
            case "Unlock":
                try Self.expect(arguments, "ao")
                return try unlock(arguments[0].arrayValue?.compactMap(\.stringValue) ?? [])
            case "Lock":
                try Self.expect(arguments, "ao")
                return try lock(arguments[0].arrayValue?.compactMap(\.stringValue) ?? [])
            case "GetSecrets":
                try Self.expect(arguments, "aoo")
                let session = arguments[1].stringValue ?? ""
                var secrets: [(BusValue, BusValue)] = []
                for path in arguments[0].arrayValue?.compactMap(\.stringValue) ?? [] {
                    guard case .item(let collection, let item) = resolve(path),
                        collections[collection]?.locked == false
                    else { continue }
                    secrets.append((.objectPath(path), try secret(collection, item, session: session)))
                }
                return [.dictionary(key: "o", value: "(oayays)", secrets)]
            case "ReadAlias":
                try Self.expect(arguments, "s")
                guard let element = aliases[arguments[0].stringValue ?? ""], collections[element] != nil
                else {
                    return [.objectPath("/")]
                }
                return [.objectPath(Self.collectionPath(element))]
            case "SetAlias":
                try Self.expect(arguments, "so")
                let name = arguments[0].stringValue ?? ""
                try Self.checkAlias(name)
                let target = arguments[1].stringValue ?? "/"
                if target == "/" {
                    try setAlias(name, to: nil)
                } else {
                    guard case .collection(let element) = resolve(target) else {
                        throw BusError.noSuchObject(target)
                    }
                    try setAlias(name, to: element)
                }
                return []
            default:
                throw BusError.unknownMethod(interface, member)
            }
        }

        /// Refuses an alias that is not 1 to 64 letters, digits, `_` and `-`, and `session`, which always
        /// names the collection kept in memory (so that what a client keeps there for the session is
        /// never written to the store).
        static func checkAlias(_ alias: String) throws {
            let allowed = alias.utf8.allSatisfy { byte in
                (48...57).contains(byte) || (65...90).contains(byte) || (97...122).contains(byte)
                    || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
            }
            guard !alias.isEmpty, alias.utf8.count <= 64, allowed else {
                throw BusError.invalidArguments("an alias is 1 to 64 letters, digits, _ and -")
            }
            guard alias != sessionAlias else {
                throw BusError(
                    "org.freedesktop.DBus.Error.NotSupported",
                    "the alias session always names the collection kept in memory")
            }
        }

        /// Whether an alias is kept in the store. `default` is not: one taken from the shared tree would
        /// let whoever can push to it choose where every client's new secrets go (`default` is this
        /// provider's, `login` unless a client sets it while it runs). `session` never leaves memory.
        static func isStoredAlias(_ alias: String) -> Bool {
            alias != "default" && alias != sessionAlias && (try? checkAlias(alias)) != nil
        }

        /// Points `alias` to the collection at `element` (`nil`: to none). An alias of a collection in the
        /// store is kept there (committed) first; on failure nothing changes.
        func setAlias(_ alias: String, to element: String?) throws {
            if Self.isStoredAlias(alias) {
                var stored = storedAliases
                if let element, let collection = collections[element], !collection.inMemory {
                    stored[alias] = collection.id
                } else {
                    stored[alias] = nil
                }
                try keepStoredAliases(stored)
            }
            aliases[alias] = element
        }

        /// Writes `stored` (alias to collection folder) to the store when it differs from what is there.
        func keepStoredAliases(_ stored: [String: String]) throws {
            guard stored != storedAliases else { return }
            try items.writeAliases(stored)
            storedAliases = stored
            aliasesStamp = ItemStore.FileStamp(path: items.store.entryPath(ItemStore.aliasesEntry))
        }

        /// The elements of the items of `collection` whose attributes include all of `wanted`.
        static func search(_ collection: Collection, _ wanted: [String: String]) -> [String] {
            collection.items.filter { _, item in
                wanted.allSatisfy { item.metadata.attributes[$0.key] == $0.value }
            }.keys.sorted()
        }

        /// Creates a collection (or returns the one `alias` names) and returns its path.
        func createCollection(label: String, alias: String) throws -> String {
            if !alias.isEmpty, let element = aliases[alias], collections[element] != nil {
                return Self.collectionPath(element)
            }
            // The folder's name says nothing of the label (which may tell what the collection is for): the
            // label is only in the encrypted `.collection` entry. The default collection is `login`.
            var generator = SystemRandomNumberGenerator()
            func newID() -> String { String(generator.next() as UInt64, radix: 16) }
            var id = alias == "default" ? "login" : newID()
            var number = 1
            while collections[Self.diskElement(id)] != nil
                || items.store.isFolder(ItemStore.folder + "/" + id)
            {
                number += 1
                id = alias == "default" ? "login" + String(number) : newID()
            }
            let now = ItemStore.now()
            try items.writeCollection(id: id, label: label, created: now)
            items.remember(
                ItemStore.entryName(collection: id, id: ItemStore.collectionEntry),
                ItemMetadata(label: label, attributes: [:], created: now), in: &cache)
            let element = Self.diskElement(id)
            collections[element] = Collection(id: id, label: label, created: now, modified: now)
            if !alias.isEmpty { try setAlias(alias, to: element) }
            let path = Self.collectionPath(element)
            emit(Self.root, Self.serviceInterface, "CollectionCreated", [.objectPath(path)])
            return path
        }

        // MARK: Collections

        func collectionCall(_ element: String, _ member: String, _ interface: String, _ arguments: [BusValue])
            throws -> [BusValue]
        {
            guard interface == Self.collectionInterface || interface.isEmpty,
                var collection = collections[element]
            else { throw BusError.unknownMethod(interface, member) }
            let path = Self.collectionPath(element)
            switch member {
            case "Delete":
                try Self.expect(arguments, "")
                // Deleting a locked collection would lose its items without an unlock (gnome-keyring refuses too).
                try requireUnlocked(collection)
                if !collection.inMemory {
                    try items.removeCollection(id: collection.id, items: collection.items.values.map(\.id))
                }
                collections[element] = nil
                aliases = aliases.filter { $0.value != element }
                try keepStoredAliases(storedAliases.filter { $0.value != collection.id })
                emit(Self.root, Self.serviceInterface, "CollectionDeleted", [.objectPath(path)])
                // The session collection is there as long as the provider runs: deleting it empties it.
                if collection.inMemory {
                    makeSessionCollection()
                    emit(Self.root, Self.serviceInterface, "CollectionCreated", [.objectPath(path)])
                }
                return [.objectPath("/")]
            case "SearchItems":
                try Self.expect(arguments, "a{ss}")
                let found = Self.search(collection, arguments[0].stringDictionaryValue ?? [:])
                return [.objectPaths(found.map { path + "/" + $0 })]
            case "CreateItem":
                try Self.expect(arguments, "a{sv}(oayays)b")
                try requireUnlocked(collection)
                let properties = arguments[0].keyedValues ?? [:]
                guard
                    let attributes = properties[Self.itemInterface + ".Attributes"].map({
                        $0.stringDictionaryValue
                    })
                        ?? [:]
                else { throw BusError.invalidArguments("Attributes must be a dictionary of strings") }
                let (secret, contentType) = try decodeSecret(arguments[1])
                let label = try Self.text(properties[Self.itemInterface + ".Label"], "Label")
                let type =
                    properties[Self.itemInterface + ".Type"] == nil
                    ? attributes["xdg:schema"] ?? ""
                    : try Self.text(properties[Self.itemInterface + ".Type"], "Type")
                let now = ItemStore.now()
                var metadata = ItemMetadata(
                    label: label, attributes: attributes, contentType: contentType, created: now)
                metadata.type = type
                if !type.isEmpty && attributes["xdg:schema"] == nil {
                    metadata.attributes["xdg:schema"] = type
                }
                // The item replaced has the attributes this one is stored with: the caller's, and the
                // `xdg:schema` its Type adds (gnome-keyring keeps the schema among the attributes too).
                let replacing =
                    arguments[2].booleanValue == true
                    ? collection.items.first { $0.value.metadata.attributes == metadata.attributes } : nil
                let id: String
                if let replacing {
                    id = replacing.value.id
                    metadata.created = replacing.value.metadata.created
                } else {
                    id = Self.newItemID(in: collection)
                }
                if collection.inMemory {
                    collection.secrets[id] = secret
                } else {
                    try items.write(collection: collection.id, id: id, secret: secret, metadata: metadata)
                    items.remember(
                        ItemStore.entryName(collection: collection.id, id: id), metadata, in: &cache)
                }
                let itemElement = Self.pathElement(id)
                collection.items[itemElement] = Item(id: id, metadata: metadata)
                collection.modified = now
                collections[element] = collection
                let itemPath = path + "/" + itemElement
                emit(
                    path, Self.collectionInterface, replacing == nil ? "ItemCreated" : "ItemChanged",
                    [.objectPath(itemPath)])
                return [.objectPath(itemPath), .objectPath("/")]
            default:
                throw BusError.unknownMethod(interface, member)
            }
        }

        /// A random item id not used in `collection`.
        static func newItemID(in collection: Collection) -> String {
            var generator = SystemRandomNumberGenerator()
            while true {
                let id = String(generator.next() as UInt64, radix: 16)
                if collection.items[id] == nil { return id }
            }
        }

        /// Refuses to change or read a locked collection.
        func requireUnlocked(_ collection: Collection) throws {
            if collection.locked {
                throw BusError(
                    "org.freedesktop.Secret.Error.IsLocked", "the collection \(collection.id) is locked")
            }
        }

        // MARK: Items

        func itemCall(
            _ element: String, _ itemElement: String, _ member: String, _ interface: String,
            _ arguments: [BusValue]
        ) throws -> [BusValue] {
            guard interface == Self.itemInterface || interface.isEmpty, var collection = collections[element],
                let item = collection.items[itemElement]
            else { throw BusError.unknownMethod(interface, member) }
            let collectionPath = Self.collectionPath(element)
            let path = collectionPath + "/" + itemElement
            switch member {
            case "Delete":
                try Self.expect(arguments, "")
                try requireUnlocked(collection)
                if collection.inMemory {
                    collection.secrets[item.id] = nil
                } else {
                    try items.remove(collection: collection.id, id: item.id)
                }
                collection.items[itemElement] = nil
                collection.modified = ItemStore.now()
                collections[element] = collection
                emit(collectionPath, Self.collectionInterface, "ItemDeleted", [.objectPath(path)])
                return [.objectPath("/")]
            case "GetSecret":
                try Self.expect(arguments, "o")
                try requireUnlocked(collection)
                return [try secret(element, itemElement, session: arguments[0].stringValue ?? "")]
            case "SetSecret":
                try Self.expect(arguments, "(oayays)")
                try requireUnlocked(collection)
                let (secret, contentType) = try decodeSecret(arguments[0])
                var metadata = item.metadata
                metadata.contentType = contentType
                metadata.modified = ItemStore.now()
                if collection.inMemory {
                    collections[element]?.secrets[item.id] = secret
                } else {
                    try items.write(
                        collection: collection.id, id: item.id, secret: secret, metadata: metadata)
                    items.remember(
                        ItemStore.entryName(collection: collection.id, id: item.id), metadata, in: &cache)
                }
                collections[element]?.items[itemElement]?.metadata = metadata
                emit(collectionPath, Self.collectionInterface, "ItemChanged", [.objectPath(path)])
                return []
            default:
                throw BusError.unknownMethod(interface, member)
            }
        }

        /// The secret of an item, in the form the session `sessionPath` carries it.
        func secret(_ element: String, _ itemElement: String, session sessionPath: String) throws -> BusValue
        {
            guard let session = sessions[sessionPath] else {
                throw BusError("org.freedesktop.Secret.Error.NoSession", "no such session: \(sessionPath)")
            }
            try checkOwner(session.owner)
            guard let collection = collections[element], let item = collection.items[itemElement] else {
                throw BusError.noSuchObject(Self.collectionPath(element) + "/" + itemElement)
            }
            let stored =
                collection.inMemory
                ? (secret: collection.secrets[item.id] ?? SecureBytes([]), metadata: item.metadata)
                : try items.read(collection: collection.id, id: item.id)
            if let cipher = session.cipher {
                let (parameters, value) = try cipher.encrypt(stored.secret)
                return .structure([
                    .objectPath(sessionPath), .bytes(parameters), .bytes(value),
                    .string(stored.metadata.contentType),
                ])
            }
            return .structure([
                .objectPath(sessionPath), .bytes(SecureBytes([])), .bytes(stored.secret),
                .string(stored.metadata.contentType),
            ])
        }

        /// The secret and content type of a `(oayays)` Secret structure sent by the caller.
        func decodeSecret(_ value: BusValue) throws -> (SecureBytes, String) {
            guard let fields = value.structureFields, fields.count == 4,
                let sessionPath = fields[0].stringValue,
                let parameters = fields[1].bytesValue, let secret = fields[2].bytesValue
            else { throw BusError.invalidArguments("a secret must be a structure (oayays)") }
            guard let session = sessions[sessionPath] else {
                throw BusError("org.freedesktop.Secret.Error.NoSession", "no such session: \(sessionPath)")
            }
            try checkOwner(session.owner)
            let contentType = fields[3].stringValue.flatMap { $0.isEmpty ? nil : $0 } ?? "text/plain"
            if let cipher = session.cipher {
                return (try cipher.decrypt(parameters: parameters, value: secret), contentType)
            }
            return (secret, contentType)
        }

        // MARK: Properties

        func propertiesCall(_ object: Object, _ member: String, _ arguments: [BusValue]) throws -> [BusValue]
        {
            // The interface named must be the object's own (or empty: any), as gnome-keyring checks.
            func checkInterface() throws {
                let named = arguments.first?.stringValue ?? ""
                guard named.isEmpty || named == Self.propertyInterface(of: object) else {
                    throw BusError.invalidArguments("no interface \(Quoting.inQuotes(named)) here")
                }
            }
            switch member {
            case "Get":
                try Self.expect(arguments, "ss")
                try checkInterface()
                let name = arguments[1].stringValue ?? ""
                guard let value = try properties(of: object).first(where: { $0.0 == name })?.1 else {
                    throw BusError.invalidArguments("no property \(Quoting.inQuotes(name)) here")
                }
                return [.variant(value)]
            case "GetAll":
                try Self.expect(arguments, "s")
                try checkInterface()
                return [.properties(try properties(of: object))]
            case "Set":
                try Self.expect(arguments, "ssv")
                try checkInterface()
                try setProperty(object, arguments[1].stringValue ?? "", arguments[2])
                return []
            default:
                throw BusError.unknownMethod(Self.propertiesInterface, member)
            }
        }

        /// The interface whose properties `object` has (`nil`: it has none).
        static func propertyInterface(of object: Object) -> String? {
            switch object {
            case .service: serviceInterface
            case .collection: collectionInterface
            case .item: itemInterface
            case .session, .prompt, .folder: nil
            }
        }

        /// The properties of `object`, in the specification's order.
        func properties(of object: Object) throws -> [(String, BusValue)] {
            switch object {
            case .service:
                return [("Collections", .objectPaths(collections.keys.sorted().map(Self.collectionPath)))]
            case .collection(let element):
                guard let collection = collections[element] else { return [] }
                return [
                    (
                        "Items",
                        .objectPaths(
                            collection.items.keys.sorted().map { Self.collectionPath(element) + "/" + $0 })
                    ),
                    ("Label", .string(collection.label)), ("Locked", .boolean(collection.locked)),
                    ("Created", .uint64(collection.created)), ("Modified", .uint64(collection.modified)),
                ]
            case .item(let element, let itemElement):
                guard let collection = collections[element], let item = collection.items[itemElement] else {
                    return []
                }
                return [
                    ("Locked", .boolean(collection.locked)),
                    ("Attributes", .stringDictionary(item.metadata.attributes)),
                    ("Label", .string(item.metadata.label)), ("Type", .string(item.metadata.type)),
                    ("Created", .uint64(item.metadata.created)),
                    ("Modified", .uint64(item.metadata.modified)),
                ]
            case .session, .prompt, .folder:
                return []
            }
        }

        /// The string a property holds (`""` when it is not given); InvalidArgs for another type.
        static func text(_ value: BusValue?, _ name: String) throws -> String {
            guard let value else { return "" }
            guard let text = value.textValue else { throw BusError.invalidArguments("\(name) is a string") }
            return text
        }

        /// Sets a writable property (a label, an item's attributes or type).
        func setProperty(_ object: Object, _ name: String, _ value: BusValue) throws {
            switch (object, name) {
            case (.collection(let element), "Label"):
                guard var collection = collections[element], let label = value.textValue else {
                    throw BusError.invalidArguments("Label is a string")
                }
                try requireUnlocked(collection)
                if !collection.inMemory {
                    try items.writeCollection(id: collection.id, label: label, created: collection.created)
                    items.remember(
                        ItemStore.entryName(collection: collection.id, id: ItemStore.collectionEntry),
                        ItemMetadata(label: label, attributes: [:], created: collection.created), in: &cache)
                }
                collection.label = label
                collections[element] = collection
                emit(
                    Self.root, Self.serviceInterface, "CollectionChanged",
                    [.objectPath(Self.collectionPath(element))])
            case (.item(let element, let itemElement), "Label"),
                (.item(let element, let itemElement), "Attributes"),
                (.item(let element, let itemElement), "Type"):
                guard let collection = collections[element], let item = collection.items[itemElement] else {
                    return
                }
                try requireUnlocked(collection)
                var metadata = item.metadata
                if name == "Attributes" {
                    guard let attributes = value.stringDictionaryValue else {
                        throw BusError.invalidArguments("Attributes is a dictionary of strings")
                    }
                    // The type is the schema: new attributes that name one change it; without one, it stays and
                    // is named in them (as gnome-keyring does).
                    metadata.attributes = attributes
                    if let schema = attributes["xdg:schema"] {
                        metadata.type = schema
                    } else if !metadata.type.isEmpty {
                        metadata.attributes["xdg:schema"] = metadata.type
                    }
                } else {
                    guard let text = value.textValue else {
                        throw BusError.invalidArguments("\(name) is a string")
                    }
                    if name == "Label" { metadata.label = text } else { metadata.type = text }
                }
                metadata.modified = ItemStore.now()
                if !collection.inMemory {
                    try items.update(collection: collection.id, id: item.id, metadata: metadata)
                    items.remember(
                        ItemStore.entryName(collection: collection.id, id: item.id), metadata, in: &cache)
                }
                collections[element]?.items[itemElement]?.metadata = metadata
                let collectionPath = Self.collectionPath(element)
                emit(
                    collectionPath, Self.collectionInterface, "ItemChanged",
                    [.objectPath(collectionPath + "/" + itemElement)])
            default:
                // gnome-keyring answers InvalidArgs for a property that is read-only or not there.
                let known = try properties(of: object).contains { $0.0 == name }
                throw BusError.invalidArguments(
                    known
                        ? "the property \(Quoting.inQuotes(name)) is read-only"
                        : "no property \(Quoting.inQuotes(name)) here")
            }
        }

        // MARK: Locking and prompts

        /// `Unlock`: objects already unlocked come back at once; the others through a prompt.
        func unlock(_ paths: [String]) throws -> [BusValue] {
            var unlocked: [String] = []
            var locked: [String] = []
            for path in paths {
                switch resolve(path) {
                case .collection(let element)?, .item(let element, _)?:
                    if collections[element]?.locked == true {
                        locked.append(path)
                    } else {
                        unlocked.append(path)
                    }
                default:
                    continue
                }
            }
            guard !locked.isEmpty else { return [.objectPaths(unlocked), .objectPath("/")] }
            let prompt = newPath("prompt")
            prompts[prompt] = Prompt(owner: caller, action: .unlock(locked))
            return [.objectPaths(unlocked), .objectPath(prompt)]
        }

        /// `Lock`: marks collections locked (their secrets are given again only after an unlock) and tells
        /// gpg-agent to forget the passphrases of the keys their entries are encrypted to, so that the
        /// unlock asks for them again.
        func lock(_ paths: [String]) throws -> [BusValue] {
            var done: [String] = []
            var forgotten: Set<String> = []
            for path in paths {
                switch resolve(path) {
                case .collection(let element)?, .item(let element, _)?:
                    guard let collection = collections[element] else { continue }
                    collections[element]?.locked = true
                    done.append(path)
                    if !collection.inMemory && forgotten.insert(element).inserted {
                        let store = items.store
                        if let recipients = try? store.recipients(
                            forFolder: ItemStore.folder + "/" + collection.id)
                        {
                            if let started = try? AgentPassphrases.startForgetting(
                                recipients: recipients.ids, options: store.configuration.gpgOptions)
                            {
                                children.append(started)
                            }
                        }
                    }
                default:
                    continue
                }
            }
            return [.objectPaths(done), .objectPath("/")]
        }

        func promptCall(_ path: String, _ member: String, _ interface: String, _ arguments: [BusValue]) throws
            -> [BusValue]
        {
            guard interface == Self.promptInterface || interface.isEmpty, let prompt = prompts[path] else {
                throw BusError.unknownMethod(interface, member)
            }
            try checkOwner(prompt.owner)
            prompts[path] = nil
            switch member {
            case "Prompt":
                try Self.expect(arguments, "s")
                switch prompt.action {
                case .unlock(let paths):
                    var unlocked: [String] = []
                    for path in paths {
                        switch resolve(path) {
                        case .collection(let element)?, .item(let element, _)?:
                            if let collection = collections[element], unlockCollection(collection) {
                                collections[element]?.locked = false
                                unlocked.append(path)
                            }
                        default:
                            continue
                        }
                    }
                    // What did not decrypt before the unlock is read now.
                    if !unlocked.isEmpty { refresh() }
                    emit(
                        path, Self.promptInterface, "Completed",
                        [.boolean(unlocked.isEmpty), .variant(.objectPaths(unlocked))])
                }
                return []
            case "Dismiss":
                try Self.expect(arguments, "")
                emit(path, Self.promptInterface, "Completed", [.boolean(true), .variant(.objectPaths([]))])
                return []
            default:
                throw BusError.unknownMethod(interface, member)
            }
        }

        /// Whether the entries of `collection` decrypt now (gpg asks for the passphrase through pinentry when
        /// the agent does not hold it).
        func unlockCollection(_ collection: Collection) -> Bool {
            if collection.inMemory { return true }
            // With no item read yet (none decrypted when it was loaded), one of its entries must decrypt now.
            guard
                let id = collection.items.values.first?.id ?? items.entryIDs(collection: collection.id).first
            else { return true }
            return (try? items.read(collection: collection.id, id: id)) != nil
        }

        // MARK: - Signals and clients

        /// Sends a signal of the Secret Service, and `org.freedesktop.DBus.Properties.PropertiesChanged` for
        /// the objects whose properties it changed (so that clients caching properties, as GDBus proxies
        /// do, see new labels, attributes and item lists).
        func emit(_ path: String, _ interface: String, _ member: String, _ values: [BusValue]) {
            queue(path, interface, member, values)
            switch member {
            case "CollectionCreated", "CollectionDeleted":
                propertiesChanged(Self.root, Self.serviceInterface, .service)
            case "CollectionChanged":
                if let changed = values.first?.stringValue, let object = resolve(changed) {
                    propertiesChanged(changed, Self.collectionInterface, object)
                }
            case "ItemCreated", "ItemDeleted", "ItemChanged":
                if let object = resolve(path) { propertiesChanged(path, Self.collectionInterface, object) }
                if member == "ItemChanged", let changed = values.first?.stringValue,
                    let object = resolve(changed)
                {
                    propertiesChanged(changed, Self.itemInterface, object)
                }
            default:
                break
            }
        }

        /// `PropertiesChanged` of `interface` at `path`, with every property of `object` as it is now.
        func propertiesChanged(_ path: String, _ interface: String, _ object: Object) {
            guard let properties = try? properties(of: object), !properties.isEmpty else { return }
            queue(
                path, Self.propertiesInterface, "PropertiesChanged",
                [.string(interface), .properties(properties), .array(element: "s", [])])
        }

        /// Sends a signal (after the reply, while a call is handled); a failure to send is not the caller's
        /// problem.
        func queue(_ path: String, _ interface: String, _ member: String, _ values: [BusValue]) {
            guard let signal = try? bus.signal(path: path, interface: interface, member: member) else {
                return
            }
            guard (try? signal.append(values)) != nil else { return }
            if handling {
                pendingSignals.append(signal)
            } else {
                try? bus.send(signal)
            }
        }

        /// Forgets the sessions and prompts of a client that left the bus.
        func nameOwnerChanged(_ message: BusMessage) {
            guard let values = try? message.readAll(), values.count == 3, let name = values[0].stringValue,
                name.hasPrefix(":"), values[2].stringValue == ""
            else { return }
            sessions = sessions.filter { $0.value.owner != name }
            prompts = prompts.filter { $0.value.owner != name }
        }
    }
#endif
