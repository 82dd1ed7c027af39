import Coffer

/// An engine without gpg, for tests of the logic above the crypto (store, keychain, entry, git): a
/// "ciphertext" is the recipients' fingerprints and the plaintext in clear, which only an engine holding
/// one of those keys' secrets "decrypts". It encrypts nothing and proves nothing about OpenPGP: what
/// encrypts is tested with real gpg.
package struct PlainEngine: CryptoEngine {
    /// A key of the engine's keyring.
    package struct Key: Sendable {
        /// 40 hex digits.
        package var fingerprint: String
        /// Its one user id (`Name <address>`).
        package var userID: String
        /// Whether this engine holds its secret: it decrypts what is encrypted to it.
        package var hasSecret: Bool

        /// A key with `fingerprint` and `userID`.
        package init(fingerprint: String, userID: String, hasSecret: Bool) {
            self.fingerprint = fingerprint
            self.userID = userID
            self.hasSecret = hasSecret
        }
    }

    /// The keys it knows.
    package let keys: [Key]
    /// The first line of every message it makes.
    static let header = Array("coffer-plain-engine 1\n".utf8)

    /// An engine knowing `keys`.
    package init(keys: [Key]) { self.keys = keys }

    /// An engine with one key of its own for each of `names` (`name@coffer.test`).
    package init(names: [String]) {
        keys = names.enumerated().map { index, name in
            let hex = String(index + 1, radix: 16, uppercase: true)
            return Key(
                fingerprint: String(repeating: "0", count: 40 - hex.count) + hex,
                userID: "\(name) <\(name)@coffer.test>", hasSecret: true)
        }
    }

    /// The key `recipient` names: its fingerprint, its long key id, its user id or its address.
    func key(_ recipient: String) -> Key? {
        let wanted = recipient.uppercased().hasPrefix("0X") ? String(recipient.dropFirst(2)) : recipient
        return keys.first { key in
            key.fingerprint.caseInsensitiveEquals(wanted)
                || key.fingerprint.hasSuffix(wanted.uppercased())
                    && wanted.count >= 16
                || key.userID == wanted || key.userID.contains("<\(wanted)>")
        }
    }

    package func encrypt(_ plaintext: SecureBytes, to recipients: [String]) throws -> [UInt8] {
        var fingerprints: [String] = []
        for recipient in recipients {
            guard let key = key(recipient) else {
                throw GPGError(kind: .noPublicKey, code: 9, message: "no public key for \(recipient)")
            }
            if !fingerprints.contains(key.fingerprint) { fingerprints.append(key.fingerprint) }
        }
        guard !fingerprints.isEmpty else {
            throw GPGError(kind: .other, code: 0, message: "no recipients")
        }
        return Self.header + Array((fingerprints.joined(separator: ",") + "\n").utf8)
            + plaintext.withUnsafeBytes { Array($0) }
    }

    package func decrypt(_ ciphertext: [UInt8]) throws -> SecureBytes {
        guard ciphertext.starts(with: Self.header),
            let newline = ciphertext.dropFirst(Self.header.count).firstIndex(of: 10)
        else { throw GPGError(kind: .corruptData, code: 58, message: "not a message of the plain engine") }
        let readers = String(decoding: ciphertext[Self.header.count..<newline], as: UTF8.self)
            .split(separator: ",").map(String.init)
        guard
            readers.contains(where: { reader in keys.contains { $0.fingerprint == reader && $0.hasSecret } })
        else { throw GPGError(kind: .noSecretKey, code: 17, message: "no secret key") }
        return SecureBytes(Array(ciphertext[(newline + 1)...]))
    }

    package func signDetached(_ data: [UInt8], signer: String) throws -> [UInt8] {
        guard let key = key(signer), key.hasSecret else {
            throw GPGError(kind: .noSecretKey, code: 17, message: "no secret key for \(signer)")
        }
        return Array("signed by \(key.fingerprint) over \(data.count) bytes: ".utf8) + data
    }

    package func verifyDetached(signature: [UInt8], of data: [UInt8]) throws -> [SignatureCheck] {
        let text = String(decoding: signature, as: UTF8.self)
        let words = text.split(separator: " ", maxSplits: 6)
        guard words.count >= 6, words[0] == "signed", let key = key(String(words[2])) else { return [] }
        let valid =
            signature.count >= data.count && Array(signature.suffix(data.count)) == data
            && text.hasPrefix("signed by \(key.fingerprint) over \(data.count) bytes: ")
        return [SignatureCheck(fingerprints: [key.fingerprint], isValid: valid)]
    }

    package func keys(matching patterns: [String], secretOnly: Bool) throws -> [KeyInfo] {
        let chosen = patterns.isEmpty ? keys : patterns.compactMap(key)
        return chosen.filter { !secretOnly || $0.hasSecret }.map { key in
            KeyInfo(
                fingerprint: key.fingerprint, userIDs: [key.userID],
                subkeys: [
                    KeyInfo.Subkey(
                        fingerprint: key.fingerprint, keyID: String(key.fingerprint.suffix(16)),
                        canEncrypt: true,
                        canSign: true)
                ], hasSecret: key.hasSecret, isUltimatelyTrusted: key.hasSecret)
        }
    }

    package func encryptionKeyIDs(for recipients: [String]) throws -> Set<String> {
        Set(recipients.compactMap { key($0).map { String($0.fingerprint.suffix(16)) } })
    }
}

extension String {
    /// Whether the two are the same but for the case of letters.
    fileprivate func caseInsensitiveEquals(_ other: String) -> Bool { uppercased() == other.uppercased() }
}
