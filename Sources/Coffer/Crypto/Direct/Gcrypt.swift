import CGcrypt

/// libgcrypt is set up once per process, on first use.
private let gcryptUsable: Bool = coffer_gcrypt_initialise() == 0

/// The few libgcrypt primitives the direct decryption needs (hashes, AES in OpenPGP's CFB mode,
/// AES key unwrap, keygrips); every function fails soft, with `nil` or `false`.
enum Gcrypt {
    /// Whether libgcrypt could be initialised.
    static var isUsable: Bool { gcryptUsable }

    /// SHA-1 of public data (fingerprints, socket folder names).
    static func sha1(_ data: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 20)
        data.withUnsafeBytes { input in
            digest.withUnsafeMutableBytes { output in
                gcry_md_hash_buffer(
                    Int32(GCRY_MD_SHA1.rawValue), output.baseAddress, input.baseAddress, input.count)
            }
        }
        return digest
    }

    /// The hash of the concatenated `parts` with the OpenPGP hash algorithm `openPGPHash` (SHA-1,
    /// SHA-256, SHA-384 or SHA-512) into a wiped buffer, or `nil` for another algorithm.
    static func digest(openPGPHash: UInt8, _ parts: [UnsafeRawBufferPointer]) -> WipedBuffer? {
        let algorithm: gcry_md_algos
        switch openPGPHash {
        case 2: algorithm = GCRY_MD_SHA1
        case 8: algorithm = GCRY_MD_SHA256
        case 9: algorithm = GCRY_MD_SHA384
        case 10: algorithm = GCRY_MD_SHA512
        default: return nil
        }
        guard isUsable else { return nil }
        var handle: gcry_md_hd_t?
        // The inputs are secrets (a shared point, plaintext): the context lives in secure memory.
        guard gcry_md_open(&handle, Int32(algorithm.rawValue), UInt32(GCRY_MD_FLAG_SECURE.rawValue)) == 0,
            let handle
        else { return nil }
        defer { gcry_md_close(handle) }
        for part in parts where !part.isEmpty { gcry_md_write(handle, part.baseAddress, part.count) }
        let length = Int(gcry_md_get_algo_dlen(Int32(algorithm.rawValue)))
        guard let result = gcry_md_read(handle, Int32(algorithm.rawValue)) else { return nil }
        let output = WipedBuffer(capacity: length)
        output.append(UnsafeRawBufferPointer(start: result, count: length))
        return output
    }

    /// HMAC (RFC 2104) of `message` keyed with `key`, computed in libgcrypt's secure memory; `nil` when
    /// libgcrypt is not usable.
    static func hmac(_ algorithm: OneTimePassword.Algorithm, key: UnsafeRawBufferPointer, message: [UInt8])
        -> SecureBytes?
    {
        let hash: gcry_md_algos
        switch algorithm {
        case .sha1: hash = GCRY_MD_SHA1
        case .sha256: hash = GCRY_MD_SHA256
        case .sha512: hash = GCRY_MD_SHA512
        }
        guard isUsable else { return nil }
        var handle: gcry_md_hd_t?
        let flags = UInt32(GCRY_MD_FLAG_SECURE.rawValue | GCRY_MD_FLAG_HMAC.rawValue)
        guard gcry_md_open(&handle, Int32(hash.rawValue), flags) == 0, let handle else { return nil }
        defer { gcry_md_close(handle) }
        // HMAC pads the key with zeros to the block size, so an empty key is the same as one zero byte
        // (which libgcrypt accepts where it may refuse an empty one).
        let zero: [UInt8] = [0]
        let status =
            key.isEmpty
            ? zero.withUnsafeBytes { gcry_md_setkey(handle, $0.baseAddress, 1) }
            : gcry_md_setkey(handle, key.baseAddress, key.count)
        guard status == 0 else { return nil }
        message.withUnsafeBytes { gcry_md_write(handle, $0.baseAddress, $0.count) }
        let length = Int(gcry_md_get_algo_dlen(Int32(hash.rawValue)))
        guard let result = gcry_md_read(handle, Int32(hash.rawValue)) else { return nil }
        return SecureBytes(UnsafeRawBufferPointer(start: result, count: length))
    }

    /// The libgcrypt cipher for an OpenPGP symmetric algorithm id (AES-128, -192, -256), or `nil`.
    static func aes(openPGPCipher: UInt8) -> (algorithm: Int32, keyLength: Int)? {
        switch openPGPCipher {
        case 7: return (Int32(GCRY_CIPHER_AES.rawValue), 16)
        case 8: return (Int32(GCRY_CIPHER_AES192.rawValue), 24)
        case 9: return (Int32(GCRY_CIPHER_AES256.rawValue), 32)
        default: return nil
        }
    }

    /// Runs `input` through AES with `key` in `mode` (CFB with a zero IV, or key wrap), writing
    /// `output.count` bytes; `encrypting` chooses the direction.
    static func crypt(
        encrypting: Bool = false, openPGPCipher: UInt8, mode: gcry_cipher_modes, key: UnsafeRawBufferPointer,
        input: UnsafeRawBufferPointer, output: UnsafeMutableRawBufferPointer
    ) -> Bool {
        guard isUsable, let cipher = aes(openPGPCipher: openPGPCipher), key.count == cipher.keyLength else {
            return false
        }
        var handle: gcry_cipher_hd_t?
        // The key schedule lives in secure memory; closing wipes it.
        let flags = UInt32(GCRY_CIPHER_SECURE.rawValue)
        guard gcry_cipher_open(&handle, cipher.algorithm, Int32(mode.rawValue), flags) == 0, let handle else {
            return false
        }
        defer { gcry_cipher_close(handle) }
        guard gcry_cipher_setkey(handle, key.baseAddress, key.count) == 0 else { return false }
        if mode == GCRY_CIPHER_MODE_CFB {
            let zeros = [UInt8](repeating: 0, count: 16)
            guard gcry_cipher_setiv(handle, zeros, zeros.count) == 0 else { return false }
        }
        if encrypting {
            return gcry_cipher_encrypt(
                handle, output.baseAddress, output.count, input.baseAddress, input.count) == 0
        }
        return gcry_cipher_decrypt(handle, output.baseAddress, output.count, input.baseAddress, input.count)
            == 0
    }

    /// Fills `buffer` with random bytes from libgcrypt's strong generator, as gpg does for session
    /// keys, ephemeral keys and the random prefix of encrypted data alike.
    static func randomize(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, !buffer.isEmpty else { return }
        gcry_randomize(base, buffer.count, GCRY_STRONG_RANDOM)
    }

    /// X25519 (RFC 7748): `scalar` times `point` (both 32 bytes, little-endian) into `result`.
    static func x25519(
        scalar: UnsafeRawBufferPointer, point: UnsafeRawBufferPointer, result: UnsafeMutableRawBufferPointer
    ) -> Bool {
        guard isUsable, scalar.count == 32, point.count == 32, result.count == 32 else { return false }
        return gcry_ecc_mul_point(
            Int32(GCRY_ECC_CURVE25519.rawValue), result.baseAddress!.assumingMemoryBound(to: UInt8.self),
            scalar.baseAddress!.assumingMemoryBound(to: UInt8.self),
            point.baseAddress!.assumingMemoryBound(to: UInt8.self)) == 0
    }

    /// RSA encryption with PKCS #1 v1.5 padding of `message` for the key `publicKey` (a canonical
    /// S-expression); returns the ciphertext integer's bytes without leading zeros.
    static func rsaEncrypt(message: UnsafeRawBufferPointer, publicKey: [UInt8]) -> [UInt8]? {
        guard let dataExpression = secretDataExpression(message) else { return nil }
        var keyExpression: gcry_sexp_t?
        defer {
            gcry_sexp_release(dataExpression)
            gcry_sexp_release(keyExpression)
        }
        guard publicKey.withUnsafeBytes({ gcry_sexp_new(&keyExpression, $0.baseAddress, $0.count, 0) }) == 0
        else { return nil }
        var result: gcry_sexp_t?
        guard gcry_pk_encrypt(&result, dataExpression, keyExpression) == 0, let result else { return nil }
        defer { gcry_sexp_release(result) }
        guard let token = gcry_sexp_find_token(result, "a", 1) else { return nil }
        defer { gcry_sexp_release(token) }
        var length = 0
        guard let value = gcry_sexp_nth_data(token, 1, &length), length > 0 else { return nil }
        let bytes = UnsafeRawBufferPointer(start: value, count: length)
        return Array(bytes.drop(while: { $0 == 0 }))
    }

    /// The S-expression `(data (flags pkcs1) (value MESSAGE))` for RSA encryption, built from a
    /// buffer in libgcrypt's secure memory so that libgcrypt keeps it (and the padded frame it makes
    /// from it) there too; the caller releases it. `nil` when secure memory is not available.
    static func secretDataExpression(_ message: UnsafeRawBufferPointer) -> gcry_sexp_t? {
        guard isUsable else { return nil }
        let head = Array("(4:data(5:flags5:pkcs1)(5:value\(message.count):".utf8)
        let length = head.count + message.count + 2
        guard let buffer = gcry_malloc_secure(length) else { return nil }
        defer {
            wipeMemory(buffer, count: length)
            gcry_free(buffer)
        }
        head.withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress!, byteCount: head.count) }
        if let source = message.baseAddress, !message.isEmpty {
            (buffer + head.count).copyMemory(from: source, byteCount: message.count)
        }
        (buffer + head.count + message.count).storeBytes(of: UInt8(ascii: ")"), as: UInt8.self)
        (buffer + head.count + message.count + 1).storeBytes(of: UInt8(ascii: ")"), as: UInt8.self)
        var expression: gcry_sexp_t?
        guard gcry_sexp_new(&expression, buffer, length, 0) == 0 else { return nil }
        return expression
    }

    /// Whether `pointer` is in libgcrypt's secure memory.
    static func isSecure(_ pointer: UnsafeRawPointer) -> Bool {
        gcry_is_secure(pointer) != 0
    }

    /// The 20-byte keygrip of a public key given as a canonical S-expression, as gpg-agent names it.
    static func keygrip(canonicalKey: [UInt8]) -> [UInt8]? {
        guard isUsable else { return nil }
        var key: gcry_sexp_t?
        let status = canonicalKey.withUnsafeBytes { gcry_sexp_new(&key, $0.baseAddress, $0.count, 0) }
        guard status == 0, let key else { return nil }
        defer { gcry_sexp_release(key) }
        var grip = [UInt8](repeating: 0, count: 20)
        let done = grip.withUnsafeMutableBytes {
            gcry_pk_get_keygrip(key, $0.baseAddress!.assumingMemoryBound(to: UInt8.self)) != nil
        }
        return done ? grip : nil
    }
}
