import CofferTestSupport
import Testing

@testable import Coffer

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

// Keychain.oneTimeCode with real gpg and git: TOTP codes, HOTP counters moved on, saved, committed with
// pass-otp's message and readable by pass; a failed commit fails the call.
extension PasswordStoreTests {
    /// The store made a git work tree, as `pass git init` would.
    func gitStore() throws {
        try sandbox.commitEverything(in: store.root)
    }

    @Test func oneTimeCodeOfTOTPItemIsOathtoolsAndChangesNothing() throws {
        try gitStore()
        let uri = "otpauth://totp/Example:alice?secret=JBSWY3DPEHPK3PXP&issuer=Example&digits=8&period=60"
        try keychain.set(Secret(parsing: "pw\n\(uri)\n"), account: "alice")
        let before = try FileSystem.readFile(store.entryPath("com.example.app/alice"))
        let date = Date(timeIntervalSince1970: 1_700_000_123)
        let code = try keychain.oneTimeCode(account: "alice", at: date)
        let oathtool = try sandbox.check([
            "oathtool", "-b", "--totp", "--digits=8", "-s", "60s", "-N", "@1700000123", "JBSWY3DPEHPK3PXP",
        ]).outputText
        #expect(code == oathtool)
        #expect(try FileSystem.readFile(store.entryPath("com.example.app/alice")) == before)
        #expect(try keychain.oneTimeCode(account: "nobody") == nil)
        try keychain.set("no uri here", account: "plain")
        #expect(try keychain.oneTimeCode(account: "plain") == nil)
        try keychain.set(Secret(parsing: "otpauth://totp/x?secret=JB1\n"), account: "broken")
        #expect(throws: OneTimePassword.CodeError.invalidSecret) {
            try keychain.oneTimeCode(account: "broken")
        }
    }

    @Test func oneTimeCodeOfHOTPItemAdvancesSavesAndCommits() throws {
        try gitStore()
        let secret = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"
        try keychain.set(
            Secret(parsing: "pw\nlogin: me\notpauth://hotp/Bank:me?secret=\(secret)&counter=3\n"),
            account: "bank")
        // RFC 4226's values for counters 4, 5 and 6: each call uses the next counter and saves it.
        for (counter, expected) in [(4, "338314"), (5, "254676"), (6, "287922")] {
            #expect(try keychain.oneTimeCode(account: "bank") == expected)
            let text = String(decoding: try passShow("com.example.app/bank"), as: UTF8.self)
            #expect(text == "pw\nlogin: me\notpauth://hotp/Bank:me?secret=\(secret)&counter=\(counter)\n")
        }
        let log = try sandbox.check(["git", "-C", store.root, "log", "--format=%s", "-3"]).outputText
        #expect(
            log
                == Array(repeating: "Increment HOTP counter for com.example.app/bank.", count: 3).joined(
                    separator: "\n"))
        #expect(try sandbox.check(["git", "-C", store.root, "status", "--porcelain"]).outputText.isEmpty)
    }

    @Test func oneTimeCodeFailsWhenTheCommitFails() throws {
        try gitStore()
        try keychain.set(
            Secret(parsing: "otpauth://hotp/Bank:me?secret=JBSWY3DPEHPK3PXP&counter=0\n"), account: "bank")
        let hook = store.root + "/.git/hooks/pre-commit"
        try FileSystem.atomicWrite(hook, bytes: Array("#!/bin/sh\nexit 1\n".utf8), mode: 0o755)
        #expect(throws: CofferError.self) { try keychain.oneTimeCode(account: "bank") }
        let head = try sandbox.check(["git", "-C", store.root, "log", "--format=%s", "-1"]).outputText
        #expect(head == "Add given password for com.example.app/bank to store.")
    }
}
