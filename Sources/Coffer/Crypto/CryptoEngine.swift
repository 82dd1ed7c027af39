/// Encrypts, decrypts, signs and verifies for the store; ``GPGMEEngine`` is the real one.
///
/// Implementations must be safe to call from many threads at once.
public protocol CryptoEngine: Sendable {
    /// Encrypts `plaintext` to every recipient, without compression and without the user's encrypt-to keys.
    ///
    /// A recipient is anything gpg accepts for `-r`: a fingerprint, a key id, a user id or a gpg.conf group.
    func encrypt(_ plaintext: SecureBytes, to recipients: [String]) throws -> [UInt8]

    /// Decrypts an OpenPGP message.
    func decrypt(_ ciphertext: [UInt8]) throws -> SecureBytes

    /// Makes a detached binary signature of `data` with the secret key `signer`.
    func signDetached(_ data: [UInt8], signer: String) throws -> [UInt8]

    /// Verifies a detached signature and returns one result per signature found.
    func verifyDetached(signature: [UInt8], of data: [UInt8]) throws -> [SignatureCheck]

    /// Lists keys matching any of `patterns` (all keys when empty); `secretOnly` lists secret keys.
    func keys(matching patterns: [String], secretOnly: Bool) throws -> [KeyInfo]

    /// The key ids (16 hex digits) of the encryption subkeys that gpg encrypts to for `recipients`.
    func encryptionKeyIDs(for recipients: [String]) throws -> Set<String>

    /// One error for each of `recipients` that cannot be encrypted to, saying why (no public key, a
    /// revoked or expired key, no usable encryption subkey); empty when all of them can be.
    func recipientProblems(_ recipients: [String]) throws -> [GPGError]

    /// An encryptor for many plaintexts to the same `recipients`, for bulk work such as re-encryption;
    /// an engine may make the later encryptions cheaper than ``encrypt(_:to:)`` calls.
    func encryptor(for recipients: [String]) -> any RepeatedEncryptor

    /// For each key id (16 hex digits, as ``encryptionKeyIDs(for:)`` gives them), the fingerprints of
    /// the primary keys that hold a key with that id; empty for an id the keyring does not know.
    func primaryFingerprints(ofKeyIDs keyIDs: Set<String>) throws -> [String: Set<String>]
}

/// Encrypts plaintexts one after another to a fixed list of recipients (see
/// ``CryptoEngine/encryptor(for:)``); safe to use from several threads.
public protocol RepeatedEncryptor: Sendable {
    /// Encrypts `plaintext` as ``CryptoEngine/encrypt(_:to:)`` would for the recipients.
    func encrypt(_ plaintext: SecureBytes) throws -> [UInt8]
}

extension CryptoEngine {
    /// Calls ``encrypt(_:to:)`` for every plaintext.
    public func encryptor(for recipients: [String]) -> any RepeatedEncryptor {
        OneByOneEncryptor(engine: self, recipients: recipients)
    }

    /// Finds no problems: an engine that cannot judge keys leaves it to ``encrypt(_:to:)`` to fail.
    public func recipientProblems(_ recipients: [String]) throws -> [GPGError] { [] }

    /// Asks ``keys(matching:secretOnly:)`` for each key id.
    public func primaryFingerprints(ofKeyIDs keyIDs: Set<String>) throws -> [String: Set<String>] {
        var found: [String: Set<String>] = [:]
        for keyID in keyIDs {
            found[keyID] = Set(try keys(matching: ["0x" + keyID], secretOnly: false).map(\.fingerprint))
        }
        return found
    }
}

/// The plain ``RepeatedEncryptor``: one ``CryptoEngine/encrypt(_:to:)`` a plaintext.
struct OneByOneEncryptor: RepeatedEncryptor {
    let engine: any CryptoEngine
    let recipients: [String]

    func encrypt(_ plaintext: SecureBytes) throws -> [UInt8] {
        try engine.encrypt(plaintext, to: recipients)
    }
}

/// One signature checked by ``CryptoEngine/verifyDetached(signature:of:)``.
public struct SignatureCheck: Sendable, Equatable {
    /// The fingerprints of the signing subkey and of its primary key (one entry when they are the same).
    public let fingerprints: [String]
    /// Whether the signature is cryptographically good (gpg's `VALIDSIG`), whatever the key's trust.
    public let isValid: Bool

    /// Creates a result.
    public init(fingerprints: [String], isValid: Bool) {
        self.fingerprints = fingerprints
        self.isValid = isValid
    }
}

/// A key in the keyring.
public struct KeyInfo: Sendable, Equatable {
    /// One subkey (the primary key is the first).
    public struct Subkey: Sendable, Equatable {
        /// The 40 (or 64) hex digit fingerprint.
        public let fingerprint: String
        /// The long key id, 16 hex digits.
        public let keyID: String
        /// Whether the subkey may encrypt.
        public let canEncrypt: Bool
        /// Whether the subkey may sign.
        public let canSign: Bool
        /// Whether the subkey is expired, revoked, disabled or invalid.
        public let isUnusable: Bool
        /// Whether the subkey has expired.
        public let isExpired: Bool
        /// Whether the subkey is revoked.
        public let isRevoked: Bool
        /// When the subkey was made, in seconds since 1970 (0 when unknown).
        public let creationTime: Int
        /// When the subkey expires, in seconds since 1970 (0 when it does not).
        public var expirationTime: Int = 0

        /// A subkey as an engine other than gpg's lists it (a test engine).
        package init(
            fingerprint: String, keyID: String, canEncrypt: Bool, canSign: Bool, isUnusable: Bool = false,
            isExpired: Bool = false, isRevoked: Bool = false, creationTime: Int = 0, expirationTime: Int = 0
        ) {
            self.fingerprint = fingerprint
            self.keyID = keyID
            self.canEncrypt = canEncrypt
            self.canSign = canSign
            self.isUnusable = isUnusable
            self.isExpired = isExpired
            self.isRevoked = isRevoked
            self.creationTime = creationTime
            self.expirationTime = expirationTime
        }
    }

    /// The primary key's fingerprint.
    public let fingerprint: String
    /// The user ids, primary first.
    public let userIDs: [String]
    /// The primary key and its subkeys.
    public let subkeys: [Subkey]
    /// Whether the secret part is in the keyring.
    public let hasSecret: Bool
    /// Whether the whole key is expired.
    public let isExpired: Bool
    /// Whether the whole key is revoked.
    public let isRevoked: Bool
    /// Whether the owner of the keyring trusts the key ultimately (its own keys, as a rule): then gpg
    /// takes it as valid by itself, whatever signatures it carries or lacks and whatever the time.
    package var isUltimatelyTrusted = false

    /// A key as an engine other than gpg's lists it (a test engine).
    package init(
        fingerprint: String, userIDs: [String], subkeys: [Subkey], hasSecret: Bool, isExpired: Bool = false,
        isRevoked: Bool = false, isUltimatelyTrusted: Bool = false
    ) {
        self.fingerprint = fingerprint
        self.userIDs = userIDs
        self.subkeys = subkeys
        self.hasSecret = hasSecret
        self.isExpired = isExpired
        self.isRevoked = isRevoked
        self.isUltimatelyTrusted = isUltimatelyTrusted
    }
}

extension CryptoEngine {
    /// `ciphertext` decrypted, or `nil` when this keyring holds no key for it or it is not OpenPGP: then
    /// there is nothing to read in it. Any other failure (the agent, a passphrase) is thrown, so that a
    /// caller that could not read it does not act as if there were nothing to read.
    package func decryptUnlessUnreadable(_ ciphertext: [UInt8]) throws -> SecureBytes? {
        do {
            return try decrypt(ciphertext)
        } catch let error as GPGError where error.kind == .noSecretKey || error.kind == .corruptData {
            return nil
        }
    }

    /// Decrypts the OpenPGP message in the file at `path`.
    public func decrypt(fileAt path: String) throws -> SecureBytes {
        try decrypt(FileSystem.readFile(path))
    }
}
