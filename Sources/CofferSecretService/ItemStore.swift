import Coffer

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What the Secret Service knows of an item besides its secret: all of it is kept inside the entry's
/// encryption, and in memory while the provider runs (so that searching never decrypts).
package struct ItemMetadata: Sendable, Equatable {
    /// The label people see.
    package var label: String
    /// The lookup attributes (`service`, `username`, `xdg:schema`...).
    package var attributes: [String: String]
    /// The secret's content type (`text/plain`).
    package var contentType: String
    /// The item's type (its schema name, such as `org.freedesktop.Secret.Generic`), empty when unset.
    package var type: String = ""
    /// When the item was created, in seconds since 1970.
    package var created: UInt64
    /// When the item last changed, in seconds since 1970.
    package var modified: UInt64

    /// Metadata for an item made now.
    package init(
        label: String, attributes: [String: String], contentType: String = "text/plain",
        created: UInt64 = ItemStore.now(), modified: UInt64? = nil
    ) {
        self.label = label
        self.attributes = attributes
        self.contentType = contentType
        self.created = created
        self.modified = modified ?? created
    }
}

/// The Secret Service's items as ordinary entries of the store.
///
/// A collection is the folder `secret-service/<collection>/`; an item is the entry
/// `secret-service/<collection>/<id>`, whose text is the secret on line 1 (base64, with the field
/// `secret-encoding: base64`, when it is not one line of UTF-8) and then the fields `label:`,
/// `content-type:`, `type:`, `created:`, `modified:` and one `attribute.<name>: <value>` per attribute. Names and
/// values are written with `%XX` for `%`, control characters, and (in names) `:` and blanks, and for
/// blanks at either end of a value, so every field reads back exactly. A collection's own label and
/// creation time are in the entry `secret-service/<collection>/.collection`. Everything is encrypted
/// like any other entry: no attribute or label is written in clear.
package struct ItemStore: Sendable {
    /// The store's folder that holds the collections.
    package static let folder = "secret-service"
    /// The entry, inside a collection's folder, that holds the collection's label.
    package static let collectionEntry = ".collection"

    /// The store.
    package let store: PasswordStore

    /// Items kept in `store`.
    package init(store: PasswordStore) {
        var store = store
        store.gitOutput = .quiet
        self.store = store
    }

    /// The current time in seconds since 1970.
    package static func now() -> UInt64 { UInt64(max(0, time(nil))) }

    /// The entry name of item `id` of collection `collection`.
    package static func entryName(collection: String, id: String) -> String {
        folder + "/" + collection + "/" + id
    }

    // MARK: - The entry format

    /// The text of an item's entry.
    ///
    /// `keeping` are lines of the entry as it was that are not the provider's (fields and notes a person
    /// added with `pass edit`); they follow the provider's fields unchanged.
    package static func entryText(secret: SecureBytes, metadata: ItemMetadata, keeping: [[UInt8]] = [])
        -> SecureBytes
    {
        var fields = metadataFields(metadata)
        let sink = SecureByteSink()
        let isOneLine = secret.withUnsafeBytes { buffer in
            !buffer.contains(UInt8(ascii: "\n")) && !buffer.contains(UInt8(ascii: "\r"))
                && String(validating: buffer, as: UTF8.self) != nil
        }
        if isOneLine {
            secret.withUnsafeBytes { sink.append($0) }
        } else {
            var encoded = Array(secret.withUnsafeBytes { SecretBase64.encode($0) }.utf8)
            encoded.withUnsafeBytes { sink.append($0) }
            wipeMemory(&encoded, count: encoded.count)
            fields.insert(("secret-encoding", "base64"), at: 0)
        }
        sink.append("\n")
        for (key, value) in fields { sink.append(key + ": " + value + "\n") }
        for line in keeping {
            line.withUnsafeBytes { sink.append($0) }
            sink.append("\n")
        }
        return sink.finish()
    }

    /// The provider's fields for `metadata`, keys and values escaped: each one line.
    static func metadataFields(_ metadata: ItemMetadata) -> [(String, String)] {
        var fields: [(String, String)] = [
            ("label", escape(metadata.label, isName: false)),
            ("content-type", escape(metadata.contentType, isName: false)),
            ("created", String(metadata.created)),
            ("modified", String(metadata.modified)),
        ]
        if !metadata.type.isEmpty { fields.append(("type", escape(metadata.type, isName: false))) }
        for (name, value) in metadata.attributes.sorted(by: { $0.key < $1.key }) {
            fields.append(("attribute." + escape(name, isName: true), escape(value, isName: false)))
        }
        return fields
    }

    /// Whether the two texts have the same first line, byte for byte.
    static func sameFirstLine(_ one: SecureBytes, _ other: SecureBytes) -> Bool {
        one.withUnsafeBytes { first in
            other.withUnsafeBytes { second in
                let newline = UInt8(ascii: "\n")
                return first.prefix { $0 != newline }.elementsEqual(second.prefix { $0 != newline })
            }
        }
    }

    /// The keys of the fields the provider writes (attributes are `attribute.` and a name).
    static let providerKeys: Set<String> = [
        "label", "content-type", "type", "created", "modified", "secret-encoding",
    ]

    /// The lines after line 1 of an entry's text that are not the provider's fields, without their `\n`.
    package static func foreignLines(_ text: SecureBytes) -> [[UInt8]] {
        text.withUnsafeBytes { buffer -> [[UInt8]] in
            var lines = buffer.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map(
                Array.init)
            if buffer.last == UInt8(ascii: "\n") { lines.removeLast() }
            return lines.dropFirst().filter { line in
                guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return true }
                // The key as `parse` reads it (blanks before the colon dropped; a line that starts with
                // a blank is no field): a field it reads is never kept beside the one written in its
                // place, where it would win (`secret-encoding : base64`).
                guard let first = line.first, first != UInt8(ascii: " "), first != UInt8(ascii: "\t") else {
                    return true
                }
                let key = String(decoding: line[..<colon], as: UTF8.self).trimmingBlanks
                return !(providerKeys.contains(key) || key.hasPrefix("attribute."))
            }
        }
    }

    /// The secret and metadata of an entry's text; entries without the provider's fields (a password
    /// typed with `pass insert`) read as a secret with the entry's name as label and no attributes. The
    /// fields are read wherever the entry came from: `label: x` typed by hand is the item's label.
    package static func parse(_ text: SecureBytes, name: String) -> (
        secret: SecureBytes, metadata: ItemMetadata
    ) {
        let secret = text.withUnsafeBytes { Secret(parsing: Array($0)) }
        var metadata = ItemMetadata(label: name, attributes: [:], created: 0)
        var isBase64 = false
        for field in secret.fields {
            if field.key == "secret-encoding" {
                isBase64 = unescape(field.value) == "base64"
            } else {
                apply(key: field.key, value: field.value, to: &metadata)
            }
        }
        var line = secret.passwordBytes
        defer { wipeMemory(&line, count: line.count) }
        if isBase64, var decoded = SecretBase64.decode(String(decoding: line, as: UTF8.self)) {
            defer { wipeMemory(&decoded, count: decoded.count) }
            return (SecureBytes(decoded), metadata)
        }
        return (SecureBytes(line), metadata)
    }

    /// Sets what the provider's field `key` with the (escaped) `value` says in `metadata`; other keys are
    /// not the provider's and change nothing.
    static func apply(key: String, value escaped: String, to metadata: inout ItemMetadata) {
        let value = unescape(escaped)
        switch key {
        case "label": metadata.label = value
        case "content-type": metadata.contentType = value
        case "type": metadata.type = value
        case "created": metadata.created = UInt64(value) ?? 0
        case "modified": metadata.modified = UInt64(value) ?? 0
        default:
            if key.hasPrefix("attribute.") {
                metadata.attributes[unescape(String(key.dropFirst("attribute.".count)))] = value
            }
        }
    }

    /// `text` with `%`, control characters, and (for names) `:` and blanks written as `%XX`; blanks at
    /// either end, and a value that starts with `|` (a multi-line field in pass's format), too.
    package static func escape(_ text: String, isName: Bool) -> String {
        let bytes = Array(text.utf8)
        var output: [UInt8] = []
        for (index, byte) in bytes.enumerated() {
            let atEdge = index == 0 || index == bytes.count - 1
            let needsEscape =
                byte == UInt8(ascii: "%") || byte < 0x20 || byte == 0x7F
                || (isName && (byte == UInt8(ascii: ":") || byte == UInt8(ascii: " ")))
                || (atEdge && (byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")))
                || (index == 0 && byte == UInt8(ascii: "|"))
            if needsEscape {
                let digits = Array("0123456789ABCDEF".utf8)
                output += [UInt8(ascii: "%"), digits[Int(byte >> 4)], digits[Int(byte & 0xF)]]
            } else {
                output.append(byte)
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Undoes ``escape(_:isName:)``.
    package static func unescape(_ text: String) -> String {
        guard text.utf8.contains(UInt8(ascii: "%")) else { return text }
        let bytes = Array(text.utf8)
        var output: [UInt8] = []
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count,
                let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2])
            {
                output.append(high << 4 | low)
                index += 3
            } else {
                output.append(bytes[index])
                index += 1
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// The value of a hexadecimal digit.
    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        default: nil
        }
    }

    // MARK: - Reading the store

    /// A collection as found in the store.
    package struct StoredCollection: Sendable {
        /// The folder name.
        package var id: String
        /// The label its `.collection` entry gives, `nil` without one.
        package var label: String?
        /// When it was created (0 when unknown).
        package var created: UInt64
        /// The items, by entry id.
        package var items: [String: ItemMetadata]
        /// How many of its entries (the `.collection` entry included) did not decrypt.
        package var unreadable = 0
        /// How many of those did not for want of a passphrase (see ``Record/needsPassphrase``).
        package var needPassphrase = 0
    }

    /// What identifies a version of a file without reading it: device, inode, size and change time.
    package struct FileStamp: Sendable, Equatable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var seconds: Int
        var nanoseconds: Int

        /// A stamp as an index recorded it.
        init(device: UInt64, inode: UInt64, size: Int64, seconds: Int, nanoseconds: Int) {
            self.device = device
            self.inode = inode
            self.size = size
            self.seconds = seconds
            self.nanoseconds = nanoseconds
        }

        /// The stamp of the file at `path`, `nil` when it cannot be read.
        package init?(path: String) {
            var info = stat()
            guard stat(path, &info) == 0 else { return nil }
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
            size = Int64(info.st_size)
            seconds = Int(info.st_ctim.tv_sec)
            nanoseconds = Int(info.st_ctim.tv_nsec)
        }

        /// The change time in seconds since 1970.
        var changeTime: Double { Double(seconds) + Double(nanoseconds) / 1e9 }
    }

    /// What was read of an entry's file with a given stamp.
    package struct Record: Sendable {
        /// The stamp of the file when it was read.
        package var stamp: FileStamp
        /// Its metadata; `nil` when it did not decrypt.
        package var metadata: ItemMetadata?
        /// For an entry that did not decrypt: whether for want of a passphrase (cancelled, no agent),
        /// which an unlock may give, rather than of a key (encrypted to others only) or of a message.
        package var needsPassphrase = false
        /// When the stamp was taken, in seconds since 1970 (the clock's, not the file system's).
        package var seen: Double

        /// How long after a file's change time its stamp is taken to be sure to tell a later change: file
        /// systems whose times are coarse (FAT's 2 seconds, a kernel's tick) give a change made just
        /// after the stamp was taken the same time, and the same inode and size when a file is replaced.
        static let settling = 2.0

        /// Whether the stamp was taken long enough after the file's change to tell any later change, as
        /// git tells a "racy" index entry.
        var isSettled: Bool { seen - stamp.changeTime >= Self.settling }
    }

    /// The current time in seconds since 1970, from the clock.
    static func clock() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    /// Metadata already read, by entry name, with the stamp of the file it was read from: an entry whose
    /// file has the same (settled) stamp is not decrypted again. `nil` metadata is an entry that did not
    /// decrypt at that stamp: it is not tried again (gpg would ask for a passphrase on every change of
    /// the store) until its file changes or an unlock asks for it.
    package typealias Cache = [String: Record]

    /// The collections of the store and their items' metadata. Entries not in `cache` with the same stamp
    /// are decrypted (in parallel, through the engine's fast path) and put there; entries that do not
    /// decrypt are left out and counted. Entries of the collections in `retrying` that did not decrypt
    /// before are tried again.
    ///
    /// `changed` tells whether the cache now holds other entries or versions than before; `unsettled`
    /// whether some records are of files changed too recently to tell a change made since (a load
    /// ``Record/settling`` seconds later reads them again).
    package func load(cache: inout Cache, retrying: Set<String> = []) throws -> (
        collections: [StoredCollection], unreadable: Int, changed: Bool, unsettled: Bool
    ) {
        let top = store.root + "/" + Self.folder
        // Links are not followed: a collection or an item is a real folder or file under `secret-service/`,
        // never a way to other entries of the store (or beyond it) that a client could read or change.
        guard FileSystem.kind(top) == .directory else {
            let changed = !cache.isEmpty
            cache = [:]
            return ([], 0, changed, false)
        }
        // Before any stamp is taken: a stamp is never newer than this.
        let now = Self.clock()
        var collections: [StoredCollection] = []
        var names: [(collection: Int, id: String, stamp: FileStamp)] = []
        for folder in try FileSystem.contents(of: top) where folder.utf8.first != UInt8(ascii: ".") {
            guard FileSystem.kind(top + "/" + folder) == .directory else { continue }
            collections.append(StoredCollection(id: folder, label: nil, created: 0, items: [:]))
            for file in try FileSystem.contents(of: top + "/" + folder) where file.hasSuffix(".gpg") {
                let id = String(file.dropLast(4))
                guard !id.isEmpty, FileSystem.kind(top + "/" + folder + "/" + file) == .file,
                    let stamp = FileStamp(path: top + "/" + folder + "/" + file)
                else { continue }
                names.append((collections.count - 1, id, stamp))
            }
        }
        var fresh: Cache = [:]
        var work: [Int] = []
        var unreadable = 0
        var unsettled = false
        for (index, name) in names.enumerated() {
            let collection = collections[name.collection].id
            let entry = Self.entryName(collection: collection, id: name.id)
            guard let cached = cache[entry], cached.stamp == name.stamp else {
                work.append(index)
                continue
            }
            if cached.metadata == nil {
                if cached.needsPassphrase && retrying.contains(collection) {
                    work.append(index)
                    continue
                }
                unreadable += 1
                collections[name.collection].unreadable += 1
                if cached.needsPassphrase { collections[name.collection].needPassphrase += 1 }
            } else if !cached.isSettled {
                // Read when the file had just changed: a change made since may have the same stamp. Read
                // again once the stamp would tell; until then the record serves.
                if now - cached.stamp.changeTime >= Record.settling {
                    work.append(index)
                    continue
                }
                unsettled = true
            }
            fresh[entry] = cached
        }
        let store = self.store
        let entries = work.map {
            Self.entryName(collection: collections[names[$0].collection].id, id: names[$0].id)
        }
        try Parallel.forEach(entries) { name in
            Self.parse(try store.read(name), name: String(name.split(separator: "/").last ?? "")).metadata
        } consume: { index, result in
            let stamp = names[work[index]].stamp
            switch result {
            case .success(let metadata):
                let record = Record(stamp: stamp, metadata: metadata, seen: now)
                if !record.isSettled { unsettled = true }
                fresh[entries[index]] = record
            case .failure(let error):
                // No key of ours, or no message: no passphrase makes it decrypt, so it locks nothing.
                let kind = (error as? GPGError)?.kind
                let needsPassphrase = kind != nil && kind != .noSecretKey && kind != .corruptData
                unreadable += 1
                collections[names[work[index]].collection].unreadable += 1
                if needsPassphrase { collections[names[work[index]].collection].needPassphrase += 1 }
                fresh[entries[index]] = Record(
                    stamp: stamp, metadata: nil, needsPassphrase: needsPassphrase, seen: now)
            }
        }
        for name in names {
            guard
                let metadata = fresh[
                    Self.entryName(collection: collections[name.collection].id, id: name.id)]?.metadata
            else { continue }
            if name.id == Self.collectionEntry {
                collections[name.collection].label = metadata.label
                collections[name.collection].created = metadata.created
            } else {
                collections[name.collection].items[name.id] = metadata
            }
        }
        let changed = !work.isEmpty || fresh.count != cache.count
        cache = fresh
        return (collections, unreadable, changed, unsettled)
    }

    /// The ids of the entries in `collection`'s folder (its `.collection` entry among them), links left
    /// out.
    package func entryIDs(collection: String) -> [String] {
        let folder = store.root + "/" + Self.folder + "/" + collection
        guard FileSystem.kind(folder) == .directory, let names = try? FileSystem.contents(of: folder) else {
            return []
        }
        return names.filter { $0.hasSuffix(".gpg") && FileSystem.kind(folder + "/" + $0) == .file }.map {
            String($0.dropLast(4))
        }.filter { !$0.isEmpty }.sorted()
    }

    /// Records in `cache` what was just written to entry `name`, so that the next load does not decrypt it.
    package func remember(_ name: String, _ metadata: ItemMetadata, in cache: inout Cache) {
        let now = Self.clock()
        if let stamp = FileStamp(path: store.entryPath(name)) {
            cache[name] = Record(stamp: stamp, metadata: metadata, seen: now)
        }
    }

    /// The secret and metadata of item `id` of `collection`, decrypted.
    package func read(collection: String, id: String) throws -> (secret: SecureBytes, metadata: ItemMetadata)
    {
        try refuseLinks(collection: collection, id: id)
        return Self.parse(try store.read(Self.entryName(collection: collection, id: id)), name: id)
    }

    /// Refuses an item whose path goes through a link: `secret-service/`, its collection's folder and
    /// the item's file must be what they are named, or the item is not the provider's to touch.
    func refuseLinks(collection: String, id: String) throws {
        let top = store.root + "/" + Self.folder
        for (path, wanted) in [
            (top, FileSystem.Kind.directory), (top + "/" + collection, .directory),
            (store.entryPath(Self.entryName(collection: collection, id: id)), .file),
        ] {
            let kind = FileSystem.kind(path)
            guard kind == wanted || kind == .missing else {
                throw CofferError(
                    .invalidName,
                    "\(Quoting.quoted(path)) is not a plain \(wanted == .file ? "file" : "folder")",
                    paths: [path])
            }
        }
    }

    // MARK: - Writing the store

    /// Writes item `id` of `collection` (atomically, committed when the store is a git work tree; when the
    /// commit fails, the entry is put back as it was).
    ///
    /// An entry that exists keeps the lines that are not the provider's (read and written under the
    /// store's lock).
    package func write(collection: String, id: String, secret: SecureBytes, metadata: ItemMetadata) throws {
        try refuseLinks(collection: collection, id: id)
        let name = Self.entryName(collection: collection, id: id)
        try store.undoingUncommitted([name]) {
            guard store.contains(name) else {
                try store.write(
                    name, Self.entryText(secret: secret, metadata: metadata),
                    commitMessage: "Add Secret Service item \(name).")
                return
            }
            try store.update(name, commitMessage: "Update Secret Service item \(name).") { text in
                Self.entryText(secret: secret, metadata: metadata, keeping: Self.foreignLines(text))
            }
        }
    }

    /// Changes the metadata of item `id` of `collection`, keeping its secret.
    package func update(collection: String, id: String, metadata: ItemMetadata) throws {
        try refuseLinks(collection: collection, id: id)
        let name = Self.entryName(collection: collection, id: id)
        try store.undoingUncommitted([name]) {
            try store.update(name, commitMessage: "Update Secret Service item \(name).") { text in
                try Self.withMetadata(text, name: name, id: id, what: "label or attributes") { _ in metadata }
            }
        }
    }

    /// The entry's text `text` with the metadata `change` makes of what it holds, its secret and a
    /// person's other lines kept.
    ///
    /// An entry kept by hand whose first line is not one line of text (NUL bytes, bytes that are not
    /// UTF-8, a CR) would have it rewritten in base64: `pass show` would give another password. Its
    /// metadata cannot change; the person edits it.
    static func withMetadata(
        _ text: SecureBytes, name: String, id: String, what: String, _ change: (ItemMetadata) -> ItemMetadata
    ) throws -> SecureBytes {
        let found = parse(text, name: id)
        let rewritten = entryText(
            secret: found.secret, metadata: change(found.metadata), keeping: foreignLines(text))
        guard sameFirstLine(text, rewritten) else {
            throw CofferError(
                .invalidArgument,
                "\(name) was not written by the Secret Service and its first line is not one line of text; "
                    + "change its \(what) with pass edit")
        }
        return rewritten
    }

    /// Removes item `id` of `collection`.
    package func remove(collection: String, id: String) throws {
        try refuseLinks(collection: collection, id: id)
        let name = Self.entryName(collection: collection, id: id)
        try store.undoingUncommitted([name]) { try store.remove(name, recursive: false) }
    }

    /// Writes a collection's `.collection` entry, and with `aliases` the aliases entry (``writeAliases(_:)``),
    /// as one commit: both or neither.
    package func writeCollection(id: String, label: String, created: UInt64, aliases: [String: String]? = nil)
        throws
    {
        try refuseLinks(collection: id, id: Self.collectionEntry)
        let metadata = ItemMetadata(label: label, attributes: [:], created: created)
        let name = Self.entryName(collection: id, id: Self.collectionEntry)
        let isNew = !store.contains(name)
        let collection = PasswordStore.EntryChange.set(name) { text in
            guard let text else { return Self.entryText(secret: SecureBytes([]), metadata: metadata) }
            // A person's lines in it stay, as in an item; a first line that is not one line of text is
            // theirs to edit.
            return try Self.withMetadata(text, name: name, id: id, what: "label") { found in
                var kept = found
                kept.label = label
                kept.created = created
                return kept
            }
        }
        try store.change(
            [collection] + (try aliases.map { [try aliasesChange($0)] } ?? []),
            commitMessage: "\(isNew ? "Add" : "Update") Secret Service collection \(Self.folder)/\(id).")
    }

    /// The entry that keeps the aliases clients set (`SetAlias`), beside the collections' folders: each
    /// alias an `attribute.NAME: FOLDER` line, inside the encryption.
    package static let aliasesEntry = folder + "/.aliases"

    /// The aliases kept in the store, alias to collection folder; none when the entry is not there.
    package func readAliases() throws -> [String: String] {
        guard FileSystem.kind(store.root + "/" + Self.folder) == .directory,
            FileSystem.kind(store.entryPath(Self.aliasesEntry)) == .file
        else { return [:] }
        return Self.parse(try store.read(Self.aliasesEntry), name: "").metadata.attributes
    }

    /// Keeps `aliases` (alias to collection folder) in the store, committed; the entry goes when none is
    /// left.
    package func writeAliases(_ aliases: [String: String]) throws {
        try store.change([try aliasesChange(aliases)], commitMessage: "Update Secret Service aliases.")
    }

    /// The change of the aliases entry that makes it hold `aliases`.
    func aliasesChange(_ aliases: [String: String]) throws -> PasswordStore.EntryChange {
        let name = Self.aliasesEntry
        let path = store.entryPath(name)
        let kind = FileSystem.kind(path)
        let top = FileSystem.kind(store.root + "/" + Self.folder)
        guard kind == .file || kind == .missing, top == .directory || top == .missing else {
            throw CofferError(.invalidName, "\(Quoting.quoted(path)) is not a plain file", paths: [path])
        }
        guard !aliases.isEmpty else { return .remove(name) }
        return .set(name) { _ in
            Self.entryText(
                secret: SecureBytes([]), metadata: ItemMetadata(label: "", attributes: aliases, created: 0))
        }
    }

    /// Removes a collection: the entries of `items` (the items the provider serves) and its `.collection`
    /// entry, and with `aliases` writes the aliases entry, as one commit. Other entries a person keeps in
    /// the folder (in subfolders, or that do not decrypt) and its `.gpg-id` stay; the folder goes only
    /// when it is left empty.
    package func removeCollection(id: String, items: [String], aliases: [String: String]? = nil) throws {
        for item in items + [Self.collectionEntry] { try refuseLinks(collection: id, id: item) }
        let names = (items + [Self.collectionEntry]).map { Self.entryName(collection: id, id: $0) }
        try store.change(
            names.map { .remove($0) } + (try aliases.map { [try aliasesChange($0)] } ?? []),
            commitMessage: "Remove Secret Service collection \(Self.folder)/\(id).")
    }
}

extension SecureByteSink {
    /// Appends the bytes of `buffer`.
    func append(_ buffer: UnsafeRawBufferPointer) {
        guard let base = buffer.baseAddress, !buffer.isEmpty else { return }
        append(base, length: buffer.count)
    }

    /// Appends the UTF-8 bytes of `text` (never a secret: those are appended from their buffers).
    func append(_ text: String) {
        var bytes = Array(text.utf8)
        bytes.withUnsafeBytes { append($0) }
        wipeMemory(&bytes, count: bytes.count)
    }
}

extension String {
    /// The string without spaces and tabs at either end.
    fileprivate var trimmingBlanks: String {
        var trimmed = self[...]
        while let first = trimmed.first, first == " " || first == "\t" { trimmed.removeFirst() }
        while let last = trimmed.last, last == " " || last == "\t" { trimmed.removeLast() }
        return String(trimmed)
    }
}
