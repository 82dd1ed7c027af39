#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One recipient of a folder: a line of its `.gpg-id` and the key it stands for.
public struct Recipient: Sendable, Equatable {
    /// The line as written in `.gpg-id` (a fingerprint, a key id, an e-mail address, a group).
    public var id: String
    /// The primary key's fingerprint, when the keyring has the key.
    public var fingerprint: String?
    /// The key's primary user id (`Name <email>`), when the keyring has the key.
    public var userID: String?
    /// When the encryption subkey gpg would use expires, in seconds since 1970 (0: never, or no key).
    public var expires: Int
    /// Why coffer cannot encrypt to it (no public key, revoked, expired, no encryption subkey); `nil`
    /// when it can.
    public var problem: String?
}

extension PasswordStore {
    /// Where public keys of recipients are kept in the store: `.public-keys/FINGERPRINT`, armored.
    public static let publicKeysFolder = ".public-keys"

    /// The recipients of the store or of `subfolder` (those of the nearest `.gpg-id` at or above it).
    public func recipients(ofFolder subfolder: String = "") throws -> [Recipient] {
        try EntryName.validate(subfolder)
        let name = EntryName.trimmed(subfolder)
        guard name.isEmpty || FileSystem.isDirectory(root + "/" + name) else {
            throw CofferError(.notFound, "\(name) is not in the password store.")
        }
        return try recipients(forFolder: name).ids.map(describe)
    }

    /// Adds `added` and removes `removed` recipients of the store or `subfolder` (a folder without a
    /// `.gpg-id` of its own gets one, starting from the recipients it had), re-encrypts the entries that
    /// need it, keeps the public keys of the added recipients in ``publicKeysFolder`` and commits it all
    /// as one change. Added keys are written by fingerprint; a key the keyring lacks is looked for in
    /// ``publicKeysFolder``. With `PASSWORD_STORE_SIGNING_KEY`, `.gpg-id` is signed as by ``initialize(recipients:subfolder:onEvent:)``.
    /// Nothing changes unless the whole change can be made.
    ///
    /// - Throws: ``CofferError/Code/invalidArgument`` for a key that matches no key or several, cannot
    ///   be encrypted to, is not a recipient (for removal), or when no recipient would be left.
    public func changeRecipients(
        adding added: [String], removing removed: [String], subfolder: String = "",
        onEvent: (StoreEvent) -> Void = { _ in }
    ) throws {
        guard let keys = engine as? GPGMEEngine else {
            throw CofferError(.invalidArgument, "managing recipients needs gpg's keyring (GPGMEEngine)")
        }
        try StoreLock.withLock(root: root, timeout: configuration.lockTimeout) {
            try EntryName.validate(subfolder)
            let name = EntryName.trimmed(subfolder)
            let folder = name.isEmpty ? root : root + "/" + name
            guard FileSystem.isDirectory(folder) else {
                throw CofferError(.notFound, "\(name) is not in the password store.")
            }
            let gpgID = folder + "/.gpg-id"
            try git(for: gpgID)?.ensureNoUnfinishedOperation()
            // What the folder's nearest `.gpg-id` says (PASSWORD_STORE_KEY overrides only encryption).
            guard let current = gpgIDFile(forFolder: name) else {
                throw CofferError(
                    .noRecipients, "no .gpg-id for \(name.isEmpty ? "the store" : name); run init")
            }
            var lines = GPGIDFile.parse(try FileSystem.readFile(current))
            var summary: [String] = []
            // Removals: every line that stands for one of the keys, or is written as asked.
            var removedFingerprints: Set<String> = []
            for key in removed {
                let fingerprints = Set(try keys.keys(matching: [key], secretOnly: false).map(\.fingerprint))
                removedFingerprints.formUnion(fingerprints)
                if Self.isFullFingerprint(key.uppercased()) { removedFingerprints.insert(key.uppercased()) }
                let before = lines.count
                lines.removeAll { line in
                    line == key
                        || !fingerprints.isDisjoint(
                            with: (try? keys.keys(matching: [line], secretOnly: false).map(\.fingerprint))
                                ?? [])
                }
                guard lines.count < before else {
                    throw CofferError(
                        .invalidArgument, "\(key) is not a recipient of \(name.isEmpty ? "the store" : name)")
                }
                summary.append(key)
            }
            // Additions: one key each, that can be encrypted to, by fingerprint.
            var publicKeys: [(file: String, bytes: [UInt8])] = []
            for key in added {
                var matching = try keys.keys(matching: [key], secretOnly: false)
                if matching.isEmpty, try importKeptPublicKeys(keys, wanted: key) > 0 {
                    matching = try keys.keys(matching: [key], secretOnly: false)
                }
                guard matching.count == 1, let found = matching.first else {
                    throw CofferError(
                        .invalidArgument,
                        matching.isEmpty
                            ? "no public key for \(key): import it (gpg --import) first"
                            : "\(key) matches \(matching.count) keys; give the fingerprint of one")
                }
                if let problem = try keys.recipientProblems([found.fingerprint]).first {
                    throw CofferError(.invalidArgument, "cannot encrypt to \(key): \(problem.message)")
                }
                try keys.makeUsableForEncryption(found.fingerprint)
                let present = try lines.contains { line in
                    try keys.keys(matching: [line], secretOnly: false).contains {
                        $0.fingerprint == found.fingerprint
                    }
                }
                if !present { lines.append(found.fingerprint) }
                publicKeys.append(
                    (
                        root + "/" + Self.publicKeysFolder + "/" + found.fingerprint,
                        try keys.exportPublicKey(found.fingerprint)
                    ))
                summary.append(
                    found.userIDs.first.map { "\(found.fingerprint) (\($0))" } ?? found.fingerprint)
            }
            guard !lines.isEmpty else {
                throw CofferError(.invalidArgument, "no recipient would be left; add another one first")
            }
            // A removed recipient's kept key goes too, unless another folder (or this one) still names it.
            var stillNamed = lines
            for line in try recipientLinesOfEveryFolder(except: gpgID) where !stillNamed.contains(line) {
                stillNamed.append(line)
            }
            let stillNamedFingerprints = Set(
                stillNamed.flatMap { line in
                    (try? keys.keys(matching: [line], secretOnly: false).map(\.fingerprint)) ?? []
                })
            let dropped = removedFingerprints.filter { fingerprint in
                !stillNamedFingerprints.contains(fingerprint)
                    && !stillNamed.contains { Self.names($0, fingerprint: fingerprint) }
                    && FileSystem.isFile(root + "/" + Self.publicKeysFolder + "/" + fingerprint)
            }.map { root + "/" + Self.publicKeysFolder + "/" + $0 }
            try replaceRecipients(
                lines, in: folder, publicKeys: publicKeys, droppedKeys: dropped.sorted(),
                message: (added.isEmpty
                    ? "Remove recipient " : removed.isEmpty ? "Add recipient " : "Change recipients: ")
                    + summary.joined(separator: ", ") + (name.isEmpty ? "." : " of \(name)."),
                onEvent: onEvent)
        }
    }

    /// Imports the keys of ``publicKeysFolder`` that the keyring lacks and that some `.gpg-id` of the
    /// store names by fingerprint or key id (or, with `wanted`, that `wanted` names so), and certifies
    /// them locally so that this clone can encrypt to them; returns how many it took in. A key file is
    /// taken only for the key it is named after: one that holds another key, or more, is refused.
    @discardableResult
    package func importKeptPublicKeys(_ keys: GPGMEEngine? = nil, wanted: String? = nil) throws -> Int {
        guard let keys = keys ?? engine as? GPGMEEngine else { return 0 }
        let folder = root + "/" + Self.publicKeysFolder
        guard FileSystem.isDirectory(folder) else { return 0 }
        let named = try wanted.map { [$0] } ?? recipientLinesOfEveryFolder()
        var imported = 0
        for name in try FileSystem.contents(of: folder) where Self.isFullFingerprint(name) {
            guard named.contains(where: { Self.names($0, fingerprint: name) }) else { continue }
            guard try keys.keys(matching: [name], secretOnly: false).isEmpty else { continue }
            guard let bytes = try? FileSystem.readFile(folder + "/" + name),
                (try? keys.fingerprints(inKeyData: bytes)) == [name]
            else { continue }
            guard try keys.importKeys(bytes).contains(name) else { continue }
            imported += 1
            // The store's own recipients keep the key there: gpg is told to take it as valid.
            try? keys.makeUsableForEncryption(name)
        }
        return imported
    }

    /// Whether a `.gpg-id` line (or a key given to `recipients add`) names `fingerprint` itself: the
    /// fingerprint, or its long or short key id, with or without `0x`.
    static func names(_ line: String, fingerprint: String) -> Bool {
        var text = line.uppercased()
        if text.hasPrefix("0X") { text.removeFirst(2) }
        return text.count >= 8 && text.utf8.allSatisfy { (48...57).contains($0) || (65...70).contains($0) }
            && fingerprint.hasSuffix(text)
    }

    /// Every line of every `.gpg-id` in the store.
    func recipientLinesOfEveryFolder(except skipped: String? = nil) throws -> [String] {
        var lines: [String] = []
        try FileTree.walk(root) { path, item in
            if item.isFile, item.nameString == ".gpg-id", path != skipped,
                let bytes = try? FileSystem.readFile(path)
            {
                lines += GPGIDFile.parse(bytes)
            }
            return item.isFolder && item.name.first != UInt8(ascii: ".")
        }
        return lines
    }

    private func describe(_ id: String) throws -> Recipient {
        let keys = (try? engine.keys(matching: [id], secretOnly: false)) ?? []
        let now = Int(time(nil))
        let key = keys.count == 1 ? keys.first : nil
        let problem = try engine.recipientProblems([id]).first?.message
        return Recipient(
            id: id, fingerprint: key?.fingerprint, userID: key?.userIDs.first,
            expires: key?.encryptionSubkey(now: now)?.expirationTime ?? 0,
            problem: problem ?? (keys.isEmpty ? "no public key" : nil))
    }

    /// Writes `.gpg-id` (and its signature) and the public keys, re-encrypts what the new recipients need,
    /// and commits everything once; when any step fails, the commit included, every file is put back as
    /// it was (a failed commit leaves nothing staged).
    private func replaceRecipients(
        _ lines: [String], in folder: String, publicKeys: [(file: String, bytes: [UInt8])],
        droppedKeys: [String],
        message: String, onEvent: (StoreEvent) -> Void
    ) throws {
        let gpgID = folder + "/.gpg-id"
        var originals: [(String, [UInt8]?)] = []
        for file in [gpgID, gpgID + ".sig"] + publicKeys.map(\.file) + droppedKeys {
            originals.append((file, FileSystem.isFile(file) ? try FileSystem.readFile(file) : nil))
        }
        var written = [gpgID]
        do {
            try FileSystem.atomicWrite(
                gpgID, bytes: Array(lines.map { $0 + "\n" }.joined().utf8), mode: configuration.fileMode)
            if !configuration.signingKeys.isEmpty {
                _ = try signRecipientsFile(gpgID)
                written.append(gpgID + ".sig")
            }
            for key in publicKeys {
                try makeFolders(FileSystem.parent(of: key.file))
                try FileSystem.atomicWrite(key.file, bytes: key.bytes, mode: configuration.fileMode)
                written.append(key.file)
            }
            for file in droppedKeys {
                unlink(file)
                written.append(file)
            }
            let plan = try planReencryption(at: folder)
            // The ciphertexts being replaced, to put back if the rest fails (they are not secret).
            for job in plan.jobs {
                originals.append((job.destination, try FileSystem.readFile(job.destination)))
            }
            try write(plan, onEvent: onEvent)
            try commit(written + plan.jobs.map(\.destination), message)
        } catch {
            for (file, bytes) in originals {
                if let bytes {
                    try? FileSystem.atomicWrite(file, bytes: bytes, mode: configuration.fileMode)
                } else {
                    unlink(file)
                }
            }
            throw error
        }
    }
}
