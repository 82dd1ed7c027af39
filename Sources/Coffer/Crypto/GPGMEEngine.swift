import CGPGME

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// GPGME must be initialised once per process before any context is made; a global `let` runs this
/// exactly once, thread-safely.
let gpgmeInitialised: Bool = {
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
        let context = try GPGMEContext(options: options)
        let status = context.recordStatus()
        // "--" makes GPGME take every following line as a recipient, never as an option.
        let recipientList = (["--"] + recipients).joined(separator: "\n")
        var flags = GPGME_ENCRYPT_NO_ENCRYPT_TO.rawValue | GPGME_ENCRYPT_NO_COMPRESS.rawValue
        if options.alwaysTrust { flags |= GPGME_ENCRYPT_ALWAYS_TRUST.rawValue }
        let message = try plaintext.withUnsafeBytes { bytes in
            let input = try GPGMEData(borrowing: bytes)
            let output = try GPGMEData()
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
        let context = try GPGMEContext(options: options)
        let status = context.recordStatus()
        return try ciphertext.withUnsafeBytes { bytes in
            let input = try GPGMEData(borrowing: bytes)
            let sink = SecureByteSink()
            let output = try GPGMEData(sink: sink)
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
        let context = try GPGMEContext(options: options)
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
            let input = try GPGMEData(borrowing: bytes)
            let output = try GPGMEData()
            let status = gpgme_op_sign(context.handle, input.handle, output.handle, GPGME_SIG_MODE_DETACH)
            if status != 0 { throw GPGError(status, while: "signing with \(signer)") }
            return output.takeBytes()
        }
    }

    /// Verifies a detached signature; a bad or unknown-key signature is reported as not valid.
    public func verifyDetached(signature: [UInt8], of data: [UInt8]) throws -> [SignatureCheck] {
        let context = try GPGMEContext(options: options)
        let status: gpgme_error_t = try signature.withUnsafeBytes { signatureBytes in
            try data.withUnsafeBytes { dataBytes in
                let signatureData = try GPGMEData(borrowing: signatureBytes)
                let signedData = try GPGMEData(borrowing: dataBytes)
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
        let context = try GPGMEContext(options: options)
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
