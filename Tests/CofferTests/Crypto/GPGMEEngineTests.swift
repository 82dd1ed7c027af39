import CofferTestSupport
import Testing

@testable import Coffer

@Suite("GPGME engine with real gpg")
struct GPGMEEngineTests {
    let sandbox: GPGSandbox
    var engine: GPGMEEngine { sandbox.engine }

    init() throws { sandbox = try GPGSandbox() }

    @Test func roundTripByFingerprintEmailAndKeyID() throws {
        let key = sandbox.keys[0]
        for recipient in [key.fingerprint, key.email, String(key.fingerprint.suffix(16))] {
            let ciphertext = try engine.encrypt(SecureBytes(string: "hunter2\n"), to: [recipient])
            #expect(try engine.decrypt(ciphertext).string == "hunter2\n")
        }
    }

    @Test func ciphertextIsReadableByGPGAndUncompressed() throws {
        let ciphertext = try engine.encrypt(SecureBytes(string: "plain text"), to: [sandbox.keys[0].email])
        let path = sandbox.directory + "/message.gpg"
        try String(decoding: [], as: UTF8.self).write(toFile: path)
        try FileSystem.atomicWrite(path, bytes: ciphertext, mode: 0o600)
        let decrypted = try sandbox.check(["gpg", "--batch", "--quiet", "-d", path])
        #expect(decrypted.outputText == "plain text")
        let packets = try sandbox.check(["gpg", "--batch", "--list-packets", path])
        #expect(!packets.outputText.contains("compressed packet"))
    }

    @Test func encryptsToSeveralRecipientsAndReportsTheirSubkeys() throws {
        let recipients = [sandbox.keys[0].email, sandbox.keys[1].fingerprint]
        let ciphertext = try engine.encrypt(SecureBytes(string: "shared"), to: recipients)
        let wanted = try engine.encryptionKeyIDs(for: recipients)
        #expect(wanted.count == 2)
        #expect(OpenPGPPackets.recipientKeyIDs(ciphertext) == wanted)
    }

    @Test func unknownRecipientIsATypedError() throws {
        #expect {
            try engine.encrypt(SecureBytes(string: "x"), to: ["nobody@nowhere.test"])
        } throws: { error in
            (error as? GPGError)?.kind == .noPublicKey
                && (error as? GPGError)?.message.contains("nobody@nowhere.test") == true
        }
    }

    @Test func recipientThatLooksLikeAnOptionIsARecipient() throws {
        #expect(throws: GPGError.self) {
            try engine.encrypt(SecureBytes(string: "x"), to: ["--always-trust"])
        }
    }

    @Test func corruptAndTruncatedDataAreTypedErrors() throws {
        let ciphertext = try engine.encrypt(SecureBytes(string: "secret"), to: [sandbox.keys[0].email])
        for bad in [Array(ciphertext.prefix(ciphertext.count / 2)), [UInt8](), Array("not pgp".utf8)] {
            #expect {
                try engine.decrypt(bad)
            } throws: { error in
                (error as? GPGError)?.kind == .corruptData
            }
        }
    }

    @Test func detachedSignatureVerifies() throws {
        let data = Array("recipient list\n".utf8)
        let signature = try engine.signDetached(data, signer: sandbox.keys[0].fingerprint)
        let checks = try engine.verifyDetached(signature: signature, of: data)
        #expect(checks.count == 1)
        #expect(checks.first?.isValid == true)
        #expect(checks.first?.fingerprints.contains(sandbox.keys[0].fingerprint) == true)
        let tampered = try engine.verifyDetached(signature: signature, of: data + [0x41])
        #expect(tampered.allSatisfy { !$0.isValid })
    }

    @Test func listsKeysWithSubkeys() throws {
        let keys = try engine.keys(matching: [sandbox.keys[1].email], secretOnly: true)
        #expect(keys.count == 1)
        #expect(keys.first?.fingerprint == sandbox.keys[1].fingerprint)
        #expect(keys.first?.subkeys.count == 2)
        #expect(keys.first?.subkeys.last?.canEncrypt == true)
    }

    @Test func manyThreadsAtOnce() async throws {
        let ciphertext = try engine.encrypt(SecureBytes(string: "parallel"), to: [sandbox.keys[0].email])
        let engine = self.engine
        try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<16 { group.addTask { try engine.decrypt(ciphertext).string } }
            for try await text in group { #expect(text == "parallel") }
        }
    }
}

@Suite("Armored output")
struct ArmorTests {
    @Test func armorOptionWritesArmoredFilesWhoseKeysAreStillRead() throws {
        let sandbox = try GPGSandbox()
        let engine = sandbox.engine
        var armored = engine.options
        armored.armor = true
        let armoredEngine = GPGMEEngine(options: armored)
        let text = try armoredEngine.encrypt(SecureBytes(string: "armored"), to: [sandbox.keys[0].email])
        #expect(text.starts(with: Array("-----BEGIN PGP MESSAGE-----".utf8)))
        #expect(try engine.decrypt(text).string == "armored")
        let binary = try engine.encrypt(SecureBytes(string: "armored"), to: [sandbox.keys[0].email])
        #expect(OpenPGPPackets.recipientKeyIDs(text) == OpenPGPPackets.recipientKeyIDs(binary))
        #expect(GPGOptions(parsing: "--armor").armor)
        #expect(GPGOptions(parsing: "--armor").ignored.isEmpty)
    }
}
