/// GnuPG's keyring as the store manages it: the keys it lists, imports, exports, makes and certifies.
///
/// Kept apart from ``CryptoEngine`` (which only encrypts, decrypts, signs and verifies): a store whose
/// engine is not gpg (a test engine) has no keyring, and the operations that need one say so.
package protocol Keyring: Sendable {
    /// The keyring's folder (`GNUPGHOME`), `nil` for gpg's default.
    var homeDirectory: String? { get }

    /// Lists keys matching any of `patterns` (all keys when empty); `secretOnly` lists secret keys.
    func keys(matching patterns: [String], secretOnly: Bool) throws -> [KeyInfo]

    /// One error for each of `recipients` that cannot be encrypted to, saying why.
    func recipientProblems(_ recipients: [String]) throws -> [GPGError]

    /// Makes a key pair (ed25519 for signing, cv25519 for encryption) for `userID`; returns its
    /// fingerprint. With `passphrase`, gpg asks for one through pinentry.
    func generateKey(userID: String, passphrase: Bool) throws -> String

    /// The public key `fingerprint` in OpenPGP's binary form.
    func exportPublicKey(_ fingerprint: String) throws -> [UInt8]

    /// The fingerprints of the primary keys in `keys` (OpenPGP key data), imported nowhere.
    func fingerprints(inKeyData keys: [UInt8]) throws -> [String]

    /// Imports the keys in `keys`; returns the fingerprints imported.
    func importKeys(_ keys: [UInt8]) throws -> [String]

    /// Certifies `userID` of key `fingerprint` locally (nothing that leaves the keyring), so that gpg
    /// encrypts to it.
    func makeUsableForEncryption(_ fingerprint: String, userID: String?) throws
}

extension GPGMEEngine: Keyring {
    /// The keyring's folder, from the engine's options.
    package var homeDirectory: String? { options.homeDirectory }
}
