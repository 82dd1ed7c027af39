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
    /// Why coffer cannot encrypt to it (no public key, revoked, expired, no encryption subkey, a line
    /// that matches several keys); `nil` when it can.
    public var problem: String?
    /// Whether the line matches more than one key gpg could encrypt to (an error: which one reads the
    /// entries would be gpg's choice); ``problem`` names them.
    public var isAmbiguous = false
    /// Whether the user accepted the key for the folder on this clone (see SECURITY.md); always true
    /// where no accepted recipients are kept (a store without git, or `PASSWORD_STORE_KEY`).
    public var isAccepted = true
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
        let acceptance = try acceptance(at: folderPath(name) + "/.gpg-id")
        let accepted = acceptance?.accepted.keys(forFolder: name)
        let own = acceptance == nil ? [] : try ownKeys()
        return try recipients(forFolder: name).ids.map { id in
            var recipient = try describe(id)
            if let accepted {
                let keys = try resolve([id]).first?.keys ?? []
                recipient.isAccepted = keys.allSatisfy {
                    accepted.contains($0.fingerprint) || own.contains($0.fingerprint)
                }
            }
            return recipient
        }
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
        guard let keys = keyring else {
            throw CofferError(.invalidArgument, "managing recipients needs gpg's keyring")
        }
        guard configuration.keyOverride == nil else {
            throw CofferError(
                .invalidArgument,
                "PASSWORD_STORE_KEY is set and overrides every .gpg-id; unset it to change the recipients")
        }
        try withStoreLock {
            try EntryName.validate(subfolder)
            let name = EntryName.trimmed(subfolder)
            let place = name.isEmpty ? "the store" : name
            guard !name.pathParts.contains(where: { $0.utf8.first == UInt8(ascii: ".") }) else {
                throw CofferError(.invalidName, "\(name) is a hidden folder, not a folder of entries")
            }
            let folder = name.isEmpty ? root : root + "/" + name
            guard FileSystem.isDirectory(folder) else {
                throw CofferError(.notFound, "\(name) is not in the password store.")
            }
            let gpgID = folder + "/.gpg-id"
            try checkInsideStore(gpgID)
            try checkInsideStore(root + "/" + Self.publicKeysFolder + "/.")
            try git(for: gpgID)?.ensureNoUnfinishedOperation()
            guard let current = gpgIDFile(forFolder: name) else {
                throw CofferError(.noRecipients, "no .gpg-id for \(place); run init")
            }
            let standsFor = RecipientResolver(keys: keys)
            // The file's own lines, comments included; only recipients' lines are taken out or added.
            var text = String(decoding: try FileSystem.readFile(current), as: UTF8.self)
                .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            if text.last == "" { text.removeLast() }
            func recipient(_ line: String) -> String? { GPGIDFile.parse(Array(line.utf8)).first }
            var summary: [String] = []
            var removedFingerprints: Set<String> = []
            for key in removed {
                let fingerprints = standsFor.exactly(key)
                let isLine = text.contains { recipient($0) == key }
                guard isLine || !fingerprints.isEmpty else {
                    throw CofferError(.invalidArgument, "\(key) is not a recipient of \(place)")
                }
                guard isLine || fingerprints.count == 1 else {
                    throw CofferError(
                        .invalidArgument,
                        "\(key) matches \(fingerprints.count) keys; give the fingerprint of one")
                }
                let before = text.count
                text.removeAll { line in
                    guard let id = recipient(line) else { return false }
                    return id == key || (!fingerprints.isEmpty && standsFor.exactly(id) == fingerprints)
                }
                // A group or a name matching several keys that still stands for it would keep it in.
                if let line = text.compactMap(recipient).first(where: {
                    !standsFor.all($0).isDisjoint(with: fingerprints)
                }) {
                    throw CofferError(
                        .invalidArgument,
                        "\(key) stays a recipient of \(place) through the line \(Quoting.inQuotes(line)) of its .gpg-id; edit that line"
                    )
                }
                guard text.count < before else {
                    throw CofferError(.invalidArgument, "\(key) is not a recipient of \(place)")
                }
                removedFingerprints.formUnion(fingerprints)
                summary.append(key)
            }
            // Additions: one key each, that can be encrypted to, by fingerprint.
            var publicKeys: [(file: String, bytes: [UInt8])] = []
            var addedFingerprints = Set<String>()
            for key in added {
                var matching = standsFor.exactly(key)
                if matching.isEmpty, try !importKeptPublicKeys(keys, wanted: key).isEmpty {
                    matching = standsFor.exactly(key)
                }
                guard matching.count == 1, let fingerprint = matching.first else {
                    throw CofferError(
                        .invalidArgument,
                        matching.isEmpty
                            ? "no public key for \(key): import it (gpg --import) first"
                            : "\(key) matches \(matching.count) keys; give the fingerprint of one")
                }
                guard !text.compactMap(recipient).contains(where: { standsFor.all($0).contains(fingerprint) })
                else {
                    throw CofferError(.invalidArgument, "\(key) is a recipient of \(place) already")
                }
                if let problem = try keys.recipientProblems([fingerprint]).first {
                    throw CofferError(.invalidArgument, "cannot encrypt to \(key): \(problem.message)")
                }
                // Only the user id named (the primary one for a fingerprint or key id) is certified.
                let named = try keys.keys(matching: [fingerprint], secretOnly: false).first?.userIDs.first {
                    !Self.names(key, fingerprint: fingerprint) && $0.lowercased().contains(key.lowercased())
                }
                try keys.makeUsableForEncryption(fingerprint, userID: named)
                addedFingerprints.insert(fingerprint)
                text.append(fingerprint)
                publicKeys.append(
                    (
                        root + "/" + Self.publicKeysFolder + "/" + fingerprint,
                        try keys.exportPublicKey(fingerprint)
                    ))
                let userID = try keys.keys(matching: [fingerprint], secretOnly: false).first?.userIDs.first
                summary.append(userID.map { "\(fingerprint) (\($0))" } ?? fingerprint)
            }
            let lines = text.compactMap(recipient)
            guard !lines.isEmpty else {
                throw CofferError(.invalidArgument, "no recipient would be left; add another one first")
            }
            // A removed recipient's kept key goes too, unless another folder (or this one) still names it.
            var stillNamed = lines
            for line in try recipientLinesOfEveryFolder(except: gpgID) where !stillNamed.contains(line) {
                stillNamed.append(line)
            }
            let stillNamedFingerprints = Set(stillNamed.flatMap(standsFor.all))
            let dropped = removedFingerprints.filter { fingerprint in
                !stillNamedFingerprints.contains(fingerprint)
                    && !stillNamed.contains { Self.names($0, fingerprint: fingerprint) }
                    && FileSystem.isFile(root + "/" + Self.publicKeysFolder + "/" + fingerprint)
            }.map { root + "/" + Self.publicKeysFolder + "/" + $0 }
            // What the folder accepts: what it did, with the keys the user added and without those removed.
            var acceptance = try acceptance(at: gpgID)
            if let accepted = acceptance?.accepted {
                acceptance?.accepted.set(
                    accepted.keys(forFolder: name).union(addedFingerprints).subtracting(removedFingerprints),
                    forFolder: name)
            }
            try replaceRecipients(
                text, in: folder, acceptance: acceptance, gained: addedFingerprints, publicKeys: publicKeys,
                droppedKeys: dropped.sorted(),
                message: (added.isEmpty
                    ? "Remove recipient " : removed.isEmpty ? "Add recipient " : "Change recipients: ")
                    + summary.joined(separator: ", ") + (name.isEmpty ? "." : " of \(name)."),
                onEvent: onEvent)
        }
    }

    /// Imports the keys of ``publicKeysFolder`` that the keyring lacks and that some `.gpg-id` of the
    /// store names by fingerprint or key id (or, with `wanted`, that `wanted` names so); returns those
    /// it took in, as `FINGERPRINT "user id"`. A key file is taken only for the key it is named after,
    /// as public key packets alone: one that holds another key, more, or a secret key is refused.
    /// With `onlyChanged`, a key the keyring has already is imported again only when its file is in
    /// the set (its file changed).
    ///
    /// Keys from the repository are data, not trust: nothing imported is certified, so gpg does not
    /// take a key as valid because it arrived, and coffer encrypts to it only where the user accepts it.
    @discardableResult
    package func importKeptPublicKeys(
        _ keys: (any Keyring)? = nil, wanted: String? = nil, onlyChanged: Set<String>? = nil
    ) throws -> [String] {
        guard let keys = keys ?? keyring else { return [] }
        let folder = root + "/" + Self.publicKeysFolder
        guard FileSystem.isDirectory(folder) else { return [] }
        let named = try wanted.map { [$0] } ?? recipientLinesOfEveryFolder()
        var imported: [String] = []
        for name in try FileSystem.contents(of: folder) where Self.isFullFingerprint(name) {
            guard named.contains(where: { Self.names($0, fingerprint: name) }) else { continue }
            let known = try !keys.keys(matching: [name], secretOnly: false).isEmpty
            if known, let onlyChanged, !onlyChanged.contains(name) { continue }
            guard let bytes = try? FileSystem.readFile(folder + "/" + name),
                OpenPGPPackets.holdsOnlyPublicKeys(bytes),
                (try? keys.fingerprints(inKeyData: bytes)) == [name]
            else { continue }
            // A key the keyring has is imported again: gpg merges what changed (a new expiry date, a new
            // subkey, a revocation), and only what its owner signed.
            guard try keys.importKeys(bytes).contains(name) else { continue }
            let key = try keys.keys(matching: [name], secretOnly: false).first
            imported.append(key.map(Self.describe) ?? name)
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
        let problem = try engine.recipientProblems([id]).first?.message
        guard let keys = keyring else {
            return Recipient(id: id, fingerprint: nil, userID: nil, expires: 0, problem: problem)
        }
        let resolver = RecipientResolver(keys: keys)
        let now = Int(time(nil))
        // As gpg finds keys for -r: a line that two usable keys answer to is an error.
        if let line = try resolve([id]).first, line.isAmbiguous {
            return Recipient(
                id: id, fingerprint: nil, userID: "(matches \(line.keys.count) keys)", expires: 0,
                problem: "it matches \(line.keys.count) keys ("
                    + line.keys.map(Self.describe).joined(separator: ", ")
                    + "); name one by its fingerprint in the .gpg-id",
                isAmbiguous: true)
        }
        if let members = resolver.groups.members(of: id) {
            return Recipient(
                id: id, fingerprint: nil, userID: "(gpg group of \(members.count) keys)", expires: 0,
                problem: problem)
        }
        let fingerprints = resolver.all(id)
        guard fingerprints.count == 1, let fingerprint = fingerprints.first,
            let key = try keys.keys(matching: [fingerprint], secretOnly: false).first
        else {
            return Recipient(
                id: id, fingerprint: nil,
                userID: fingerprints.isEmpty ? nil : "(matches \(fingerprints.count) keys)", expires: 0,
                problem: problem ?? (fingerprints.isEmpty ? "no public key" : nil))
        }
        return Recipient(
            id: id, fingerprint: key.fingerprint, userID: key.userIDs.first,
            expires: key.encryptionSubkey(now: now)?.expirationTime ?? 0, problem: problem)
    }

    /// Writes `.gpg-id` (and its signature) and the public keys, re-encrypts what the new recipients need,
    /// and commits everything once; when any step fails, the commit included, every file is put back as
    /// it was (a failed commit leaves nothing staged).
    private func replaceRecipients(
        _ lines: [String], in folder: String, acceptance: Acceptance?, gained: Set<String>,
        publicKeys: [(file: String, bytes: [UInt8])], droppedKeys: [String],
        message: String, onEvent: (StoreEvent) -> Void
    ) throws {
        // `lines` are the file's lines, comments kept.
        let gpgID = folder + "/.gpg-id"
        let files =
            [gpgID, gpgID + ".sig"] + publicKeys.map(\.file) + droppedKeys
            + (acceptance.map { [$0.file] } ?? [])
        try whole(files) { journal in
            var written = [gpgID]
            try acceptance?.save()
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
            let plan = try planReencryption(at: folder, asked: folder, gained: gained)
            try journal.add(plan.jobs.map(\.destination))
            try write(plan, onEvent: onEvent)
            try commit(written + plan.jobs.map(\.destination), message)
        }
    }
}

/// What `.gpg-id` lines and keys given on the command line stand for, as fingerprints of primary keys.
struct RecipientResolver {
    let keys: any Keyring
    let groups: GPGGroups

    init(keys: any Keyring) {
        self.keys = keys
        groups = GPGGroups.load(homeDirectory: keys.homeDirectory)
    }

    /// The keys `text` names, matched as exactly as gpg allows: an e-mail address only as the whole
    /// address of a user id (`<address>`), not as a part of a longer one.
    func exactly(_ text: String) -> Set<String> {
        let pattern = text.contains("@") && !text.contains("<") ? "<" + text + ">" : text
        return Set(((try? keys.keys(matching: [pattern], secretOnly: false)) ?? []).map(\.fingerprint))
    }

    /// The keys a `.gpg-id` line stands for when gpg encrypts: a group's members, or the line itself.
    func all(_ line: String) -> Set<String> {
        guard let members = groups.members(of: line) else { return exactly(line) }
        return members.reduce(into: Set<String>()) { found, member in found.formUnion(exactly(member)) }
    }
}
