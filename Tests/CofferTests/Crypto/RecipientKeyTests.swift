import CofferTestSupport
import Testing

@testable import Coffer

/// Which encryption subkeys a store expects for its recipients (what gpg picks, so re-encryption
/// happens once), and what is said about a key that cannot encrypt.
@Suite("Recipient keys: gpg's choice of subkey, and keys that cannot encrypt")
struct RecipientKeyTests {
    static func subkey(
        _ id: String, created: Int, encrypt: Bool = true, expired: Bool = false, revoked: Bool = false
    )
        -> KeyInfo.Subkey
    {
        KeyInfo.Subkey(
            fingerprint: String(repeating: "0", count: 24) + id, keyID: id, canEncrypt: encrypt,
            canSign: !encrypt,
            isUnusable: expired || revoked, isExpired: expired, isRevoked: revoked, creationTime: created)
    }

    static func key(_ subkeys: [KeyInfo.Subkey], expired: Bool = false, revoked: Bool = false) -> KeyInfo {
        KeyInfo(
            fingerprint: subkeys[0].fingerprint, userIDs: ["k"], subkeys: subkeys, hasSecret: false,
            isExpired: expired, isRevoked: revoked)
    }

    @Test func theSubkeyIsTheNewestUsableOneAsGnuPGLooksItUp() {
        let now = 2_000
        let primary = Self.subkey("PRIMARY000000000", created: 100, encrypt: false)
        let old = Self.subkey("OLD0000000000000", created: 200)
        let new = Self.subkey("NEW0000000000000", created: 300)
        let twin = Self.subkey("TWIN000000000000", created: 300)
        let future = Self.subkey("FUTURE0000000000", created: now + 1)
        let expired = Self.subkey("EXPIRED000000000", created: 400, expired: true)
        let revoked = Self.subkey("REVOKED000000000", created: 500, revoked: true)
        let signing = Self.subkey("SIGNING000000000", created: 600, encrypt: false)
        #expect(Self.key([primary, old, new]).encryptionSubkey(now: now)?.keyID == new.keyID)
        #expect(Self.key([primary, new, old]).encryptionSubkey(now: now)?.keyID == new.keyID)
        // Made in the same second: the first listed.
        #expect(Self.key([primary, new, twin]).encryptionSubkey(now: now)?.keyID == new.keyID)
        #expect(
            Self.key([primary, old, future, expired, revoked, signing]).encryptionSubkey(now: now)?.keyID
                == old.keyID)
        #expect(Self.key([primary, expired, revoked]).encryptionSubkey(now: now) == nil)
        #expect(Self.key([primary, old], revoked: true).encryptionSubkey(now: now) == nil)
        #expect(Self.key([primary, old], expired: true).encryptionSubkey(now: now) == nil)
        // A primary key that encrypts itself is used when no subkey can.
        let encryptingPrimary = Self.subkey("RSAPRIMARY000000", created: 100)
        #expect(
            Self.key([encryptingPrimary, expired]).encryptionSubkey(now: now)?.keyID
                == encryptingPrimary.keyID)
        #expect(Self.key([encryptingPrimary, old]).encryptionSubkey(now: now)?.keyID == old.keyID)
        // Why not, when not.
        #expect(Self.key([primary, signing]).encryptionProblem(now: now)?.kind == .unusableKey)
        #expect(Self.key([primary, expired]).encryptionProblem(now: now)?.kind == .expiredKey)
        #expect(Self.key([primary, revoked]).encryptionProblem(now: now)?.kind == .revokedKey)
        #expect(Self.key([primary, expired, revoked]).encryptionProblem(now: now)?.kind == .unusableKey)
        #expect(Self.key([primary, old], revoked: true).encryptionProblem(now: now)?.kind == .revokedKey)
        #expect(Self.key([primary, old]).encryptionProblem(now: now) == nil)
    }

    @Test func aStoreForAKeyWithTwoEncryptionSubkeysIsReencryptedOnce() throws {
        let sandbox = try GPGSandbox()
        try sandbox.useInteropKeyring()
        let store = sandbox.store()
        let engine = store.engine
        for key in [InteropKey.twoSubkeys, .worn] {
            // What the store expects is what gpg encrypts to: one subkey, the newest usable.
            let byGPG = try engine.encrypt(SecureBytes(string: "x"), to: [key.email])
            let expected = try engine.encryptionKeyIDs(for: [key.email])
            #expect(expected.count == 1, "\(key.email)")
            #expect(OpenPGPPackets.recipientKeyIDs(byGPG) == expected, "\(key.email)")
        }
        // A subkey named exactly (`ID!`) is used, whatever its age.
        let listed = try engine.keys(matching: [InteropKey.twoSubkeys.email], secretOnly: false)
        let older = try #require(listed.first?.subkeys.dropFirst().min { $0.creationTime < $1.creationTime })
        let exact = try engine.encryptionKeyIDs(for: ["\(older.keyID)!"])
        #expect(exact == [older.keyID])
        #expect(
            OpenPGPPackets.recipientKeyIDs(
                try engine.encrypt(SecureBytes(string: "x"), to: ["\(older.keyID)!"]))
                == exact)

        try store.initialize(recipients: [sandbox.keys[0].email])
        let names = ["a", "b/c", "b/d"]
        for name in names { try store.write(name, SecureBytes(string: "secret of \(name)\n")) }
        func reencrypted(_ recipients: [String]) throws -> Int {
            var count = 0
            try store.initialize(recipients: recipients) { event in
                if case .reencrypted = event { count += 1 }
            }
            return count
        }
        #expect(try reencrypted([InteropKey.twoSubkeys.email]) == names.count)
        let files = try names.map { try FileSystem.readFile(store.entryPath($0)) }
        // Nothing changed: nothing is re-encrypted, and the files stay byte for byte.
        #expect(try reencrypted([InteropKey.twoSubkeys.email]) == 0)
        #expect(try names.map { try FileSystem.readFile(store.entryPath($0)) } == files)
        #expect(try store.check().isEmpty)
    }

    @Test func aKeyThatCannotEncryptIsNamedWithTheReason() throws {
        let sandbox = try GPGSandbox()
        let gpg = ["gpg", "--batch", "--quiet", "--passphrase", ""]
        try sandbox.check(
            gpg + ["--quick-gen-key", "Signer <signer@coffer.test>", "ed25519", "sign", "never"])
        try sandbox.check(
            gpg + [
                "--faked-system-time", "20200101T000000!", "--quick-gen-key", "Old <old@coffer.test>",
                "ed25519",
            ]
                + ["sign", "never"])
        let listing = try sandbox.check(["gpg", "--with-colons", "--list-keys", "old@coffer.test"]).outputText
        let old = String(
            try #require(listing.split(separator: "\n").first { $0.hasPrefix("fpr:") })
                .split(separator: ":", omittingEmptySubsequences: false)[9])
        try sandbox.check(
            gpg + [
                "--faked-system-time", "20200101T000000!", "--quick-add-key", old, "cv25519", "encr",
                "2020-06-01",
            ])
        let store = sandbox.store()
        let engine = store.engine

        let signer = try engine.recipientProblems(["signer@coffer.test"])
        #expect(signer.map(\.kind) == [.unusableKey])
        #expect(signer.first?.message.contains("has no encryption subkey") == true, "\(signer)")
        let expired = try engine.recipientProblems(["old@coffer.test"])
        #expect(expired.map(\.kind) == [.expiredKey])
        #expect(expired.first?.message.contains("encryption subkey of the key \(old) has expired") == true)
        #expect(try engine.recipientProblems(["nobody@nowhere.test"]).map(\.kind) == [.noPublicKey])
        #expect(try engine.recipientProblems([sandbox.keys[0].email, sandbox.keys[1].fingerprint]).isEmpty)

        // The store: fsck names the .gpg-id at once, and writing says why it cannot.
        try store.initialize(recipients: ["signer@coffer.test"])
        let findings = try store.check()
        #expect(findings.map(\.kind) == [.recipients])
        #expect(findings.first?.path == ".gpg-id")
        #expect(findings.first?.message.contains("has no encryption subkey") == true, "\(findings)")
        #expect {
            try store.write("site", SecureBytes(string: "pw\n"))
        } throws: { error in
            (error as? GPGError)?.kind == .unusableKey
                && (error as? GPGError)?.message.contains("has no encryption subkey") == true
        }
    }
}
