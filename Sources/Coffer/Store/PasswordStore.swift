#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A pass-compatible password store: one GPG-encrypted file `<root>/<name>.gpg` per entry.
///
/// Recipients come from the nearest `.gpg-id` above an entry (or `PASSWORD_STORE_KEY`), every write is
/// atomic, and when the store is a git work tree every change is one commit with pass's message.
/// A `PasswordStore` is a value; copies share nothing mutable and may be used from any thread.
public struct PasswordStore: Sendable {
    /// Where the store is and how it writes.
    public let configuration: StoreConfiguration
    /// The engine that encrypts and decrypts.
    public let engine: any CryptoEngine
    /// The keyring that recipients, public keys and acceptance are managed in; `nil` for a store whose
    /// engine was given without one.
    package let keyring: (any Keyring)?

    /// Where the output of git commits goes (the CLI shows it, as pass does; the library keeps quiet).
    package var gitOutput: GitRepository.Output = .quiet

    /// Told of what the store did about accepted recipients without being asked (the first use of a
    /// clone's `.gpg-id` files), so that a program can say so; `nil` by default.
    public var notices: (@Sendable (RecipientNotice) -> Void)?

    /// Told `(done, total)` after each entry of bulk work (re-encryption, ``check(fix:confirmWidening:)``), on the calling
    /// thread, so a program can show progress; `nil` by default.
    public var progress: (@Sendable (_ done: Int, _ total: Int) -> Void)?

    /// The root folder, without a trailing slash.
    public var root: String { configuration.root }

    /// Opens the store described by `configuration` (by default from the environment, as pass does).
    ///
    /// Nothing is read or checked until the first operation; a missing store is not an error here.
    ///
    /// Without `engine`, gpg (through GPGME) encrypts and keeps the keys. A store given an engine has no
    /// keyring: managing recipients and public keys then fails with a message that says so.
    public init(configuration: StoreConfiguration = StoreConfiguration(), engine: (any CryptoEngine)? = nil) {
        if let engine {
            self.init(configuration: configuration, engine: engine, keyring: nil)
        } else {
            let gpg = GPGMEEngine(options: configuration.gpgOptions)
            self.init(configuration: configuration, engine: gpg, keyring: gpg)
        }
    }

    /// Opens the store described by `configuration` with `engine` and `keyring`.
    package init(configuration: StoreConfiguration, engine: any CryptoEngine, keyring: (any Keyring)?) {
        self.configuration = configuration
        self.engine = engine
        self.keyring = keyring
    }

    /// Opens the store at `root` with the other settings taken from the environment.
    public init(root: String, engine: (any CryptoEngine)? = nil) {
        var configuration = StoreConfiguration()
        configuration.root = StoreConfiguration(root: root).root
        self.init(configuration: configuration, engine: engine)
    }

    // MARK: - Paths

    /// The file of entry `name`: `<root>/<name>.gpg`.
    public func entryPath(_ name: String) -> String { root + "/" + name + ".gpg" }

    /// The folder `name` (the root for an empty name).
    public func folderPath(_ name: String) -> String {
        let trimmed = EntryName.trimmed(name)
        return trimmed.isEmpty ? root : root + "/" + trimmed
    }

    /// Whether the entry `name` exists (its `.gpg` file, or a symlink to one).
    public func contains(_ name: String) -> Bool {
        (try? EntryName.validate(name)) != nil && FileSystem.isFile(entryPath(name))
    }

    /// Whether `name` is a folder of the store.
    public func isFolder(_ name: String) -> Bool {
        (try? EntryName.validate(name)) != nil && FileSystem.isDirectory(folderPath(name))
    }

    /// Whether the store has a `.gpg-id` at its root or anywhere inside, i.e. was initialised.
    public var exists: Bool { FileSystem.isDirectory(root) }

    /// The folder part of an entry name (`""` for an entry at the root).
    static func folder(of name: String) -> String {
        let parent = name.parentPath
        return parent == "." ? "" : parent == "/" ? "" : parent
    }

    /// Checks that entry `name` can be created in this store: ``EntryName/validateNew(_:)``, and a full
    /// path the system can open (under `PATH_MAX`), so nothing is created for a name that cannot be written.
    package func validateNewName(_ name: String) throws {
        try EntryName.validateNew(name)
        let length = entryPath(EntryName.trimmed(name)).utf8.count
        if length >= Int(PATH_MAX) {
            throw CofferError(
                .invalidName,
                "the entry's file name would be \(length) bytes long, over the system's limit of "
                    + "\(PATH_MAX - 1)")
        }
    }

    /// Refuses a write to `path` when an existing part of it resolves outside the store.
    ///
    /// Every change to the store passes it first: a file written, replaced or removed, a folder made, a
    /// name renamed, so that no symlink in the store (one that came with a pull, say) can lead a write
    /// elsewhere.
    ///
    /// A store folder that belongs to another user is refused too (as git refuses a repository of
    /// "dubious ownership"): whoever owns it can put entries of their own there, or take them away.
    package func checkInsideStore(_ path: String) throws {
        guard let storeRoot = FileSystem.realPath(root) else { return }
        var info = stat()
        if stat(storeRoot, &info) == 0, info.st_uid != geteuid() {
            throw CofferError(
                .invalidName,
                "the password store folder \(Quoting.quoted(storeRoot)) belongs to user \(info.st_uid), not to you; "
                    + "refusing to write to it")
        }
        // The way to the store, as spelled: a link or folder on it that someone else may change could send
        // the write elsewhere between this check and the write.
        guard FileSystem.leadsOnlyThroughGuardedFolders(root) else {
            throw CofferError(
                .invalidName,
                "the password store \(Quoting.quoted(root)) is reached through a folder or link another user may "
                    + "change; refusing to write to it")
        }
        var existing = path
        while FileSystem.kind(existing) == .missing {
            let above = FileSystem.parent(of: existing)
            if above == existing { return }
            existing = above
        }
        guard let resolved = FileSystem.realPath(existing) else {
            // A dangling symlink: refuse, it points somewhere we cannot see.
            throw CofferError(
                .invalidName,
                "\(Quoting.quoted(path)) is a symlink that points nowhere; refusing to write through it")
        }
        if resolved != storeRoot && !resolved.isPath(inside: storeRoot) {
            throw CofferError(
                .invalidName,
                "\(Quoting.quoted(path)) leads outside the password store through a symlink; refusing to write"
            )
        }
        try checkNoFolderLink(above: path)
    }

    /// In a store with git, refuses a path whose folders, below the store's root, include a link: git
    /// tracks no file through a link (its `git add` fails), so a write there would be left half done,
    /// and the link (someone may have pushed it) leads to a folder with other recipients. The link
    /// itself, as the last part of `path`, is a file like any other.
    func checkNoFolderLink(above path: String) throws {
        let prefix = root.endsWithSlash ? root : root + "/"
        guard path.hasPrefix(prefix), git(for: root + "/.gpg-id") != nil else { return }
        let parts = path.dropFirst(prefix.count).split(separator: "/").map(String.init)
        var folder = String(prefix.dropLast())
        for part in parts.dropLast() where part != "." {
            folder += "/" + part
            if FileSystem.kind(folder) == .symlink {
                let name = String(folder.dropFirst(prefix.count))
                throw CofferError(
                    .invalidName,
                    "\(Quoting.quoted(name)) is a link to a folder; coffer writes no entry through a link to a "
                        + "folder, and git tracks none; nothing was changed",
                    paths: [folder])
            }
        }
    }

    // MARK: - Recipients

    /// The recipients of a part of the store and the `.gpg-id` they come from.
    public struct Recipients: Sendable, Equatable {
        /// The key ids, fingerprints, user ids or group names, in file order.
        public let ids: [String]
        /// The `.gpg-id` file, or `nil` when `PASSWORD_STORE_KEY` overrides.
        public let file: String?
    }

    /// The recipients for entries in `folder`: `PASSWORD_STORE_KEY`, else the nearest `.gpg-id` above it.
    public func recipients(forFolder folder: String) throws -> Recipients {
        if let override = configuration.keyOverride { return Recipients(ids: override, file: nil) }
        guard let file = gpgIDFile(forFolder: folder) else {
            throw CofferError(
                .noRecipients, "no .gpg-id for \(folder.isEmpty ? "the store" : folder); run init")
        }
        let bytes = try FileSystem.readFile(file)
        if EntryMerge.containsConflict(bytes) {
            throw CofferError(
                .format,
                "\(Quoting.quoted(file)) holds merge conflict markers; keep one recipient a line and remove them, then try again"
            )
        }
        return Recipients(ids: GPGIDFile.parse(bytes), file: file)
    }

    /// The recipients for the entry `name`.
    public func recipients(for name: String) throws -> Recipients {
        try recipients(forFolder: Self.folder(of: name))
    }

    /// The nearest `.gpg-id` file at or above `folder`, spelled as pass spells it.
    ///
    /// pass starts from `<root>/<dirname of the entry>`, so an entry at the top gives `<root>/./.gpg-id`.
    package func gpgIDFile(forFolder folder: String) -> String? {
        let trimmed = EntryName.trimmed(folder)
        var current = root + "/" + (trimmed.isEmpty ? "." : trimmed)
        while current != root && !FileSystem.isFile(current + "/.gpg-id") {
            guard current.utf8.contains(0x2F) else { break }
            current = current.parentPath
        }
        let file = current + "/.gpg-id"
        return FileSystem.isFile(file) ? file : nil
    }

    /// Checks the `.gpg-id` signature when `PASSWORD_STORE_SIGNING_KEY` is set, with pass's messages.
    func verifyRecipientsFile(_ file: String?) throws {
        guard let file, !configuration.signingKeys.isEmpty else { return }
        let signature = file + ".sig"
        guard FileSystem.isFile(signature) else {
            throw CofferError(.badSignature, "Signature for \(file) does not exist.")
        }
        let trusted = try isSignedBySigningKey(
            FileSystem.readFile(file), signature: FileSystem.readFile(signature))
        if !trusted { throw CofferError(.badSignature, "Signature for \(file) is invalid.") }
    }

    /// Whether `signature` is a good detached signature of `bytes` by one of the signing keys
    /// (`PASSWORD_STORE_SIGNING_KEY`; like pass, only full upper-case fingerprints count).
    func isSignedBySigningKey(_ bytes: [UInt8], signature: [UInt8]) throws -> Bool {
        let checks = try engine.verifyDetached(signature: signature, of: bytes)
        let wanted = Set(configuration.signingKeys.filter(Self.isFullFingerprint))
        return checks.contains { check in check.isValid && check.fingerprints.contains { wanted.contains($0) }
        }
    }

    /// The recipients for entries in `folder`, checked as pass's `set_gpg_recipients` checks them before
    /// it encrypts: with `PASSWORD_STORE_SIGNING_KEY` set, the `.gpg-id` must carry a valid signature.
    ///
    /// - Throws: ``CofferError/Code/noRecipients`` without a `.gpg-id`, ``CofferError/Code/badSignature``
    ///   with pass's `Signature for FILE does not exist.` / `... is invalid.`
    public func verifiedRecipients(forFolder folder: String) throws -> Recipients {
        let recipients = try recipients(forFolder: folder)
        try verifyRecipientsFile(recipients.file)
        return recipients
    }

    /// pass's `verify_file`: with `PASSWORD_STORE_SIGNING_KEY` set, `file` must have a valid detached
    /// signature `FILE.sig` by one of the signing keys (pass checks `.gpg-id` files and extensions so).
    package func verifySignature(of file: String) throws {
        try verifyRecipientsFile(file)
    }

    /// Whether `text` is 40 upper-case hex digits.
    static func isFullFingerprint(_ text: String) -> Bool {
        text.utf8.count == 40 && text.utf8.allSatisfy { (48...57).contains($0) || (65...70).contains($0) }
    }

    // MARK: - Reading

    /// Decrypts the entry `name`.
    ///
    /// - Throws: ``CofferError/Code/notFound`` when there is no such entry, ``GPGError`` when gpg fails.
    public func read(_ name: String) throws -> SecureBytes {
        try EntryName.validate(name)
        let path = entryPath(name)
        guard FileSystem.isFile(path) else {
            throw CofferError(.notFound, "\(name) is not in the password store.")
        }
        return try engine.decrypt(FileSystem.readFile(path))
    }

    // MARK: - Writing

    /// Encrypts `contents` for the recipients of `name`'s folder and replaces the entry atomically.
    ///
    /// When the store is a git work tree the change is committed with `commitMessage`
    /// (by default pass's `Add given password for NAME to store.`).
    public func write(_ name: String, _ contents: SecureBytes, commitMessage: String? = nil) throws {
        try withStoreLock {
            try validateNewName(name)
            guard !name.isEmpty, !name.endsWithSlash else {
                throw CofferError(.invalidName, "an entry needs a name")
            }
            let path = entryPath(name)
            try checkInsideStore(path)
            try git(for: path)?.ensureNoUnfinishedOperation()
            try writeEncrypted(name, try encryptForWrite(contents, name: name), commitMessage: commitMessage)
        }
    }

    /// The file entry `name` is a symlink to, spelled inside the store, when it is one; `nil` when it is
    /// no link.
    ///
    /// - Throws: ``CofferError/Code/invalidName`` when the link leads to another folder: what is
    ///   written there would be encrypted for this folder's recipients, not that one's.
    func linkedEntryFile(_ name: String) throws -> String? {
        let path = entryPath(name)
        guard FileSystem.kind(path) == .symlink else { return nil }
        let folder = FileSystem.parent(of: path)
        guard let resolved = FileSystem.realPath(path), let realFolder = FileSystem.realPath(folder),
            FileSystem.parent(of: resolved) == realFolder
        else {
            throw CofferError(
                .invalidName,
                "\(Quoting.quoted(name)) is a link to a file in another folder, whose recipients may differ; "
                    + "write that entry itself", paths: [path])
        }
        return folder + "/" + resolved.lastPathPart
    }

    /// Encrypts `contents` for the recipients of entry `name`, as the user's own write: their `.gpg-id`
    /// checked (signature, conflict markers), and the message refused unless every key it is encrypted
    /// to is one the user accepted for the folder (see ``acceptance(at:)``).
    func encryptForWrite(_ contents: SecureBytes, name: String) throws -> [UInt8] {
        let recipients = try recipients(for: name)
        try verifyRecipientsFile(recipients.file)
        let folder = Self.folder(of: name)
        _ = try linkedEntryFile(name)
        let acceptance = try acceptance(at: entryPath(name))
        let ciphertext: [UInt8]
        do {
            ciphertext = try engine.encrypt(contents, to: recipients.ids)
        } catch let error as GPGError where error.kind == .untrustedKey {
            // gpg refuses a key nobody certified; when the user has not accepted it either, say that.
            try checkResolvedAccepted(recipients, forFolder: folder, acceptance: acceptance)
            throw error
        }
        try checkAccepted(ciphertext, forFolder: folder, acceptance: acceptance)
        return ciphertext
    }

    /// Writes `contents` over the entry `name`, whose ciphertext was `existing`: a change to what the entry
    /// holds (a counter, a field, an edit), not a new value. Like every re-encryption nobody asked for,
    /// it gives the entry no reader its ciphertext may not be given
    /// (``AutomaticPolicy/recipients(for:inFolder:wanted:)``): an entry someone moved or copied in from
    /// a narrower folder stays as narrow as it came, and `fsck` names it.
    func rewrite(_ name: String, _ contents: SecureBytes, of existing: [UInt8], commitMessage: String?) throws
    {
        try validateNewName(name)
        let path = entryPath(name)
        try checkInsideStore(path)
        try git(for: path)?.ensureNoUnfinishedOperation()
        try writeEncrypted(
            name, try encryptForRewrite(contents, name: name, existing: existing),
            commitMessage: commitMessage)
    }

    /// Encrypts `contents` for ``rewrite(_:_:of:commitMessage:)``: as the user's own write
    /// (``encryptForWrite(_:name:)``) when `existing` was written for the folder, else for the keys the
    /// policy allows it.
    func encryptForRewrite(_ contents: SecureBytes, name: String, existing: [UInt8]) throws -> [UInt8] {
        guard let acceptance = try acceptance(at: entryPath(name)) else {
            return try encryptForWrite(contents, name: name)
        }
        let recipients = try recipients(for: name)
        // The policy decides even when the key ids of `existing` name every key the folder names: anyone
        // can put a key id in front of a ciphertext, so they prove nothing about who reads it; where
        // the ciphertext was written (the history, read by the policy) does.
        try verifyRecipientsFile(recipients.file)
        _ = try linkedEntryFile(name)
        let folder = Self.folder(of: name)
        var policy = try AutomaticPolicy(store: self, acceptance: acceptance)
        let chosen = try policy.recipients(for: existing, inFolder: folder, wanted: recipients)
        // Written for this folder (or to keys this keyring cannot tell): the user's own write.
        guard chosen.writtenElsewhere, !chosen.unknownReaders else {
            return try encryptForWrite(contents, name: name)
        }
        guard let ids = chosen.ids else {
            throw CofferError(
                .notAccepted,
                "cannot write \(Quoting.quoted(name)): it was not written for its folder (someone moved or copied "
                    + "it there), and none of the folder's recipients may read it; nothing was written",
                paths: [name])
        }
        let ciphertext = try engine.encrypt(contents, to: ids)
        try checkAccepted(ciphertext, forFolder: folder, acceptance: acceptance, allowed: chosen.allowed)
        try CiphertextOrigins.append(
            [
                .carried(
                    blob: Self.ciphertextID(of: ciphertext), from: Self.ciphertextID(of: existing),
                    folder: folder)
            ],
            to: acceptance.originsFile)
        return ciphertext
    }

    /// Puts `ciphertext` (encrypted for the recipients of `name`) in place atomically and commits it.
    private func writeEncrypted(_ name: String, _ ciphertext: [UInt8], commitMessage: String?) throws {
        let path = entryPath(name)
        // Like pass's `gpg -o`, a symlinked entry is written through, to the file it names in the
        // same folder (``linkedEntryFile(_:)``); both names are committed.
        let destination = try linkedEntryFile(name) ?? path
        // A write killed between writing and committing is put back by the next one.
        try whole([destination], undoingFailures: false) { _ in
            try FileSystem.makeDirectories(FileSystem.parent(of: destination), mode: configuration.folderMode)
            removeStrayTemporaryFiles(in: FileSystem.parent(of: destination))
            try FileSystem.atomicWrite(destination, bytes: ciphertext, mode: configuration.fileMode)
            // The log only makes origins stricter: a write it misses leaves the entry's older ones.
            try? recordWritten(ciphertext, at: destination)
            try commit(
                destination == path ? [path] : [path, destination],
                commitMessage ?? "Add given password for \(name) to store.")

        }
    }

    /// An entry as it was read: its ciphertext and plaintext, so that a later write can tell whether the
    /// entry changed meanwhile (``write(_:_:commitMessage:basedOn:)``).
    public struct ReadVersion: Sendable {
        /// The encrypted bytes read.
        public let ciphertext: [UInt8]
        /// What they decrypted to.
        public let plaintext: SecureBytes
    }

    /// Decrypts the entry `name` and keeps its ciphertext, for ``write(_:_:commitMessage:basedOn:)``.
    public func readVersion(_ name: String) throws -> ReadVersion {
        try EntryName.validate(name)
        let path = entryPath(name)
        guard FileSystem.isFile(path) else {
            throw CofferError(.notFound, "\(name) is not in the password store.")
        }
        let ciphertext = try FileSystem.readFile(path)
        return ReadVersion(ciphertext: ciphertext, plaintext: try engine.decrypt(ciphertext))
    }

    /// Writes `contents` as ``write(_:_:commitMessage:)`` does, for a change made to the entry as it was
    /// in `version` (`nil`: it did not exist). When the entry changed meanwhile (a sync brought a new
    /// password while an editor was open), the two changes are merged field by field instead of the
    /// newer one being lost; a field both changed is kept as a conflict inside the entry.
    ///
    /// - Returns: whether the entry had changed and the merge kept a conflict.
    @discardableResult
    public func write(
        _ name: String, _ contents: SecureBytes, commitMessage: String? = nil, basedOn version: ReadVersion?
    )
        throws -> Bool
    {
        try withStoreLock {
            let path = entryPath(name)
            let current = FileSystem.isFile(path) ? try FileSystem.readFile(path) : nil
            guard let current, current != version?.ciphertext else {
                // Unchanged (or removed meanwhile: the edit brings it back).
                if let version, current != nil {
                    try rewrite(name, contents, of: version.ciphertext, commitMessage: commitMessage)
                } else {
                    try write(name, contents, commitMessage: commitMessage)
                }
                return false
            }
            let base = version?.plaintext ?? SecureBytes([])
            let merged = Self.mergedText(base: base, ours: contents, theirs: try engine.decrypt(current))
            // The merge holds text of the entry as it is now: it gets no reader that one may not have.
            try rewrite(name, merged.text, of: current, commitMessage: commitMessage)
            return merged.hasConflicts
        }
    }

    /// Reads entry `name`, hands its plaintext to `transform` and writes the result, all under the store
    /// lock, so that no other writer's change made in between is lost.
    public func update(
        _ name: String, commitMessage: String? = nil, _ transform: (SecureBytes) throws -> SecureBytes
    ) throws {
        try withStoreLock {
            let version = try readVersion(name)
            try rewrite(
                name, transform(version.plaintext), of: version.ciphertext, commitMessage: commitMessage)
        }
    }

    /// Reads, transforms and writes an entry under the store's lock, as ``update(_:commitMessage:_:)``
    /// does, with the commit message chosen by `transform` from what it found.
    public func update(
        _ name: String, _ transform: (SecureBytes) throws -> (contents: SecureBytes, commitMessage: String?)
    ) throws {
        try withStoreLock {
            let version = try readVersion(name)
            let (contents, message) = try transform(version.plaintext)
            try rewrite(name, contents, of: version.ciphertext, commitMessage: message)
        }
    }

    /// Removes temporary files that an interrupted write left in `folder` (only called under the lock,
    /// when no write of ours is in progress).
    func removeStrayTemporaryFiles(in folder: String) {
        guard let names = try? FileSystem.contents(of: folder, sorted: false) else { return }
        for name in names where Self.isStrayTemporaryFile(name) { unlink(folder + "/" + name) }
    }

    /// The git repository that holds `path`, found as pass finds it, or `nil`.
    package func git(for path: String) -> GitRepository? {
        var repository = GitRepository.containing(
            path, storeRoot: root, environment: configuration.environment)
        repository?.lockTimeout = configuration.lockTimeout
        return repository
    }

    /// Commits `paths` with `message` when they are in a git work tree and changed.
    func commit(_ paths: [String], _ message: String) throws {
        guard let first = paths.first, let repository = git(for: first) else { return }
        try repository.commit(paths: paths, message: message, output: gitOutput)
    }
}
