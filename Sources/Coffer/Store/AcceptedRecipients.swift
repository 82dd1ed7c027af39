#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The recipients the user of one clone accepted for each folder of the store: the keys coffer may
/// encrypt what this clone writes there to (see SECURITY.md).
///
/// A folder's record holds the primary fingerprints the user accepted for its effective recipients
/// (its own `.gpg-id`, or the one it inherits); entries in a folder take the record of the nearest
/// folder at or above it. Records are kept outside the shared tree, in the git folder
/// (`<git folder>/coffer-accepted`), so nothing a push brings can change them. They are made from the
/// user's own acts (`init`, `recipients add|rm|accept`, `setup`), from `.gpg-id` files signed by a key
/// the user trusts to sign them, and once, the first time a clone needs them, from the `.gpg-id` files
/// it has then. A record never gains a key any other way; a folder's `.gpg-id` deleted by someone else
/// leaves its record in place, so the folder does not take its parent's recipients as accepted.
package struct AcceptedRecipients: Sendable, Equatable {
    /// The primary fingerprints accepted for each folder (relative to the store root, `""` for the root).
    package private(set) var records: [String: Set<String>]

    /// Records as given.
    package init(records: [String: Set<String>] = [:]) {
        self.records = records
    }

    /// The record that applies to entries in `folder`: the nearest folder at or above it that has one,
    /// with that folder's name; `nil` when none does.
    package func record(forFolder folder: String) -> (folder: String, keys: Set<String>)? {
        var current = EntryName.trimmed(folder)
        while true {
            if let keys = records[current] { return (current, keys) }
            if current.isEmpty { return nil }
            current = PasswordStore.folder(of: current)
        }
    }

    /// The keys accepted for entries in `folder` (none when no record applies).
    package func keys(forFolder folder: String) -> Set<String> {
        record(forFolder: folder)?.keys ?? []
    }

    /// Sets the record of `folder`.
    package mutating func set(_ keys: Set<String>, forFolder folder: String) {
        records[EntryName.trimmed(folder)] = keys
    }

    /// Removes the record of `folder` (its entries then take the record above it).
    package mutating func remove(folder: String) {
        records[EntryName.trimmed(folder)] = nil
    }

    /// Gives the records of `source` and every folder below it to the same folders under `target`, as
    /// a move (`copy` false) or a copy of the folder does to its `.gpg-id` files.
    package mutating func transfer(from source: String, to target: String, copy: Bool) {
        let (from, to) = (EntryName.trimmed(source), EntryName.trimmed(target))
        guard !from.isEmpty else { return }
        for (folder, keys) in records where folder == from || folder.isPath(inside: from) {
            if !copy { records[folder] = nil }
            records[to + String(decoding: folder.utf8.dropFirst(from.utf8.count), as: UTF8.self)] = keys
        }
    }

    // MARK: - The file

    private static let header = "coffer accepted recipients 1"

    /// The records in `file`; `nil` when there is no such file.
    ///
    /// - Throws: ``CofferError/Code/format`` when the file is not one coffer wrote (nothing is
    ///   accepted anew in its place: that is the user's decision).
    package static func read(_ file: String) throws -> AcceptedRecipients? {
        guard FileSystem.kind(file) != .missing else { return nil }
        let bytes = try FileSystem.readFile(file)
        let lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        func corrupt() -> CofferError {
            CofferError(
                .format,
                "\(Quoting.quoted(file)) is not a list of accepted recipients coffer wrote; move it away to "
                    + "accept the store's recipients as they are now", paths: [file])
        }
        guard lines.first.map(Array.init) == Array(header.utf8), lines.last?.isEmpty == true else {
            throw corrupt()
        }
        var records: [String: Set<String>] = [:]
        var folder: String?
        for line in lines.dropFirst().dropLast() {
            let text = String(decoding: line, as: UTF8.self)
            if text.hasPrefix("folder ") {
                guard let name = Hex.bytes(String(text.dropFirst(7))) else { throw corrupt() }
                let decoded = String(decoding: name, as: UTF8.self)
                folder = decoded
                records[decoded, default: []] = records[decoded] ?? []
            } else if text.hasPrefix("key "), let current = folder {
                let fingerprint = String(text.dropFirst(4))
                guard PasswordStore.isFullFingerprint(fingerprint) else { throw corrupt() }
                records[current, default: []].insert(fingerprint)
            } else {
                throw corrupt()
            }
        }
        return AcceptedRecipients(records: records)
    }

    /// Writes the records to `file` atomically, private to the user.
    package func write(_ file: String) throws {
        var text = Self.header + "\n"
        for folder in records.keys.sorted() {
            text += "folder " + Hex.upper(Array(folder.utf8)) + "\n"
            for key in records[folder]!.sorted() { text += "key " + key + "\n" }
        }
        try FileSystem.atomicWrite(file, bytes: Array(text.utf8), mode: 0o600)
    }
}
