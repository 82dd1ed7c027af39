/// A failure reported by gpg through GPGME, with the gpg error code and an actionable message.
public struct GPGError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, in terms a caller can branch on.
    public enum Kind: Sendable, Equatable {
        /// No secret key in the keyring can decrypt the message.
        case noSecretKey
        /// A recipient names no public key in the keyring.
        case noPublicKey
        /// A recipient's key is expired.
        case expiredKey
        /// A recipient's key is revoked.
        case revokedKey
        /// A recipient's key is not trusted (set its trust, or use `--trust-model always`).
        case untrustedKey
        /// A recipient's key cannot encrypt (no valid encryption subkey).
        case unusableKey
        /// The data is not OpenPGP, is truncated or corrupt.
        case corruptData
        /// gpg-agent or pinentry could not be reached.
        case agentUnavailable
        /// The user cancelled the passphrase prompt.
        case cancelled
        /// A wrong passphrase was given.
        case badPassphrase
        /// The signature does not verify.
        case badSignature
        /// A recipient names more than one key that could be encrypted to, so which one reads the entry
        /// would be gpg's choice.
        case ambiguousRecipient
        /// Anything else.
        case other
    }

    /// The kind of failure.
    public let kind: Kind
    /// The gpg-error code (`gpg_err_code_t`), 0 when not from gpg.
    public let code: UInt32
    /// A one-line message for people, naming the recipient when there is one.
    public let message: String

    /// Creates an error.
    public init(kind: Kind, code: UInt32, message: String) {
        self.kind = kind
        self.code = code
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
