import Coffer

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The metadata of a collection's items, kept encrypted in the user's cache folder so that the provider
/// starts without decrypting every entry.
///
/// One file per collection, `~/.cache/coffer/secret-service/<store>/<collection>.gpg` (both names are
/// hashes), encrypted to the user's own keys (the secret keys they trust ultimately) that the
/// collection's folder names, never to the folder's other recipients: a teammate, or a pusher who put an
/// entry of the user's in a folder they may read, gets nothing from it; and a collection under a key
/// with a passphrase is not opened by another key of the user's that needs none. Each record holds an
/// entry's file stamp (device, inode, size, change time) and its metadata; a record is used only while
/// the entry's file has that stamp, so an entry changed, replaced or restored since (by git, pass or a
/// sync) is decrypted again, and only records taken long enough after the file changed to tell a later
/// change are kept. The index is never written to the store or to git: a cache folder inside the store
/// is refused.
package struct ItemIndex: Sendable {
    /// The store whose collections are indexed.
    let store: PasswordStore
    /// The folder that holds the index folders of stores; `nil`: `secret-service` in the user's cache
    /// folder.
    let base: String?
    /// The first line of an index's text.
    static let header = "coffer secret-service index 1"
    /// The largest index file read (10,000 items take about 2 MiB).
    static let largest = 256 << 20

    /// The index of `store`'s collections, kept under `base` (by default the user's cache folder).
    package init(store: PasswordStore, base: String? = nil) {
        self.store = store
        self.base = base
    }

    /// The folder of this store's index files, made private when missing.
    func folder() throws -> String {
        var path = try base ?? UserCache.folder() + "/secret-service"
        let root = FileSystem.canonicalPath(store.root)
        guard !FileSystem.canonicalPath(path).isPath(inside: root) else {
            throw CofferError(.io, "the cache folder \(Quoting.quoted(path)) is inside the store")
        }
        for (index, name) in [path, path + "/" + UserCache.fileName(for: store.root)].enumerated() {
            if FileSystem.kind(name) == .missing { try FileSystem.makeDirectories(name, mode: 0o700) }
            var info = stat()
            guard lstat(name, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR, info.st_uid == geteuid(),
                info.st_mode & 0o077 == 0
            else { throw CofferError(.io, "\(Quoting.quoted(name)) is not a private folder of this user") }
            if index == 1 { path = name }
        }
        return path
    }

    /// The file of collection `collection`'s index.
    func file(collection: String) throws -> String {
        try folder() + "/" + UserCache.fileName(for: collection) + ".gpg"
    }

    /// The records of `collection`'s index, by entry name; none when there is no index, or it cannot be
    /// read, decrypted or parsed (the entries are then decrypted as without an index).
    package func read(collection: String) -> ItemStore.Cache {
        guard let path = try? file(collection: collection) else { return [:] }
        // Not blocking and no link: a FIFO or a link put in the index's place is refused.
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { return [:] }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_uid == geteuid(),
            info.st_mode & 0o077 == 0, info.st_size < Self.largest,
            let ciphertext = try? SystemCall.readAll(descriptor),
            let text = try? store.engine.decrypt(ciphertext)
        else { return [:] }
        return text.withUnsafeBytes { Self.parse($0, collection: collection) } ?? [:]
    }

    /// The records of an index's text, `nil` when it is not one of `collection`.
    static func parse(_ text: UnsafeRawBufferPointer, collection: String) -> ItemStore.Cache? {
        var lines = text.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)[...]
        guard lines.popFirst().map({ String(decoding: $0, as: UTF8.self) }) == header,
            lines.popFirst().map({ String(decoding: $0, as: UTF8.self) })
                == "collection " + ItemStore.escape(collection, isName: true)
        else { return nil }
        var records: ItemStore.Cache = [:]
        while let line = lines.popFirst(), !line.isEmpty {
            let words = line.split(separator: UInt8(ascii: " ")).map { String(decoding: $0, as: UTF8.self) }
            guard words.count == 8, words[0] == "item", let device = UInt64(words[2]),
                let inode = UInt64(words[3]), let size = Int64(words[4]), let seconds = Int(words[5]),
                let nanoseconds = Int(words[6]), let seen = Double(words[7])
            else { return nil }
            let id = ItemStore.unescape(words[1])
            guard !id.isEmpty, !id.contains("/") else { return nil }
            var metadata = ItemMetadata(label: id, attributes: [:], created: 0)
            while let field = lines.popFirst(), !field.isEmpty {
                guard let colon = field.firstIndex(of: UInt8(ascii: ":")),
                    field.index(after: colon) < field.endIndex,
                    field[field.index(after: colon)] == UInt8(ascii: " ")
                else { return nil }
                ItemStore.apply(
                    key: String(decoding: field[..<colon], as: UTF8.self),
                    value: String(decoding: field[field.index(colon, offsetBy: 2)...], as: UTF8.self),
                    to: &metadata)
            }
            let stamp = ItemStore.FileStamp(
                device: device, inode: inode, size: size, seconds: seconds, nanoseconds: nanoseconds)
            let record = ItemStore.Record(stamp: stamp, metadata: metadata, seen: seen)
            // Only settled records are written; one that is not is no record of this index.
            guard record.isSettled else { return nil }
            records[ItemStore.entryName(collection: collection, id: id)] = record
        }
        return records
    }

    /// The text of `collection`'s index: the records of `cache` of that collection's entries (directly in
    /// its folder) that decrypted, and whose stamps were taken long enough after the files changed to
    /// tell any later change (``ItemStore/Record/isSettled``).
    static func text(collection: String, cache: ItemStore.Cache) -> SecureBytes {
        let sink = SecureByteSink()
        sink.append(header + "\ncollection " + ItemStore.escape(collection, isName: true) + "\n")
        let prefix = ItemStore.folder + "/" + collection + "/"
        for (name, record) in cache.sorted(by: { $0.key < $1.key }) where name.hasPrefix(prefix) {
            let id = String(name.dropFirst(prefix.count))
            guard let metadata = record.metadata, record.isSettled, !id.contains("/") else { continue }
            let stamp = record.stamp
            sink.append(
                "item \(ItemStore.escape(id, isName: true)) \(stamp.device) \(stamp.inode) \(stamp.size) "
                    + "\(stamp.seconds) \(stamp.nanoseconds) \(record.seen)\n")
            for (key, value) in ItemStore.metadataFields(metadata) { sink.append(key + ": " + value + "\n") }
            sink.append("\n")
        }
        sink.append("\n")
        return sink.finish()
    }

    /// Writes the index of each of `collections` from `cache`, atomically, encrypted to those of the
    /// user's own keys that the collection's folder names: a collection kept under a key with a
    /// passphrase stays locked, labels and attributes included, until that passphrase is given, even
    /// when another key of the user's needs none. A collection whose folder names no key of the user's
    /// gets no index. When writing one fails, the others are still written and the first error is
    /// thrown.
    package func write(collections: [String], cache: ItemStore.Cache) throws {
        let own = try store.ownKeys()
        var failure: (any Error)?
        for collection in collections {
            do {
                let path = try file(collection: collection)
                let named = try store.resolve(
                    try store.recipients(forFolder: ItemStore.folder + "/" + collection).ids)
                let readers = Set(named.flatMap { $0.keys.map(\.fingerprint) }).intersection(own).sorted()
                guard !readers.isEmpty else {
                    unlink(path)
                    continue
                }
                try FileSystem.atomicWrite(
                    path,
                    bytes: try store.engine.encrypt(
                        Self.text(collection: collection, cache: cache), to: readers),
                    mode: 0o600)
            } catch {
                failure = failure ?? error
            }
        }
        if let failure { throw failure }
    }
}
