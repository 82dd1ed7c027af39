import CofferTestSupport
import Testing

@testable import Coffer

// The in-process decryption (gpg-agent for the session key, libgcrypt for the rest) against
// messages made by real gpg, GPGME and pass, and its refusals; the in-process encryption of bulk
// work against gpg and pass as readers.
extension GPGMEEngineTests {
    /// Starts the agent the way a first decryption through gpg does.
    func startAgent() throws {
        _ = try engine.decrypt(
            try engine.encrypt(SecureBytes(string: "warm up"), to: [sandbox.keys[0].email]))
    }

    func direct(_ message: [UInt8]) -> [UInt8]? {
        DirectDecryption.decrypt(message, homeDirectory: sandbox.gnupgHome)?.bytes
    }

    /// Encrypts from standard input with gpg itself (so the data comes in partial body lengths); the
    /// plaintext goes through files, as a large one would fill the pipes.
    func gpgEncrypt(
        _ plaintext: [UInt8], to recipients: [String], _ options: [String] = ["--compress-algo", "none"]
    )
        throws -> [UInt8]
    {
        let input = sandbox.directory + "/plain"
        let output = sandbox.directory + "/message"
        try FileSystem.atomicWrite(input, bytes: plaintext, mode: 0o600)
        let gpg =
            ["gpg", "--batch", "--quiet", "--yes", "--trust-model", "always", "-e"]
            + recipients.flatMap { ["-r", $0] } + options + ["-o", output]
        try sandbox.check(["sh", "-c", "exec \"$@\" < \"$0\"", input] + gpg)
        return try FileSystem.readFile(output)
    }

    /// Makes a key `uid` (an ed25519 or RSA primary key and an encryption subkey of `algorithm`) with
    /// gpg `options` (another home, a passphrase).
    func makeKey(_ uid: String, algorithm: String, options: [String] = ["--passphrase", ""]) throws {
        let gpg = ["gpg", "--batch", "--quiet"] + options
        try sandbox.check(
            gpg + ["--quick-gen-key", uid, algorithm == "cv25519" ? "ed25519" : algorithm, "cert", "0"])
        let listing = try sandbox.check(gpg + ["--with-colons", "--list-keys", uid]).outputText
        let fingerprint = listing.split(separator: "\n").first { $0.hasPrefix("fpr:") }!
            .split(separator: ":", omittingEmptySubsequences: false)[9]
        try sandbox.check(gpg + ["--quick-add-key", String(fingerprint), algorithm, "encr", "0"])
    }

    static func randomBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    @Test(arguments: [0, 1, 15, 16, 17, 511, 512, 513, 8_191, 100_000, 1_500_000])
    func messagesOfEverySizeFromGPGAndGPGME(size: Int) throws {
        try startAgent()
        let plaintext = Self.randomBytes(size)
        let fromGPG = try gpgEncrypt(plaintext, to: [sandbox.keys[0].fingerprint])
        #expect(direct(fromGPG) == plaintext)
        let fromGPGME = try engine.encrypt(SecureBytes(plaintext), to: [sandbox.keys[0].email])
        #expect(direct(fromGPGME) == plaintext)
    }

    @Test func armoredAndForSeveralRecipients() throws {
        try startAgent()
        let plaintext = Array("password\nuser: alice\n".utf8)
        let armored = try gpgEncrypt(
            plaintext, to: [sandbox.keys[0].email], ["--compress-algo", "none", "-a"])
        #expect(armored.starts(with: Array("-----BEGIN PGP MESSAGE-----".utf8)))
        #expect(direct(armored) == plaintext)
        let several = try gpgEncrypt(plaintext, to: [sandbox.keys[2].email, sandbox.keys[1].email])
        #expect(direct(several) == plaintext)
    }

    @Test func sessionKeysForSomeoneElseAreSkipped() throws {
        try startAgent()
        // A key made in another keyring, of which this one holds only the public part.
        let elsewhere = sandbox.directory + "/elsewhere"
        let uid = "Someone Else <else@coffer.test>"
        try sandbox.check(["mkdir", "-m", "700", elsewhere])
        try makeKey(uid, algorithm: "cv25519", options: ["--homedir", elsewhere, "--passphrase", ""])
        let exported = try sandbox.check(["gpg", "--homedir", elsewhere, "--export", uid]).standardOutput
        try sandbox.check(["gpg", "--batch", "--quiet", "--import"], input: exported)
        try sandbox.check(["gpgconf", "--homedir", elsewhere, "--kill", "gpg-agent"])
        let plaintext = Array("for two".utf8)
        let message = try gpgEncrypt(plaintext, to: [uid, sandbox.keys[1].email])
        #expect(OpenPGPPackets.recipientKeyIDs(message)?.count == 2)
        #expect(direct(message) == plaintext)
        #expect(direct(try gpgEncrypt(plaintext, to: [uid])) == nil)
    }

    @Test func entriesWrittenByPassDecryptInProcess() throws {
        try startAgent()
        try sandbox.check(["pass", "init", sandbox.keys[1].email])
        try sandbox.check(["pass", "insert", "-m", "site"], input: Array("p4ss\nurl: x\n".utf8))
        let file = try sandbox.read(sandbox.storeDirectory + "/site.gpg")
        #expect(direct(file) == Array("p4ss\nurl: x\n".utf8))
    }

    @Test func compressedMessagesAreLeftToGPG() throws {
        try startAgent()
        let plaintext = Array(String(repeating: "compressible ", count: 200).utf8)
        let compressed = try gpgEncrypt(plaintext, to: [sandbox.keys[0].email], [])
        #expect(direct(compressed) == nil)
        #expect(try engine.decrypt(compressed).bytes == plaintext)
    }

    @Test func alteredMessagesAreNeverReturned() throws {
        try startAgent()
        let plaintext = Array("do not trust me if I was changed".utf8)
        let message = try engine.encrypt(SecureBytes(plaintext), to: [sandbox.keys[0].email])
        #expect(direct(message) == plaintext)
        // The last byte (the MDC), a byte of the literal data, the first encrypted byte (the prefix).
        let split = try #require(message.withUnsafeBytes { DirectDecryption.split($0) })
        let encryptedStart = split.encrypted.body[0].lowerBound + 1  // After the version byte.
        for position in [message.count - 1, message.count - 25, encryptedStart] {
            var altered = message
            altered[position] ^= 0x01
            #expect(direct(altered) == nil, "byte \(position) of \(message.count) changed")
            #expect(throws: (any Error).self) { try engine.decrypt(altered) }
        }
        #expect(direct(Array(message.dropLast())) == nil)
        #expect(direct(message + [0]) == nil)
        #expect(direct([]) == nil)
    }

    @Test func keygripsAreGPGs() throws {
        try startAgent()
        let listing = try sandbox.check(["gpg", "--with-colons", "--with-keygrip", "--list-keys"]).outputText
        var fingerprint = ""
        var compared = 0
        for line in listing.split(separator: "\n") {
            let fields = line.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            if fields[0] == "fpr" { fingerprint = fields[9] }
            guard fields[0] == "grp" else { continue }
            let keyID = UInt64(fingerprint.suffix(16), radix: 16)!
            for key in KeyringIndex.shared.keys(withID: keyID, home: sandbox.gnupgHome) {
                #expect(Hex.upper(key.fingerprint) == fingerprint)
                #expect(key.keygrip == fields[9])
                compared += 1
            }
        }
        // Every key's cv25519 encryption subkey.
        #expect(compared == sandbox.keys.count)
    }

    @Test func keyringTimesFollowSignatureAndKeyExpiry() throws {
        let now = Int(time(nil))
        func encryptionSubkeyID(_ fingerprint: String) throws -> UInt64 {
            let listing = try sandbox.check(["gpg", "--with-colons", "--list-keys", fingerprint]).outputText
            let line = try #require(listing.split(separator: "\n").first { $0.hasPrefix("sub:") })
            return try #require(
                UInt64(line.split(separator: ":", omittingEmptySubsequences: false)[4], radix: 16))
        }
        // Asked at the time of asking: the signatures gpg has just made are dated then, which may be a
        // second or two after the test began, and would otherwise count as dated ahead.
        func nextChange(_ fingerprint: String) throws -> Int? {
            KeyringIndex.shared.nextChange(
                ofKeyWithID: try encryptionSubkeyID(fingerprint), home: sandbox.gnupgHome,
                after: Int(time(nil)))
        }
        // Nothing ahead for a key that never expires, and the keyring's own key is "now" when missing.
        #expect(try nextChange(sandbox.keys[1].fingerprint) == nil)
        #expect(
            KeyringIndex.shared.nextChange(ofKeyWithID: 0x1234, home: sandbox.gnupgHome, after: now) == now)
        // A certification that expires in a day (subpacket 3 on a user id's signature by another key).
        try sandbox.check([
            "gpg", "--batch", "--yes", "--default-key", sandbox.keys[0].fingerprint, "--default-cert-expire",
            "1d",
            "--quick-sign-key", sandbox.keys[1].fingerprint,
        ])
        let certified = try #require(try nextChange(sandbox.keys[1].fingerprint))
        #expect(abs(certified - (now + 86_400)) < 300, "\(certified - now)")
        // The encryption subkey expiring in two days (subpacket 9 on its binding signature).
        let subkey = try sandbox.check(["gpg", "--with-colons", "--list-keys", sandbox.keys[2].fingerprint])
            .outputText.split(separator: "\n").drop { !$0.hasPrefix("sub:") }.first { $0.hasPrefix("fpr:") }
            .map { String($0.split(separator: ":", omittingEmptySubsequences: false)[9]) }
        try sandbox.check([
            "gpg", "--batch", "--quick-set-expire", sandbox.keys[2].fingerprint, "2d", try #require(subkey),
        ])
        let expiring = try #require(try nextChange(sandbox.keys[2].fingerprint))
        #expect(abs(expiring - (now + 2 * 86_400)) < 300, "\(expiring - now)")
    }

    @Test func signatureTimesAreReadFromHashedSubpackets() {
        // Version 4, subkey binding, EdDSA, SHA-256; hashed: creation, signature expiry, key expiry.
        func subpacket(_ type: UInt8, _ value: Int) -> [UInt8] {
            [5, type] + (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) }
        }
        let hashed = subpacket(2, 1_000_000) + subpacket(3, 60) + subpacket(9 | 0x80, 500)
        let body: [UInt8] = [4, 0x18, 22, 8, 0, UInt8(hashed.count)] + hashed + [0, 0, 0xab, 0xcd]
        let times = body.withUnsafeBytes { KeyringIndex.signatureTimes($0, keyCreated: 900_000) }
        #expect(times == [1_000_000, 1_000_060, 900_500])
        // A truncated or version 3 signature gives none.
        #expect(body.prefix(9).withUnsafeBytes { KeyringIndex.signatureTimes($0, keyCreated: 0) } == [])
        #expect(
            ([3] + body.dropFirst()).withUnsafeBytes { KeyringIndex.signatureTimes($0, keyCreated: 0) } == [])
    }

    @Test func socketFolderIsTheOneGPGUses() throws {
        try startAgent()
        let folder = try sandbox.check(["gpgconf", "--list-dirs", "socketdir"]).outputText
        #expect(GPGAgentConnection.socketDirectory(home: sandbox.gnupgHome, isDefaultHome: false) == folder)
        // The z-base-32 specification's example.
        #expect(Base32.encode([0xf0, 0xbf, 0xc7], alphabet: Base32.zBase32) == "6n9hq")
    }

    @Test func withoutAnAgentGPGStartsOneAndThenItIsUsed() throws {
        try startAgent()
        let message = try engine.encrypt(SecureBytes(string: "agent"), to: [sandbox.keys[0].email])
        try sandbox.check(["gpgconf", "--kill", "gpg-agent"])
        #expect(direct(message) == nil)
        #expect(try engine.decrypt(message).string == "agent")
        #expect(direct(message) == Array("agent".utf8))
    }

    @Test func rsaKeys() throws {
        try startAgent()
        let uid = "RSA Test <rsa@coffer.test>"
        try makeKey(uid, algorithm: "rsa2048")
        for size in [1, 40, 70_000] {
            let plaintext = Self.randomBytes(size)
            #expect(direct(try gpgEncrypt(plaintext, to: [uid])) == plaintext)
        }
    }

    @Test func aKeyWithAPassphraseIsLeftToGPG() throws {
        try startAgent()
        let uid = "Locked <locked@coffer.test>"
        try makeKey(
            uid, algorithm: "cv25519", options: ["--pinentry-mode", "loopback", "--passphrase", "pw"])
        // Forget the passphrase gpg cached while making the key.
        try sandbox.check(["gpgconf", "--reload", "gpg-agent"])
        let message = try gpgEncrypt(Array("locked".utf8), to: [uid])
        #expect(direct(message) == nil)
        let unlocked = try sandbox.check(
            ["gpg", "--batch", "--quiet", "--pinentry-mode", "loopback", "--passphrase", "pw", "-d"],
            input: message)
        #expect(unlocked.outputText == "locked")
        // gpg-agent now has the passphrase cached, so no prompt is needed.
        #expect(direct(message) == Array("locked".utf8))
    }

    /// Decrypts with gpg itself.
    func gpgDecrypt(_ message: [UInt8]) throws -> [UInt8] {
        let path = sandbox.directory + "/to-decrypt"
        try FileSystem.atomicWrite(path, bytes: message, mode: 0o600)
        return try sandbox.check(["gpg", "--batch", "--quiet", "-d", path]).standardOutput
    }

    @Test func inProcessMessagesAreReadByGPG() throws {
        try startAgent()
        let uid = "RSA Reader <rsa-reader@coffer.test>"
        try makeKey(uid, algorithm: "rsa2048")
        for recipients in [[sandbox.keys[0].email], [uid], [sandbox.keys[1].email, uid]] {
            let encryptor = try #require(engine.encryptor(for: recipients) as? GPGCheckedEncryptor)
            let first = try encryptor.encrypt(SecureBytes(string: "first"))
            #expect(encryptor.encryptsInProcess)
            // Across the one-, two- and five-byte packet length forms.
            for size in [0, 1, 150, 191, 192, 8_000, 8_383, 8_384, 100_000] {
                let plaintext = Self.randomBytes(size)
                let message = try encryptor.encrypt(SecureBytes(plaintext))
                #expect(try gpgDecrypt(message) == plaintext, "\(size) bytes for \(recipients)")
                #expect(OpenPGPPackets.recipientKeyIDs(message) == OpenPGPPackets.recipientKeyIDs(first))
                #expect(direct(message) == plaintext)
            }
        }
        let path = sandbox.directory + "/listed"
        let encryptor = engine.encryptor(for: [sandbox.keys[0].email])
        _ = try encryptor.encrypt(SecureBytes(string: "gpg"))
        try FileSystem.atomicWrite(path, bytes: try encryptor.encrypt(SecureBytes(string: "x")), mode: 0o600)
        let packets = try sandbox.check(["gpg", "--batch", "--list-packets", path]).outputText
        #expect(packets.contains("encrypted data packet") && packets.contains("mdc_method: 2"))
        #expect(!packets.contains("compressed packet"))
    }

    @Test func theFirstEncryptionIsGPGsAndRefusesWhatGPGRefuses() throws {
        try startAgent()
        let unknown = engine.encryptor(for: ["nobody@nowhere.test"])
        #expect(throws: GPGError.self) { try unknown.encrypt(SecureBytes(string: "x")) }
        #expect(throws: GPGError.self) { try unknown.encrypt(SecureBytes(string: "x")) }
        var options = GPGOptions(homeDirectory: sandbox.gnupgHome)
        options.directDecryption = false
        let plain = GPGMEEngine(options: options).encryptor(for: [sandbox.keys[0].email])
        #expect(!(plain is GPGCheckedEncryptor))
    }

    @Test func storeReencryptedInProcessIsReadByPass() throws {
        try startAgent()
        let store = sandbox.store()
        try store.initialize(recipients: [sandbox.keys[0].email])
        let names = (0..<12).map { "team/entry\($0)" }
        for name in names { try store.write(name, SecureBytes(string: "secret of \(name)\nuser: u\n")) }
        try store.initialize(recipients: [sandbox.keys[1].email, sandbox.keys[2].email])
        let wanted = try engine.encryptionKeyIDs(for: [sandbox.keys[1].email, sandbox.keys[2].email])
        for name in names {
            let shown = try sandbox.check(["pass", "show", name])
            #expect(shown.outputText == "secret of \(name)\nuser: u")
            let file = try FileSystem.readFile(store.entryPath(name))
            #expect(OpenPGPPackets.recipientKeyIDs(file) == wanted)
        }
    }
}
