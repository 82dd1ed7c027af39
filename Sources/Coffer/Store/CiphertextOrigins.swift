#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where this clone knows each ciphertext was written: the folders whose recipients the value it holds
/// was meant for. Kept by git blob id in `<git folder>/coffer-origins`, beside the accepted recipients,
/// so that an entry someone else moved or copied into a wider folder is still known to come from the
/// narrower one after the sync that brought the move, and no later re-encryption (a sync's, `fsck`'s,
/// `recipients add`'s for the folder it landed in) hands it to more readers.
///
/// The file is a log: each line says that a ciphertext was written in a folder by the user (which
/// replaces what was known of it), was made from another by re-encryption in a folder (it inherits the
/// other's folders), or was seen in a folder by a sync. Nothing secret is in it.
package enum CiphertextOrigins {
    /// One line of the log.
    package enum Record: Sendable, Equatable {
        /// The user wrote the ciphertext `blob` in `folder` (an insert, an edit, a move): that is where it
        /// comes from now.
        case written(blob: String, folder: String)
        /// `blob` was made from the ciphertext `source` by re-encrypting it in `folder`.
        case carried(blob: String, from: String, folder: String)
        /// `blob` was seen in `folder` too (a sync found it written there before it was moved).
        case seen(blob: String, folder: String)
    }

    /// The origins the log in `file` records; an empty map when there is none. A line that cannot be
    /// read is skipped (only this user writes the file).
    package static func read(_ file: String) -> BlobOrigins {
        guard let bytes = try? FileSystem.readFile(file) else { return [:] }
        var origins: BlobOrigins = [:]
        for line in bytes.split(separator: UInt8(ascii: "\n")) {
            let fields = line.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false).map {
                String(decoding: $0, as: UTF8.self)
            }
            func folder(_ hex: String) -> String? {
                Hex.bytes(hex).map { String(decoding: $0, as: UTF8.self) }
            }
            switch (fields.first, fields.count) {
            case ("w", 3):
                if let name = folder(fields[2]) { origins[fields[1]] = [name] }
            case ("c", 4):
                if let name = folder(fields[3]) {
                    origins[fields[1], default: []].formUnion((origins[fields[2]] ?? []).union([name]))
                }
            case ("s", 3):
                if let name = folder(fields[2]) { origins[fields[1], default: []].insert(name) }
            default:
                continue
            }
        }
        return origins
    }

    /// Adds `records` to the log in `file` in one write.
    package static func append(_ records: [Record], to file: String) throws {
        try appendText(records.map(line).joined(), to: file)
    }

    /// Adds `text` to the end of `file` (made private to the user) in one write.
    package static func appendText(_ text: String, to file: String) throws {
        guard !text.isEmpty else { return }
        let descriptor = open(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { throw FileSystem.error("cannot open", file) }
        defer { close(descriptor) }
        try Array(text.utf8).withUnsafeBytes { try SystemCall.writeAll(descriptor, $0, path: file) }
    }

    /// Rewrites the log in `file` to hold `origins`, for the blobs in `keeping` only.
    package static func rewrite(_ origins: BlobOrigins, keeping: Set<String>, to file: String) throws {
        var text = ""
        for blob in origins.keys.sorted() where keeping.contains(blob) {
            for folder in origins[blob]!.sorted() { text += line(.seen(blob: blob, folder: folder)) }
        }
        try FileSystem.atomicWrite(file, bytes: Array(text.utf8), mode: 0o600)
    }

    private static func line(_ record: Record) -> String {
        func hex(_ folder: String) -> String { Hex.upper(Array(folder.utf8)) }
        switch record {
        case .written(let blob, let folder): return "w \(blob) \(hex(folder))\n"
        case .carried(let blob, let source, let folder): return "c \(blob) \(source) \(hex(folder))\n"
        case .seen(let blob, let folder): return "s \(blob) \(hex(folder))\n"
        }
    }
}
