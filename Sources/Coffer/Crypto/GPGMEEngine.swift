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
    ///
    /// gpg makes the message, unless its last message to the same recipients left a plan that still
    /// holds (see ``GPGOptions/directDecryption``, which covers this too): then the message goes to the
    /// same subkeys with the same cipher, encrypted in the process, and no gpg starts.
    public func encrypt(_ plaintext: SecureBytes, to recipients: [String]) throws -> [UInt8] {
        let planned = options.directDecryption && !options.armor && !recipients.isEmpty
        let outcome =
            planned ? EncryptionPlans.encrypt(plaintext, to: recipients, options: options) : .gpgOnly
        if case .message(let message) = outcome { return message }
        var before: String?
        // A plan, an empty one too, is made only after this check passed on the keyring as it is now.
        if !planned || outcome.isUnplanned { try checkUnambiguous(recipients) }
        if case .unplanned = outcome {
            before = EncryptionPlans.plannedHome(options).map { EncryptionPlans.stamps(home: $0.path) }
        }
        let (message, choice) = try encryptReportingChoice(plaintext, to: recipients)
        if let before {
            EncryptionPlans.remember(
                message, choice: choice, recipients: recipients, engine: self, before: before)
        }
        return message
    }

    /// Encrypts as ``encrypt(_:to:)`` and returns what gpg said it chose for the message (its
    /// `BEGIN_ENCRYPTION` status), or `nil` when gpg did not say.
    func encryptReportingChoice(_ plaintext: SecureBytes, to recipients: [String]) throws -> (
        message: [UInt8], choice: EncryptionChoice?
    ) {
        guard !recipients.isEmpty else {
            throw GPGError(kind: .noPublicKey, code: 0, message: "no recipients to encrypt to")
        }
        let context = try Context(options: options)
        let status = context.recordStatus()
        // "--" makes GPGME take every following line as a recipient, never as an option.
        let recipientList = (["--"] + recipients).joined(separator: "\n")
        var flags = GPGME_ENCRYPT_NO_ENCRYPT_TO.rawValue | GPGME_ENCRYPT_NO_COMPRESS.rawValue
        if options.alwaysTrust { flags |= GPGME_ENCRYPT_ALWAYS_TRUST.rawValue }
        let message = try plaintext.withUnsafeBytes { bytes in
            let input = try DataBuffer(borrowing: bytes)
            let output = try DataBuffer()
            let result = gpgme_op_encrypt_ext(
                context.handle, nil, recipientList, gpgme_encrypt_flags_t(flags), input.handle, output.handle)
            if result != 0 { throw encryptionError(result, context: context) }
            return output.takeBytes()
        }
        return (message, status.fields(of: "BEGIN_ENCRYPTION").flatMap(EncryptionChoice.init(statusFields:)))
    }

    /// Refuses a recipient that names more than one key gpg could encrypt to (a user id that another
    /// key carries too, a short key id two keys share): gpg would pick one of them by itself. Full
    /// fingerprints are not looked up; a gpg.conf group's members are checked one by one.
    package func checkUnambiguous(_ recipients: [String]) throws {
        let groups = GPGGroups.load(homeDirectory: options.homeDirectory)
        let now = Int(time(nil))
        for recipient in recipients {
            for pattern in groups.members(of: recipient) ?? [recipient] where !Self.isFingerprint(pattern) {
                let usable = try keys(matching: [pattern], secretOnly: false).filter {
                    $0.encryptionSubkey(now: now) != nil
                }
                guard usable.count > 1 else { continue }
                let named = usable.map { key in
                    key.fingerprint + (key.userIDs.first.map { " " + Quoting.inQuotes($0) } ?? "")
                }
                throw GPGError(
                    kind: .ambiguousRecipient, code: 0,
                    message: "the recipient \(Quoting.quoted(pattern)) matches \(usable.count) keys ("
                        + named.joined(separator: ", ") + "); name one by its fingerprint in the .gpg-id")
            }
        }
    }

    /// Whether a recipient is a full fingerprint (40 hex digits, maybe with `0x` before or `!` after),
    /// which names one key or subkey.
    static func isFingerprint(_ recipient: String) -> Bool {
        var text = Substring(recipient)
        if text.hasPrefix("0x") || text.hasPrefix("0X") { text = text.dropFirst(2) }
        if text.hasSuffix("!") { text = text.dropLast() }
        return text.utf8.count == 40
            && text.utf8.allSatisfy { byte in
                (48...57).contains(byte) || (65...70).contains(byte) || (97...102).contains(byte)
            }
    }

    /// The primary keys holding each key id, read from the keyring in the process when it can be (the
    /// key blocks of `pubring.kbx`), else from gpg's listing.
    public func primaryFingerprints(ofKeyIDs keyIDs: Set<String>) throws -> [String: Set<String>] {
        var found: [String: Set<String>] = [:]
        var unknown: [String] = []
        let home = GPGOptions.gnupgHome(options.homeDirectory)?.path
        for keyID in keyIDs {
            if let home, let value = UInt64(keyID, radix: 16),
                let primaries = KeyringIndex.shared.primaryFingerprints(ofKeyWithID: value, home: home),
                !primaries.isEmpty
            {
                found[keyID] = Set(primaries.map(Hex.upper))
            } else {
                unknown.append(keyID)
            }
        }
        for keyID in unknown {
            found[keyID] = Set(try keys(matching: ["0x" + keyID], secretOnly: false).map(\.fingerprint))
        }
        return found
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
        let status = context.recordStatus()
        return try ciphertext.withUnsafeBytes { bytes in
            let input = try DataBuffer(borrowing: bytes)
            let sink = SecureByteSink()
            let output = try DataBuffer(sink: sink)
            let result = gpgme_op_decrypt(context.handle, input.handle, output.handle)
            // What gpg wrote before it found a fault goes with the sink, wiped, and is never returned.
            if result != 0 { throw decryptionError(result, context: context, status: status) }
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

    /// The encryption subkeys gpg picks for the recipients, after expanding gpg.conf groups: for each
    /// key the newest valid encryption subkey (as `KeyInfo.encryptionSubkey(now:)` chooses), and for a
    /// recipient written `ID!` exactly that subkey.
    public func encryptionKeyIDs(for recipients: [String]) throws -> Set<String> {
        let groups = GPGGroups.load(homeDirectory: options.homeDirectory)
        let expanded = recipients.flatMap { groups.members(of: $0) ?? [$0] }
        let now = Int(time(nil))
        var ids = Set<String>()
        let chosen = expanded.filter { !$0.hasSuffix("!") }
        if !chosen.isEmpty {
            for key in try keys(matching: chosen, secretOnly: false) {
                if let subkey = key.encryptionSubkey(now: now) { ids.insert(subkey.keyID) }
            }
        }
        let exact = expanded.filter { $0.hasSuffix("!") }.map { KeyInfo.hexID($0.dropLast()) }
        if !exact.isEmpty {
            for key in try keys(matching: exact, secretOnly: false) where key.isUsable {
                for subkey in key.subkeys
                where subkey.canEncrypt && !subkey.isUnusable
                    && exact.contains(where: subkey.fingerprint.hasSuffix)
                {
                    ids.insert(subkey.keyID)
                }
            }
        }
        return ids
    }

    /// One error for each recipient gpg could not encrypt to, saying why: no public key, a revoked or
    /// expired key, no encryption subkey, or only expired or revoked ones. Trust is not judged.
    public func recipientProblems(_ recipients: [String]) throws -> [GPGError] {
        let groups = GPGGroups.load(homeDirectory: options.homeDirectory)
        let now = Int(time(nil))
        var problems: [GPGError] = []
        for recipient in recipients {
            let patterns = groups.members(of: recipient) ?? [recipient]
            let keys = patterns.isEmpty ? [] : try keys(matching: patterns, secretOnly: false)
            guard !keys.isEmpty else {
                problems.append(GPGError(recipient: recipient, reason: GPG_ERR_NO_PUBKEY.rawValue))
                continue
            }
            // gpg uses a key that can encrypt when the name matches several.
            let found = keys.map { $0.encryptionProblem(now: now) }
            guard !found.contains(where: { $0 == nil }), let problem = found.first ?? nil else { continue }
            problems.append(
                GPGError(
                    kind: problem.kind, code: problem.code,
                    message: "cannot encrypt to recipient \(Quoting.inQuotes(recipient)): \(problem.reason)"))
        }
        return problems
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

    private func decryptionError(_ status: gpgme_error_t, context: Context, status log: StatusLog) -> GPGError
    {
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
                        || item.invalid != 0,
                    isExpired: item.expired != 0, isRevoked: item.revoked != 0,
                    creationTime: max(Int(item.timestamp), 0), expirationTime: max(Int(item.expires), 0)))
            subkey = item.next
        }
        self.init(
            fingerprint: key.pointee.fpr.map { String(cString: $0) } ?? "",
            userIDs: userIDs, subkeys: subkeys, hasSecret: key.pointee.secret != 0,
            isExpired: key.pointee.expired != 0, isRevoked: key.pointee.revoked != 0)
        isUltimatelyTrusted = key.pointee.owner_trust == GPGME_VALIDITY_ULTIMATE
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

    /// Keeps gpg's status lines from now on (GPGME's `full-status`).
    func recordStatus() -> StatusLog {
        let log = StatusLog()
        statusLog = log
        _ = gpgme_set_ctx_flag(handle, "full-status", "1")
        gpgme_set_status_cb(handle, statusCallback, Unmanaged.passUnretained(log).toOpaque())
        return log
    }

    /// The log the status callback writes to; kept alive as long as the context.
    private var statusLog: StatusLog?

    deinit { gpgme_release(handle) }
}

/// GPGME's status callback: hands each line to the ``StatusLog`` it was given.
private let statusCallback: gpgme_status_cb_t = { opaque, keyword, arguments in
    guard let opaque, let keyword else { return 0 }
    Unmanaged<StatusLog>.fromOpaque(opaque).takeUnretainedValue().record(
        keyword: String(cString: keyword), arguments: arguments.map { String(cString: $0) } ?? "")
    return 0
}

/// The status lines of one gpg run that GPGME's results leave out: the cipher gpg chose when
/// encrypting, and why a decryption failed. Only the lines named in ``kept`` are stored.
final class StatusLog {
    /// The keywords kept.
    static let kept: Set<String> = ["BEGIN_ENCRYPTION", "DECRYPTION_INFO", "BADMDC"]
    private var lines: [(keyword: String, fields: [String])] = []

    /// Stores a line when its keyword is one of ``kept``.
    func record(keyword: String, arguments: String) {
        guard Self.kept.contains(keyword) else { return }
        lines.append((keyword, arguments.split(separator: " ").map(String.init)))
    }

    /// The fields of the first line with `keyword`.
    func fields(of keyword: String) -> [String]? {
        lines.first { $0.keyword == keyword }?.fields
    }

    /// Whether a line with `keyword` came.
    func contains(_ keyword: String) -> Bool { fields(of: keyword) != nil }
}

/// What gpg said it chose for a message it encrypted: `BEGIN_ENCRYPTION <mdc_method> <sym_algo>
/// [<aead_algo>]` (GnuPG's `doc/DETAILS`).
struct EncryptionChoice: Sendable, Equatable {
    /// 2 for SHA-1 MDC (SEIPD version 1), 0 for none (AEAD, or no integrity protection at all).
    let mdcMethod: Int
    /// The OpenPGP symmetric cipher id.
    let cipher: Int
    /// The AEAD mode id (GnuPG 2.3 and later), 0 for none.
    let aead: Int

    /// Reads the status line's fields; `nil` when they are not numbers.
    init?(statusFields fields: [String]) {
        guard fields.count >= 2, let mdc = Int(fields[0]), let cipher = Int(fields[1]) else { return nil }
        let aead = fields.count > 2 ? Int(fields[2]) : 0
        guard let aead else { return nil }
        (mdcMethod, self.cipher, self.aead) = (mdc, cipher, aead)
    }

    /// The AES cipher to encrypt with in the process when this is exactly what
    /// ``DirectEncryption`` writes (SEIPD version 1 with MDC, AES, no AEAD); `nil` otherwise.
    var inProcessCipher: UInt8? {
        guard mdcMethod == 2, aead == 0, (7...9).contains(cipher) else { return nil }
        return UInt8(cipher)
    }
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
/// subkeys that ``DirectEncryption`` handles, with a cipher and packet kind it writes the same way;
/// from then on the encryption happens in the process, to those subkeys with that cipher.
final class GPGCheckedEncryptor: RepeatedEncryptor, Sendable {
    /// What gpg's first message showed: the subkeys and the cipher, or no keys when the process
    /// cannot encrypt the same way.
    private struct Plan {
        let keys: [KeyringKey]
        let cipher: UInt8
    }

    private let engine: GPGMEEngine
    private let recipients: [String]
    /// `nil` until gpg has encrypted once.
    private let plan = Locked<Plan?>(nil)

    init(engine: GPGMEEngine, recipients: [String]) {
        self.engine = engine
        self.recipients = recipients
    }

    /// Whether gpg's first message showed subkeys and a cipher that the process can encrypt with.
    var encryptsInProcess: Bool {
        plan.withLock { $0?.keys.isEmpty == false }
    }

    func encrypt(_ plaintext: SecureBytes) throws -> [UInt8] {
        let known = plan.withLock { $0 }
        if let known, !known.keys.isEmpty,
            let message = DirectEncryption.encrypt(plaintext, to: known.keys, cipher: known.cipher)
        {
            return message
        }
        if known == nil { try engine.checkUnambiguous(recipients) }
        let (message, choice) = try engine.encryptReportingChoice(plaintext, to: recipients)
        if known == nil {
            var found = Plan(keys: [], cipher: 0)
            if let cipher = choice?.inProcessCipher,
                let keys = DirectEncryption.recipients(
                    of: message, homeDirectory: engine.options.homeDirectory)
            {
                found = Plan(keys: keys, cipher: cipher)
            }
            plan.withLock { $0 = found }
        }
        return message
    }
}

// MARK: - Managing keys

extension GPGMEEngine {
    /// Makes a new key for `userID` (`Name <email>`): an ed25519 primary key for signing and certifying,
    /// with a cv25519 subkey for encryption, neither expiring. Without `passphrase` gpg-agent asks for one
    /// through pinentry; with `passphrase: false` the key has none. Returns the primary key's fingerprint.
    package func generateKey(userID: String, passphrase: Bool) throws -> String {
        let context = try Context(options: options)
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
        let context = try Context(options: options)
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
        let context = try Context(options: options)
        gpgme_set_armor(context.handle, 1)
        let output = try DataBuffer()
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
        let context = try Context(options: options)
        return try keys.withUnsafeBytes { bytes in
            let input = try DataBuffer(borrowing: bytes)
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
        let context = try Context(options: options)
        return try keys.withUnsafeBytes { bytes in
            let input = try DataBuffer(borrowing: bytes)
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
