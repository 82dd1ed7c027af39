import CGcrypt

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Decrypts the messages pass and coffer write without starting a gpg process: gpg-agent recovers
/// the session key from the public-key packet (`PKDECRYPT`, as gpg itself asks it), and the
/// symmetric layer is decrypted here with libgcrypt, the library gpg uses.
///
/// It handles what a store holds: version 3 session-key packets for a Curve25519 (ECDH) or RSA key
/// of the keyring, one integrity-protected (MDC) AES packet, and an uncompressed literal packet,
/// binary or ASCII-armored. Anything else, and any failure at all (no agent running, a passphrase
/// to ask, a key the agent does not have, a failed integrity check), gives `nil`, and the engine
/// then runs gpg as before, so errors, prompts and unusual messages keep gpg's behaviour. Plaintext
/// is returned only after its SHA-1 modification detection code has been checked.
enum DirectDecryption {
    /// Decrypts `message` for the keys of GnuPG home `homeDirectory` (`nil`: `GNUPGHOME` or
    /// `~/.gnupg`), or returns `nil` when gpg must do it.
    static func decrypt(_ message: [UInt8], homeDirectory: String?) -> SecureBytes? {
        guard Gcrypt.isUsable, let home = GPGOptions.gnupgHome(homeDirectory) else { return nil }
        if message.starts(with: Array("-----BEGIN PGP MESSAGE-----".utf8)) {
            guard let binary = OpenPGPPackets.dearmored(message) else { return nil }
            return binary.withUnsafeBytes { decrypt(packets: $0, home: home) }
        }
        return message.withUnsafeBytes { decrypt(packets: $0, home: home) }
    }

    // MARK: - The message

    private static func decrypt(packets bytes: UnsafeRawBufferPointer, home: (path: String, isDefault: Bool))
        -> SecureBytes?
    {
        guard let (sessionKeyPackets, encrypted) = split(bytes),
            let sessionKey = recoverSessionKey(
                sessionKeyPackets.map { UnsafeRawBufferPointer(rebasing: bytes[$0]) }, home: home)
        else { return nil }
        if encrypted.body.count == 1 {
            return decryptIntegrityProtected(
                UnsafeRawBufferPointer(rebasing: bytes[encrypted.body[0]]), sessionKey)
        }
        var joined: [UInt8] = []
        joined.reserveCapacity(encrypted.length)
        for range in encrypted.body { joined.append(contentsOf: bytes[range]) }
        return joined.withUnsafeBytes { decryptIntegrityProtected($0, sessionKey) }
    }

    /// The bodies of the session-key packets and the encrypted data packet that make up `bytes`, or
    /// `nil` when the message has another shape.
    static func split(_ bytes: UnsafeRawBufferPointer) -> (
        sessionKeys: [Range<Int>], encrypted: PacketReader.Packet
    )? {
        var sessionKeyPackets: [Range<Int>] = []
        var offset = 0
        while let packet = PacketReader.packet(in: bytes, at: offset) {
            switch packet.tag {
            case 1:
                guard packet.body.count == 1 else { return nil }
                sessionKeyPackets.append(packet.body[0])
            case 10:
                break  // A marker packet, to be ignored.
            case 18:
                guard packet.end == bytes.count, !sessionKeyPackets.isEmpty else { return nil }
                return (sessionKeyPackets, packet)
            default:
                return nil
            }
            offset = packet.end
        }
        return nil
    }

    /// The session key (cipher algorithm byte, then the key) from the first session-key packet whose
    /// secret key the agent holds.
    private static func recoverSessionKey(
        _ packets: [UnsafeRawBufferPointer], home: (path: String, isDefault: Bool)
    ) -> WipedBuffer? {
        var agent: GPGAgentConnection?
        for body in packets {
            // Version 3: version, key id (8), algorithm, then the algorithm's fields.
            guard body.count > 10, body[0] == 3, let keyID = PacketReader.bigEndian(body, at: 1, size: 8)
            else {
                continue
            }
            let algorithm = body[9]
            let fields = UnsafeRawBufferPointer(rebasing: body[10...])
            for key in KeyringIndex.shared.keys(withID: UInt64(bitPattern: Int64(keyID)), home: home.path) {
                guard let request = agentRequest(algorithm: algorithm, fields: fields, key: key),
                    let keygrip = key.keygrip
                else { continue }
                if agent == nil { agent = GPGAgentConnection(home: home.path, isDefaultHome: home.isDefault) }
                guard let connection = agent else { return nil }
                guard let result = connection.decrypt(keygrip: keygrip, ciphertext: request.ciphertext),
                    let sessionKey = sessionKey(
                        fromAgentResult: result, algorithm: algorithm, key: key, wrapped: request.wrapped)
                else { continue }
                return sessionKey
            }
        }
        return nil
    }

    /// The ciphertext S-expression gpg hands the agent for this packet, and (ECDH) the wrapped key.
    private static func agentRequest(algorithm: UInt8, fields: UnsafeRawBufferPointer, key: KeyringKey)
        -> (ciphertext: [UInt8], wrapped: [UInt8])?
    {
        var request = CanonicalSExpression()
        request.open("enc-val")
        switch (algorithm, key.algorithm) {
        case (KeyringKey.rsa, KeyringKey.rsa), (KeyringKey.rsa, KeyringKey.rsaEncryptOnly),
            (KeyringKey.rsaEncryptOnly, KeyringKey.rsa),
            (KeyringKey.rsaEncryptOnly, KeyringKey.rsaEncryptOnly):
            guard let value = PacketReader.mpi(fields, at: 0), value.end == fields.count else { return nil }
            request.open("rsa")
            request.pair("a", CanonicalSExpression.standardMPI(Array(fields[value.value])))
            request.close()
            request.close()
            return (request.bytes, [])
        case (KeyringKey.ecdh, KeyringKey.ecdh):
            // The ephemeral point, then one length byte and the AES-wrapped session key.
            guard let point = PacketReader.mpi(fields, at: 0), point.end < fields.count else { return nil }
            let length = Int(fields[point.end])
            guard point.end + 1 + length == fields.count, length >= 24, length % 8 == 0 else { return nil }
            let wrapped = Array(fields[(point.end + 1)...])
            request.open("ecdh")
            request.pair("s", [UInt8(length)] + wrapped)
            request.pair("e", CanonicalSExpression.standardMPI(Array(fields[point.value])))
            request.close()
            request.close()
            return (request.bytes, wrapped)
        default:
            return nil
        }
    }

    /// The session key (cipher algorithm byte, then the key) from the agent's answer to `PKDECRYPT`
    /// for a session-key packet of `algorithm` to `key` (`wrapped`: the ECDH packet's wrapped key),
    /// once its frame and checksum check out; `nil` for anything else.
    static func sessionKey(
        fromAgentResult result: WipedBuffer, algorithm: UInt8, key: KeyringKey, wrapped: [UInt8]
    ) -> WipedBuffer? {
        sessionKeyFrame(result, algorithm: algorithm, key: key, wrapped: wrapped).flatMap(checkedSessionKey)
    }

    /// The value in the agent's `(5:value N:BYTES)` answer.
    private static func agentValue(_ result: WipedBuffer) -> Range<Int>? {
        result.withBytes { bytes -> Range<Int>? in
            let prefix = Array("(5:value".utf8)
            guard bytes.count > prefix.count + 3, bytes.prefix(prefix.count).elementsEqual(prefix) else {
                return nil
            }
            var index = prefix.count
            var length = 0
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9"),
                length < 1 << 20
            {
                length = length * 10 + Int(bytes[index] - UInt8(ascii: "0"))
                index += 1
            }
            guard length > 0, index < bytes.count, bytes[index] == UInt8(ascii: ":"),
                length < bytes.count - index
            else { return nil }
            return (index + 1)..<(index + 1 + length)
        }
    }

    /// The decrypted session-key frame (cipher algorithm, key, checksum) from the agent's answer.
    private static func sessionKeyFrame(
        _ result: WipedBuffer, algorithm: UInt8, key: KeyringKey, wrapped: [UInt8]
    ) -> WipedBuffer? {
        guard let value = agentValue(result) else { return nil }
        return result.withBytes { bytes -> WipedBuffer? in
            let value = UnsafeRawBufferPointer(rebasing: bytes[value])
            if algorithm == KeyringKey.ecdh {
                return unwrapECDH(sharedPoint: value, key: key, wrapped: wrapped)
            }
            // RSA: PKCS #1 v1.5 (RFC 8017 section 7.2.2) type 2 block: [0] 2, random non-zero bytes, 0.
            var index = value.first == 0 ? 1 : 0
            guard index < value.count, value[index] == 2 else { return nil }
            index += 1
            while index < value.count, value[index] != 0 { index += 1 }
            index += 1
            guard index < value.count else { return nil }
            let frame = WipedBuffer(capacity: value.count - index)
            frame.append(UnsafeRawBufferPointer(rebasing: value[index...]))
            return frame
        }
    }

    /// RFC 6637 section 8: the key-encryption key from the shared point and the KDF parameters, then
    /// AES key unwrap and the PKCS #5 padding removed.
    private static func unwrapECDH(sharedPoint: UnsafeRawBufferPointer, key: KeyringKey, wrapped: [UInt8])
        -> WipedBuffer?
    {
        // Curve25519 only (see `KeyringKey.isSupported`): a 32-byte x, with a 0x40 prefix from the agent.
        guard sharedPoint.count == 32 || sharedPoint.count == 33, wrapped.count >= 24, wrapped.count % 8 == 0,
            let kek = ecdhKeyEncryptionKey(
                sharedX: UnsafeRawBufferPointer(rebasing: sharedPoint[(sharedPoint.count - 32)...]), key: key)
        else { return nil }
        let unwrapped = WipedBuffer(capacity: wrapped.count - 8)
        let done = kek.withBytes { kekBytes in
            wrapped.withUnsafeBytes { input in
                Gcrypt.crypt(
                    openPGPCipher: key.kdfParameters[3], mode: GCRY_CIPHER_MODE_AESWRAP, key: kekBytes,
                    input: input,
                    output: UnsafeMutableRawBufferPointer(
                        rebasing: unwrapped.unusedSpace[..<(wrapped.count - 8)]))
            }
        }
        guard done else { return nil }
        unwrapped.extend(by: wrapped.count - 8)
        let padding = unwrapped.withBytes { Int($0[$0.count - 1]) }
        guard padding >= 1, padding <= 8, padding < unwrapped.count else { return nil }
        unwrapped.removeLast(padding)
        return unwrapped
    }

    /// The ECDH key-encryption key (RFC 6637 section 7): the KDF hash of the shared secret and the
    /// parameters `curve OID, algorithm, KDF parameters, "Anonymous Sender    ", fingerprint`, cut to
    /// the length of the key-wrap cipher. Only the KDF parameters gpg accepts are used (see
    /// ``KeyringKey/isSupported``).
    static func ecdhKeyEncryptionKey(sharedX: UnsafeRawBufferPointer, key: KeyringKey) -> WipedBuffer? {
        guard key.isSupported, key.algorithm == KeyringKey.ecdh,
            let cipher = Gcrypt.aes(openPGPCipher: key.kdfParameters[3])
        else { return nil }
        var parameters: [UInt8] = [UInt8(key.parameters[0].count)] + key.parameters[0] + [KeyringKey.ecdh]
        parameters += key.kdfParameters + Array("Anonymous Sender    ".utf8) + key.fingerprint
        let counter: [UInt8] = [0, 0, 0, 1]
        let digest = counter.withUnsafeBytes { counter in
            parameters.withUnsafeBytes { parameters in
                Gcrypt.digest(openPGPHash: key.kdfParameters[2], [counter, sharedX, parameters])
            }
        }
        guard let digest, digest.count >= cipher.keyLength else { return nil }
        digest.removeLast(digest.count - cipher.keyLength)
        return digest
    }

    /// Checks a frame `algorithm, key, checksum` (the two-byte sum of the key bytes) and returns
    /// `algorithm, key`, or `nil` when the checksum or the key length is wrong.
    private static func checkedSessionKey(_ frame: WipedBuffer) -> WipedBuffer? {
        frame.withBytes { bytes -> WipedBuffer? in
            guard bytes.count > 3, let cipher = Gcrypt.aes(openPGPCipher: bytes[0]),
                bytes.count == 1 + cipher.keyLength + 2
            else { return nil }
            var sum: UInt16 = 0
            for byte in bytes[1..<(bytes.count - 2)] { sum &+= UInt16(byte) }
            guard sum == UInt16(bytes[bytes.count - 2]) << 8 | UInt16(bytes[bytes.count - 1]) else {
                return nil
            }
            let key = WipedBuffer(capacity: bytes.count - 2)
            key.append(UnsafeRawBufferPointer(rebasing: bytes[..<(bytes.count - 2)]))
            return key
        }
    }

    // MARK: - The symmetric layer

    /// Decrypts a version 1 symmetrically encrypted integrity-protected data packet (RFC 4880
    /// section 5.13): CFB with a zero IV over a random prefix, the packets, and the MDC packet.
    private static func decryptIntegrityProtected(_ body: UnsafeRawBufferPointer, _ sessionKey: WipedBuffer)
        -> SecureBytes?
    {
        let blockSize = 16
        guard body.count > 1 + blockSize + 2 + 22, body[0] == 1 else { return nil }
        let ciphertext = UnsafeRawBufferPointer(rebasing: body[1...])
        let plain = WipedBuffer(capacity: ciphertext.count)
        let decrypted = sessionKey.withBytes { key in
            Gcrypt.crypt(
                openPGPCipher: key[0], mode: GCRY_CIPHER_MODE_CFB,
                key: UnsafeRawBufferPointer(rebasing: key[1...]),
                input: ciphertext, output: plain.unusedSpace)
        }
        guard decrypted else { return nil }
        plain.extend(by: ciphertext.count)
        return plain.withBytes { opened($0) }
    }

    /// The literal data of decrypted integrity-protected data (prefix, packets, MDC packet) once
    /// the prefix's repeated bytes and the SHA-1 modification detection code have been checked.
    static func opened(_ bytes: UnsafeRawBufferPointer) -> SecureBytes? {
        let blockSize = 16
        let count = bytes.count
        // The prefix repeats its last two bytes; the MDC packet (0xD3, length 20) ends the data.
        guard count >= blockSize + 2 + 22, bytes[blockSize - 2] == bytes[blockSize],
            bytes[blockSize - 1] == bytes[blockSize + 1], bytes[count - 22] == 0xd3,
            bytes[count - 21] == 0x14,
            let hash = Gcrypt.digest(
                openPGPHash: 2, [UnsafeRawBufferPointer(rebasing: bytes[..<(count - 20)])])
        else { return nil }
        let intact = hash.withBytes { hash in
            var difference: UInt8 = 0
            for index in 0..<20 { difference |= hash[index] ^ bytes[count - 20 + index] }
            return difference == 0
        }
        guard intact else { return nil }
        return literalData(UnsafeRawBufferPointer(rebasing: bytes[(blockSize + 2)..<(count - 22)]))
    }

    /// The contents of the one literal data packet that `packets` must consist of, as gpg on a Unix
    /// system writes them: for text (`t`) and UTF-8 (`u`) data every carriage return is dropped,
    /// binary (`b`) and MIME (`m`) data is kept as it is. Any other format is left to gpg.
    static func literalData(_ packets: UnsafeRawBufferPointer) -> SecureBytes? {
        guard let packet = PacketReader.packet(in: packets, at: 0), packet.tag == 11,
            packet.end == packets.count,
            let first = packet.body.first, first.count >= 6
        else { return nil }
        let dropsCarriageReturns: Bool
        switch packets[first.lowerBound] {
        case UInt8(ascii: "b"), UInt8(ascii: "m"): dropsCarriageReturns = false
        case UInt8(ascii: "t"), UInt8(ascii: "u"): dropsCarriageReturns = true
        default: return nil
        }
        // Format, file name (length-prefixed), 4-byte date, then the data.
        let header = 1 + 1 + Int(packets[first.lowerBound + 1]) + 4
        guard header <= first.count else { return nil }
        let sink = SecureByteSink(capacity: packet.length - header)
        for (index, range) in packet.body.enumerated() {
            var data = index == 0 ? (range.lowerBound + header)..<range.upperBound : range
            while dropsCarriageReturns, let carriageReturn = packets[data].firstIndex(of: 13) {
                let kept = data.lowerBound..<carriageReturn
                if !kept.isEmpty { sink.append(packets.baseAddress! + kept.lowerBound, length: kept.count) }
                data = (carriageReturn + 1)..<data.upperBound
            }
            if !data.isEmpty { sink.append(packets.baseAddress! + data.lowerBound, length: data.count) }
        }
        return sink.finish()
    }
}
