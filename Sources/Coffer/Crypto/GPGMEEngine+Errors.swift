import CGPGME

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// The mapping of GPGME's errors to ``GPGError``s that say what to do.

extension GPGMEEngine {
    func check(_ status: gpgme_error_t, _ what: String) throws {
        if status != 0 { throw GPGError(status, while: what) }
    }

    func encryptionError(_ status: gpgme_error_t, context: GPGMEContext) -> GPGError {
        if let result = gpgme_op_encrypt_result(context.handle),
            let invalid = result.pointee.invalid_recipients
        {
            let name = invalid.pointee.fpr.map { String(cString: $0) } ?? "?"
            let reason = coffer_gpgme_err_code(invalid.pointee.reason)
            // gpg's reason is often missing ("INV_RECP 0") or vague ("All subkeys are expired or
            // revoked" for a key that never had an encryption subkey): the keyring tells what is wrong.
            if reason != GPG_ERR_NO_PUBKEY.rawValue, let problem = (try? recipientProblems([name]))?.first {
                return problem
            }
            if reason == GPG_ERR_GENERAL.rawValue || reason == GPG_ERR_NO_ERROR.rawValue
                || reason == GPG_ERR_SUBKEYS_EXP_OR_REV.rawValue
            {
                // The key can encrypt, so gpg refused it for its trust.
                let known = (try? keys(matching: [name], secretOnly: false))?.isEmpty == false
                return GPGError(
                    recipient: name, reason: known ? GPG_ERR_NOT_TRUSTED.rawValue : GPG_ERR_NO_PUBKEY.rawValue
                )
            }
            return GPGError(recipient: name, reason: reason)
        }
        return GPGError(status, while: "encrypting")
    }

    func decryptionError(_ status: gpgme_error_t, context: GPGMEContext, status log: StatusLog) -> GPGError {
        let code = coffer_gpgme_err_code(status)
        if log.contains("BADMDC") {
            return GPGError(
                kind: .corruptData, code: code,
                message: "gpg failed decrypting: the file was altered: its integrity check (MDC) failed, "
                    + "so nothing of it is shown")
        }
        if let information = log.fields(of: "DECRYPTION_INFO"), information.first == "0",
            information.count < 3 || information[2] == "0"
        {
            return GPGError(
                kind: .corruptData, code: code,
                message: "gpg failed decrypting: the file is not integrity protected (it has no MDC), so it "
                    + "could have been altered unnoticed; gpg refuses to decrypt it")
        }
        if code == GPG_ERR_CHECKSUM.rawValue || code == GPG_ERR_BAD_KEY.rawValue {
            return GPGError(
                kind: .corruptData, code: code,
                message: "gpg failed decrypting: the session key in the file does not decrypt with your "
                    + "secret key (\(String(cString: gpgme_strerror(status)))): the file was altered or damaged"
            )
        }
        if code == GPG_ERR_NO_SECKEY.rawValue || code == GPG_ERR_DECRYPT_FAILED.rawValue,
            let result = gpgme_op_decrypt_result(context.handle)
        {
            var keyIDs: [String] = []
            var allMissing = true
            var recipient = result.pointee.recipients
            while let current = recipient {
                keyIDs.append(current.pointee.keyid.map { String(cString: $0) } ?? "?")
                if coffer_gpgme_err_code(current.pointee.status) != GPG_ERR_NO_SECKEY.rawValue {
                    allMissing = false
                }
                recipient = current.pointee.next
            }
            if !keyIDs.isEmpty && allMissing {
                return GPGError(
                    kind: .noSecretKey, code: GPG_ERR_NO_SECKEY.rawValue,
                    message: "no secret key to decrypt: encrypted to \(keyIDs.joined(separator: ", "))")
            }
        }
        return GPGError(status, while: "decrypting")
    }
}

extension GPGError {
    /// Maps a gpg-error value to a kind and a message that says what to do.
    init(_ status: gpgme_error_t, while doing: String) {
        let code = coffer_gpgme_err_code(status)
        let description = String(cString: gpgme_strerror(status))
        let kind: Kind
        let advice: String
        switch code {
        case GPG_ERR_NO_SECKEY.rawValue:
            (kind, advice) = (.noSecretKey, "no secret key can decrypt this; is the right key imported?")
        case GPG_ERR_NO_PUBKEY.rawValue:
            (kind, advice) = (.noPublicKey, "no public key; import it with gpg --import")
        case GPG_ERR_NO_DATA.rawValue, GPG_ERR_BAD_DATA.rawValue, GPG_ERR_INV_PACKET.rawValue,
            GPG_ERR_DECRYPT_FAILED.rawValue, GPG_ERR_TRUNCATED.rawValue, GPG_ERR_INV_DATA.rawValue:
            (kind, advice) = (
                .corruptData, "the file is not a complete OpenPGP message (corrupt or truncated)"
            )
        case GPG_ERR_CANCELED.rawValue, GPG_ERR_FULLY_CANCELED.rawValue:
            (kind, advice) = (.cancelled, "cancelled at the passphrase prompt")
        case GPG_ERR_BAD_PASSPHRASE.rawValue:
            (kind, advice) = (.badPassphrase, "bad passphrase")
        case GPG_ERR_NO_AGENT.rawValue, GPG_ERR_NO_PIN_ENTRY.rawValue, GPG_ERR_PIN_ENTRY.rawValue,
            GPG_ERR_AGENT.rawValue, GPG_ERR_ASS_CONNECT_FAILED.rawValue:
            (kind, advice) = (
                .agentUnavailable, "gpg-agent or pinentry is not available; check gpg-agent and GPG_TTY"
            )
        case GPG_ERR_BAD_SIGNATURE.rawValue:
            (kind, advice) = (.badSignature, "bad signature")
        default:
            (kind, advice) = (.other, description)
        }
        let detail = advice == description ? "" : " (\(description))"
        self.init(kind: kind, code: code, message: "gpg failed \(doing): \(advice)\(detail)")
    }

    /// An error for a recipient gpg would not encrypt to.
    init(recipient: String, reason code: UInt32) {
        let kind: Kind
        let advice: String
        switch code {
        case GPG_ERR_NO_PUBKEY.rawValue:
            (kind, advice) = (.noPublicKey, "no public key; import it with gpg --import or fix the .gpg-id")
        case GPG_ERR_KEY_EXPIRED.rawValue:
            (kind, advice) = (.expiredKey, "the key has expired; extend it or fix the .gpg-id")
        case GPG_ERR_CERT_REVOKED.rawValue:
            (kind, advice) = (.revokedKey, "the key is revoked; remove it from the .gpg-id")
        case GPG_ERR_NOT_TRUSTED.rawValue, GPG_ERR_PUBKEY_NOT_TRUSTED.rawValue,
            GPG_ERR_UNUSABLE_PUBKEY.rawValue:
            (kind, advice) = (
                .untrustedKey,
                "the key is not trusted or cannot encrypt; sign it, set its trust, or use --trust-model always"
            )
        case GPG_ERR_WRONG_KEY_USAGE.rawValue:
            (kind, advice) = (.unusableKey, "the key has no usable encryption subkey")
        default:
            (kind, advice) = (.other, String(cString: gpgme_strerror(gpgme_error_t(code))))
        }
        self.init(
            kind: kind, code: code,
            message: "cannot encrypt to recipient \(Quoting.inQuotes(recipient)): \(advice)")
    }
}
