import CGcrypt
import Coffer

/// The `dh-ietf1024-sha256-aes128-cbc-pkcs7` session of the Secret Service specification, with libgcrypt:
/// a Diffie-Hellman exchange in the 1024-bit MODP group of RFC 2409 (generator 2), the shared secret
/// (left-padded to 128 bytes) through HKDF-SHA256 with an empty salt and info to a 16-byte AES key, and
/// secrets sent as AES-128-CBC with PKCS#7 padding and a fresh 16-byte IV as the parameters.
package final class SessionCipher {
    /// The algorithm's name in `OpenSession`.
    package static let algorithm = "dh-ietf1024-sha256-aes128-cbc-pkcs7"

    /// RFC 2409's second Oakley group (section 6.2), big-endian hexadecimal.
    private static let primeHex =
        "FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A08798E3404DD"
        + "EF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7ED"
        + "EE386BFB5A899FA5AE9F24117C4B1FE649286651ECE65381FFFFFFFFFFFFFFFF"

    /// The AES key.
    private let key: SecureBytes

    private init(key: SecureBytes) {
        self.key = key
    }

    /// Answers a client's public key: the session's cipher and the provider's public key to send back.
    package static func negotiate(clientPublicKey: SecureBytes) throws -> (SessionCipher, SecureBytes) {
        guard coffer_gcrypt_initialise() == 0 else { throw BusError.failed("libgcrypt is not usable") }
        let prime = try mpi(hex: primeHex)
        defer { gcry_mpi_release(prime) }
        let client = try clientPublicKey.withUnsafeBytes { try mpi(bytes: $0) }
        defer { gcry_mpi_release(client) }
        // 1 < client < p - 1, so that the shared secret is not a trivial value.
        let limit = try newMPI()
        defer { gcry_mpi_release(limit) }
        gcry_mpi_sub_ui(limit, prime, 1)
        guard clientPublicKey.count <= 128, gcry_mpi_cmp_ui(client, 1) > 0, gcry_mpi_cmp(client, limit) < 0
        else {
            throw BusError.invalidArguments("the client's public key is not a valid group element")
        }
        var random = [UInt8](repeating: 0, count: 128)
        defer { wipeMemory(&random, count: random.count) }
        random.withUnsafeMutableBytes { gcry_randomize($0.baseAddress, $0.count, GCRY_STRONG_RANDOM) }
        let exponent = try random.withUnsafeBytes { try mpi(bytes: $0, secure: true) }
        defer { gcry_mpi_release(exponent) }
        let generator = try newMPI()
        gcry_mpi_set_ui(generator, 2)
        defer { gcry_mpi_release(generator) }
        let ours = try newMPI()
        defer { gcry_mpi_release(ours) }
        gcry_mpi_powm(ours, generator, exponent, prime)
        let shared = try newMPI(secure: true)
        defer { gcry_mpi_release(shared) }
        gcry_mpi_powm(shared, client, exponent, prime)
        let sharedBytes = try bytes(of: shared, length: 128)
        let key = try hkdf(sharedBytes, length: 16)
        return (SessionCipher(key: key), try bytes(of: ours, length: 128))
    }

    /// `secret` encrypted for the client: the IV (the Secret structure's parameters) and the ciphertext.
    package func encrypt(_ secret: SecureBytes) throws -> (parameters: SecureBytes, value: SecureBytes) {
        var iv = [UInt8](repeating: 0, count: 16)
        iv.withUnsafeMutableBytes { gcry_randomize($0.baseAddress, $0.count, GCRY_STRONG_RANDOM) }
        let padding = 16 - secret.count % 16
        var buffer = [UInt8](repeating: UInt8(padding), count: secret.count + padding)
        defer { wipeMemory(&buffer, count: buffer.count) }
        secret.withUnsafeBytes { source in
            buffer.withUnsafeMutableBytes { target in
                if let base = source.baseAddress {
                    target.baseAddress!.copyMemory(from: base, byteCount: source.count)
                }
            }
        }
        try crypt(&buffer, iv: iv, encrypting: true)
        return (SecureBytes(iv), SecureBytes(buffer))
    }

    /// The secret a client sent encrypted with `parameters` (the IV).
    package func decrypt(parameters: SecureBytes, value: SecureBytes) throws -> SecureBytes {
        guard parameters.count == 16, value.count > 0, value.count % 16 == 0 else {
            throw BusError.invalidArguments("an encrypted secret needs a 16-byte IV and whole AES blocks")
        }
        var buffer = value.bytes
        defer { wipeMemory(&buffer, count: buffer.count) }
        try crypt(&buffer, iv: parameters.bytes, encrypting: false)
        let padding = Int(buffer[buffer.count - 1])
        guard (1...16).contains(padding), buffer.suffix(padding).allSatisfy({ Int($0) == padding }) else {
            throw BusError.invalidArguments("the secret does not decrypt with this session's key")
        }
        return SecureBytes(buffer[..<(buffer.count - padding)])
    }

    /// AES-128-CBC in place.
    private func crypt(_ buffer: inout [UInt8], iv: [UInt8], encrypting: Bool) throws {
        var handle: gcry_cipher_hd_t?
        guard
            gcry_cipher_open(
                &handle, Int32(GCRY_CIPHER_AES.rawValue), Int32(GCRY_CIPHER_MODE_CBC.rawValue),
                UInt32(GCRY_CIPHER_SECURE.rawValue)) == 0, let handle
        else { throw BusError.failed("libgcrypt cannot open AES-128-CBC") }
        defer { gcry_cipher_close(handle) }
        let status = key.withUnsafeBytes { key in
            iv.withUnsafeBytes { iv in
                buffer.withUnsafeMutableBytes { data -> gcry_error_t in
                    if gcry_cipher_setkey(handle, key.baseAddress, key.count) != 0 { return 1 }
                    if gcry_cipher_setiv(handle, iv.baseAddress, iv.count) != 0 { return 1 }
                    return encrypting
                        ? gcry_cipher_encrypt(handle, data.baseAddress, data.count, nil, 0)
                        : gcry_cipher_decrypt(handle, data.baseAddress, data.count, nil, 0)
                }
            }
        }
        guard status == 0 else { throw BusError.failed("AES-128-CBC failed") }
    }

    /// HKDF-SHA256 (RFC 5869) with an empty salt and info: the first `length` bytes of T(1).
    private static func hkdf(_ input: SecureBytes, length: Int) throws -> SecureBytes {
        let salt = [UInt8](repeating: 0, count: 32)
        let pseudoRandomKey = try salt.withUnsafeBytes { salt in
            try input.withUnsafeBytes { try hmac(key: salt, $0) }
        }
        let block = try pseudoRandomKey.withUnsafeBytes { key in
            try [UInt8(1)].withUnsafeBytes { try hmac(key: key, $0) }
        }
        return SecureBytes(block.bytes.prefix(length))
    }

    /// HMAC-SHA256 of `message` under `key`.
    private static func hmac(key: UnsafeRawBufferPointer, _ message: UnsafeRawBufferPointer) throws
        -> SecureBytes
    {
        var handle: gcry_md_hd_t?
        let flags = UInt32(GCRY_MD_FLAG_HMAC.rawValue | GCRY_MD_FLAG_SECURE.rawValue)
        guard gcry_md_open(&handle, Int32(GCRY_MD_SHA256.rawValue), flags) == 0, let handle else {
            throw BusError.failed("libgcrypt cannot open HMAC-SHA256")
        }
        defer { gcry_md_close(handle) }
        guard gcry_md_setkey(handle, key.baseAddress, key.count) == 0 else {
            throw BusError.failed("libgcrypt refused the HMAC key")
        }
        if let base = message.baseAddress, !message.isEmpty { gcry_md_write(handle, base, message.count) }
        guard let digest = gcry_md_read(handle, Int32(GCRY_MD_SHA256.rawValue)) else {
            throw BusError.failed("HMAC-SHA256 failed")
        }
        return SecureBytes(UnsafeRawBufferPointer(start: digest, count: 32))
    }

    /// An MPI from big-endian bytes.
    private static func mpi(bytes: UnsafeRawBufferPointer, secure: Bool = false) throws -> gcry_mpi_t {
        var result: gcry_mpi_t?
        guard gcry_mpi_scan(&result, GCRYMPI_FMT_USG, bytes.baseAddress, bytes.count, nil) == 0, let result
        else {
            throw BusError.invalidArguments("a number could not be read")
        }
        if secure { gcry_mpi_set_flag(result, GCRYMPI_FLAG_SECURE) }
        return result
    }

    /// A new MPI (in secure memory when `secure`).
    private static func newMPI(secure: Bool = false) throws -> gcry_mpi_t {
        guard let made = secure ? gcry_mpi_snew(1024) : gcry_mpi_new(1024) else {
            throw BusError.failed("libgcrypt is out of memory")
        }
        return made
    }

    /// An MPI from hexadecimal text.
    private static func mpi(hex: String) throws -> gcry_mpi_t {
        var result: gcry_mpi_t?
        guard gcry_mpi_scan(&result, GCRYMPI_FMT_HEX, hex, 0, nil) == 0, let result else {
            throw BusError.failed("a constant could not be read")
        }
        return result
    }

    /// The big-endian bytes of `value`, left-padded with zeros to `length`.
    private static func bytes(of value: gcry_mpi_t, length: Int) throws -> SecureBytes {
        var buffer = [UInt8](repeating: 0, count: length)
        defer { wipeMemory(&buffer, count: buffer.count) }
        var written = 0
        let status = buffer.withUnsafeMutableBytes {
            gcry_mpi_print(GCRYMPI_FMT_USG, $0.baseAddress, $0.count, &written, value)
        }
        guard status == 0, written <= length else { throw BusError.failed("a number does not fit") }
        var padded = [UInt8](repeating: 0, count: length - written) + buffer[..<written]
        defer { wipeMemory(&padded, count: padded.count) }
        return SecureBytes(padded)
    }
}
