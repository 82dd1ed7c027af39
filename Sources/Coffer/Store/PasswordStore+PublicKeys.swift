extension PasswordStore {
    /// Keeps the public key `fingerprint` of gpg's keyring in ``publicKeysFolder`` (as
    /// `.public-keys/FINGERPRINT`, for the others to add it as a recipient) and commits it, unless the file
    /// holds the key as the keyring has it now (an extended expiry date or a new subkey is written again).
    ///
    /// - Returns: whether the file was written.
    /// - Throws: ``CofferError/Code/invalidName`` when `fingerprint` is not a fingerprint or the file's
    ///   place leads outside the store through a symlink (a `.public-keys` link that came with a clone).
    @discardableResult
    public func keepPublicKey(of fingerprint: String) throws -> Bool {
        guard let keys = keyring else {
            throw CofferError(.invalidArgument, "keeping a public key needs gpg's keyring")
        }
        guard !fingerprint.isEmpty, Hex.bytes(fingerprint) != nil else {
            throw CofferError(.invalidName, "\(fingerprint) is not a key's fingerprint")
        }
        return try withStoreLock {
            let file = root + "/" + Self.publicKeysFolder + "/" + fingerprint
            try checkInsideStore(file)
            try git(for: file)?.ensureNoUnfinishedOperation()
            let exported = try keys.exportPublicKey(fingerprint)
            let existing = FileSystem.isFile(file) ? try? FileSystem.readFile(file) : nil
            guard existing != exported else { return false }
            try makeFolders(FileSystem.parent(of: file))
            try FileSystem.atomicWrite(file, bytes: exported, mode: configuration.fileMode)
            try commit(
                [file],
                existing == nil
                    ? "Add the public key of \(fingerprint)." : "Update the public key of \(fingerprint).")
            return true
        }
    }
}
