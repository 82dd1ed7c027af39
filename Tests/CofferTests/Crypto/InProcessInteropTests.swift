import CofferTestSupport
import Testing

@testable import Coffer

/// The interoperability matrix, writing side: what coffer encrypts in the process (after gpg's first
/// message for the same recipients) decrypts byte for byte with gpg, Sequoia's `sq` and `sqop`, rnp
/// and PGPy, for cv25519, RSA-3072, several recipients, a key with two encryption subkeys and a key
/// with expired and revoked ones, from 0 bytes to 1 MiB.
@Suite("In-process encryption read by other OpenPGP implementations")
struct InProcessInteropTests {
    /// Who the messages are for, and whose secret key the reader gets.
    struct Recipients: Sendable, CustomStringConvertible {
        let keys: [InteropKey]
        let reader: InteropKey
        var description: String { keys.map(\.email).joined(separator: ",") }
    }

    static let recipients = [
        Recipients(keys: [.curve25519], reader: .curve25519),
        Recipients(keys: [.rsa], reader: .rsa),
        Recipients(keys: [.curve25519, .rsa, .curve25519Second], reader: .curve25519Second),
        Recipients(keys: [.twoSubkeys], reader: .twoSubkeys),
        Recipients(keys: [.worn], reader: .worn),
    ]

    static let sizes = [0, 1, 3_000, 1 << 20]

    @Test(arguments: OpenPGPImplementation.allCases)
    func messagesDecryptByteForByte(with implementation: OpenPGPImplementation) throws {
        let sandbox = try GPGSandbox()
        try sandbox.useInteropKeyring()
        let engine = GPGMEEngine(options: GPGOptions(homeDirectory: sandbox.gnupgHome, alwaysTrust: true))
        var generator = SystemRandomNumberGenerator()
        let random = (0..<(Self.sizes.max()! / 8)).flatMap { _ in
            withUnsafeBytes(of: generator.next()) { Array($0) }
        }
        for recipients in Self.recipients {
            let encryptor = try #require(
                engine.encryptor(for: recipients.keys.map(\.email)) as? GPGCheckedEncryptor)
            let first = try encryptor.encrypt(SecureBytes(string: "gpg encrypts the first"))
            #expect(encryptor.encryptsInProcess, "\(recipients)")
            var plaintexts: [[UInt8]] = []
            var messages: [[UInt8]] = []
            for size in Self.sizes {
                plaintexts.append(Array(random.prefix(size)))
                messages.append(try encryptor.encrypt(SecureBytes(plaintexts.last!)))
                // The same subkeys as gpg's own message: the ones gpg chose.
                #expect(
                    OpenPGPPackets.recipientKeyIDs(messages.last!) == OpenPGPPackets.recipientKeyIDs(first))
            }
            let decrypted = try sandbox.decrypt(messages, with: implementation, key: recipients.reader)
            for (index, size) in Self.sizes.enumerated() {
                #expect(decrypted[index] == plaintexts[index], "\(size) bytes for \(recipients)")
            }
        }
    }
}
