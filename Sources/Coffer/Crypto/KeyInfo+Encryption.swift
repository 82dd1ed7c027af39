import CGPGME

/// Which subkey of a key gpg encrypts to, and why it cannot when it cannot: the rules of GnuPG's key
/// lookup (`finish_lookup` in `g10/getkey.c`), applied to a key listing.
extension KeyInfo {
    /// Whether gpg may encrypt to this key at all: it is neither revoked nor expired.
    var isUsable: Bool { !isRevoked && !isExpired }

    /// The subkey gpg encrypts to when this key is named as a recipient (GnuPG's key lookup): the
    /// most recently made encryption subkey that is valid, not revoked, not expired and already
    /// valid at `now` (the first one listed when several were made in the same second); the primary
    /// key when no subkey qualifies and it can encrypt itself; `nil` when nothing can.
    package func encryptionSubkey(now: Int) -> Subkey? {
        guard isUsable, let primary = subkeys.first else { return nil }
        var chosen: Subkey?
        for subkey in subkeys.dropFirst()
        where subkey.canEncrypt && !subkey.isUnusable && subkey.creationTime <= now {
            let newest = chosen?.creationTime ?? 0
            if subkey.creationTime > newest || (subkey.creationTime == 0 && newest == 0) { chosen = subkey }
        }
        if chosen == nil, primary.canEncrypt, !primary.isUnusable { return primary }
        return chosen
    }

    /// Why gpg would not encrypt to this key, trust aside: the error kind and code, and the reason in
    /// words with what to do; `nil` when it has a subkey to encrypt to.
    func encryptionProblem(now: Int) -> (kind: GPGError.Kind, code: UInt32, reason: String)? {
        guard encryptionSubkey(now: now) == nil else { return nil }
        if isRevoked {
            return (
                .revokedKey, GPG_ERR_CERT_REVOKED.rawValue,
                "the key \(fingerprint) is revoked; remove it from the .gpg-id"
            )
        }
        if isExpired {
            return (
                .expiredKey, GPG_ERR_KEY_EXPIRED.rawValue,
                "the key \(fingerprint) has expired; extend it (gpg --quick-set-expire \(fingerprint) 1y) "
                    + "or fix the .gpg-id"
            )
        }
        let capable = subkeys.filter(\.canEncrypt)
        let addOne = "(gpg --quick-add-key \(fingerprint) cv25519 encr) or name another key in the .gpg-id"
        if capable.isEmpty {
            return (
                .unusableKey, GPG_ERR_WRONG_KEY_USAGE.rawValue,
                "the key \(fingerprint) has no encryption subkey, only keys that sign and certify; add one "
                    + addOne
            )
        }
        if capable.allSatisfy(\.isExpired) {
            return (
                .expiredKey, GPG_ERR_SUBKEYS_EXP_OR_REV.rawValue,
                "the encryption subkey of the key \(fingerprint) has expired; extend it (gpg "
                    + "--quick-set-expire \(fingerprint) 1y '*'), add a new one " + addOne
            )
        }
        if capable.allSatisfy(\.isRevoked) {
            return (
                .revokedKey, GPG_ERR_SUBKEYS_EXP_OR_REV.rawValue,
                "the encryption subkey of the key \(fingerprint) is revoked; add a new one " + addOne
            )
        }
        return (
            .unusableKey, GPG_ERR_SUBKEYS_EXP_OR_REV.rawValue,
            "every encryption subkey of the key \(fingerprint) is expired, revoked or not valid yet; add a "
                + "new one " + addOne
        )
    }

    /// A key id or fingerprint as gpg lists it: upper-case hex without a `0x` in front.
    static func hexID(_ text: Substring) -> String {
        let hex = text.hasPrefix("0x") || text.hasPrefix("0X") ? text.dropFirst(2) : text
        return hex.uppercased()
    }
}
