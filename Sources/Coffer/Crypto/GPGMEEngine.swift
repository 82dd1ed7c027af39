import CGPGME

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// GPGME must be initialised once per process before any context is made; a global `let` runs this
/// exactly once, thread-safely.
private let gpgmeInitialised: Bool = {
    // Without gpgconf, GPGME finds gpg by its built-in name instead of running gpgconf three times at
    // start-up; gpg itself still reads GNUPGHOME and gpg.conf.
    _ = gpgme_set_global_flag("disable-gpgconf", "1")
    _ = gpgme_check_version(nil)
    return true
}()

/// The ``CryptoEngine`` backed by GPGME and the user's `gpg` and `gpg-agent`.
///
/// Every operation makes its own GPGME context, so one engine may be used from many threads at once.
public struct GPGMEEngine: CryptoEngine {
    /// The options applied to every context.
    public let options: GPGOptions

    /// Creates an engine; `options` usually comes from `PASSWORD_STORE_GPG_OPTS`.
    public init(options: GPGOptions = GPGOptions()) {
        self.options = options
    }

    /// The version of the GPGME library in use.
    public static var libraryVersion: String {
        _ = gpgmeInitialised
        return String(cString: gpgme_check_version(nil))
    }

    // MARK: - CryptoEngine

    /// Encrypts to `recipients` as `gpg -e -r ... --compress-algo=none --no-encrypt-to` would.
    public func encrypt(_ plaintext: SecureBytes, to recipients: [String]) throws -> [UInt8] {
        guard !recipients.isEmpty else {
            throw GPGError(kind: .noPublicKey, code: 0, message: "no recipients to encrypt to")
        }
        let context = try Context(options: options)
        // "--" makes GPGME take every following line as a recipient, never as an option.
        let recipientList = (["--"] + recipients).joined(separator: "\n")
        var flags = GPGME_ENCRYPT_NO_ENCRYPT_TO.rawValue | GPGME_ENCRYPT_NO_COMPRESS.rawValue
        if options.alwaysTrust { flags |= GPGME_ENCRYPT_ALWAYS_TRUST.rawValue }
        return try plaintext.withUnsafeBytes { bytes in
            let input = try DataBuffer(borrowing: bytes)
            let output = try DataBuffer()
            let status = gpgme_op_encrypt_ext(
                context.handle, nil, recipientList, gpgme_encrypt_flags_t(flags), input.handle, output.handle)
            if status != 0 { throw encryptionError(status, context: context) }
            return output.takeBytes()
        }
    }

    /// Decrypts into wiped-on-free memory.
    ///
    /// A message of the usual shape (session keys for Curve25519 or RSA keys, AES with an integrity
    /// check, no compression) is decrypted without a gpg process: gpg-agent recovers the session key
    /// and libgcrypt does the rest. Anything else, and any failure of that path, goes through gpg.
    public func decrypt(_ ciphertext: [UInt8]) throws -> SecureBytes {
        if options.directDecryption,
            let plaintext = DirectDecryption.decrypt(ciphertext, homeDirectory: options.homeDirectory)
        {
            return plaintext
        }
        let context = try Context(options: options)
        return try ciphertext.withUnsafeBytes { bytes in
            let input = try DataBuffer(borrowing: bytes)
            let sink = SecureByteSink()
            let output = try DataBuffer(sink: sink)
            let status = gpgme_op_decrypt(context.handle, input.handle, output.handle)
            if status != 0 { throw decryptionError(status, context: context) }
            return sink.finish()
        }
    }

    /// An encryptor whose first encryption runs gpg, which checks the recipients and picks their
    /// subkeys; later ones are done in the process to exactly those subkeys (see the
    /// ``GPGOptions/directDecryption`` switch, which covers this too).
    public func encryptor(for recipients: [String]) -> any RepeatedEncryptor {
        guard options.directDecryption, !options.armor else {
            return OneByOneEncryptor(engine: self, recipients: recipients)
        }
        return GPGCheckedEncryptor(engine: self, recipients: recipients)
    }

    /// Signs `data` with `signer`, detached and binary.
    public func signDetached(_ data: [UInt8], signer: String) throws -> [UInt8] {
        let context = try Context(options: options)
        var key: gpgme_key_t?
        let lookup = gpgme_get_key(context.handle, signer, &key, 1)
        guard lookup == 0, let key else {
            throw GPGError(
                kind: .noSecretKey, code: coffer_gpgme_err_code(lookup),
                message: "no secret key \(signer) to sign with")
        }
        defer { gpgme_key_unref(key) }
        try check(gpgme_signers_add(context.handle, key), "cannot use \(signer) to sign")
        return try data.withUnsafeBytes { bytes in
            let input = try DataBuffer(borrowing: bytes)
            let output = try DataBuffer()
            let status = gpgme_op_sign(context.handle, input.handle, output.handle, GPGME_SIG_MODE_DETACH)
            if status != 0 { throw GPGError(status, while: "signing with \(signer)") }
            return output.takeBytes()
        }
    }

    /// Verifies a detached signature; a bad or unknown-key signature is reported as not valid.
    public func verifyDetached(signature: [UInt8], of data: [UInt8]) throws -> [SignatureCheck] {
        let context = try Context(options: options)
        let status: gpgme_error_t = try signature.withUnsafeBytes { signatureBytes in
            try data.withUnsafeBytes { dataBytes in
                let signatureData = try DataBuffer(borrowing: signatureBytes)
                let signedData = try DataBuffer(borrowing: dataBytes)
                return gpgme_op_verify(context.handle, signatureData.handle, signedData.handle, nil)
            }
        }
        if status != 0 {
            let code = coffer_gpgme_err_code(status)
            if code == GPG_ERR_NO_DATA.rawValue || code == GPG_ERR_BAD_DATA.rawValue { return [] }
            throw GPGError(status, while: "verifying a signature")
        }
        guard let result = gpgme_op_verify_result(context.handle) else { return [] }
        var checks: [SignatureCheck] = []
        var signature = result.pointee.signatures
        while let current = signature {
            let reported = current.pointee.fpr.map { String(cString: $0) } ?? ""
            var fingerprints = reported.isEmpty ? [] : [reported]
            var key: gpgme_key_t?
            if !reported.isEmpty, gpgme_get_key(context.handle, reported, &key, 0) == 0, let key {
                if let primary = key.pointee.fpr.map({ String(cString: $0) }), primary != reported {
                    fingerprints.append(primary)
                }
                gpgme_key_unref(key)
            }
            checks.append(
                SignatureCheck(fingerprints: fingerprints, isValid: current.pointee.status == 0))
            signature = current.pointee.next
        }
        return checks
    }

    /// Lists keys from the keyring.
    public func keys(matching patterns: [String], secretOnly: Bool) throws -> [KeyInfo] {
        let context = try Context(options: options)
        var keys: [KeyInfo] = []
        try withCStringArray(patterns) { array in
            try check(
                gpgme_op_keylist_ext_start(
                    context.handle, patterns.isEmpty ? nil : array, secretOnly ? 1 : 0, 0),
                "cannot list keys")
            while true {
                var key: gpgme_key_t?
                let status = gpgme_op_keylist_next(context.handle, &key)
                if coffer_gpgme_err_code(status) == GPG_ERR_EOF.rawValue { break }
                try check(status, "cannot list keys")
                guard let key else { break }
                keys.append(KeyInfo(key))
                gpgme_key_unref(key)
            }
        }
        return keys
    }

    /// The valid encryption subkeys of the recipients, after expanding gpg.conf groups, as pass computes them.
    public func encryptionKeyIDs(for recipients: [String]) throws -> Set<String> {
        let groups = GPGGroups.load(homeDirectory: options.homeDirectory)
        let expanded = recipients.flatMap { groups.members(of: $0) ?? [$0] }
        guard !expanded.isEmpty else { return [] }
        var ids = Set<String>()
        for key in try keys(matching: expanded, secretOnly: false) {
            for subkey in key.subkeys.dropFirst() where subkey.canEncrypt && !subkey.isUnusable {
                ids.insert(subkey.keyID)
            }
        }
        return ids
    }

    // MARK: - Errors

    private func check(_ status: gpgme_error_t, _ what: String) throws {
        if status != 0 { throw GPGError(status, while: what) }
    }

    private func encryptionError(_ status: gpgme_error_t, context: Context) -> GPGError {
        if let result = gpgme_op_encrypt_result(context.handle),
            let invalid = result.pointee.invalid_recipients
        {
            let name = invalid.pointee.fpr.map { String(cString: $0) } ?? "?"
            var reason = coffer_gpgme_err_code(invalid.pointee.reason)
            if reason == GPG_ERR_GENERAL.rawValue || reason == GPG_ERR_NO_ERROR.rawValue {
                // gpg often gives no reason ("INV_RECP 0"); the keyring tells what is wrong.
                reason = diagnose(recipient: name)
            }
            return GPGError(recipient: name, reason: reason)
        }
        return GPGError(status, while: "encrypting")
    }

    /// Why gpg would not encrypt to `recipient`, judged from the keyring.
    private func diagnose(recipient: String) -> UInt32 {
        let groups = GPGGroups.load(homeDirectory: options.homeDirectory)
        let patterns = groups.members(of: recipient) ?? [recipient]
        guard let keys = try? keys(matching: patterns, secretOnly: false), !keys.isEmpty else {
            return GPG_ERR_NO_PUBKEY.rawValue
        }
        if keys.allSatisfy(\.isRevoked) { return GPG_ERR_CERT_REVOKED.rawValue }
        if keys.allSatisfy(\.isExpired) { return GPG_ERR_KEY_EXPIRED.rawValue }
        let encryptable = keys.contains { key in key.subkeys.contains { $0.canEncrypt && !$0.isUnusable } }
        return encryptable ? GPG_ERR_NOT_TRUSTED.rawValue : GPG_ERR_WRONG_KEY_USAGE.rawValue
    }

    private func decryptionError(_ status: gpgme_error_t, context: Context) -> GPGError {
        let code = coffer_gpgme_err_code(status)
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
        self.init(kind: kind, code: code, message: "gpg failed \(doing): \(advice) (\(description))")
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
        case GPG_ERR_NOT_TRUSTED.rawValue, GPG_ERR_UNUSABLE_PUBKEY.rawValue:
            (kind, advice) = (
                .untrustedKey,
                "the key is not trusted or cannot encrypt; sign it, set its trust, or use --trust-model always"
            )
        case GPG_ERR_WRONG_KEY_USAGE.rawValue:
            (kind, advice) = (.unusableKey, "the key has no usable encryption subkey")
        default:
            (kind, advice) = (.other, String(cString: gpgme_strerror(gpgme_error_t(code))))
        }
        self.init(kind: kind, code: code, message: "cannot encrypt to recipient \"\(recipient)\": \(advice)")
    }
}

extension KeyInfo {
    fileprivate init(_ key: gpgme_key_t) {
        var userIDs: [String] = []
        var uid = key.pointee.uids
        while let current = uid {
            if let text = current.pointee.uid { userIDs.append(String(cString: text)) }
            uid = current.pointee.next
        }
        var subkeys: [Subkey] = []
        var subkey = key.pointee.subkeys
        while let current = subkey {
            let item = current.pointee
            subkeys.append(
                Subkey(
                    fingerprint: item.fpr.map { String(cString: $0) } ?? "",
                    keyID: item.keyid.map { String(cString: $0) } ?? "",
                    canEncrypt: item.can_encrypt != 0,
                    canSign: item.can_sign != 0,
                    isUnusable: item.expired != 0 || item.revoked != 0 || item.disabled != 0
                        || item.invalid != 0))
            subkey = item.next
        }
        self.init(
            fingerprint: key.pointee.fpr.map { String(cString: $0) } ?? "",
            userIDs: userIDs, subkeys: subkeys, hasSecret: key.pointee.secret != 0,
            isExpired: key.pointee.expired != 0, isRevoked: key.pointee.revoked != 0)
    }
}

// MARK: - GPGME handles

/// One GPGME context, released when the value goes away; never shared between threads.
private final class Context {
    let handle: gpgme_ctx_t

    init(options: GPGOptions) throws {
        _ = gpgmeInitialised
        var context: gpgme_ctx_t?
        let status = gpgme_new(&context)
        guard status == 0, let context else { throw GPGError(status, while: "starting GPGME") }
        handle = context
        gpgme_set_armor(handle, options.armor ? 1 : 0)
        if let home = options.homeDirectory {
            let status = gpgme_ctx_set_engine_info(handle, GPGME_PROTOCOL_OpenPGP, nil, home)
            if status != 0 { throw GPGError(status, while: "using --homedir \(home)") }
        }
    }

    deinit { gpgme_release(handle) }
}

/// A GPGME data object over borrowed memory, a GPGME-owned buffer, or a ``SecureByteSink``.
private final class DataBuffer {
    let handle: gpgme_data_t
    private var callbacks: UnsafeMutablePointer<gpgme_data_cbs>?
    private var sink: Unmanaged<SecureByteSink>?

    /// Reads from `bytes`, which must outlive this object.
    init(borrowing bytes: UnsafeRawBufferPointer) throws {
        var data: gpgme_data_t?
        let status: gpgme_error_t
        if let base = bytes.baseAddress, !bytes.isEmpty {
            status = gpgme_data_new_from_mem(&data, base.assumingMemoryBound(to: CChar.self), bytes.count, 0)
        } else {
            status = gpgme_data_new(&data)
        }
        guard status == 0, let data else { throw GPGError(status, while: "preparing data") }
        handle = data
    }

    /// An empty, growable buffer owned by GPGME (for ciphertext and signatures only).
    init() throws {
        var data: gpgme_data_t?
        let status = gpgme_data_new(&data)
        guard status == 0, let data else { throw GPGError(status, while: "preparing data") }
        handle = data
    }

    /// Writes into `sink`, which wipes what it gives up: used for plaintext.
    init(sink: SecureByteSink) throws {
        let callbacks = UnsafeMutablePointer<gpgme_data_cbs>.allocate(capacity: 1)
        callbacks.initialize(
            to: gpgme_data_cbs(
                read: nil,
                write: { handle, buffer, size in
                    guard let handle, let buffer else { return -1 }
                    Unmanaged<SecureByteSink>.fromOpaque(handle).takeUnretainedValue().append(
                        buffer, length: size)
                    return size
                },
                seek: nil, release: nil))
        let retained = Unmanaged.passRetained(sink)
        var data: gpgme_data_t?
        let status = gpgme_data_new_from_cbs(&data, callbacks, retained.toOpaque())
        guard status == 0, let data else {
            retained.release()
            callbacks.deallocate()
            throw GPGError(status, while: "preparing data")
        }
        handle = data
        self.callbacks = callbacks
        self.sink = retained
    }

    /// The bytes of a GPGME-owned buffer.
    func takeBytes() -> [UInt8] {
        var length = 0
        gpgme_data_seek(handle, 0, SEEK_SET)
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let read = chunk.withUnsafeMutableBytes { gpgme_data_read(handle, $0.baseAddress, $0.count) }
            if read <= 0 { break }
            result.append(contentsOf: chunk[0..<read])
            length += read
        }
        return result
    }

    deinit {
        gpgme_data_release(handle)
        sink?.release()
        callbacks?.deallocate()
    }
}

private func withCStringArray<Result>(
    _ strings: [String], _ body: (UnsafeMutablePointer<UnsafePointer<CChar>?>) throws -> Result
) rethrows -> Result {
    let duplicates = strings.map { strdup($0) }
    defer { duplicates.forEach { free($0) } }
    var pointers: [UnsafePointer<CChar>?] = duplicates.map { UnsafePointer($0) }
    pointers.append(nil)
    return try pointers.withUnsafeMutableBufferPointer { try body($0.baseAddress!) }
}

/// The ``RepeatedEncryptor`` of ``GPGMEEngine``: gpg encrypts until one of its messages shows
/// subkeys that ``DirectEncryption`` handles; from then on the encryption happens in the process.
final class GPGCheckedEncryptor: RepeatedEncryptor, @unchecked Sendable {
    private let engine: GPGMEEngine
    private let recipients: [String]
    private var mutex = pthread_mutex_t()
    /// `nil` until gpg has encrypted once; then the subkeys, or `[]` when they are not all usable here.
    private var keys: [KeyringKey]?

    init(engine: GPGMEEngine, recipients: [String]) {
        self.engine = engine
        self.recipients = recipients
        pthread_mutex_init(&mutex, nil)
    }

    deinit { pthread_mutex_destroy(&mutex) }

    /// Whether gpg's first message showed subkeys that the process can encrypt to.
    var encryptsInProcess: Bool {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return keys?.isEmpty == false
    }

    func encrypt(_ plaintext: SecureBytes) throws -> [UInt8] {
        pthread_mutex_lock(&mutex)
        let known = keys
        pthread_mutex_unlock(&mutex)
        if let known, !known.isEmpty, let message = DirectEncryption.encrypt(plaintext, to: known) {
            return message
        }
        let message = try engine.encrypt(plaintext, to: recipients)
        if known == nil {
            let found =
                DirectEncryption.recipients(of: message, homeDirectory: engine.options.homeDirectory) ?? []
            pthread_mutex_lock(&mutex)
            keys = found
            pthread_mutex_unlock(&mutex)
        }
        return message
    }
}
