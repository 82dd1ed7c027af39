#if canImport(CSDBus)
    import Coffer

    extension SecretServiceProvider {
        /// `org.freedesktop.Secret.Service`, at `/org/freedesktop/secrets`.
        static let service = BusInterface(
            name: serviceInterface,
            methods: [
                BusMethod("OpenSession", in: "algorithm s, input v", out: "output v, result o") {
                    provider, call in
                    try provider.openSession(algorithm: call.string(0), input: call.arguments[1])
                },
                BusMethod(
                    "CreateCollection", in: "properties a{sv}, alias s", out: "collection o, prompt o"
                ) { provider, call in
                    let alias = try call.string(1)
                    if !alias.isEmpty { try checkAlias(alias) }
                    let label = try text(try call.properties(0)[collectionInterface + ".Label"], "Label")
                    return [
                        .objectPath(try provider.createCollection(label: label, alias: alias)),
                        .objectPath("/"),
                    ]
                },
                BusMethod("SearchItems", in: "attributes a{ss}", out: "unlocked ao, locked ao") {
                    provider, call in
                    let wanted = try call.stringDictionary(0)
                    var unlocked: [String] = []
                    var locked: [String] = []
                    for (element, collection) in provider.collections.sorted(by: { $0.key < $1.key }) {
                        let found = search(collection, wanted).map { collectionPath(element) + "/" + $0 }
                        if collection.locked { locked += found } else { unlocked += found }
                    }
                    return [.objectPaths(unlocked), .objectPaths(locked)]
                },
                BusMethod("Unlock", in: "objects ao", out: "unlocked ao, prompt o") { provider, call in
                    try provider.unlock(try call.objectPaths(0))
                },
                BusMethod("Lock", in: "objects ao", out: "locked ao, Prompt o") { provider, call in
                    try provider.lock(try call.objectPaths(0))
                },
                BusMethod("GetSecrets", in: "items ao, session o", out: "secrets a{o(oayays)}") {
                    provider, call in
                    let session = try call.string(1)
                    var secrets: [(BusValue, BusValue)] = []
                    var seen: Set<String> = []
                    // A path given twice is one key of the answer: decrypted once.
                    for path in try call.objectPaths(0) where seen.insert(path).inserted {
                        guard case .item(let collection, let item) = provider.resolve(path),
                            provider.collections[collection]?.locked == false
                        else { continue }
                        secrets.append(
                            (.objectPath(path), try provider.secret(collection, item, session: session)))
                    }
                    return [.dictionary(key: "o", value: "(oayays)", secrets)]
                },
                BusMethod("ReadAlias", in: "name s", out: "collection o") { provider, call in
                    guard let element = provider.aliases[try call.string(0)],
                        provider.collections[element] != nil
                    else { return [.objectPath("/")] }
                    return [.objectPath(collectionPath(element))]
                },
                BusMethod("SetAlias", in: "name s, collection o") { provider, call in
                    let name = try call.string(0)
                    try checkAlias(name)
                    let target = try call.string(1)
                    if target == "/" {
                        try provider.setAlias(name, to: nil)
                    } else {
                        guard case .collection(let element) = provider.resolve(target) else {
                            throw BusError.noSuchObject(target)
                        }
                        try provider.setAlias(name, to: element)
                    }
                    return []
                },
            ],
            properties: [
                BusProperty("Collections", "ao") { provider, _ in
                    .objectPaths(provider.collections.keys.sorted().map(collectionPath))
                }
            ],
            signals: [
                BusSignal("CollectionCreated", "collection o"),
                BusSignal("CollectionDeleted", "collection o"),
                BusSignal("CollectionChanged", "collection o"),
            ])

        /// Opens a session for the caller: `plain`, or the Diffie-Hellman exchange of `input`.
        func openSession(algorithm: String, input: BusValue) throws -> [BusValue] {
            let path = newPath("session")
            switch algorithm {
            case "plain":
                sessions[path] = Session(owner: caller, cipher: nil)
                return [.variant(.string("")), .objectPath(path)]
            case SessionCipher.algorithm:
                // One variant layer holding the bytes, as the specification says: a variant inside it is
                // no public key.
                guard case .bytes(let bytes) = input.variantContent else {
                    throw BusError.invalidArguments("the session input must be a byte array")
                }
                let (cipher, output) = try SessionCipher.negotiate(clientPublicKey: bytes)
                sessions[path] = Session(owner: caller, cipher: cipher)
                return [.variant(.bytes(output)), .objectPath(path)]
            default:
                throw BusError(
                    "org.freedesktop.DBus.Error.NotSupported", "the algorithm \(algorithm) is not supported")
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
            rememberStoredAliases(stored)
        }

        /// Records that the store now keeps `stored` (just written).
        func rememberStoredAliases(_ stored: [String: String]) {
            storedAliases = stored
            aliasesStamp = ItemStore.FileStamp(path: items.store.entryPath(ItemStore.aliasesEntry))
        }

        /// The elements of the items of `collection` whose attributes include all of `wanted`.
        static func search(_ collection: Collection, _ wanted: [String: String]) -> [String] {
            // The fewest items that have one of the wanted attributes, then the others checked.
            var candidates: [String]?
            for (name, value) in wanted {
                let found = collection.lookup.elements(name, value, in: collection.items)
                if found.count < candidates?.count ?? Int.max { candidates = found }
                if found.isEmpty { return [] }
            }
            guard let candidates else { return collection.items.keys.sorted() }
            return candidates.filter { element in
                wanted.allSatisfy { collection.items[element]?.metadata.attributes[$0.key] == $0.value }
            }.sorted()
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
            // A stored alias is written with the collection, in one commit: both or neither.
            var stored = storedAliases
            if Self.isStoredAlias(alias) { stored[alias] = id }
            try items.writeCollection(
                id: id, label: label, created: now, aliases: stored == storedAliases ? nil : stored)
            remember(
                ItemStore.entryName(collection: id, id: ItemStore.collectionEntry),
                ItemMetadata(label: label, attributes: [:], created: now))
            let element = Self.diskElement(id)
            collections[element] = Collection(id: id, label: label, created: now, modified: now)
            if stored != storedAliases { rememberStoredAliases(stored) }
            if !alias.isEmpty { aliases[alias] = element }
            let path = Self.collectionPath(element)
            emit(Self.root, Self.serviceInterface, "CollectionCreated", [.objectPath(path)])
            return path
        }
    }
#endif
