import CofferTestSupport
import Testing

@testable import Coffer

/// Which messages have a payload identity and key ids to go by: only the usual shape gpg and coffer
/// write. Every other shape here is one gpg reads too, made without any key from a real message.
@Suite("Message shapes: what a payload identity is given for")
struct MessageShapeTests {
    /// A message gpg made for the first test key, and gpg's own ASCII armor of it as a message.
    static func messages(_ sandbox: GPGSandbox) throws -> (binary: [UInt8], armored: [UInt8]) {
        let binary = try sandbox.engine.encrypt(SecureBytes(string: "shape\n"), to: [sandbox.keys[0].email])
        let armor = try sandbox.check(["gpg", "--batch", "--enarmor"], input: binary).outputText
        let lines = armor.replacing("ARMORED FILE", with: "MESSAGE").split(
            separator: "\n", omittingEmptySubsequences: false
        )
        .filter { !$0.hasPrefix("Comment:") }
        return (binary, Array((lines.joined(separator: "\n") + "\n").utf8))
    }

    /// What gpg decrypts `message` to, or `nil`.
    static func decrypted(_ message: [UInt8], in sandbox: GPGSandbox) throws -> String? {
        let output = try sandbox.run(["gpg", "--batch", "--quiet", "--decrypt"], input: message)
        return output.status == 0 ? String(decoding: output.standardOutput, as: UTF8.self) : nil
    }

    @Test func theUsualShapeKeepsItsIdentityInArmor() throws {
        let sandbox = try GPGSandbox()
        let (binary, armored) = try Self.messages(sandbox)
        let id = try #require(OpenPGPPackets.payloadID(binary))
        #expect(try Self.decrypted(armored, in: sandbox) == "shape\n")
        #expect(OpenPGPPackets.payloadID(armored) == id)
        #expect(OpenPGPPackets.isUsualMessage(armored))
        // Another encryption of the same text is another payload.
        let again = try sandbox.engine.encrypt(SecureBytes(string: "shape\n"), to: [sandbox.keys[0].email])
        #expect(OpenPGPPackets.payloadID(again) != id)
    }

    @Test func otherShapesGpgReadsHaveNone() throws {
        let sandbox = try GPGSandbox()
        let (binary, armored) = try Self.messages(sandbox)
        let length = UInt32(binary.count + 1)
        let compressed =
            [0xC8, 0xFF] + (0..<4).map { UInt8(truncatingIfNeeded: length >> (24 - 8 * $0)) } + [0] + binary
        let shapes: [(String, [UInt8])] = [
            ("compressed", compressed),
            ("text before the armor", Array("note\n".utf8) + armored),
        ]
        for (shape, bytes) in shapes {
            #expect(try Self.decrypted(bytes, in: sandbox) == "shape\n", "\(shape)")
            #expect(OpenPGPPackets.payloadID(bytes) == nil, "\(shape)")
            #expect(!OpenPGPPackets.isUsualMessage(bytes), "\(shape)")
        }
        // Bytes after the encrypted packet, or no session key packet before it.
        #expect(OpenPGPPackets.payloadID(binary + [0xC8, 0x01, 0x00]) == nil)
        #expect(OpenPGPPackets.payloadID(Array(binary.dropFirst(Self.firstPacketLength(binary)))) == nil)
    }

    /// The length of the first packet of `bytes` (a session key packet gpg wrote: old format).
    static func firstPacketLength(_ bytes: [UInt8]) -> Int {
        let size = [1, 2, 4][Int(bytes[0] & 3)]
        return 1 + size + bytes[1...size].reduce(0) { $0 << 8 | Int($1) }
    }
}
