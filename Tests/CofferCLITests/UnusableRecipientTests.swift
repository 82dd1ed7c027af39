import Coffer
import CofferTestSupport
import Testing

/// A `.gpg-id` naming a key that cannot encrypt (it only signs): `init` accepts it, as pass does, but
/// says so; `fsck` reports it; `insert` fails saying why, not with gpg's "All subkeys are expired or
/// revoked".
@Suite("A recipient key that cannot encrypt")
struct UnusableRecipientTests {
    @Test func initFsckAndInsertSayTheKeyCannotEncryptAndWhy() throws {
        let sandbox = try GPGSandbox()
        let binary = try CofferBinary.path()
        try sandbox.check(
            [
                "gpg", "--batch", "--quiet", "--passphrase", "", "--quick-gen-key",
                "Signer <signer@coffer.test>",
            ]
                + ["ed25519", "sign", "never"])
        let reason = "has no encryption subkey"

        let initialized = try sandbox.run([binary, "init", "signer@coffer.test"])
        #expect(initialized.status == 0)
        #expect(initialized.outputText.hasSuffix("Password store initialized for signer@coffer.test"))
        #expect(initialized.errorText.contains("cannot encrypt to recipient \"signer@coffer.test\""))
        #expect(initialized.errorText.contains(reason), "\(initialized.errorText)")

        let checked = try sandbox.run([binary, "fsck"])
        #expect(checked.status != 0)
        #expect(
            checked.outputText.contains(".gpg-id:") && checked.outputText.contains(reason),
            "\(checked.outputText)")

        let inserted = try sandbox.run([binary, "insert", "-m", "site"], input: Array("pw\n".utf8))
        #expect(inserted.status != 0)
        #expect(inserted.errorText.contains(reason), "\(inserted.errorText)")
        #expect(!inserted.errorText.contains("All subkeys are expired or revoked"))

        // A key that is not in the keyring yet stays silent at init, as with pass.
        let unknown = try sandbox.run([binary, "init", "-p", "later", "nobody@nowhere.test"])
        #expect(unknown.status == 0 && unknown.errorText.isEmpty, "\(unknown.errorText)")
    }
}
