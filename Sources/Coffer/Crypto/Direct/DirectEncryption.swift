import CGcrypt

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Encrypts in the process to subkeys that gpg has already chosen and accepted, for the many
/// entries of a re-encryption: the first entry goes through gpg (which checks validity, trust,
/// expiry and revocation and picks each key's subkey), and the rest are encrypted here, with
/// libgcrypt, to exactly the subkeys gpg's message names.
///
/// The messages have gpg's shape for pass: one version 3 session-key packet per subkey (ECDH on
/// Curve25519, or RSA with PKCS #1 v1.5), then one integrity-protected (SEIPD version 1, MDC) packet
/// holding an uncompressed binary literal packet, encrypted with the AES variant gpg chose for its
/// own message (see ``GPGMEEngine``, which reads that choice from gpg's `BEGIN_ENCRYPTION` status
/// and leaves everything else to gpg).
enum DirectEncryption {
    /// The largest plaintext written here: every length is then a definite length of at most
    /// 32 bits. Larger plaintexts are left to gpg.
    static let maximumPlaintext = Int(UInt32.max) - 1024

    /// The keys of every subkey `message` (made by gpg) is encrypted to, when each is in the keyring
    /// of `homeDirectory` and is of a kind handled here; `nil` otherwise.
    static func recipients(of message: [UInt8], homeDirectory: String?) -> [KeyringKey]? {
        guard Gcrypt.isUsable, !message.starts(with: Array("-----BEGIN".utf8)),
            let home = GPGOptions.gnupgHome(homeDirectory),
            let ids = OpenPGPPackets.recipientKeyIDs(message), !ids.isEmpty
        else { return nil }
        var keys: [KeyringKey] = []
        for id in ids.sorted() {
            guard let keyID = UInt64(id, radix: 16) else { return nil }
            let found = KeyringIndex.shared.keys(withID: keyID, home: home.path)
            guard found.count == 1, let key = found.first, key.isSupported else { return nil }
            keys.append(key)
        }
        return keys
    }

    /// Encrypts `plaintext` to `keys` with the OpenPGP cipher `cipher` (AES-128, -192 or -256), or
    /// returns `nil` for another cipher, a plaintext over ``maximumPlaintext`` or a failed
    /// cryptographic operation.
    static func encrypt(_ plaintext: SecureBytes, to keys: [KeyringKey], cipher sessionCipher: UInt8)
        -> [UInt8]?
    {
        guard plaintext.count <= maximumPlaintext, let cipher = Gcrypt.aes(openPGPCipher: sessionCipher)
        else {
            return nil
        }
        // The session key frame: cipher, key, two-byte checksum of the key bytes.
        let frame = WipedBuffer(capacity: 1 + cipher.keyLength + 2)
        frame.append(sessionCipher)
        Gcrypt.randomize(UnsafeMutableRawBufferPointer(rebasing: frame.unusedSpace[..<cipher.keyLength]))
        frame.extend(by: cipher.keyLength)
        let sum = frame.withBytes { $0.dropFirst().reduce(UInt16(0)) { $0 &+ UInt16($1) } }
        frame.append(UInt8(sum >> 8))
        frame.append(UInt8(sum & 0xff))
        var message: [UInt8] = []
        for key in keys {
            let body: [UInt8]?
            switch key.algorithm {
            case KeyringKey.ecdh: body = frame.withBytes { ecdhSessionKeyPacket($0, key: key) }
            default: body = frame.withBytes { rsaSessionKeyPacket($0, key: key) }
            }
            guard let body, let packet = packet(tag: 1, body: body) else { return nil }
            message += packet
        }
        let encrypted = frame.withBytes { frame in
            integrityProtected(
                plaintext, cipher: sessionCipher,
                key: UnsafeRawBufferPointer(rebasing: frame[1..<(1 + cipher.keyLength)]))
        }
        guard let encrypted, let packet = packet(tag: 18, body: encrypted) else { return nil }
        return message + packet
    }

    // MARK: - Session key packets

    private static func sessionKeyPacketHead(_ key: KeyringKey) -> [UInt8] {
        [3] + key.fingerprint.suffix(8) + [key.algorithm]
    }

    /// RFC 6637: an ephemeral X25519 key, the shared secret with the recipient, the key-encryption
    /// key from it, and the frame (padded PKCS #5 style to 8 bytes) AES-wrapped.
    private static func ecdhSessionKeyPacket(_ frame: UnsafeRawBufferPointer, key: KeyringKey) -> [UInt8]? {
        let secret = WipedBuffer(capacity: 32)
        Gcrypt.randomize(secret.unusedSpace)
        secret.extend(by: 32)
        var ephemeral = [UInt8](repeating: 0, count: 32)
        let shared = WipedBuffer(capacity: 32)
        var basePoint = [UInt8](repeating: 0, count: 32)
        basePoint[0] = 9
        let recipient = Array(key.parameters[1].dropFirst())
        let multiplied = secret.withBytes { scalar in
            ephemeral.withUnsafeMutableBytes { ephemeral in
                basePoint.withUnsafeBytes { Gcrypt.x25519(scalar: scalar, point: $0, result: ephemeral) }
            }
                && recipient.withUnsafeBytes {
                    Gcrypt.x25519(scalar: scalar, point: $0, result: shared.unusedSpace)
                }
        }
        guard multiplied else { return nil }
        shared.extend(by: 32)
        // An all-zero secret means a low-order point, not a key.
        guard shared.withBytes({ $0.contains { $0 != 0 } }),
            let kek = shared.withBytes({ DirectDecryption.ecdhKeyEncryptionKey(sharedX: $0, key: key) })
        else { return nil }
        let padding = 8 - frame.count % 8
        let padded = WipedBuffer(capacity: frame.count + padding)
        padded.append(frame)
        for _ in 0..<padding { padded.append(UInt8(padding)) }
        var wrapped = [UInt8](repeating: 0, count: padded.count + 8)
        let done = kek.withBytes { kek in
            padded.withBytes { input in
                wrapped.withUnsafeMutableBytes { output in
                    Gcrypt.crypt(
                        encrypting: true, openPGPCipher: key.kdfParameters[3], mode: GCRY_CIPHER_MODE_AESWRAP,
                        key: kek, input: input, output: output)
                }
            }
        }
        guard done else { return nil }
        return sessionKeyPacketHead(key) + mpi([0x40] + ephemeral) + [UInt8(wrapped.count)] + wrapped
    }

    /// RSA: the frame encrypted with PKCS #1 v1.5 padding.
    private static func rsaSessionKeyPacket(_ frame: UnsafeRawBufferPointer, key: KeyringKey) -> [UInt8]? {
        guard let publicKey = key.canonicalPublicKey,
            let value = Gcrypt.rsaEncrypt(message: frame, publicKey: publicKey)
        else { return nil }
        return sessionKeyPacketHead(key) + mpi(value)
    }

    // MARK: - The encrypted data

    /// A version 1 integrity-protected data packet body: AES in CFB mode with a zero IV over a random
    /// block whose last two bytes repeat, the literal packet, and the MDC packet (SHA-1 of all before).
    private static func integrityProtected(
        _ plaintext: SecureBytes, cipher: UInt8, key: UnsafeRawBufferPointer
    ) -> [UInt8]? {
        let blockSize = 16
        // Binary, no file name, the time of writing.
        let now = UInt32(truncatingIfNeeded: time(nil))
        let literalBody =
            [UInt8(ascii: "b"), 0, UInt8(now >> 24), UInt8(now >> 16 & 0xff), UInt8(now >> 8 & 0xff)]
            + [UInt8(now & 0xff)]
        guard let literalLength = length(literalBody.count + plaintext.count) else { return nil }
        let literalHead = [0xc0 | 11] + literalLength
        let total = blockSize + 2 + literalHead.count + literalBody.count + plaintext.count + 22
        let plain = WipedBuffer(capacity: total)
        // The prefix comes from the strong generator, as gpg's does.
        Gcrypt.randomize(UnsafeMutableRawBufferPointer(rebasing: plain.unusedSpace[..<blockSize]))
        plain.extend(by: blockSize)
        let repeated = plain.withBytes { [$0[blockSize - 2], $0[blockSize - 1]] }
        for byte in repeated + literalHead + literalBody { plain.append(byte) }
        plaintext.withUnsafeBytes { _ = plain.append($0) }
        plain.append(0xd3)
        plain.append(0x14)
        guard let hash = plain.withBytes({ Gcrypt.digest(openPGPHash: 2, [$0]) }) else { return nil }
        hash.withBytes { _ = plain.append($0) }
        var body = [UInt8](repeating: 0, count: 1 + total)
        body[0] = 1
        let done = plain.withBytes { input in
            body.withUnsafeMutableBytes { output in
                Gcrypt.crypt(
                    encrypting: true, openPGPCipher: cipher, mode: GCRY_CIPHER_MODE_CFB, key: key,
                    input: input, output: UnsafeMutableRawBufferPointer(rebasing: output[1...]))
            }
        }
        return done ? body : nil
    }

    // MARK: - Encoding

    /// A new-format packet with a definite length, or `nil` when the body is too long for one.
    static func packet(tag: Int, body: [UInt8]) -> [UInt8]? {
        length(body.count).map { [UInt8(0xc0 | tag)] + $0 + body }
    }

    /// A new-format body length (RFC 4880 section 4.2.2): one, two or five bytes; `nil` for a length
    /// that does not fit in 32 bits (only partial lengths could say it).
    static func length(_ count: Int) -> [UInt8]? {
        switch count {
        case 0..<192:
            return [UInt8(count)]
        case 192..<8384:
            let value = count - 192
            return [UInt8(value >> 8 + 192), UInt8(value & 0xff)]
        case 8384...Int(UInt32.max):
            return [255, UInt8(count >> 24 & 0xff), UInt8(count >> 16 & 0xff), UInt8(count >> 8 & 0xff)]
                + [UInt8(count & 0xff)]
        default:
            return nil
        }
    }

    /// An OpenPGP multiprecision integer: the bit count, then the bytes without leading zeros.
    static func mpi(_ value: [UInt8]) -> [UInt8] {
        let bytes = Array(value.drop(while: { $0 == 0 }))
        guard let first = bytes.first else { return [0, 0] }
        let bits = (bytes.count - 1) * 8 + (8 - first.leadingZeroBitCount)
        return [UInt8(bits >> 8), UInt8(bits & 0xff)] + bytes
    }
}
