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
/// hashes), encrypted to the collection folder's recipients as an entry of that folder would be: it gives
/// no key what the entries do not. Each record holds an entry's file stamp (device, inode, size, change
/// time) and its metadata; a record is used only while the entry's file has that stamp, so an entry
/// changed, replaced or restored since (by git, pass or a sync) is decrypted again. The index is never
/// written to the store or to git.
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
            guard words.count == 7, words[0] == "item", let device = UInt64(words[2]),
                let inode = UInt64(words[3]), let size = Int64(words[4]), let seconds = Int(words[5]),
                let nanoseconds = Int(words[6])
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
            records[ItemStore.entryName(collection: collection, id: id)] = (stamp, metadata)
        }
        return records
    }

    /// The text of `collection`'s index: the records of `cache` of that collection's entries (directly in
    /// its folder) that decrypted.
    static func text(collection: String, cache: ItemStore.Cache) -> SecureBytes {
        let sink = SecureByteSink()
        sink.append(header + "\ncollection " + ItemStore.escape(collection, isName: true) + "\n")
        let prefix = ItemStore.folder + "/" + collection + "/"
        for (name, record) in cache.sorted(by: { $0.key < $1.key }) where name.hasPrefix(prefix) {
            let id = String(name.dropFirst(prefix.count))
            guard let metadata = record.metadata, !id.contains("/") else { continue }
            let stamp = record.stamp
            sink.append(
                "item \(ItemStore.escape(id, isName: true)) \(stamp.device) \(stamp.inode) \(stamp.size) "
                    + "\(stamp.seconds) \(stamp.nanoseconds)\n")
            for (key, value) in ItemStore.metadataFields(metadata) { sink.append(key + ": " + value + "\n") }
            sink.append("\n")
        }
        sink.append("\n")
        return sink.finish()
    }

    /// Writes the index of each of `collections` from `cache`, atomically; a collection whose folder's
    /// recipients cannot be used (not accepted, no key) gets none, and its old one goes.
    package func write(collections: [String], cache: ItemStore.Cache) throws {
        for collection in collections {
            let path = try file(collection: collection)
            let ciphertext: [UInt8]
            do {
                ciphertext = try store.encrypted(
                    Self.text(collection: collection, cache: cache),
                    asEntry: ItemStore.entryName(collection: collection, id: ".index"))
            } catch {
                unlink(path)
                throw error
            }
            try FileSystem.atomicWrite(path, bytes: ciphertext, mode: 0o600)
        }
    }
}
