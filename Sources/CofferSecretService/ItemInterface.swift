#if canImport(CSDBus)
    import Coffer

    extension SecretServiceProvider {
        /// `org.freedesktop.Secret.Item`, at `/org/freedesktop/secrets/collection/ELEMENT/ITEM`.
        static let item = BusInterface(
            name: itemInterface,
            methods: [
                BusMethod("Delete", out: "Prompt o") { provider, call in
                    let (collection, item) = try call.item()
                    return try provider.deleteItem(collection, item)
                },
                BusMethod("GetSecret", in: "session o", out: "secret (oayays)") { provider, call in
                    let (element, item) = try call.item()
                    if let collection = provider.collections[element] {
                        try provider.requireUnlocked(collection)
                    }
                    return [try provider.secret(element, item, session: call.string(0))]
                },
                BusMethod("SetSecret", in: "secret (oayays)") { provider, call in
                    let (collection, item) = try call.item()
                    return try provider.setSecret(collection, item, call.arguments[0])
                },
            ],
            properties: [
                BusProperty("Locked", "b") { provider, object in
                    .boolean(provider.collection(object)?.locked ?? false)
                },
                itemProperty("Attributes", "a{ss}") { .stringDictionary($0.attributes) },
                itemProperty("Label", "s") { .string($0.label) },
                itemProperty("Type", "s") { .string($0.type) },
                BusProperty("Created", "t") { provider, object in
                    .uint64(provider.metadata(object)?.created ?? 0)
                },
                BusProperty("Modified", "t") { provider, object in
                    .uint64(provider.metadata(object)?.modified ?? 0)
                },
            ])

        /// A property of an item's metadata that clients may set.
        private static func itemProperty(
            _ name: String, _ type: String, _ get: @escaping @Sendable (ItemMetadata) -> BusValue
        ) -> BusProperty {
            BusProperty(
                name, type,
                get: { provider, object in
                    get(provider.metadata(object) ?? ItemMetadata(label: "", attributes: [:], created: 0))
                },
                set: { provider, object, value in
                    guard case .item(let element, let itemElement) = object else { return }
                    try provider.setItemMetadata(element, itemElement, name, value)
                })
        }

        /// The metadata of the item `object` is.
        func metadata(_ object: Object) -> ItemMetadata? {
            guard case .item(let element, let item) = object else { return nil }
            return collections[element]?.items[item]?.metadata
        }

        /// `Delete` of an item.
        func deleteItem(_ element: String, _ itemElement: String) throws -> [BusValue] {
            guard var collection = collections[element], let item = collection.items[itemElement] else {
                throw BusError.noSuchObject(Self.collectionPath(element) + "/" + itemElement)
            }
            let collectionPath = Self.collectionPath(element)
            let path = collectionPath + "/" + itemElement
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
        }

        /// `SetSecret`: the item's secret (and content type) from `value`, a `(oayays)` Secret.
        func setSecret(_ element: String, _ itemElement: String, _ value: BusValue) throws -> [BusValue] {
            guard let collection = collections[element], let item = collection.items[itemElement] else {
                throw BusError.noSuchObject(Self.collectionPath(element) + "/" + itemElement)
            }
            let collectionPath = Self.collectionPath(element)
            let path = collectionPath + "/" + itemElement
            try requireUnlocked(collection)
            let (secret, contentType) = try decodeSecret(value)
            var metadata = item.metadata
            metadata.contentType = contentType
            metadata.modified = ItemStore.now()
            if collection.inMemory {
                collections[element]?.secrets[item.id] = secret
            } else {
                try items.write(
                    collection: collection.id, id: item.id, secret: secret, metadata: metadata)
                remember(
                    ItemStore.entryName(collection: collection.id, id: item.id), metadata)
            }
            collections[element]?.items[itemElement]?.metadata = metadata
            emit(collectionPath, Self.collectionInterface, "ItemChanged", [.objectPath(path)])
            return []
        }

        /// Sets an item's `Label`, `Type` or `Attributes` (`value` of the declared type).
        func setItemMetadata(_ element: String, _ itemElement: String, _ name: String, _ value: BusValue)
            throws
        {
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
                remember(
                    ItemStore.entryName(collection: collection.id, id: item.id), metadata)
            }
            collections[element]?.items[itemElement]?.metadata = metadata
            let collectionPath = Self.collectionPath(element)
            emit(
                collectionPath, Self.collectionInterface, "ItemChanged",
                [.objectPath(collectionPath + "/" + itemElement)])
        }

        /// Sets a collection's label, kept in its `.collection` entry.
        func setCollectionLabel(_ element: String, _ label: String) throws {
            guard var collection = collections[element] else { return }
            try requireUnlocked(collection)
            if !collection.inMemory {
                try items.writeCollection(id: collection.id, label: label, created: collection.created)
                remember(
                    ItemStore.entryName(collection: collection.id, id: ItemStore.collectionEntry),
                    ItemMetadata(label: label, attributes: [:], created: collection.created))
            }
            collection.label = label
            collections[element] = collection
            emit(
                Self.root, Self.serviceInterface, "CollectionChanged",
                [.objectPath(Self.collectionPath(element))])
        }
    }
#endif
