import CGPGME

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// MARK: - Managing keys

extension GPGMEEngine {
    /// Makes a new key for `userID` (`Name <email>`): an ed25519 primary key for signing and certifying,
    /// with a cv25519 subkey for encryption, neither expiring. Without `passphrase` gpg-agent asks for one
    /// through pinentry; with `passphrase: false` the key has none. Returns the primary key's fingerprint.
    package func generateKey(userID: String, passphrase: Bool) throws -> String {
        let context = try GPGMEContext(options: options)
        let noPassphrase = passphrase ? 0 : UInt32(GPGME_CREATE_NOPASSWD)
        try check(
            gpgme_op_createkey(
                context.handle, userID, "ed25519", 0, 0, nil,
                UInt32(GPGME_CREATE_SIGN) | UInt32(GPGME_CREATE_CERT) | UInt32(GPGME_CREATE_NOEXPIRE)
                    | noPassphrase),
            "cannot make a key")
        guard let result = gpgme_op_genkey_result(context.handle), let made = result.pointee.fpr else {
            throw GPGError(kind: .other, code: 0, message: "gpg made no key")
        }
        let fingerprint = String(cString: made)
        var key: gpgme_key_t?
        try check(gpgme_get_key(context.handle, fingerprint, &key, 1), "cannot find the new key")
        defer { gpgme_key_unref(key) }
        try check(
            gpgme_op_createsubkey(
                context.handle, key, "cv25519", 0, 0,
                UInt32(GPGME_CREATE_ENCR) | UInt32(GPGME_CREATE_NOEXPIRE) | noPassphrase),
            "cannot make the encryption subkey")
        return fingerprint
    }

    /// Certifies one user id of the key `fingerprint` with a local (non-exportable) signature by the
    /// user's default secret key, as `gpg --quick-lsign-key FINGERPRINT USERID` does, so that gpg takes
    /// the key as valid for encryption. Other user ids the key carries stay uncertified: a name someone
    /// else's key also claims does not become valid through it.
    package func locallySign(_ fingerprint: String, userID: String) throws {
        let context = try GPGMEContext(options: options)
        var key: gpgme_key_t?
        try check(gpgme_get_key(context.handle, fingerprint, &key, 0), "cannot find \(fingerprint)")
        defer { gpgme_key_unref(key) }
        try check(
            gpgme_op_keysign(
                context.handle, key, userID, 0, UInt32(GPGME_KEYSIGN_LOCAL) | UInt32(GPGME_KEYSIGN_NOEXPIRE)),
            "cannot certify \(fingerprint)")
    }

    /// The public key `fingerprint`, ASCII-armored, as `gpg --export --armor` writes it.
    package func exportPublicKey(_ fingerprint: String) throws -> [UInt8] {
        let context = try GPGMEContext(options: options)
        gpgme_set_armor(context.handle, 1)
        let output = try GPGMEData()
        try check(
            gpgme_op_export(context.handle, fingerprint, 0, output.handle), "cannot export \(fingerprint)")
        let bytes = output.takeBytes()
        guard !bytes.isEmpty else {
            throw GPGError(kind: .noPublicKey, code: 0, message: "no public key \(fingerprint)")
        }
        return bytes
    }

    /// The primary fingerprints of the keys in `keys` (armored or binary), read without importing them.
    package func fingerprints(inKeyData keys: [UInt8]) throws -> [String] {
        let context = try GPGMEContext(options: options)
        return try keys.withUnsafeBytes { bytes in
            let input = try GPGMEData(borrowing: bytes)
            try check(
                gpgme_op_keylist_from_data_start(context.handle, input.handle, 0), "cannot read the keys")
            defer { gpgme_op_keylist_end(context.handle) }
            var found: [String] = []
            var key: gpgme_key_t?
            while gpgme_op_keylist_next(context.handle, &key) == 0, let current = key {
                if let fingerprint = current.pointee.fpr { found.append(String(cString: fingerprint)) }
                gpgme_key_unref(current)
                key = nil
            }
            return found
        }
    }

    /// Imports public keys (armored or binary) into the keyring; returns the fingerprints gpg took in
    /// (new or changed).
    @discardableResult
    package func importKeys(_ keys: [UInt8]) throws -> [String] {
        let context = try GPGMEContext(options: options)
        return try keys.withUnsafeBytes { bytes in
            let input = try GPGMEData(borrowing: bytes)
            try check(gpgme_op_import(context.handle, input.handle), "cannot import keys")
            guard let result = gpgme_op_import_result(context.handle) else { return [] }
            var fingerprints: [String] = []
            var status = result.pointee.imports
            while let current = status {
                if current.pointee.result == 0, current.pointee.status != 0, let fpr = current.pointee.fpr {
                    fingerprints.append(String(cString: fpr))
                }
                status = current.pointee.next
            }
            return fingerprints
        }
    }
}

extension GPGMEEngine {
    /// Makes sure gpg encrypts to the key `fingerprint`: when a trial encryption fails because the key
    /// is not valid (not certified, no owner trust), its user id `userID` (its primary one when `nil`)
    /// gets a local certification by the user's own key (``locallySign(_:userID:)``), and the trial is
    /// made again. Only the user's own acceptance of a key calls this, never a key's mere arrival.
    ///
    /// - Throws: ``GPGError`` when gpg still cannot encrypt to the key.
    package func makeUsableForEncryption(_ fingerprint: String, userID: String? = nil) throws {
        let trial = SecureBytes(string: "")
        do {
            _ = try encryptReportingChoice(trial, to: [fingerprint])
        } catch let error as GPGError where error.kind == .untrustedKey {
            guard
                let named = try userID
                    ?? keys(matching: [fingerprint], secretOnly: false).first?.userIDs.first
            else { throw error }
            try locallySign(fingerprint, userID: named)
            _ = try encryptReportingChoice(trial, to: [fingerprint])
        }
    }
}
