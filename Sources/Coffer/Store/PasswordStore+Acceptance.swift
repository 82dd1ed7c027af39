#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What a `.gpg-id` line stands for: the keys gpg could encrypt to for it (a gpg.conf group's members
/// one by one), and whether some part of it names more than one such key.
package struct ResolvedRecipient: Sendable {
    /// The line as written.
    package let line: String
    /// The usable keys it names (not expired or revoked, with a subkey to encrypt to).
    package let keys: [KeyInfo]
    /// Whether a part of the line (the line, or a member of the group it names) matches more than one
    /// usable key, so that gpg would choose among them.
    package let isAmbiguous: Bool
}

/// Something the store did about accepted recipients that the user should hear of.
public enum RecipientNotice: Sendable, Equatable {
    /// A clone without accepted recipients took those its `.gpg-id` files name now (once): for each
    /// folder, the keys as `FINGERPRINT "user id"`. `fromElsewhere` says whether the repository has
    /// a remote (what arrived from it before this is accepted too).
    case acceptedOnFirstUse(folders: [(folder: String, keys: [String])], fromElsewhere: Bool)

    /// A change of `files` files that a killed process left half done was put back as it was before
    /// it, before this command wrote anything.
    case undidInterruptedChange(files: Int)

    /// Compares notices by what they say.
    public static func == (left: RecipientNotice, right: RecipientNotice) -> Bool {
        switch (left, right) {
        case (.acceptedOnFirstUse(let one, let elsewhere), .acceptedOnFirstUse(let other, let also)):
            return elsewhere == also && one.map(\.folder) == other.map(\.folder)
                && one.map(\.keys) == other.map(\.keys)
        case (.undidInterruptedChange(let one), .undidInterruptedChange(let other)):
            return one == other
        default:
            return false
        }
    }
}

extension PasswordStore {
    /// The accepted recipients of the repository that holds a part of the store, and where they are kept.
    package struct Acceptance: Sendable {
        /// The repository.
        package let repository: GitRepository
        /// `<git folder>/coffer-accepted`.
        package let file: String
        /// The records.
        package var accepted: AcceptedRecipients

        /// `<git folder>/coffer-origins`: where ciphertexts were written (``CiphertextOrigins``).
        package var originsFile: String { FileSystem.parent(of: file) + "/coffer-origins" }

        /// Writes the records back.
        package func save() throws { try accepted.write(file) }

        /// Notes in the origins log that the user wrote `ciphertext` in `folder`.
        package func recordWritten(_ ciphertext: [UInt8], inFolder folder: String) throws {
            try CiphertextOrigins.append(
                [.written(blob: PasswordStore.ciphertextID(of: ciphertext), folder: folder)], to: originsFile)
        }
    }

    /// The accepted recipients that rule writes to `path` (an entry or a folder): those of the git
    /// repository holding it, made from its `.gpg-id` files the first time they are needed (the store's
    /// ``notices`` hears of it). `nil` when no rule applies: the store is not a git repository, or
    /// `PASSWORD_STORE_KEY` overrides every `.gpg-id` (the user named the keys).
    package func acceptance(at path: String) throws -> Acceptance? {
        guard configuration.keyOverride == nil, let repository = git(for: path),
            let gitDirectory = repository.gitDirectory()
        else { return nil }
        let file = gitDirectory + "/coffer-accepted"
        if let accepted = try AcceptedRecipients.read(file) {
            return Acceptance(repository: repository, file: file, accepted: accepted)
        }
        // A repository inside another (a folder cloned on its own) starts from what the user accepted
        // for its folders in the one around it, not from its `.gpg-id` files as they are now.
        if repository.directory != root, let outer = try acceptance(at: repository.directory) {
            let top = repository.directory.droppingPathPrefix(root)
            var inherited = AcceptedRecipients()
            if let record = outer.accepted.record(forFolder: top) {
                inherited.set(record.keys, forFolder: top)
            }
            for (folder, keys) in outer.accepted.records where folder.isPath(inside: top) {
                inherited.set(keys, forFolder: folder)
            }
            let acceptance = Acceptance(repository: repository, file: file, accepted: inherited)
            try acceptance.save()
            return acceptance
        }
        let (accepted, named) = try firstAcceptance(in: repository)
        let acceptance = Acceptance(repository: repository, file: file, accepted: accepted)
        try acceptance.save()
        if !named.isEmpty {
            let remotes = try? repository.run(["remote"]).outputText
            notices?(.acceptedOnFirstUse(folders: named, fromElsewhere: remotes?.isEmpty == false))
        }
        return acceptance
    }

    /// The records a repository starts with: for its top folder and every folder below with a
    /// `.gpg-id`, the keys its effective `.gpg-id` names unambiguously, each made usable for
    /// encryption (its named user id certified when gpg does not take it as valid yet). Returns them
    /// with the folders and keys named, for the notice.
    private func firstAcceptance(in repository: GitRepository) throws -> (
        AcceptedRecipients, [(folder: String, keys: [String])]
    ) {
        let top = repository.directory == root ? "" : String(repository.directory.droppingPathPrefix(root))
        var folders: [String] = gpgIDFile(forFolder: top) == nil ? [] : [top]
        try FileTree.walk(repository.directory, sorted: true) { path, item in
            if item.isFile, item.nameString == ".gpg-id" {
                let folder = FileSystem.parent(of: path)
                let relative = folder == root ? "" : String(folder.droppingPathPrefix(root))
                if !folders.contains(relative) { folders.append(relative) }
            }
            return item.isFolder && item.nameString != ".git"
        }
        var accepted = AcceptedRecipients()
        var named: [(folder: String, keys: [String])] = []
        var resolved: [[String]: [ResolvedRecipient]] = [:]
        // With signers the user trusts, only `.gpg-id` files they signed are accepted.
        let signers = trustedSigners(repository)
        for folder in folders {
            guard let found = try? recipients(forFolder: folder), let file = found.file,
                signers.isEmpty || isSigned(file, by: signers, in: repository)
            else { continue }
            let ids = found.ids
            let lines = try resolved[ids] ?? resolve(ids)
            resolved[ids] = lines
            var keys = Set<String>()
            var described: [String] = []
            for line in lines where !line.isAmbiguous {
                for key in line.keys where keys.insert(key.fingerprint).inserted {
                    makeUsableIfItCan(key, namedBy: line.line)
                    described.append(Self.describe(key))
                }
            }
            accepted.set(keys, forFolder: folder)
            if !described.isEmpty { named.append((folder, described)) }
        }
        return (accepted, named)
    }

    /// Notes in the origins log of the repository holding `path` that the user wrote `ciphertext` there
    /// (see ``CiphertextOrigins``); nothing when the store is not a git repository.
    package func recordWritten(_ ciphertext: [UInt8], at path: String) throws {
        guard let gitDirectory = git(for: path)?.gitDirectory() else { return }
        let name = String(path.droppingPathPrefix(root).dropLast(4))
        try CiphertextOrigins.append(
            [.written(blob: Self.ciphertextID(of: ciphertext), folder: Self.folder(of: name))],
            to: gitDirectory + "/coffer-origins")
    }

    /// `FINGERPRINT "user id"` (the user id quoted when it needs it), as messages name a key.
    package static func describe(_ key: KeyInfo) -> String {
        key.fingerprint + (key.userIDs.first.map { " " + Quoting.inQuotes($0) } ?? "")
    }

    /// Certifies the user id of `key` that `line` names (its primary one for a fingerprint or a key
    /// id) when gpg does not take the key as valid yet, so that gpg (and pass) encrypt to it. Only the
    /// user's acceptance of a key calls this.
    package func makeUsable(_ key: KeyInfo, namedBy line: String) throws {
        guard let keys = keyring, !key.isUltimatelyTrusted else { return }
        let needle = line.lowercased().trimmingPrefix("<")
        let userID = key.userIDs.first { $0.lowercased().contains(needle) } ?? key.userIDs.first
        try keys.makeUsableForEncryption(key.fingerprint, userID: userID)
    }

    /// ``makeUsable(_:namedBy:)`` where the acceptance holds whether or not gpg can certify the key now
    /// (the user's key needs a passphrase and no one is there to type it, say): the record is kept, and
    /// a write that gpg then refuses says why, as pass would.
    func makeUsableIfItCan(_ key: KeyInfo, namedBy line: String) {
        do {
            try makeUsable(key, namedBy: line)
        } catch {
            // Nothing to undo: the key stays as gpg had it.
        }
    }

    /// What each of `ids` (the lines of a `.gpg-id`) stands for, as gpg finds the keys for `-r`.
    package func resolve(_ ids: [String]) throws -> [ResolvedRecipient] {
        let groups = GPGGroups.load(homeDirectory: configuration.gpgOptions.homeDirectory)
        let now = Int(time(nil))
        return try ids.map { line in
            var keys: [KeyInfo] = []
            var ambiguous = false
            for pattern in groups.members(of: line) ?? [line] {
                let usable = try engine.keys(matching: [pattern], secretOnly: false).filter {
                    $0.encryptionSubkey(now: now) != nil
                }
                if usable.count > 1 { ambiguous = true }
                for key in usable where !keys.contains(where: { $0.fingerprint == key.fingerprint }) {
                    keys.append(key)
                }
            }
            return ResolvedRecipient(line: line, keys: keys, isAmbiguous: ambiguous)
        }
    }

    /// The primary keys a message is encrypted to, from its key ids; `nil` when it hides them (a key id
    /// of zeros) or one belongs to no key of the keyring.
    package func readers(of ciphertext: [UInt8]) throws -> Set<String>? {
        guard OpenPGPPackets.isUsualMessage(ciphertext),
            let keyIDs = OpenPGPPackets.recipientKeyIDs(ciphertext),
            !keyIDs.isEmpty,
            !keyIDs.contains(String(repeating: "0", count: 16))
        else { return nil }
        var readers = Set<String>()
        for (_, primaries) in try engine.primaryFingerprints(ofKeyIDs: keyIDs) {
            guard !primaries.isEmpty else { return nil }
            readers.formUnion(primaries)
        }
        return readers
    }

    /// The fingerprints of the keys the user trusts ultimately (their own keys), which coffer always
    /// encrypts to: their owner is this user.
    package func ownKeys() throws -> Set<String> {
        Set(try engine.keys(matching: [], secretOnly: true).filter(\.isUltimatelyTrusted).map(\.fingerprint))
    }

    /// Refuses `ciphertext`, just made for an entry in `folder`, when it is encrypted to a key the user
    /// has not accepted there (or, with `allowed`, to a key outside that set): nothing is written then.
    ///
    /// - Throws: ``CofferError/Code/notAccepted`` naming the folder, the key, the commit and author
    ///   that named it, and the command that accepts it.
    package func checkAccepted(
        _ ciphertext: [UInt8], forFolder folder: String, acceptance: Acceptance?,
        allowed: Set<String>? = nil
    ) throws {
        guard let acceptance else { return }
        let permitted = allowed ?? acceptance.accepted.keys(forFolder: folder)
        // Hidden key ids: the keys the folder's recipients stand for are those gpg used.
        guard let encryptedTo = try readers(of: ciphertext) else {
            return try checkResolvedAccepted(
                recipients(forFolder: folder), forFolder: folder, acceptance: acceptance, allowed: allowed)
        }
        try refuse(encryptedTo.subtracting(permitted), forFolder: folder, acceptance: acceptance)
    }

    /// Refuses the keys `recipients` stand for, in `folder`, when one of them is not accepted there (or
    /// is outside `allowed`).
    package func checkResolvedAccepted(
        _ recipients: Recipients, forFolder folder: String, acceptance: Acceptance?,
        allowed: Set<String>? = nil
    ) throws {
        guard let acceptance else { return }
        let permitted = allowed ?? acceptance.accepted.keys(forFolder: folder)
        let keys = Set(try resolve(recipients.ids).flatMap { $0.keys.map(\.fingerprint) })
        try refuse(keys.subtracting(permitted), forFolder: folder, acceptance: acceptance)
    }

    /// Throws the refusal for the first of `keys` that is not the user's own.
    private func refuse(_ keys: Set<String>, forFolder folder: String, acceptance: Acceptance) throws {
        var refused = keys
        if !refused.isEmpty { refused.subtract(try ownKeys()) }
        guard let key = refused.sorted().first else { return }
        throw try refusal(key, folder: folder, acceptance: acceptance, more: refused.count - 1)
    }

    /// The error for a write to `folder` that would encrypt to `fingerprint`, which the user has not
    /// accepted there.
    package func refusal(_ fingerprint: String, folder: String, acceptance: Acceptance, more: Int = 0)
        throws -> CofferError
    {
        let key = try engine.keys(matching: [fingerprint], secretOnly: false).first
        let place = folder.isEmpty ? "the store" : Quoting.quoted(folder)
        let target = acceptanceFolder(for: folder, acceptance: acceptance)
        let option = target.isEmpty ? "" : "-p " + Quoting.quoted(target) + " "
        let others = more > 0 ? " (and \(more) more)" : ""
        return CofferError(
            .notAccepted,
            "\(key.map(Self.describe) ?? fingerprint)\(others) is not a recipient you accepted for \(place): "
                + provenance(of: fingerprint, folder: folder, acceptance: acceptance)
                + "; nothing was written. If it should read \(place), run: \(configuration.program) recipients accept \(option)"
                + fingerprint,
            paths: [folderPath(folder)])
    }

    /// Where the recipient `fingerprint` of `folder` came from, in a few words: which `.gpg-id` names
    /// it and the commit (and author) that added the line, or that removed the folder's own `.gpg-id`.
    private func provenance(of fingerprint: String, folder: String, acceptance: Acceptance) -> String {
        let repository = acceptance.repository
        // Merges diffed against each parent, newest first: a merge that brought the line is who added it
        // here, not the commit on its other side (which may be an old or a foreign one it grafted in).
        func commit(_ arguments: [String]) -> String? {
            guard
                let output = try? repository.runUnchecked(
                    ["log", "-1", "--full-history", "--topo-order", "-m", "--format=%h %an"] + arguments),
                output.status == 0, !output.outputText.isEmpty
            else { return nil }
            let parts = output.outputText.split(separator: " ", maxSplits: 1).map(String.init)
            return "commit \(parts[0])" + (parts.count > 1 ? " by " + Quoting.quoted(parts[1]) : "")
        }
        guard let file = gpgIDFile(forFolder: folder) else { return "no .gpg-id names it" }
        let relative = repository.pathspec(file.replacing("/./", with: "/"))
        var said = "\(Quoting.quoted(relative)) names it"
        let line = (try? recipients(forFolder: folder).ids)?.first { id in
            (try? resolve([id]).first?.keys.contains { $0.fingerprint == fingerprint }) == true
        }
        if let line, let added = commit(["-S", line, "--", relative]) {
            said += " (added by \(added))"
        } else if let line {
            said += " on the line \(Quoting.quoted(line)), not committed"
        }
        if let recordFolder = acceptance.accepted.record(forFolder: folder)?.folder,
            folderPath(recordFolder).hasPrefix(Self.folder(ofGPGID: file) + "/"),
            !FileSystem.isFile(folderPath(recordFolder) + "/.gpg-id")
        {
            // The folder's own .gpg-id is gone: it takes another's recipients now.
            let own = repository.pathspec(folderPath(recordFolder) + "/.gpg-id")
            let removed = commit(["--diff-filter=D", "--", own])
            said += ", and \(Quoting.quoted(own)) is gone" + (removed.map { " (removed by \($0))" } ?? "")
        }
        return said
    }
}

/// For a ciphertext, by its git blob id, the folders it was written in (found in the history a sync
/// works on), so that an entry moved or copied by someone else takes no more readers than the folder
/// it came from allows.
package typealias BlobOrigins = [String: Set<String>]

/// What an automatic re-encryption (one nobody asked for: sync's, the merge driver's, fsck's) may
/// encrypt an entry to: at most the keys it is encrypted to already, and those the user accepted both
/// for the folder it is in and for every folder it was written in.
package struct AutomaticRecipients: Sendable {
    /// The recipients to encrypt to: the folder's own lines when all of them may read it, else the
    /// fingerprints of those that may; `nil` when the entry is to be left as it is.
    package let ids: [String]?
    /// The keys the new ciphertext may be encrypted to.
    package let allowed: Set<String>
    /// The keys its folder names that it is not encrypted to, for want of acceptance.
    package let withheld: [String]
    /// Whether a ciphertext was not written for the folder (see ``PasswordStore/AutomaticPolicy/isForeign(_:inFolder:wanted:)``)
    /// or for a folder it is known to come from, so it gained no key.
    package var writtenElsewhere = false
    /// Whether a side's readers could not be told (a message to keys this keyring does not know).
    package var unknownReaders = false
}

extension PasswordStore {
    /// Decides the recipients of automatic re-encryptions, keeping what it looked up between entries.
    package struct AutomaticPolicy {
        let store: PasswordStore
        /// `nil`: no rule applies (no git repository, `PASSWORD_STORE_KEY`): entries take their
        /// folder's recipients.
        package let acceptance: Acceptance?
        /// Where ciphertexts were written.
        private(set) var origins: BlobOrigins
        private var resolved: [[String]: [ResolvedRecipient]] = [:]
        private var own: Set<String>?
        /// The keys the change being applied gives a folder's recipients (a `recipients add`, an
        /// accepted key, a `.gpg-id` that a sync brought or replays); nothing by default.
        var gained: (String) throws -> Set<String> = { _ in [] }

        /// A policy for the store's entries under `acceptance` (see ``PasswordStore/acceptance(at:)``).
        package init(store: PasswordStore, acceptance: Acceptance?, origins: BlobOrigins? = nil) throws {
            self.store = store
            self.acceptance = acceptance
            // What the history says, brought up to date, unless the caller has just done so.
            self.origins = try origins ?? acceptance.map { try store.updatedOrigins($0.repository) } ?? [:]
        }

        /// The folders other than `folder` where `ciphertext` is known to have been written.
        package func otherOrigins(of ciphertext: [UInt8], besides folder: String) -> Set<String> {
            (origins[PasswordStore.ciphertextID(of: ciphertext)] ?? []).subtracting([folder])
        }

        /// Takes in what a re-encryption made: `ciphertext` comes from where `source` came from, and from
        /// `folder`.
        package mutating func carry(_ ciphertext: [UInt8], from source: String, inFolder folder: String) {
            origins[PasswordStore.ciphertextID(of: ciphertext), default: []].formUnion(
                (origins[source] ?? []).union([folder]))
        }

        /// Whether the entry's ciphertext does not look written for `folder`: some key the folder
        /// names, that the user accepted there before the change being applied, cannot read it. A
        /// ciphertext copied, moved or re-wrapped in from another folder, whatever its history, is
        /// such an entry, and nothing that re-encrypts it without being asked for it widens it.
        package mutating func isForeign(_ ciphertext: [UInt8], inFolder folder: String, wanted: Recipients)
            throws -> Bool
        {
            guard let acceptance, let current = try store.readers(of: ciphertext) else { return false }
            let lines = try resolved[wanted.ids] ?? store.resolve(wanted.ids)
            resolved[wanted.ids] = lines
            let own = try self.own ?? store.ownKeys()
            self.own = own
            // Every key a line answers to, ambiguous lines' too: a line that a second key also answers to
            // (a user id someone else's key claims) must not hide that key, or anything looks written here.
            let target = Set(lines.flatMap { $0.keys.map(\.fingerprint) })
            let core = acceptance.accepted.keys(forFolder: folder).intersection(target).subtracting(
                try gained(folder)
            ).subtracting(own)
            return !core.isSubset(of: current)
        }

        /// The recipients for the entry whose ciphertext is `ciphertext`, in `folder`, whose `.gpg-id`
        /// wants `wanted`.
        package mutating func recipients(
            for ciphertext: [UInt8], inFolder folder: String, wanted: Recipients
        ) throws -> AutomaticRecipients {
            try recipients(forMergeOf: [ciphertext], inFolder: folder, wanted: wanted)
        }

        /// The recipients for what merges the entries `ciphertexts` (both sides of a merge) in
        /// `folder`: no key that one of them may not be given, since the merge holds text of each.
        package mutating func recipients(
            forMergeOf ciphertexts: [[UInt8]], inFolder folder: String, wanted: Recipients
        ) throws -> AutomaticRecipients {
            guard let acceptance else {
                return AutomaticRecipients(ids: wanted.ids, allowed: [], withheld: [])
            }
            let lines = try resolved[wanted.ids] ?? store.resolve(wanted.ids)
            resolved[wanted.ids] = lines
            let own = try self.own ?? store.ownKeys()
            self.own = own
            let target = Set(lines.filter { !$0.isAmbiguous }.flatMap { $0.keys.map(\.fingerprint) })
            var common: Set<String>?
            // The keys that read every side already.
            var readingAll: Set<String>?
            var elsewhere = false
            for ciphertext in ciphertexts where !ciphertext.isEmpty {
                // A message in another shape, or to keys this keyring does not know, is left as it is: who
                // it is encrypted to cannot be told.
                guard let current = try store.readers(of: ciphertext) else {
                    var left = AutomaticRecipients(
                        ids: nil, allowed: own, withheld: target.subtracting(own).sorted())
                    left.writtenElsewhere = true
                    left.unknownReaders = true
                    return left
                }
                readingAll = readingAll.map { $0.intersection(current) } ?? current
                var accepted = acceptance.accepted.keys(forFolder: folder)
                for origin in origins[PasswordStore.ciphertextID(of: ciphertext)] ?? [] where origin != folder
                {
                    accepted.formIntersection(acceptance.accepted.keys(forFolder: origin))
                    elsewhere = true
                }
                // What was not written for this folder gains no reader here. The key ids a message names are
                // not proof of who reads it (anyone can add one), so they grant nothing beyond what is
                // accepted.
                if try isForeign(ciphertext, inFolder: folder, wanted: wanted) {
                    accepted.formIntersection(current)
                    elsewhere = true
                }
                let side = accepted.union(own)
                common = common.map { $0.intersection(side) } ?? side
            }
            let allowed = common ?? acceptance.accepted.keys(forFolder: folder).union(own)
            let ambiguous = lines.filter(\.isAmbiguous).flatMap { $0.keys.map(\.fingerprint) }
            let withheld = target.subtracting(allowed).union(
                ambiguous.filter { !allowed.contains($0) || !(readingAll ?? []).union(own).contains($0) })
            if withheld.isEmpty && !lines.contains(where: \.isAmbiguous) {
                return AutomaticRecipients(ids: wanted.ids, allowed: allowed, withheld: [])
            }
            // A line two keys answer to keeps the user's own keys among them and those that read the entry
            // already: dropping the line would encrypt the entry for the other lines alone, without its
            // owner, and taking every allowed key would give it to whoever claims the line's user id.
            let kept = target.intersection(allowed).union(
                Set(ambiguous).intersection(allowed).intersection((readingAll ?? []).union(own)))
            var chosen = AutomaticRecipients(
                ids: kept.isEmpty ? nil : kept.sorted(), allowed: allowed, withheld: withheld.sorted())
            chosen.writtenElsewhere = elsewhere
            return chosen
        }
    }

    /// What the origins log knows a ciphertext by: its payload (``OpenPGPPackets/payloadID(_:)``), so that
    /// reordering or dropping its key packets does not make it another; the git blob id of what is no
    /// message.
    package static func ciphertextID(of bytes: [UInt8]) -> String {
        OpenPGPPackets.payloadID(bytes) ?? "blob-" + blobID(of: bytes)
    }

    /// git's id of a blob holding `bytes` (`git hash-object`).
    package static func blobID(of bytes: [UInt8]) -> String {
        Hex.upper(Gcrypt.sha1(Array("blob \(bytes.count)\u{0}".utf8) + bytes)).lowercased()
    }
}

/// An entry that an automatic re-encryption left encrypted for fewer keys than its folder's `.gpg-id`
/// names, because the user has not accepted them there (or for the folder it was written in).
public struct NarrowEntry: Sendable, Equatable {
    /// The entry.
    public let name: String
    /// The keys withheld, as `FINGERPRINT "user id"`.
    public let keys: [String]
    /// Whether it was left so because its ciphertext was not written for its folder (someone moved,
    /// copied or re-wrapped it in), rather than because the keys are not accepted there.
    public var writtenElsewhere = false
}

extension PasswordStore {
    /// The entries among `files` (their `.gpg` paths) encrypted to other subkeys than their folder's
    /// recipients stand for now, each with the recipients `policy` lets it be encrypted to; and the
    /// entries left narrower than their folder wants.
    func automaticReencryptions(of files: [String], policy: inout AutomaticPolicy) throws -> (
        jobs: [Reencryption], narrow: [NarrowEntry]
    ) {
        var keyIDs: [[String]: Set<String>] = [:]
        func subkeys(_ ids: [String]) throws -> Set<String> {
            if let known = keyIDs[ids] { return known }
            let found = try engine.encryptionKeyIDs(for: ids)
            keyIDs[ids] = found
            return found
        }
        var jobs: [Reencryption] = []
        var narrow: [NarrowEntry] = []
        for file in files where FileSystem.kind(file) == .file {
            let ciphertext = try FileSystem.readFile(file)
            if OpenPGPPackets.isKeyOrSignature(ciphertext) { continue }
            let name = String(file.droppingPathPrefix(root).dropLast(4))
            let recipients = try recipients(for: name)
            try verifyRecipientsFile(recipients.file)
            let current = OpenPGPPackets.recipientKeyIDs(ciphertext)
            if current == (try subkeys(recipients.ids)) { continue }
            let chosen = try policy.recipients(
                for: ciphertext, inFolder: Self.folder(of: name), wanted: recipients)
            if !chosen.withheld.isEmpty {
                let keys = try chosen.withheld.map { fingerprint in
                    try engine.keys(matching: [fingerprint], secretOnly: false).first.map(Self.describe)
                        ?? fingerprint
                }
                var entry = NarrowEntry(name: name, keys: keys)
                entry.writtenElsewhere = chosen.writtenElsewhere
                narrow.append(entry)
            }
            guard let ids = chosen.ids else { continue }
            let wanted = try subkeys(ids)
            if current == wanted { continue }
            jobs.append(
                Reencryption(
                    file: file, destination: file, recipients: ids, keyIDs: wanted.sorted(),
                    allowed: policy.acceptance == nil ? nil : chosen.allowed))
        }
        return (jobs, narrow)
    }
}

/// What `recipients accept` is about to do, for the user to confirm: the key, the folder it will be
/// accepted for, and where the key came from.
public struct AcceptanceRequest: Sendable, Equatable {
    /// The key, as `FINGERPRINT "user id"`.
    public let key: String
    /// The folder whose record takes it (`""` for the store).
    public let folder: String
    /// Which `.gpg-id` names the key and the commit (and author) that added it, in a few words.
    public let provenance: String
}

extension PasswordStore {
    /// What accepting `fingerprint` for `subfolder` would do (see ``acceptRecipient(_:subfolder:onEvent:)``).
    ///
    /// - Throws: ``CofferError/Code/invalidArgument`` when the store keeps no accepted recipients (it is
    ///   not a git repository, or `PASSWORD_STORE_KEY` is set), the fingerprint is not a full one, or
    ///   no usable key has it.
    public func acceptanceRequest(_ fingerprint: String, subfolder: String = "") throws -> AcceptanceRequest {
        let (acceptance, key, folder) = try acceptanceTarget(fingerprint, subfolder: subfolder)
        return AcceptanceRequest(
            key: Self.describe(key), folder: folder,
            provenance: provenance(
                of: key.fingerprint, folder: EntryName.trimmed(subfolder), acceptance: acceptance))
    }

    /// Accepts the key `fingerprint` as a recipient of `subfolder` (the store by default) on this
    /// clone: its user id named by the `.gpg-id` (the primary one otherwise) is certified locally when
    /// gpg does not take it as valid, the folder's record takes the key, and the entries there that
    /// were left without it (by a sync, say) are encrypted for it too and committed. The record goes to
    /// the folder whose `.gpg-id` names the key, or to the folder's own record when it has one.
    ///
    /// - Returns: the entries re-encrypted.
    @discardableResult
    public func acceptRecipient(
        _ fingerprint: String, subfolder: String = "", onEvent: (StoreEvent) -> Void = { _ in }
    ) throws -> [String] {
        try withStoreLock {
            var (acceptance, key, folder) = try acceptanceTarget(fingerprint, subfolder: subfolder)
            try git(for: folderPath(folder))?.ensureNoUnfinishedOperation()
            let line = try recipients(forFolder: folder).ids.first { id in
                try resolve([id]).first?.keys.contains { $0.fingerprint == key.fingerprint } == true
            }
            try makeUsable(key, namedBy: line ?? key.fingerprint)
            let before = acceptance.accepted
            acceptance.accepted.set(
                acceptance.accepted.keys(forFolder: folder).union([key.fingerprint]), forFolder: folder)
            try acceptance.save()
            do {
                // The entries the record now rules, re-encrypted as nobody asked for them: each gains
                // only keys accepted where it is and could not read it before.
                let files = try Self.entryFiles(at: folderPath(folder)).filter { file in
                    let name = String(file.droppingPathPrefix(root).dropLast(4))
                    return acceptance.accepted.record(forFolder: Self.folder(of: name))?.folder == folder
                }
                var policy = try AutomaticPolicy(store: self, acceptance: acceptance)
                policy.gained = { _ in [key.fingerprint] }
                let planned = try automaticReencryptions(of: files, policy: &policy)
                var plan = ReencryptionPlan(jobs: planned.jobs)
                try encryptAgain(planned.jobs, acceptance: acceptance) { _, ciphertext in
                    plan.ciphertexts.append(ciphertext)
                }
                try write(plan, onEvent: onEvent)
                let written = plan.jobs.map(\.destination)
                if !written.isEmpty {
                    try commit(
                        written,
                        "Reencrypt \(written.count) \(written.count == 1 ? "entry" : "entries") for "
                            + "\(key.fingerprint), accepted for \(folder.isEmpty ? "the store" : folder).")
                }
                return written.map { String($0.droppingPathPrefix(root).dropLast(4)) }
            } catch {
                acceptance.accepted = before
                try? acceptance.save()
                throw error
            }
        }
    }

    /// The records, the key and the folder whose record takes it, for accepting `fingerprint` in
    /// `subfolder`: the deeper of the folder whose record rules `subfolder` and the folder of the
    /// `.gpg-id` that rules it.
    private func acceptanceTarget(_ fingerprint: String, subfolder: String) throws -> (
        Acceptance, KeyInfo, String
    ) {
        try EntryName.validate(subfolder)
        let name = EntryName.trimmed(subfolder)
        guard name.isEmpty || FileSystem.isDirectory(folderPath(name)) else {
            throw CofferError(.notFound, "\(Quoting.quoted(name)) is not in the password store.")
        }
        let wanted = fingerprint.uppercased().replacing("0X", with: "")
        guard Self.isFullFingerprint(wanted) else {
            throw CofferError(
                .invalidArgument, "give the key's full fingerprint (40 hex digits) to accept it")
        }
        guard let acceptance = try acceptance(at: folderPath(name) + "/.gpg-id") else {
            throw CofferError(
                .invalidArgument,
                configuration.keyOverride != nil
                    ? "PASSWORD_STORE_KEY is set and names the recipients itself; there is nothing to accept"
                    : "the store is not a git repository, so nothing arrives from elsewhere to accept")
        }
        if try engine.keys(matching: [wanted], secretOnly: false).isEmpty {
            try importKeptPublicKeys(wanted: wanted)
        }
        guard
            let key = try engine.keys(matching: [wanted], secretOnly: false).first(where: {
                $0.fingerprint == wanted
            })
        else {
            throw CofferError(
                .invalidArgument, "no public key \(wanted) in the keyring or in .public-keys: import it first"
            )
        }
        if let problem = key.encryptionProblem(now: Int(time(nil))) {
            throw CofferError(.invalidArgument, "cannot encrypt to \(wanted): \(problem.reason)")
        }
        // Only a key the folder's recipients name: an acceptance waiting for a key nobody named yet
        // would let a later push add it unseen.
        let named = try resolve(recipients(forFolder: name).ids).contains { line in
            line.keys.contains { $0.fingerprint == wanted }
        }
        guard named else {
            throw CofferError(
                .invalidArgument,
                "\(Self.describe(key)) is not named by the .gpg-id of "
                    + (name.isEmpty ? "the store" : Quoting.quoted(name)) + "; there is nothing to accept")
        }
        return (acceptance, key, acceptanceFolder(for: name, acceptance: acceptance))
    }

    /// The folder whose record takes a key accepted for entries in `folder`: the deeper of the folder
    /// whose record rules `folder` and the folder of the `.gpg-id` that rules it.
    func acceptanceFolder(for folder: String, acceptance: Acceptance) -> String {
        let recordFolder = acceptance.accepted.record(forFolder: folder)?.folder ?? ""
        var governing = gpgIDFile(forFolder: folder).map(Self.folder(ofGPGID:)) ?? root
        governing = governing == root ? "" : String(governing.droppingPathPrefix(root))
        return governing.count > recordFolder.count ? governing : recordFolder
    }
}
