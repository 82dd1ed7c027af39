import CGPGME

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension KeyInfo {
    init(_ key: gpgme_key_t) {
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
final class GPGMEContext {
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
final class GPGMEData {
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

func withCStringArray<Result>(
    _ strings: [String], _ body: (UnsafeMutablePointer<UnsafePointer<CChar>?>) throws -> Result
) rethrows -> Result {
    let duplicates = strings.map { strdup($0) }
    defer { duplicates.forEach { free($0) } }
    var pointers: [UnsafePointer<CChar>?] = duplicates.map { UnsafePointer($0) }
    pointers.append(nil)
    return try pointers.withUnsafeMutableBufferPointer { try body($0.baseAddress!) }
}
