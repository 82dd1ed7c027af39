#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension PasswordStore {
    /// Sets the recipients of the store (or of `subfolder`) and re-encrypts what needs it, as `pass init`.
    ///
    /// Writes `.gpg-id` (one id a line), signs it when `PASSWORD_STORE_SIGNING_KEY` is set, then
    /// re-encrypts every entry below whose encryption subkeys differ from the new ones; entries that
    /// already match stay byte-identical. `[""]` removes the folder's `.gpg-id` instead.
    ///
    /// Nothing is committed unless the whole change can be made: every entry is encrypted for the new
    /// recipients in memory first, and when one cannot be (a key that cannot encrypt, an entry this
    /// keyring cannot decrypt), the `.gpg-id` is put back and the error says why.
    public func initialize(
        recipients: [String], subfolder: String = "", onEvent: (StoreEvent) -> Void = { _ in }
    ) throws {
        try withStoreLock {
            try EntryName.validate(subfolder)
            // A folder init makes takes the rules of a new name (no control characters, no `.git` part);
            // one that is there already is used as it is, but never git's own folder.
            if !subfolder.isEmpty && !FileSystem.isDirectory(root + "/" + subfolder) {
                try validateNewName(subfolder)
            } else if subfolder.pathParts.contains(where: { $0.lowercased() == ".git" }) {
                throw CofferError(.invalidName, "\(subfolder) is git's own folder, not a folder of entries")
            }
            let folder = root + "/" + subfolder
            let suffix = subfolder.isEmpty ? "" : " (\(subfolder))"
            if !subfolder.isEmpty && !FileSystem.isDirectory(folder) && FileSystem.kind(folder) != .missing {
                throw CofferError(.invalidArgument, "\(folder) exists but is not a directory.")
            }
            let gpgID = folder + "/.gpg-id"
            try git(for: gpgID)?.ensureNoUnfinishedOperation()
            let listed = recipients.joined(separator: ", ")
            let removing = recipients == [""]
            if removing {
                guard FileSystem.isFile(gpgID) else {
                    throw CofferError(.notFound, "\(gpgID) does not exist and so cannot be removed.")
                }
            }
            // The folders init makes go again when the change is put back.
            let made = ChangeJournal.missingFolders(above: gpgID, root: ChangeJournal.plain(root))
            if !removing { try checkInsideStore(gpgID) }
            // The new `.gpg-id` goes in place (the store lock keeps other writers out), the entries are
            // encrypted for it in memory, and only then is anything committed.
            // The recipients the user names are what the folder accepts from now on (the record is made
            // from the store as it was first, when the clone has none yet).
            let acceptance = try acceptance(at: gpgID)
            // Whole or absent: `.gpg-id`, its signature, the record and every entry re-encrypted, and the
            // commits, or none of them.
            try whole([gpgID, gpgID + ".sig"] + (acceptance.map { [$0.file] } ?? [])) { journal in
                try journal.add(folders: made)
                // The folders are made once the journal names them: a kill before puts nothing in place.
                if !removing {
                    try makeFolders(folder, onEvent: onEvent)
                    // An init killed while writing `.gpg-id` (or its signature) left a temporary file here.
                    removeStrayTemporaryFiles(in: folder)
                }
                let plan: ReencryptionPlan
                var signers: [String] = []
                var gained = Set<String>()
                if var accepted = acceptance {
                    let before = accepted.accepted.keys(forFolder: subfolder)
                    if removing {
                        accepted.accepted.remove(folder: subfolder)
                    } else {
                        let keys = try resolve(recipients).filter { !$0.isAmbiguous }.flatMap(\.keys)
                        accepted.accepted.set(Set(keys.map(\.fingerprint)), forFolder: subfolder)
                    }
                    gained = accepted.accepted.keys(forFolder: subfolder).subtracting(before)
                    try accepted.save()
                }
                if removing {
                    try FileSystem.remove(gpgID)
                } else {
                    let text = recipients.map { $0 + "\n" }.joined()
                    try FileSystem.atomicWrite(gpgID, bytes: Array(text.utf8), mode: configuration.fileMode)
                    if !configuration.signingKeys.isEmpty { signers = try signRecipientsFile(gpgID) }
                }
                plan = try planReencryption(
                    at: FileSystem.isDirectory(folder) ? folder : nil, asked: folder, gained: gained)
                try journal.add(plan.jobs.map(\.destination))
                if removing {
                    onEvent(.removedFile(gpgID))
                    try commit([gpgID], "Deinitialize \(gpgID)\(suffix).")
                } else {
                    onEvent(.initialized(recipients: recipients, subfolder: subfolder))
                    try commit([gpgID], "Set GPG id to \(listed)\(suffix).")
                    if !signers.isEmpty {
                        try commit(
                            [gpgID + ".sig"], "Signing new GPG id with \(signers.joined(separator: ",")).")
                    }
                }
                try write(plan, onEvent: onEvent)
                if !plan.jobs.isEmpty {
                    try commit(
                        plan.jobs.map(\.destination),
                        "Reencrypt password store using new GPG id \(removing ? "" : listed)\(suffix).")
                }
                if removing { removeEmptyFolders(from: folder) }
            }
        }
    }

    /// Signs `.gpg-id` with the signing keys (`.gpg-id.sig`) and returns who signed.
    func signRecipientsFile(_ gpgID: String) throws -> [String] {
        let contents = try FileSystem.readFile(gpgID)
        // pass hands every key to gpg as `--default-key`, and gpg signs with the last one only.
        guard let signer = configuration.signingKeys.last else { return [] }
        let signature = try engine.signDetached(contents, signer: signer)
        try FileSystem.atomicWrite(gpgID + ".sig", bytes: signature, mode: configuration.fileMode)
        let signers = try engine.verifyDetached(signature: signature, of: contents)
            .filter(\.isValid).compactMap { $0.fingerprints.last }
        guard !signers.isEmpty else { throw CofferError(.badSignature, "Signing of .gpg_id unsuccessful.") }
        return signers
    }

    /// Re-encrypts every entry at or below `path` (a file or a folder) whose encryption subkeys differ
    /// from those of its recipients, as pass's `reencrypt_path`; `.git`, symlinks and files that are
    /// keys rather than messages are skipped.
    ///
    /// Deciding what needs work reads only the key packets at the head of each file; the entries are
    /// decrypted on several threads and encrypted for their recipients in memory, then written (each
    /// atomically), so a failure changes nothing.
    ///
    /// With `skipping`, an entry that cannot be decrypted (no secret key) is handed to it, by name, with
    /// the error, and the others are still re-encrypted, as pass's `reencrypt_path` goes on past a file
    /// gpg fails on; without it, such an entry stops the whole run before anything is written.
    public func reencrypt(
        _ path: String, onEvent: (StoreEvent) -> Void = { _ in },
        skipping: ((String, any Error) -> Void)? = nil
    ) throws {
        try withStoreLock {
            try git(for: path)?.ensureNoUnfinishedOperation()
            try write(
                try planReencryption(at: path, skipping: skipping != nil), onEvent: onEvent,
                skipping: skipping)
        }
    }

    /// The entries at or below a path that must be encrypted again, with their new ciphertexts.
    struct ReencryptionPlan {
        var jobs: [Reencryption] = []
        var ciphertexts: [[UInt8]] = []
        /// The jobs whose file could not be decrypted (when planned with `skipping`), by index, with why;
        /// their ciphertexts are empty.
        var skipped: [Int: any Error] = [:]
        /// The entries left encrypted for fewer keys than their `.gpg-id` names (see ``AutomaticPolicy``).
        var narrow: [NarrowEntry] = []
    }

    /// Works out which entries at or below `path` (`nil`: none) are encrypted to other subkeys than
    /// their recipients stand for, and encrypts them again in memory.
    ///
    /// The entries the user asked for (those whose `.gpg-id` is at or above `asked`, a folder whose
    /// recipients the user changed) are encrypted for their recipients, each of whom the user must have
    /// accepted for the folder; the others are re-encrypted as nobody asked for them, never to a key
    /// they could not be read by already unless the user accepted it there (see ``AutomaticPolicy``),
    /// and those left narrower than their `.gpg-id` wants are listed in the plan.
    /// With `skipping`, a file that cannot be decrypted is recorded in the plan's `skipped` instead of
    /// stopping the planning.
    ///
    /// `gained` are the keys the user's change gives the asked folder: entries there that every other
    /// key it names and the user accepted can read may gain them; one that some such key cannot read
    /// was not written for the folder and gains nothing.
    func planReencryption(
        at path: String?, skipping: Bool = false, asked: String? = nil, gained: Set<String> = []
    ) throws -> ReencryptionPlan {
        guard let path else { return ReencryptionPlan() }
        let acceptance = try acceptance(at: path)
        var policy = try AutomaticPolicy(store: self, acceptance: acceptance)
        if let asked {
            let askedFolder = folderName(ofPath: EntryName.trimmed(asked))
            policy.gained = { folder in
                folder == askedFolder || folder.isPath(inside: askedFolder) || askedFolder.isEmpty
                    ? gained : []
            }
        }
        var wantedByRecipients: [[String]: Set<String>] = [:]
        var plan = ReencryptionPlan()
        let files = try Self.entryFiles(at: path)
        // What an interrupted run left behind goes first (we hold the lock: no write is in flight).
        var folders = Set(files.map(FileSystem.parent(of:)))
        if FileSystem.isDirectory(path) { folders.insert(path) }
        for folder in folders { removeStrayTemporaryFiles(in: folder) }
        let askedFolder = asked.map(EntryName.trimmed)
        for file in files {
            let ciphertext = try FileSystem.readFile(file)
            // A public key or a signature kept in the store (`.public-keys/KEY.gpg`) is no entry.
            if OpenPGPPackets.isKeyOrSignature(ciphertext) { continue }
            let relative = String(file.droppingPathPrefix(root))
            let recipients = try recipients(forFolder: Self.folder(of: relative))
            // An entry written in another folder (someone moved or copied it here) is not the user's to
            // hand to this folder's recipients by changing them.
            // So is one in a shape other than the usual (see ``OpenPGPPackets/isUsualMessage(_:)``): what
            // it holds and who reads it cannot be told from its packets.
            guard let askedFolder, let governing = recipients.file.map(Self.folder(ofGPGID:)),
                !governing.isPath(inside: askedFolder), OpenPGPPackets.isUsualMessage(ciphertext),
                policy.otherOrigins(of: ciphertext, besides: Self.folder(of: relative)).isEmpty,
                try !policy.isForeign(ciphertext, inFolder: Self.folder(of: relative), wanted: recipients)
            else {
                let automatic = try automaticReencryptions(of: [file], policy: &policy)
                plan.jobs += automatic.jobs
                plan.narrow += automatic.narrow
                continue
            }
            try verifyRecipientsFile(recipients.file)
            let wanted =
                try wantedByRecipients[recipients.ids] ?? engine.encryptionKeyIDs(for: recipients.ids)
            wantedByRecipients[recipients.ids] = wanted
            if let current = OpenPGPPackets.recipientKeyIDs(ciphertext), current == wanted { continue }
            plan.jobs.append(
                Reencryption(
                    file: file, destination: file, recipients: recipients.ids, keyIDs: wanted.sorted()))
        }
        let total = plan.jobs.count
        var skipped: [Int: any Error] = [:]
        let onFailure: ((Int, any Error) -> Void)? =
            skipping
            ? { index, error in
                skipped[index] = error
                plan.ciphertexts.append([])
            } : nil
        try encryptAgain(plan.jobs, acceptance: acceptance, failed: onFailure) { index, ciphertext in
            plan.ciphertexts.append(ciphertext)
            progress?(index + 1, total)
        }
        plan.skipped = skipped
        return plan
    }

    /// A folder of the store by its path (`<root>/team`: `team`; the root: `""`).
    func folderName(ofPath path: String) -> String {
        path == root ? "" : path.isPath(inside: root) ? path.droppingPathPrefix(root) : path
    }

    /// The folder a `.gpg-id` file (as ``gpgIDFile(forFolder:)`` spells it) is in, without pass's `/.`.
    static func folder(ofGPGID file: String) -> String {
        FileSystem.parent(of: file.replacing("/./", with: "/"))
    }

    /// Writes a plan's ciphertexts, each atomically, reporting each entry; an entry the plan skipped is
    /// reported, then handed to `skipping` with why, in its turn, as pass reports the file gpg fails on.
    func write(
        _ plan: ReencryptionPlan, onEvent: (StoreEvent) -> Void,
        skipping: ((String, any Error) -> Void)? = nil
    ) throws {
        for entry in plan.narrow { onEvent(.leftNarrow(entry)) }
        for (index, (job, ciphertext)) in zip(plan.jobs, plan.ciphertexts).enumerated() {
            let name = String(job.destination.droppingPathPrefix(root).dropLast(4))
            onEvent(.reencrypted(name: name, keyIDs: job.keyIDs))
            if let error = plan.skipped[index] {
                skipping?(name, error)
                continue
            }
            try FileSystem.atomicWrite(job.destination, bytes: ciphertext, mode: configuration.fileMode)
        }
    }

    /// An entry to encrypt again: the file it is read from, the file it will be, and its recipients with
    /// the encryption subkeys they stand for.
    struct Reencryption: Sendable {
        /// The file whose ciphertext is decrypted.
        let file: String
        /// Where the new ciphertext goes (the same file, or where a move or copy puts it).
        let destination: String
        /// The recipients to encrypt for.
        let recipients: [String]
        /// The encryption subkeys they stand for, sorted.
        let keyIDs: [String]
        /// The keys the new ciphertext may be encrypted to, for an automatic re-encryption; `nil`: those
        /// the user accepted for the destination's folder.
        var allowed: Set<String>?
    }

    /// Decrypts every job's file on every core and encrypts it again for its recipients, one at a time
    /// (concurrent gpg encryptions queue on the keyring's and trustdb's lock files and end up slower);
    /// `starting` is told before each encryption and `consume` gets the new ciphertexts, in job order.
    ///
    /// One encryptor serves each recipient list: after gpg has encrypted the first entry for them, the
    /// engine may encrypt the others without a gpg process.
    /// With `failed`, a job whose file cannot be decrypted is handed to it (and `consume` does not see
    /// it) instead of stopping the others.
    ///
    /// Under `acceptance`, every new ciphertext is checked before `consume` sees it: encrypted only to
    /// keys its job allows (``Reencryption/allowed``), else to keys accepted for the destination's
    /// folder (see ``checkAccepted(_:forFolder:acceptance:allowed:)``).
    func encryptAgain(
        _ jobs: [Reencryption], acceptance: Acceptance?, starting: (Int) -> Void = { _ in },
        failed: ((Int, any Error) -> Void)? = nil,
        consume: (Int, [UInt8]) throws -> Void
    ) throws {
        let engine = self.engine
        var encryptors: [[String]: any RepeatedEncryptor] = [:]
        var origins: [CiphertextOrigins.Record] = []
        try Parallel.forEach(jobs) { job in
            let ciphertext = try FileSystem.readFile(job.file)
            return (Self.ciphertextID(of: ciphertext), try engine.decrypt(ciphertext))
        } consume: { index, result in
            let job = jobs[index]
            if let failed, case .failure(let error) = result {
                failed(index, error)
                return
            }
            starting(index)
            let encryptor = encryptors[job.recipients] ?? engine.encryptor(for: job.recipients)
            encryptors[job.recipients] = encryptor
            let (source, plaintext) = try result.get()
            let ciphertext = try encryptor.encrypt(plaintext)
            let folder = Self.folder(of: String(job.destination.droppingPathPrefix(root)))
            try checkAccepted(ciphertext, forFolder: folder, acceptance: acceptance, allowed: job.allowed)
            let blob = Self.ciphertextID(of: ciphertext)
            // What nobody asked for keeps where it came from; what the user asked for is theirs, here.
            origins.append(
                job.allowed == nil
                    ? .written(blob: blob, folder: folder)
                    : .carried(blob: blob, from: source, folder: folder))
            try consume(index, ciphertext)
        }
        if let acceptance { try CiphertextOrigins.append(origins, to: acceptance.originsFile) }
    }

    /// The `*.gpg` files (any case) at or below `path`, as `find PATH -path '*/.git' -prune -o -iname '*.gpg'`
    /// lists them, without symlinks.
    static func entryFiles(at path: String) throws -> [String] {
        let trimmed = path.utf8.count > 1 ? path.withoutLastSlash : path
        switch FileSystem.kind(trimmed) {
        case .file: return trimmed.lowercased().hasSuffix(".gpg") ? [trimmed] : []
        case .directory: break
        default: return []
        }
        var files: [String] = []
        try FileTree.walk(trimmed) { file, item in
            if item.isFile && file.lowercased().hasSuffix(".gpg") { files.append(file) }
            return item.isFolder && item.name != Array(".git".utf8)
        } failed: { folder, failure in
            if case .unreadable(let number) = failure {
                throw CofferError(.io, "cannot read folder", path: folder, errno: number)
            }
        }
        return files
    }
}
