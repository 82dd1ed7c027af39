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
        /// The index kept in the cache folder could not be written (`reason`); the next start decrypts
        /// the entries it would have held.
        case indexNotWritten(reason: String)
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
            var items: [String: Item] = [:] {
                didSet { lookup = AttributeLookup() }
            }
            /// The items by attribute, made when first searched after a change of the items.
            var lookup = AttributeLookup()
            var locked = false
            /// Whether it is the `session` collection: kept in memory only, never written to the store.
            var inMemory = false
            /// The secrets of an in-memory collection's items, by item id (wiped when freed).
            var secrets: [String: SecureBytes] = [:]
        }

        /// A collection's items by attribute name and value, made from its items when first asked for.
        final class AttributeLookup {
            private var table: [String: [String: [String]]]?

            /// The elements of the items whose attribute `name` is `value`.
            func elements(_ name: String, _ value: String, in items: [String: Item]) -> [String] {
                if table == nil {
                    var made: [String: [String: [String]]] = [:]
                    for (element, item) in items {
                        for (key, found) in item.metadata.attributes {
                            made[key, default: [:]][found, default: []].append(element)
                        }
                    }
                    table = made
                }
                return table?[name]?[value] ?? []
            }
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
        /// The connection; `nil` for a provider that serves calls in process only (``call(_:_:_:_:from:)``).
        private(set) var bus: BusConnection?
        /// The interfaces served, as declared (``declarations``): dispatch, argument and property checks,
        /// and introspection read them here only.
        var interfaceDeclarations = SecretServiceProvider.declarations
        /// The signals a provider without a connection would have sent, oldest first.
        package private(set) var signalsSent:
            [(path: String, interface: String, member: String, values: [BusValue])] = []
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
        /// The index of the cache kept in the user's cache folder, so that a start needs no decryption.
        let index: ItemIndex
        /// Since when (monotonic seconds) the cache holds what the kept index does not; `nil` when none.
        var indexStaleSince: Double?
        /// How long the cache stays unwritten after a change: a burst of writes is one index write.
        static let indexDelay = 2.0
        /// When (monotonic seconds) the index is read again for records that were not settled.
        var rereadDue: Double?
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
        ///
        /// With `connecting` false there is no bus: calls are made with ``call(_:_:_:_:from:)`` (tests of the
        /// handlers), and ``run(replace:)`` fails.
        ///
        /// The index of the items is kept under `indexFolder` (by default in the user's cache folder).
        package init(
            store: PasswordStore, connecting: Bool = true, indexFolder: String? = nil,
            onEvent: @escaping (ProviderEvent) -> Void
        )
            throws
        {
            stopSignals = StopSignals()
            items = ItemStore(store: store)
            index = ItemIndex(store: items.store, base: indexFolder)
            self.onEvent = onEvent
            if connecting {
                let bus = try BusConnection()
                try bus.waitUntilReady()
                self.bus = bus
            }
            // What the kept index says of each collection's entries, used where their files have the
            // stamps it recorded.
            let top = items.store.root + "/" + ItemStore.folder
            if FileSystem.kind(top) == .directory {
                for folder in (try? FileSystem.contents(of: top)) ?? []
                where folder.utf8.first != UInt8(ascii: ".")
                    && FileSystem.kind(top + "/" + folder) == .directory
                {
                    cache.merge(index.read(collection: folder)) { old, _ in old }
                }
            }
            unreadable = try loadIndex()
            makeSessionCollection()
        }

        /// The bus daemon's own name: the sender of its signals, which no client can take.
        static let busDaemon = "org.freedesktop.DBus"

        /// How many entries did not decrypt when the index was first read.
        private var unreadable = 0

        /// Reads the index, takes the name and serves until the bus closes or another provider replaces it.
        package func run(replace: Bool) throws {
            guard let bus else { throw BusError.failed("the provider has no bus connection") }
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
                var timeout: Int32 = children.isEmpty ? 60_000 : 200
                for due in [indexStaleSince.map { $0 + Self.indexDelay }, rereadDue].compactMap({ $0 }) {
                    let left = due - ChildProcess.monotonicSeconds()
                    timeout = min(timeout, Int32(max(0, left * 1000).rounded(.up)))
                }
                let ready = bus.wait(
                    extra: [watcher.descriptor, stopSignals.descriptor].compactMap { $0 }, timeout: timeout)
                if let descriptor = watcher.descriptor, ready.contains(descriptor), watcher.drain() {
                    refresh()
                }
                children = children.filter { ChildProcess.status(ifEnded: $0) == nil }
                if let due = rereadDue, ChildProcess.monotonicSeconds() >= due { refresh() }
                if let since = indexStaleSince, ChildProcess.monotonicSeconds() >= since + Self.indexDelay {
                    saveIndex()
                }
            }
            bus.flush()
            if indexStaleSince != nil { saveIndex() }
        }

        /// Writes the index of every collection in the store to the cache folder.
        package func saveIndex() {
            indexStaleSince = nil
            let stored = collections.values.filter { !$0.inMemory }.map(\.id)
            do {
                try index.write(collections: stored, cache: cache)
            } catch {
                onEvent(.indexNotWritten(reason: (error as? CofferError)?.message ?? "\(error)"))
            }
        }

        /// Records in the cache what was just written to entry `name`, so that the next load does not
        /// decrypt it; the kept index is written soon after.
        func remember(_ name: String, _ metadata: ItemMetadata) {
            items.remember(name, metadata, in: &cache)
            indexChanged()
        }

        /// Notes that the cache holds what the kept index does not.
        func indexChanged() {
            if indexStaleSince == nil { indexStaleSince = ChildProcess.monotonicSeconds() }
        }

        // MARK: - The index

        /// Reads every item's metadata; returns how many entries did not decrypt. Entries that did not
        /// decrypt before are tried again only in the collections (folder ids) of `retrying`.
        func loadIndex(retrying: Set<String> = []) throws -> Int {
            let loaded = try items.load(cache: &cache, retrying: retrying)
            if loaded.changed { indexChanged() }
            // Records of files that changed just now are read again once their stamps would tell a change.
            rereadDue = loaded.unsettled ? ChildProcess.monotonicSeconds() + ItemStore.Record.settling : nil
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
                // Entries that need a key of others only (a teammate's, a pusher's) lock nothing.
                collection.locked = collections[element]?.locked ?? (stored.needPassphrase > 0)
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

        /// Reads the index again after a change on disk (or an unlock of the collections `retrying`), and
        /// tells clients what changed.
        func refresh(retrying: Set<String> = []) {
            let before = collections
            guard (try? loadIndex(retrying: retrying)) != nil else { return }
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

        /// A new object path under `kind` (`session`, `prompt`).
        func newPath(_ kind: String) -> String {
            counter += 1
            return Self.root + "/" + kind + "/" + String(counter)
        }

        // MARK: - Calls

        /// Answers one method call; `false` for messages that are not calls.
        func handle(_ message: BusMessage) -> Bool {
            guard message.isMethodCall, let bus else { return false }
            handling = true
            defer {
                handling = false
                for signal in pendingSignals { try? bus.send(signal) }
                pendingSignals = []
            }
            do {
                // The method and the message's signature are checked before its body is read: a call
                // no method takes (however large) is refused unparsed, and a call to no object reads
                // nothing.
                var arguments: [BusValue] = []
                if let object = resolve(message.path) {
                    let method = try method(of: object, interface: message.interface, member: message.member)
                    try Self.check(message.bodySignature, against: method)
                    arguments = try message.readAll()
                }
                let results = try call(
                    message.path, message.interface, message.member, arguments, from: message.sender)
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

        /// Runs one method call from `sender`, as the bus would deliver it: to the object at `path`, or to
        /// none (``missingObjectCall(_:_:_:)``). Signals it raises go after the reply.
        package func call(
            _ path: String, _ interface: String, _ member: String, _ arguments: [BusValue],
            from sender: String
        ) throws -> [BusValue] {
            caller = sender
            guard let object = resolve(path) else { return try missingObjectCall(path, interface, member) }
            return try dispatch(object, path: path, interface: interface, member: member, arguments)
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
            return [.string(BusInterface.document(interfaces(of: .folder(children)), children: children))]
        }

        /// The introspection document of `object`: its interfaces, as declared, and its children.
        func introspection(of object: Object) -> String {
            let children: [String]
            switch object {
            case .service: children = ["aliases", "collection", "prompt", "session"]
            case .collection(let element): children = collections[element]?.items.keys.sorted() ?? []
            case .folder(let names): children = names
            default: children = []
            }
            return BusInterface.document(interfaces(of: object), children: children)
        }

        /// Refuses a call from someone else than `owner`.
        func checkOwner(_ owner: String?) throws {
            guard owner == caller else {
                throw BusError(
                    "org.freedesktop.DBus.Error.AccessDenied", "this object belongs to another client")
            }
        }

        // MARK: Secrets

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

        /// The string a property holds (`""` when it is not given); InvalidArgs for another type.
        static func text(_ value: BusValue?, _ name: String) throws -> String {
            guard let value else { return "" }
            guard case .string(let text) = value.variantContent else {
                throw BusError.invalidArguments("\(name) is a string")
            }
            return text
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
            let properties = properties(of: object, in: interfaces(of: object).first { $0.name == interface })
            guard !properties.isEmpty else { return }
            queue(
                path, Self.propertiesInterface, "PropertiesChanged",
                [.string(interface), .properties(properties), .array(element: "s", [])])
        }

        /// Sends a signal (after the reply, while a call is handled); a failure to send is not the caller's
        /// problem.
        func queue(_ path: String, _ interface: String, _ member: String, _ values: [BusValue]) {
            guard let bus else {
                signalsSent.append((path, interface, member, values))
                return
            }
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
