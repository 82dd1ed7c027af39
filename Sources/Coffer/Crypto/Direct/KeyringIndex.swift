#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A public key (or subkey) of the keyring that can receive encrypted messages: what a decryption
/// through gpg-agent needs to know about it.
struct KeyringKey: Sendable {
    /// OpenPGP public-key algorithm ids.
    static let rsa: UInt8 = 1
    static let rsaEncryptOnly: UInt8 = 2
    static let ecdh: UInt8 = 18
    /// The DER bytes of the Curve25519 OID (1.3.6.1.4.1.3029.1.5.1).
    static let curve25519OID: [UInt8] = [0x2b, 0x06, 0x01, 0x04, 0x01, 0x97, 0x55, 0x01, 0x05, 0x01]

    /// The v4 fingerprint (20 bytes); the key id is its last 8 bytes.
    let fingerprint: [UInt8]
    /// The public-key algorithm.
    let algorithm: UInt8
    /// RSA: the modulus and the exponent. ECDH: the curve's OID and the public point.
    let parameters: [[UInt8]]
    /// ECDH: the KDF parameters as stored (`03 01 hash cipher`); empty for RSA.
    let kdfParameters: [UInt8]

    /// The 64-bit key id.
    var keyID: UInt64 { fingerprint.suffix(8).reduce(0) { $0 << 8 | UInt64($1) } }

    /// The keygrip in upper-case hex, as gpg-agent files the secret key, or `nil` for an unsupported key.
    var keygrip: String? {
        canonicalPublicKey.flatMap { Gcrypt.keygrip(canonicalKey: $0) }.map(Hex.upper)
    }

    /// Whether this is a key the direct path handles: RSA, or ECDH on Curve25519 (a 0x40-prefixed
    /// point) whose KDF is one gpg accepts: SHA-256, SHA-384 or SHA-512 (never SHA-1) with AES key
    /// wrap (RFC 6637 section 9, GnuPG's `ecdh.c`).
    var isSupported: Bool {
        switch algorithm {
        case Self.rsa, Self.rsaEncryptOnly:
            return true
        case Self.ecdh:
            return parameters[0] == Self.curve25519OID && parameters[1].count == 33
                && parameters[1][0] == 0x40 && kdfParameters.count == 4 && kdfParameters[1] == 1
                && [8, 9, 10].contains(kdfParameters[2]) && Gcrypt.aes(openPGPCipher: kdfParameters[3]) != nil
        default:
            return false
        }
    }

    /// The public key as the canonical S-expression gpg builds for libgcrypt, or `nil` for a key
    /// the direct path does not handle.
    var canonicalPublicKey: [UInt8]? {
        guard isSupported else { return nil }
        var key = CanonicalSExpression()
        key.open("public-key")
        if algorithm == Self.ecdh {
            key.open("ecc")
            key.pair("curve", Array(Self.dottedOID(parameters[0]).utf8))
            key.pair("flags", Array("djb-tweak".utf8))
            key.pair("q", CanonicalSExpression.standardMPI(parameters[1]))
        } else {
            key.open("rsa")
            key.pair("n", CanonicalSExpression.standardMPI(parameters[0]))
            key.pair("e", CanonicalSExpression.standardMPI(parameters[1]))
        }
        key.close()
        key.close()
        return key.bytes
    }

    /// Parses a v4 public key or subkey packet body; `nil` for other versions and algorithms.
    init?(packetBody body: UnsafeRawBufferPointer) {
        guard body.count > 6, body[0] == 4 else { return nil }
        let algorithm = body[5]
        var parameters: [[UInt8]] = []
        var kdf: [UInt8] = []
        switch algorithm {
        case Self.rsa, Self.rsaEncryptOnly:
            guard let modulus = PacketReader.mpi(body, at: 6),
                let exponent = PacketReader.mpi(body, at: modulus.end)
            else { return nil }
            parameters = [Array(body[modulus.value]), Array(body[exponent.value])]
        case Self.ecdh:
            let oidLength = Int(body[6])
            guard oidLength > 0, oidLength < 0xff, 7 + oidLength < body.count,
                let point = PacketReader.mpi(body, at: 7 + oidLength),
                point.end < body.count, Int(body[point.end]) == 3, point.end + 4 <= body.count
            else { return nil }
            parameters = [Array(body[7..<(7 + oidLength)]), Array(body[point.value])]
            kdf = Array(body[point.end..<(point.end + 4)])
        default:
            return nil
        }
        guard let fingerprint = Self.fingerprint(ofPacketBody: body) else { return nil }
        self.fingerprint = fingerprint
        self.algorithm = algorithm
        self.parameters = parameters
        self.kdfParameters = kdf
    }

    /// An OID's DER bytes in dotted-decimal notation, the curve name libgcrypt accepts.
    /// The v4 fingerprint of a public key or subkey packet body, of any algorithm (RFC 4880 section
    /// 12.2); `nil` for other versions.
    static func fingerprint(ofPacketBody body: UnsafeRawBufferPointer) -> [UInt8]? {
        guard body.count > 6, body[0] == 4, body.count <= 0xffff else { return nil }
        var hashed: [UInt8] = [0x99, UInt8(body.count >> 8 & 0xff), UInt8(body.count & 0xff)]
        hashed.append(contentsOf: body)
        return Gcrypt.sha1(hashed)
    }

    static func dottedOID(_ der: [UInt8]) -> String {
        guard let first = der.first else { return "" }
        var arcs = [Int(first) / 40, Int(first) % 40]
        var value = 0
        for byte in der.dropFirst() {
            value = value << 7 | Int(byte & 0x7f)
            if byte & 0x80 == 0 {
                arcs.append(value)
                value = 0
            }
        }
        return arcs.map(String.init).joined(separator: ".")
    }
}

/// A canonical S-expression as libgcrypt and gpg-agent exchange them (`(3:abc(1:x2:..))`).
struct CanonicalSExpression {
    /// The encoded bytes.
    private(set) var bytes: [UInt8] = []

    /// Opens a list whose first element is `name`.
    mutating func open(_ name: String) {
        bytes.append(UInt8(ascii: "("))
        atom(Array(name.utf8))
    }

    /// Closes the innermost list.
    mutating func close() { bytes.append(UInt8(ascii: ")")) }

    /// Appends one atom, `LENGTH:BYTES`.
    mutating func atom(_ value: [UInt8]) {
        bytes.append(contentsOf: Array(String(value.count).utf8))
        bytes.append(UInt8(ascii: ":"))
        bytes.append(contentsOf: value)
    }

    /// Appends the list `(name value)`.
    mutating func pair(_ name: String, _ value: [UInt8]) {
        open(name)
        atom(value)
        close()
    }

    /// An unsigned integer as libgcrypt's standard MPI format writes it: a zero byte in front when the
    /// top bit is set.
    static func standardMPI(_ value: [UInt8]) -> [UInt8] {
        guard let first = value.first, first & 0x80 != 0 else { return value }
        return [0] + value
    }
}

/// Hexadecimal text of bytes.
enum Hex {
    private static let digits = Array("0123456789ABCDEF".utf8)

    /// Upper-case hex, two digits a byte.
    static func upper(_ bytes: [UInt8]) -> String {
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The value of one hex digit, upper or lower case, or `nil` for another character.
    static func value(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return digit - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
        default: return nil
        }
    }

    /// The bytes of hex text (two digits a byte), or `nil` for anything else.
    static func bytes(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var result: [UInt8] = []
        result.reserveCapacity(digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = value(digits[index]), let low = value(digits[index + 1]) else { return nil }
            result.append(high << 4 | low)
        }
        return result
    }
}

/// The encryption-capable public keys of the user's keyring, by key id, read once per process and
/// read again when the keyring file changes.
final class KeyringIndex: Sendable {
    /// The index shared by every decryption of the process.
    static let shared = KeyringIndex()

    /// The keyring file indexed, its identity when it was read (device, inode, size, time), the keys,
    /// and for each key id the times at which something in its key block starts or stops counting.
    private struct Index {
        var path = ""
        var identity: [Int] = []
        var keys: [UInt64: [KeyringKey]] = [:]
        var times: [UInt64: [Int]] = [:]
        var primaries: [UInt64: [[UInt8]]] = [:]
    }

    private let index = Locked(Index())

    private init() {}

    /// The keys with `keyID` in the keyring of GnuPG home `home` (`pubring.kbx`, or the legacy
    /// `pubring.gpg` when there is no keybox, as gpg chooses).
    func keys(withID keyID: UInt64, home: String) -> [KeyringKey] {
        index.withLock { index in keys(withID: keyID, home: home, index: &index) }
    }

    /// The fingerprints of the primary keys whose key blocks hold a key with `keyID` (the key itself when
    /// it is a primary key); `nil` when the keyring cannot be read here (none, or keyboxd's database).
    func primaryFingerprints(ofKeyWithID keyID: UInt64, home: String) -> [[UInt8]]? {
        index.withLock { index in
            guard readKeyring(home: home, index: &index) else { return nil }
            return index.primaries[keyID] ?? []
        }
    }

    /// The first time after `now` at which gpg may judge the key block holding `keyID` otherwise: a
    /// signature (self-signature, subkey binding, revocation, certification) or a key expiring, or a
    /// key or signature made with a time still to come starting to count; `nil` when there is none,
    /// `now` when the key is not in the keyring.
    func nextChange(ofKeyWithID keyID: UInt64, home: String, after now: Int) -> Int? {
        index.withLock { index in
            guard !keys(withID: keyID, home: home, index: &index).isEmpty else { return now }
            return index.times[keyID]?.filter { $0 > now }.min()
        }
    }

    private func keys(withID keyID: UInt64, home: String, index: inout Index) -> [KeyringKey] {
        guard readKeyring(home: home, index: &index) else { return [] }
        return index.keys[keyID] ?? []
    }

    /// Reads the keyring of `home` into `index` unless it holds it as the file is now; `false` when
    /// there is no keyring file.
    private func readKeyring(home: String, index: inout Index) -> Bool {
        var file = home + "/pubring.kbx"
        var status = stat()
        if stat(file, &status) != 0 {
            file = home + "/pubring.gpg"
            guard stat(file, &status) == 0 else { return false }
        }
        #if canImport(Darwin)
            let modified = status.st_mtimespec
        #else
            let modified = status.st_mtim
        #endif
        let current = [
            Int(status.st_dev), Int(status.st_ino), Int(status.st_size), Int(modified.tv_sec),
            Int(modified.tv_nsec),
        ]
        if file != index.path || current != index.identity {
            guard let contents = try? FileSystem.readFile(file) else { return false }
            let read = file.hasSuffix(".kbx") ? Self.indexKeybox(contents) : Self.indexPackets(contents)
            (index.keys, index.times, index.primaries) = (read.keys, read.times, read.primaries)
            index.path = file
            index.identity = current
        }
        return true
    }

    /// The keys of a keybox file (its OpenPGP blobs each hold one key block), and the times of each
    /// key's block.
    static func indexKeybox(_ contents: [UInt8]) -> Indexed {
        var indexed = Indexed()
        contents.withUnsafeBytes { bytes in
            var offset = 0
            while let length = PacketReader.bigEndian(bytes, at: offset, size: 4), length >= 20,
                length <= bytes.count - offset
            {
                // Blob type 2 is an OpenPGP key block, found at an offset from the blob's start.
                if bytes[offset + 4] == 2,
                    let start = PacketReader.bigEndian(bytes, at: offset + 8, size: 4),
                    let size = PacketReader.bigEndian(bytes, at: offset + 12, size: 4),
                    start <= length, size <= length - start
                {
                    let block = UnsafeRawBufferPointer(
                        rebasing: bytes[(offset + start)..<(offset + start + size)])
                    addKeys(in: block, to: &indexed)
                }
                offset += length
            }
        }
        return indexed
    }

    /// The keys of a file of OpenPGP packets (the legacy `pubring.gpg`), and the times of each key's
    /// block.
    static func indexPackets(_ contents: [UInt8]) -> Indexed {
        var indexed = Indexed()
        contents.withUnsafeBytes { addKeys(in: $0, to: &indexed) }
        return indexed
    }

    /// What reading a keyring gives: the keys by key id, the times of each key's block, and the primary
    /// keys whose blocks hold each key id.
    struct Indexed {
        var keys: [UInt64: [KeyringKey]] = [:]
        var times: [UInt64: [Int]] = [:]
        var primaries: [UInt64: [[UInt8]]] = [:]
    }

    /// Indexes the keys of `packets`; each key block (from one primary key packet to the next) gives
    /// all its keys the times of ``blockTimes``.
    private static func addKeys(in packets: UnsafeRawBufferPointer, to indexed: inout Indexed) {
        var offset = 0
        var blockKeys: [UInt64] = []
        var blockTimes: [Int] = []
        var blockIDs: [UInt64] = []
        var primary: [UInt8]?
        var keyCreated = 0
        func finishBlock() {
            for keyID in blockKeys { indexed.times[keyID, default: []] += blockTimes }
            if let primary {
                for keyID in blockIDs where indexed.primaries[keyID]?.contains(primary) != true {
                    indexed.primaries[keyID, default: []].append(primary)
                }
            }
            blockKeys = []
            blockTimes = []
            blockIDs = []
            primary = nil
        }
        while let packet = PacketReader.packet(in: packets, at: offset) {
            offset = packet.end
            guard packet.body.count == 1 else { continue }
            let body = UnsafeRawBufferPointer(rebasing: packets[packet.body[0]])
            switch packet.tag {
            case 6, 14:
                // Public key (6) starts a block; public subkeys (14) belong to it.
                if packet.tag == 6 { finishBlock() }
                keyCreated = PacketReader.bigEndian(body, at: 1, size: 4) ?? 0
                blockTimes.append(keyCreated)
                if let key = KeyringKey(packetBody: body) {
                    indexed.keys[key.keyID, default: []].append(key)
                    blockKeys.append(key.keyID)
                }
                // Any v4 key of the block, whatever its algorithm, belongs to the block's primary key.
                if let fingerprint = KeyringKey.fingerprint(ofPacketBody: body) {
                    blockIDs.append(fingerprint.suffix(8).reduce(0) { $0 << 8 | UInt64($1) })
                    if packet.tag == 6 { primary = fingerprint }
                }
            case 2:
                blockTimes += signatureTimes(body, keyCreated: keyCreated)
            default:
                break
            }
        }
        finishBlock()
    }

    /// The times a version 4 signature starts or stops counting: its creation, its own expiry (hashed
    /// subpacket 3, seconds after creation) and the expiry it gives the key before it (subpacket 9,
    /// seconds after that key's creation).
    static func signatureTimes(_ body: UnsafeRawBufferPointer, keyCreated: Int) -> [Int] {
        guard body.count > 6, body[0] == 4, let hashedLength = PacketReader.bigEndian(body, at: 4, size: 2),
            hashedLength <= body.count - 6
        else { return [] }
        var created: Int?
        var expiresAfter: Int?
        var keyExpiresAfter: Int?
        var position = 6
        let end = 6 + hashedLength
        while position < end {
            // A subpacket length: one, two or five bytes (RFC 4880 section 5.2.3.1).
            let first = Int(body[position])
            var length = first
            var size = 1
            if first >= 192 && first < 255 {
                guard position + 1 < end else { break }
                length = ((first - 192) << 8) + Int(body[position + 1]) + 192
                size = 2
            } else if first == 255 {
                guard let value = PacketReader.bigEndian(body, at: position + 1, size: 4) else { break }
                length = value
                size = 5
            }
            position += size
            guard length >= 1, length <= end - position else { break }
            let type = body[position] & 0x7f
            if length == 5, let value = PacketReader.bigEndian(body, at: position + 1, size: 4) {
                switch type {
                case 2: created = value
                case 3: expiresAfter = value
                case 9: keyExpiresAfter = value
                default: break
                }
            }
            position += length
        }
        guard let created else { return [] }
        var times = [created]
        if let expiresAfter, expiresAfter > 0 { times.append(created + expiresAfter) }
        if let keyExpiresAfter, keyExpiresAfter > 0 { times.append(keyCreated + keyExpiresAfter) }
        return times
    }
}
