/// Reads the public-key-encrypted session key packets at the head of an OpenPGP message.
///
/// This tells which keys a file is encrypted to without decrypting it, as
/// `gpg --list-only` does, so re-encryption can skip entries whose keys already match.
package enum OpenPGPPackets {
    /// The long key ids (16 upper-case hex digits) of every PKESK packet before the encrypted data.
    ///
    /// Returns `nil` when the bytes do not start with OpenPGP packets.
    package static func recipientKeyIDs(_ message: [UInt8]) -> Set<String>? {
        if message.starts(with: Array("-----BEGIN PGP MESSAGE-----".utf8)) {
            return dearmored(message).flatMap(recipientKeyIDs)
        }
        var ids = Set<String>()
        var offset = 0
        while offset < message.count {
            let header = message[offset]
            guard header & 0x80 != 0 else { return offset == 0 ? nil : ids }
            var tag: Int
            var length: Int
            var bodyStart: Int
            if header & 0x40 != 0 {
                tag = Int(header & 0x3f)
                guard offset + 1 < message.count else { return nil }
                let first = Int(message[offset + 1])
                if first < 192 {
                    (length, bodyStart) = (first, offset + 2)
                } else if first < 224 {
                    guard offset + 2 < message.count else { return nil }
                    length = ((first - 192) << 8) + Int(message[offset + 2]) + 192
                    bodyStart = offset + 3
                } else if first == 255 {
                    guard offset + 5 < message.count else { return nil }
                    length = message[(offset + 2)...(offset + 5)].reduce(0) { $0 << 8 | Int($1) }
                    bodyStart = offset + 6
                } else {
                    // A partial body length: only encrypted data uses it, so the key packets are over.
                    return ids
                }
            } else {
                tag = Int((header >> 2) & 0x0f)
                let lengthType = Int(header & 0x03)
                guard lengthType != 3 else { return ids }
                let size = 1 << lengthType
                guard offset + size < message.count else { return nil }
                length = message[(offset + 1)...(offset + size)].reduce(0) { $0 << 8 | Int($1) }
                bodyStart = offset + 1 + size
            }
            guard tag == 1 else { return ids }
            // Version 3 PKESK: version byte, then the 8-byte key id.
            guard bodyStart + 9 <= message.count, message[bodyStart] == 3 else { return nil }
            ids.insert(Hex.upper(Array(message[(bodyStart + 1)...(bodyStart + 8)])))
            offset = bodyStart + length
        }
        return ids
    }

    /// What identifies the value a message holds whoever it is encrypted to: a hash of its encrypted
    /// data packet (SEIPD, tag 18, or the old SED, tag 9), which no one can change without the key and
    /// which stays the same when the session key packets before it are reordered, dropped or added.
    /// `nil` when the bytes hold no such packet.
    ///
    /// Only a message in the usual shape (see ``isUsualMessage(_:)``) has one: any other shape gpg also
    /// reads (a compressed or armored wrapping, text before the armor) could hide the same payload.
    package static func payloadID(_ message: [UInt8]) -> String? {
        withUsualPayload(message) { tag, bytes, ranges in
            var body: [UInt8] = [tag]
            for range in ranges { body += bytes[range] }
            return Hex.upper(Gcrypt.sha1(body)).lowercased()
        }
    }

    /// Whether `message` is an encrypted message in the usual shape, as gpg and coffer write them:
    /// session key packets, then one encrypted data packet (SEIPD, AEAD or the old SED) that ends the
    /// bytes, binary or in one plain armor. Only for such a message are the key ids at its head what it
    /// says it is encrypted to, and its payload its identity.
    package static func isUsualMessage(_ message: [UInt8]) -> Bool {
        withUsualPayload(message) { _, _, _ in true } ?? false
    }

    /// Calls `body` with the tag and body ranges of the encrypted data packet of a message in the usual
    /// shape (see ``isUsualMessage(_:)``), and the bytes they index; `nil` for any other shape.
    private static func withUsualPayload<Result>(
        _ message: [UInt8], _ body: (UInt8, UnsafeRawBufferPointer, [Range<Int>]) -> Result
    ) -> Result? {
        if message.starts(with: Array("-----BEGIN PGP MESSAGE-----".utf8)) {
            return dearmored(message).flatMap { withUsualPayload($0, body) }
        }
        return message.withUnsafeBytes { packets -> Result? in
            var offset = 0
            var keyPackets = 0
            while offset < packets.count, let packet = PacketReader.packet(in: packets, at: offset) {
                if packet.tag == 1 {
                    keyPackets += 1
                } else if [9, 18, 20].contains(packet.tag), keyPackets > 0, packet.end == packets.count {
                    return body(UInt8(packet.tag), packets, packet.body)
                } else {
                    return nil
                }
                offset = packet.end
            }
            return nil
        }
    }

    /// Whether the bytes (armored or binary) are public keys only: packets that all read whole, none
    /// of them a secret key or subkey (tags 5 and 7), so that importing them adds no secret key to the
    /// keyring.
    package static func holdsOnlyPublicKeys(_ bytes: [UInt8]) -> Bool {
        if bytes.starts(with: Array("-----BEGIN PGP PUBLIC KEY BLOCK-----".utf8)) {
            return dearmored(bytes).map(holdsOnlyPublicKeys) ?? false
        }
        guard !bytes.isEmpty else { return false }
        return bytes.withUnsafeBytes { packets in
            var offset = 0
            while offset < packets.count {
                guard let packet = PacketReader.packet(in: packets, at: offset), packet.tag != 5,
                    packet.tag != 7
                else { return false }
                offset = packet.end
            }
            return true
        }
    }

    /// Whether the bytes are an OpenPGP key or signature rather than a message: their first packet is a
    /// signature (2), a secret or public key (5, 6), or they are an armored key or signature block.
    static func isKeyOrSignature(_ bytes: [UInt8]) -> Bool {
        for armor in [
            "-----BEGIN PGP PUBLIC KEY BLOCK-----", "-----BEGIN PGP PRIVATE KEY BLOCK-----",
            "-----BEGIN PGP SIGNATURE-----",
        ] where bytes.starts(with: Array(armor.utf8)) {
            return true
        }
        guard let header = bytes.first, header & 0x80 != 0 else { return false }
        let tag = header & 0x40 != 0 ? Int(header & 0x3f) : Int((header >> 2) & 0x0f)
        return [2, 5, 6].contains(tag)
    }

    /// The binary packets of an ASCII-armored message (headers and checksum skipped), or `nil`.
    static func dearmored(_ text: [UInt8]) -> [UInt8]? {
        let lines = text.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { line in
            line.last == UInt8(ascii: "\r") ? line.dropLast() : line
        }
        // After the BEGIN line come optional "Key: value" headers, then one blank line, then base64.
        guard let blank = lines.firstIndex(where: \.isEmpty) else { return nil }
        var bits: UInt32 = 0
        var count = 0
        var output: [UInt8] = []
        for line in lines[(blank + 1)...] {
            if line.first == UInt8(ascii: "=") || line.starts(with: Array("-----".utf8)) { break }
            for byte in line {
                let value: UInt32
                switch byte {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = UInt32(byte - 65)
                case UInt8(ascii: "a")...UInt8(ascii: "z"): value = UInt32(byte - 97 + 26)
                case UInt8(ascii: "0")...UInt8(ascii: "9"): value = UInt32(byte - 48 + 52)
                case UInt8(ascii: "+"): value = 62
                case UInt8(ascii: "/"): value = 63
                default: continue
                }
                bits = bits << 6 | value
                count += 6
                if count >= 8 {
                    count -= 8
                    output.append(UInt8((bits >> UInt32(count)) & 0xff))
                }
            }
        }
        return output.isEmpty ? nil : output
    }
}
