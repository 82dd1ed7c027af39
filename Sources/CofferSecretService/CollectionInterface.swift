#if canImport(CSDBus)
    import Coffer

    extension SecretServiceProvider {
        /// `org.freedesktop.Secret.Collection`, at `/org/freedesktop/secrets/collection/ELEMENT`.
        static let collection = BusInterface(
            name: collectionInterface,
            methods: [
                BusMethod("Delete", out: "prompt o") { provider, call in
                    try provider.deleteCollection(try call.collection())
                },
                BusMethod("SearchItems", in: "attributes a{ss}", out: "results ao") { provider, call in
                    let element = try call.collection()
                    let wanted = try call.stringDictionary(0)
                    let found = provider.collections[element].map { search($0, wanted) } ?? []
                    return [.objectPaths(found.map { collectionPath(element) + "/" + $0 })]
                },
                BusMethod(
                    "CreateItem", in: "properties a{sv}, secret (oayays), replace b", out: "item o, prompt o"
                ) { provider, call in
                    try provider.createItem(
                        in: try call.collection(), properties: try call.properties(0),
                        secret: call.arguments[1],
                        replace: try call.boolean(2))
                },
            ],
            properties: [
                BusProperty("Items", "ao") { provider, object in
                    guard case .collection(let element) = object,
                        let collection = provider.collections[element]
                    else { return .objectPaths([]) }
                    return .objectPaths(
                        collection.items.keys.sorted().map { collectionPath(element) + "/" + $0 })
                },
                BusProperty(
                    "Label", "s",
                    get: { provider, object in .string(provider.collection(object)?.label ?? "") },
                    set: { provider, object, value in
                        guard case .collection(let element) = object else { return }
                        try provider.setCollectionLabel(element, value.textValue ?? "")
                    }),
                BusProperty("Locked", "b") { provider, object in
                    .boolean(provider.collection(object)?.locked ?? false)
                },
                BusProperty("Created", "t") { provider, object in
                    .uint64(provider.collection(object)?.created ?? 0)
                },
                BusProperty("Modified", "t") { provider, object in
                    .uint64(provider.collection(object)?.modified ?? 0)
                },
            ],
            signals: [
                BusSignal("ItemCreated", "item o"), BusSignal("ItemDeleted", "item o"),
                BusSignal("ItemChanged", "item o"),
            ])

        /// The collection `object` is (or holds, for an item).
        func collection(_ object: Object) -> Collection? {
            switch object {
            case .collection(let element), .item(let element, _): collections[element]
            default: nil
            }
        }

        /// `Delete` of a collection: its items and its `.collection` entry go, in one commit.
        func deleteCollection(_ element: String) throws -> [BusValue] {
            guard let collection = collections[element] else {
                throw BusError.noSuchObject(Self.collectionPath(element))
            }
            let path = Self.collectionPath(element)
            // Deleting a locked collection would lose its items without an unlock (gnome-keyring refuses too).
            try requireUnlocked(collection)
            if !collection.inMemory {
                // Its stored aliases go in the same commit: both or neither.
                let stored = storedAliases.filter { $0.value != collection.id }
                try items.removeCollection(
                    id: collection.id, items: collection.items.values.map(\.id),
                    aliases: stored == storedAliases ? nil : stored)
                if stored != storedAliases { rememberStoredAliases(stored) }
            }
            collections[element] = nil
            aliases = aliases.filter { $0.value != element }
            emit(Self.root, Self.serviceInterface, "CollectionDeleted", [.objectPath(path)])
            // The session collection is there as long as the provider runs: deleting it empties it.
            if collection.inMemory {
                makeSessionCollection()
                emit(Self.root, Self.serviceInterface, "CollectionCreated", [.objectPath(path)])
            }
            return [.objectPath("/")]
        }

        /// `CreateItem`: a new item (or the one with the same attributes, when `replace`), written and committed.
        func createItem(in element: String, properties: [String: BusValue], secret: BusValue, replace: Bool)
            throws
            -> [BusValue]
        {
            guard var collection = collections[element] else {
                throw BusError.noSuchObject(Self.collectionPath(element))
            }
            let path = Self.collectionPath(element)
            try requireUnlocked(collection)
            guard
                let attributes = properties[Self.itemInterface + ".Attributes"].map({
                    $0.variantContent.signature == "a{ss}" ? $0.stringDictionaryValue : nil
                })
                    ?? [:]
            else { throw BusError.invalidArguments("Attributes must be a dictionary of strings") }
            let (bytes, contentType) = try decodeSecret(secret)
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
                replace
                ? collection.items.first { $0.value.metadata.attributes == metadata.attributes } : nil
            let id: String
            if let replacing {
                id = replacing.value.id
                metadata.created = replacing.value.metadata.created
            } else {
                id = Self.newItemID(in: collection)
            }
            if collection.inMemory {
                collection.secrets[id] = bytes
            } else {
                try items.write(collection: collection.id, id: id, secret: bytes, metadata: metadata)
                remember(
                    ItemStore.entryName(collection: collection.id, id: id), metadata)
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
    }
#endif
