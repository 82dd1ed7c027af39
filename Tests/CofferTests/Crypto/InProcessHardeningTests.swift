import CGcrypt
import CofferTestSupport
import Testing

@testable import Coffer

/// The in-process path reads what gpg reads, writes what gpg would write, and trusts only what gpg
/// would: text-mode literal data, gpg's cipher choice, libgcrypt's secure memory, the agent's
/// socket, lengths beyond 32 bits, the ECDH KDF and the randomness of the prefix.
@Suite("In-process crypto reads and writes as gpg does")
struct InProcessHardeningTests {
    // MARK: - Literal data

    /// A literal packet of `format` holding `data`; with `partAt`, the body comes in a partial
    /// length of that many bytes (a power of two) and a final part.
    static func literalPacket(_ format: Character, _ data: [UInt8], partAt: Int? = nil) -> [UInt8] {
        let body = [format.asciiValue!, 0, 0, 0, 0, 0] + data
        guard let part = partAt else { return DirectEncryption.packet(tag: 11, body: body)! }
        let first = [UInt8(0xe0 + part.trailingZeroBitCount)] + body.prefix(part)
        return [0xc0 | 11] + first + DirectEncryption.length(body.count - part)! + body.dropFirst(part)
    }

    @Test func textLiteralDataLosesEveryCarriageReturnAsWithGPG() throws {
        let data = Array("one\r\ntwo\rthree\n\r\rend\r".utf8)
        let withoutReturns = data.filter { $0 != 13 }
        for (format, expected) in [("b", data), ("m", data), ("t", withoutReturns), ("u", withoutReturns)] {
            let packet = Self.literalPacket(Character(format), data)
            #expect(
                packet.withUnsafeBytes { DirectDecryption.literalData($0) }?.bytes == expected, "\(format)")
            // A carriage return on each side of a partial-length boundary (the body's 16th byte).
            let split = Self.literalPacket(Character(format), data, partAt: 16)
            #expect(
                split.withUnsafeBytes { DirectDecryption.literalData($0) }?.bytes == expected, "\(format)")
        }
        // A format gpg does not name is left to gpg.
        let unknown = Self.literalPacket("x", data)
        #expect(unknown.withUnsafeBytes { DirectDecryption.literalData($0) } == nil)
    }

    // MARK: - The cipher gpg chose

    /// The `DECRYPTION_INFO` fields (`<mdc_method> <cipher>`) gpg reports for `message`.
    static func decryptionInfo(_ message: [UInt8], sandbox: GPGSandbox) throws -> String {
        let file = try sandbox.writeFile("info.gpg", message)
        let output = try sandbox.run(["gpg", "--batch", "--status-fd", "1", "-o", "/dev/null", "-d", file])
        let line = output.outputText.split(separator: "\n").first {
            $0.hasPrefix("[GNUPG:] DECRYPTION_INFO ")
        }
        return line.map { $0.split(separator: " ").dropFirst(2).prefix(2).joined(separator: " ") } ?? "none"
    }

    @Test(arguments: [
        ("cipher-algo AES192", "2 8", true), ("personal-cipher-preferences AES128", "2 7", true),
        ("cipher-algo TWOFISH", "2 10", false), ("rfc2440", "0 9", false),
    ])
    func bulkEncryptionKeepsTheCipherAndIntegrityProtectionGPGChose(
        configuration: String, expected: String, inProcess: Bool
    ) throws {
        let sandbox = try GPGSandbox()
        try "\(configuration)\n".write(toFile: sandbox.gnupgHome + "/gpg.conf")
        let engine = sandbox.engine
        let encryptor = try #require(engine.encryptor(for: [sandbox.keys[0].email]) as? GPGCheckedEncryptor)
        for size in [10, 0, 100, 10_000] {
            let message = try encryptor.encrypt(SecureBytes([UInt8](repeating: 0x61, count: size)))
            #expect(
                try Self.decryptionInfo(message, sandbox: sandbox) == expected, "\(configuration), \(size)")
        }
        #expect(encryptor.encryptsInProcess == inProcess, "\(configuration)")
    }

    @Test func onlySEIPDVersion1WithAESIsReproducedInTheProcess() {
        // `BEGIN_ENCRYPTION <mdc_method> <cipher> [<aead>]`: GnuPG 2.4 writes OCB (aead 2) without MDC.
        let cases: [([String], UInt8?)] = [
            (["2", "9"], 9), (["2", "8", "0"], 8), (["2", "7"], 7), (["0", "9", "2"], nil),
            (["0", "9"], nil),
            (["2", "11"], nil), (["2", "10"], nil), (["2"], nil), (["x", "9"], nil),
        ]
        for (fields, cipher) in cases {
            #expect(EncryptionChoice(statusFields: fields)?.inProcessCipher == cipher, "\(fields)")
        }
    }

    // MARK: - Secure memory

    @Test func libgcryptKeepsSecretsInSecureMemory() throws {
        #expect(Gcrypt.isUsable)
        let pointer = try #require(gcry_malloc_secure(64))
        defer { gcry_free(pointer) }
        #expect(gcry_is_secure(pointer) != 0, "libgcrypt's secure memory is off")
        // The S-expression an RSA session key is encrypted from.
        let frame = [UInt8](repeating: 7, count: 35)
        let expression = try #require(frame.withUnsafeBytes { Gcrypt.secretDataExpression($0) })
        defer { gcry_sexp_release(expression) }
        #expect(Gcrypt.isSecure(UnsafeRawPointer(expression)))
    }

    // MARK: - The agent's socket

    @Test func anAgentSocketThatIsNotTheUsersOwnIsNotUsed() throws {
        let sandbox = try GPGSandbox()
        let engine = sandbox.engine
        let message = try engine.encrypt(SecureBytes(string: "agent"), to: [sandbox.keys[0].email])
        // gpg starts the agent; then the in-process path uses it.
        #expect(try engine.decrypt(message).string == "agent")
        func direct(_ home: String = sandbox.gnupgHome) -> [UInt8]? {
            DirectDecryption.decrypt(message, homeDirectory: home)?.bytes
        }
        #expect(direct() == Array("agent".utf8))
        let folder = try sandbox.check(["gpgconf", "--list-dirs", "socketdir"]).outputText
        let socket = folder + "/S.gpg-agent"
        #expect(GPGAgentConnection.isTrustedSocket(socket, in: folder))

        // The socket's folder made writable for others (where someone else could have put it).
        var status = stat()
        #expect(stat(folder, &status) == 0)
        #expect(chmod(folder, 0o777) == 0)
        #expect(direct() == nil)
        #expect(chmod(folder, status.st_mode & 0o7777) == 0)
        #expect(direct() == Array("agent".utf8))

        // Another GnuPG home, with the same keyring and a symbolic link to the agent's socket: not a
        // socket the agent made there. (The agent's own socket stays: the agent ends when it goes.)
        let linked = sandbox.directory + "/linked-home"
        try sandbox.check(["mkdir", "-m", "700", linked])
        try sandbox.check(["cp", sandbox.gnupgHome + "/pubring.kbx", linked + "/"])
        #expect(symlink(socket, linked + "/S.gpg-agent") == 0)
        #expect(GPGAgentConnection.socketDirectory(home: linked, isDefaultHome: false) == linked)
        #expect(direct(linked) == nil)
        #expect(!GPGAgentConnection.isTrustedSocket(linked + "/S.gpg-agent", in: linked))

        // Not a socket at all.
        let file = try sandbox.writeFile("S.gpg-agent", [])
        #expect(!GPGAgentConnection.isTrustedSocket(file, in: sandbox.directory))
        #expect(direct() == Array("agent".utf8))
    }

    @Test func agentAnswersAreReadFromTheProtocol() throws {
        // A session key frame (AES-256, 32 bytes, checksum) in a PKCS #1 block, as the agent sends it.
        let key = [UInt8](repeating: 0x41, count: 32)
        let sum = key.reduce(UInt16(0)) { $0 &+ UInt16($1) }
        let frame = [9] + key + [UInt8(sum >> 8), UInt8(sum & 0xff)]
        let value = [0, 2] + [UInt8](repeating: 5, count: 20) + [0] + frame
        var escaped: [UInt8] = []
        for byte in Array("(5:value\(value.count):".utf8) + value + [UInt8(ascii: ")")] {
            escaped += [37, 10, 13].contains(byte) ? Array("%\(Hex.upper([byte]))".utf8) : [byte]
        }
        let transcript =
            Array("OK Pleased to meet you\nOK\n# comment\nOK\nINQUIRE CIPHERTEXT\nS PADDING 0\nD ".utf8)
            + escaped + Array("\nOK\n".utf8)
        var pair: [Int32] = [-1, -1]
        #if canImport(Glibc)
            #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        #else
            #expect(socketpair(AF_UNIX, SOCK_STREAM, 0, &pair) == 0)
        #endif
        defer { close(pair[1]) }
        #expect(transcript.withUnsafeBytes { write(pair[1], $0.baseAddress, $0.count) } == transcript.count)
        let connection = try #require(GPGAgentConnection(connected: pair[0]))
        let result = try #require(
            connection.decrypt(keygrip: String(repeating: "0", count: 40), ciphertext: []))
        let sessionKey = DirectDecryption.sessionKey(
            fromAgentResult: result, algorithm: KeyringKey.rsa, key: Self.ecdhKey(hash: 8), wrapped: [])
        #expect(sessionKey?.withBytes { Array($0) } == [9] + key)
    }

    // MARK: - Lengths

    /// Reads a new-format length back.
    static func decodedLength(_ encoded: [UInt8]) -> Int? {
        encoded.withUnsafeBytes { bytes -> Int? in
            switch bytes.first {
            case .some(let first) where first < 192: return Int(first)
            case .some(let first) where first < 224: return (Int(first) - 192) << 8 + Int(bytes[1]) + 192
            case .some(255): return PacketReader.bigEndian(bytes, at: 1, size: 4)
            default: return nil
            }
        }
    }

    @Test func lengthsOver32BitsAreLeftToGPG() throws {
        for count in [0, 191, 192, 8_383, 8_384, 1 << 20, Int(UInt32.max)] {
            let encoded = try #require(DirectEncryption.length(count))
            #expect(Self.decodedLength(encoded) == count, "\(count)")
        }
        // A 4 GiB entry cannot have a definite length: the in-process encryption refuses it (gpg uses
        // partial lengths) instead of writing a truncated one.
        for count in [1 << 32, (1 << 32) + 5, 1 << 40] {
            let encoded = DirectEncryption.length(count)
            #expect(encoded == nil || Self.decodedLength(encoded!) == count, "\(count)")
        }
        // Everything around the plaintext still fits.
        #expect(DirectEncryption.maximumPlaintext + 1 + 18 + 6 + 6 + 22 <= Int(UInt32.max))
    }

    // MARK: - ECDH parameters and randomness

    /// A Curve25519 ECDH subkey with the KDF hash `hash` (an OpenPGP hash id) and AES-256 key wrap.
    static func ecdhKey(hash: UInt8) -> KeyringKey {
        let point = [0x40] + [UInt8](repeating: 9, count: 32)
        var body: [UInt8] = [4, 0x5f, 0, 0, 0, KeyringKey.ecdh, UInt8(KeyringKey.curve25519OID.count)]
        body += KeyringKey.curve25519OID + DirectEncryption.mpi(point) + [3, 1, hash, 9]
        return body.withUnsafeBytes { KeyringKey(packetBody: $0) }!
    }

    @Test func ecdhKeysWithAnotherKDFHashThanGPGAcceptsAreLeftToGPG() {
        let shared = [UInt8](repeating: 3, count: 32)
        // SHA-256, -384, -512 as gpg; SHA-1 and SHA-224 not.
        for (hash, accepted) in [(8, true), (9, true), (10, true), (2, false), (11, false)] {
            let key = Self.ecdhKey(hash: UInt8(hash))
            #expect(key.isSupported == accepted, "hash \(hash)")
            let kek = shared.withUnsafeBytes { DirectDecryption.ecdhKeyEncryptionKey(sharedX: $0, key: key) }
            #expect((kek != nil) == accepted, "hash \(hash)")
        }
    }

    @Test func everyRandomByteComesFromTheStrongGenerator() throws {
        // The nonce generator is for public values; gpg takes the prefix from the strong one too.
        let testFile = #filePath
        let root = try #require(testFile.firstRange(of: "/Tests/CofferTests/"))
        let folder = String(testFile[..<root.lowerBound]) + "/Sources/Coffer/Crypto/Direct"
        let files = try FileSystem.contents(of: folder).filter { $0.hasSuffix(".swift") }
        #expect(files.contains("Gcrypt.swift"))
        for file in files {
            let text = String(decoding: try FileSystem.readFile(folder + "/" + file), as: UTF8.self)
            #expect(!text.contains("gcry_create_nonce") && !text.contains("GCRY_WEAK_RANDOM"), "\(file)")
        }
    }
}
