import CGcrypt
import CofferTestSupport
import Testing

@testable import Coffer

/// Runs `coffer show NAME` in the sandbox with the in-process decryption on or off.
private func show(_ name: String, in sandbox: GPGSandbox, direct: Bool) throws -> ChildProcess.Output {
    try sandbox.run(
        [try CofferBinary.path(), "show", name], environment: ["COFFER_DIRECT_DECRYPT": direct ? "1" : "0"])
}

/// The interoperability matrix, reading side: messages gpg, `sq`, `sqop`, rnp and PGPy write (binary,
/// armored, text mode with CRLF, compressed, other ciphers, rnp's AEAD, hidden recipients) give
/// through `coffer show` the bytes `gpg -d` gives, with the in-process decryption on and off.
@Suite("Messages of other OpenPGP implementations through coffer show")
struct ForeignMessageTests {
    /// Text with every kind of line end, and UTF-8 (PGPy's text mode wants UTF-8).
    static let plaintext = Array("p4ss\r\nuser: émile\rnext\n\r\nlast line\r".utf8)

    @Test(arguments: OpenPGPImplementation.allCases)
    func showsWhatGPGShows(from implementation: OpenPGPImplementation) throws {
        let sandbox = try GPGSandbox()
        try sandbox.useInteropKeyring()
        try sandbox.check(["mkdir", "-p", sandbox.storeDirectory + "/\(implementation)"])
        try "\(InteropKey.curve25519.email)\n".write(toFile: sandbox.storeDirectory + "/.gpg-id")
        for variant in implementation.variants {
            let message = try sandbox.encrypt(
                Self.plaintext, with: implementation, variant: variant, to: .curve25519)
            let name = "\(implementation)/\(variant)"
            _ = try sandbox.writeFile("home/.password-store/\(name).gpg", message)
            let byGPG = try sandbox.check([
                "gpg", "--batch", "--quiet", "-d", sandbox.storeDirectory + "/\(name).gpg",
            ])
            // Once gpg-agent runs (gpg started it above), the in-process path can be taken.
            let direct = try show(name, in: sandbox, direct: true)
            let throughGPG = try show(name, in: sandbox, direct: false)
            #expect(direct.status == 0, "\(name): \(direct.errorText)")
            #expect(direct.standardOutput == byGPG.standardOutput, "\(name) in the process")
            #expect(throughGPG.standardOutput == byGPG.standardOutput, "\(name) through gpg")
        }
        // gpg drops every carriage return of text-mode data (on Unix), and so does coffer.
        if implementation.variants.contains("text") {
            let text = try show("\(implementation)/text", in: sandbox, direct: true)
            #expect(!text.standardOutput.contains(13))
        }
    }

    @Test func aMessageForSomeoneElseGivesTheSameErrorBothWays() throws {
        let sandbox = try GPGSandbox()
        try sandbox.useInteropKeyring()
        try sandbox.check(["mkdir", "-p", sandbox.storeDirectory])
        try "\(InteropKey.curve25519.email)\n".write(toFile: sandbox.storeDirectory + "/.gpg-id")
        // Encrypted to the RSA key, whose secret part is then removed from the keyring.
        let message = try sandbox.encrypt(Self.plaintext, with: .gpg, variant: "binary", to: .rsa)
        let listing = try sandbox.check([
            "gpg", "--with-colons", "--with-keygrip", "-K", InteropKey.rsa.email,
        ])
        for line in listing.outputText.split(separator: "\n") where line.hasPrefix("grp:") {
            let keygrip = line.split(separator: ":", omittingEmptySubsequences: false)[9]
            try sandbox.check(["rm", "-f", sandbox.gnupgHome + "/private-keys-v1.d/\(keygrip).key"])
        }
        _ = try sandbox.writeFile("home/.password-store/foreign.gpg", message)
        // With gpg-agent running, the in-process path asks it and is refused.
        try sandbox.check(["gpg-connect-agent", "/bye"])
        let direct = try show("foreign", in: sandbox, direct: true)
        let throughGPG = try show("foreign", in: sandbox, direct: false)
        #expect(direct.status != 0 && direct.standardOutput.isEmpty)
        #expect(direct.status == throughGPG.status && direct.errorText == throughGPG.errorText)
        #expect(direct.errorText.contains("No secret key"), "\(direct.errorText)")
    }
}

/// The tamper table: files coffer encrypted in the process and files gpg wrote, each changed in one
/// way (the MDC, the ciphertext, the random prefix, the session-key packet, cut short, or turned into
/// a message without MDC), never give a byte of plaintext, in the process or through gpg, and
/// `coffer show` says what is wrong.
@Suite("Tampered files never decrypt")
struct TamperTests {
    static let secret = "tamper-secret-7d2f"
    static let plaintext = Array(
        "\(secret)\nuser: someone\nurl: https://example.com/a/long/enough/path\n".utf8)

    /// One way to change a file, and what `coffer show` must then say.
    struct Tamper: Sendable, CustomStringConvertible {
        let description: String
        let expected: String
        let change: @Sendable (_ message: [UInt8], _ sandbox: GPGSandbox) throws -> [UInt8]
    }

    static let altered = "the file was altered: its integrity check (MDC) failed"

    static let tampers: [Tamper] = [
        Tamper(description: "MDC", expected: altered) { message, _ in flipped(message, at: message.count - 1)
        },
        Tamper(description: "ciphertext", expected: altered) { message, _ in
            flipped(message, at: message.count - 40)
        },
        Tamper(description: "prefix", expected: altered) { message, _ in
            flipped(message, at: try encryptedData(message).lowerBound + 1)
        },
        Tamper(description: "prefix check bytes", expected: altered) { message, _ in
            flipped(message, at: try encryptedData(message).lowerBound + 1 + 16)
        },
        Tamper(
            description: "session-key packet", expected: "the session key in the file does not decrypt"
        ) { message, _ in
            let packets = try #require(message.withUnsafeBytes { DirectDecryption.split($0) })
            return flipped(message, at: packets.sessionKeys[0].upperBound - 4)
        },
        Tamper(description: "truncated", expected: "corrupt or truncated") { message, _ in
            Array(message.dropLast(10))
        },
        Tamper(description: "cut in half", expected: "corrupt or truncated") { message, _ in
            Array(message.prefix(message.count / 2))
        },
        Tamper(description: "no-MDC downgrade", expected: "not integrity protected") { message, sandbox in
            try withoutMDC(message, sandbox: sandbox)
        },
    ]

    @Test(arguments: ["in-process", "gpg"])
    func tamperedFilesGiveNoPlaintextAndAClearMessage(writtenBy writer: String) throws {
        let (sandbox, _) = try GPGSandbox.withStore()
        let engine = sandbox.engine
        let encryptor = try #require(engine.encryptor(for: [sandbox.keys[0].email]) as? GPGCheckedEncryptor)
        var message = try encryptor.encrypt(SecureBytes(Self.plaintext))
        if writer == "in-process" {
            message = try encryptor.encrypt(SecureBytes(Self.plaintext))
            #expect(encryptor.encryptsInProcess)
        }
        _ = try sandbox.writeFile("home/.password-store/intact.gpg", message)
        #expect(try show("intact", in: sandbox, direct: true).standardOutput == Self.plaintext)
        for tamper in Self.tampers {
            let changed = try tamper.change(message, sandbox)
            let name = tamper.description.replacing(" ", with: "-")
            _ = try sandbox.writeFile("home/.password-store/\(name).gpg", changed)
            #expect(DirectDecryption.decrypt(changed, homeDirectory: sandbox.gnupgHome) == nil, "\(tamper)")
            let direct = try show(name, in: sandbox, direct: true)
            let throughGPG = try show(name, in: sandbox, direct: false)
            for output in [direct, throughGPG] {
                #expect(
                    output.status != 0 && output.standardOutput.isEmpty, "\(tamper): \(output.outputText)")
                #expect(!output.errorText.contains(Self.secret), "\(tamper)")
                #expect(output.errorText.contains(tamper.expected), "\(tamper): \(output.errorText)")
            }
            #expect(direct.errorText == throughGPG.errorText, "\(tamper)")
        }
    }

    static func flipped(_ message: [UInt8], at position: Int) -> [UInt8] {
        var changed = message
        changed[position] ^= 0x01
        return changed
    }

    /// Where the encrypted data packet's first body part is (its version byte first).
    static func encryptedData(_ message: [UInt8]) throws -> Range<Int> {
        try #require(message.withUnsafeBytes { DirectDecryption.split($0) }?.encrypted.body.first)
    }

    /// The downgrade attack: the same session key and literal data in a symmetrically encrypted
    /// packet without MDC (tag 9, OpenPGP CFB with its resynchronisation), after the original
    /// session-key packets.
    static func withoutMDC(_ message: [UInt8], sandbox: GPGSandbox) throws -> [UInt8] {
        let file = try sandbox.writeFile("to-downgrade.gpg", message)
        let status = try sandbox.check(
            [
                "gpg", "--batch", "--quiet", "--show-session-key", "--status-fd", "1", "-o", "/dev/null",
                "-d", file,
            ])
        let line = try #require(status.outputText.split(separator: "\n").first { $0.contains("SESSION_KEY") })
        let parts = try #require(line.split(separator: " ").last).split(separator: ":")
        let cipher = try #require(UInt8(parts[0]))
        let hex = Array(parts[1].utf8)
        let key = stride(from: 0, to: hex.count, by: 2).map {
            UInt8(String(decoding: hex[$0..<($0 + 2)], as: UTF8.self), radix: 16)!
        }
        // Decrypt the original packet to find the literal packet inside.
        var offset = 0
        var head: [UInt8] = []
        var encrypted: [UInt8] = []
        try message.withUnsafeBytes { bytes in
            while let packet = PacketReader.packet(in: bytes, at: offset) {
                if packet.tag == 18 {
                    head = Array(message[..<offset])
                    encrypted = packet.body.flatMap { Array(message[$0]) }
                }
                offset = packet.end
            }
            try #require(!encrypted.isEmpty)
        }
        var plain = [UInt8](repeating: 0, count: encrypted.count - 1)
        let decrypted = key.withUnsafeBytes { key in
            encrypted.dropFirst().withUnsafeBytes { input in
                plain.withUnsafeMutableBytes { output in
                    Gcrypt.crypt(
                        openPGPCipher: cipher, mode: GCRY_CIPHER_MODE_CFB, key: key, input: input,
                        output: output)
                }
            }
        }
        try #require(decrypted)
        let literal = Array(plain[18..<(plain.count - 22)])
        var prefix = [UInt8](repeating: 0, count: 16)
        var generator = SystemRandomNumberGenerator()
        for index in prefix.indices { prefix[index] = generator.next() }
        prefix += prefix.suffix(2)
        let start = try cfb(prefix, key: key, cipher: cipher, iv: [UInt8](repeating: 0, count: 16))
        let rest = try cfb(literal, key: key, cipher: cipher, iv: Array(start[2..<18]))
        return head + (DirectEncryption.packet(tag: 9, body: start + rest) ?? [])
    }

    /// CFB encryption built from single blocks, so any IV can be used.
    static func cfb(_ data: [UInt8], key: [UInt8], cipher: UInt8, iv: [UInt8]) throws -> [UInt8] {
        var register = iv
        var output: [UInt8] = []
        for start in stride(from: 0, to: data.count, by: 16) {
            var stream = [UInt8](repeating: 0, count: 16)
            let done = key.withUnsafeBytes { key in
                register.withUnsafeBytes { input in
                    stream.withUnsafeMutableBytes { output in
                        Gcrypt.crypt(
                            encrypting: true, openPGPCipher: cipher, mode: GCRY_CIPHER_MODE_ECB, key: key,
                            input: input, output: output)
                    }
                }
            }
            try #require(done)
            let block = zip(data[start..<min(start + 16, data.count)], stream).map { $0 ^ $1 }
            output += block
            if block.count == 16 { register = block }
        }
        return output
    }
}
