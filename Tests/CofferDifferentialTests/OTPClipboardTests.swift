import CofferTestSupport
import Testing

/// `otp -c` and `otp uri -c` against pass-otp's, on the clipboard under Xvfb (with ``ClipboardTests``).
extension ClipboardTests {
    /// RFC 4226's test secret, in base32.
    static let rfcSecret = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"

    @Test("otp -c copies the code pass-otp copies, and otp uri -c the URI, under Xvfb")
    func otpClipboard() async throws {
        let (code, codeCopied, pass, passCopied, uri, uriCopied) = try await BlockingGate.shared.run {
            let context = try ClipboardTests.Context()
            let entry = "otpauth://hotp/Example:me?secret=\(Self.rfcSecret)&counter=0&issuer=Example"
            try context.sandbox.runSetup("ins mine 'pw\\n\(entry)\\n'\nins theirs 'pw\\n\(entry)\\n'\n")
            let code = try context.coffer(["otp", "-c", "mine"])
            let codeCopied = try context.selection()
            // pass with pass-otp, its output into files (the clipboard's helpers may keep a pipe open).
            let base = context.sandbox.directory + "/pass-code"
            var pass = try TestProcess.run(
                [
                    "sh", "-c", #"exec "$@" >"$0.out" 2>"$0.err""#, base, "/usr/bin/pass", "otp", "-c",
                    "theirs",
                ],
                environment: context.environment(), directory: context.sandbox.home, timeout: 20)
            pass.standardOutput = TestFiles.read(base + ".out") ?? []
            pass.standardError = TestFiles.read(base + ".err") ?? []
            let passCopied = try context.selection()
            let uri = try context.coffer(["otp", "uri", "-c", "mine"])
            return (code, codeCopied, pass, passCopied, uri, try context.selection())
        }
        #expect(code.status == 0, "\(code.errorText)")
        #expect(code.outputText == "Copied OTP code for mine to clipboard. Will clear in 3 seconds.\n")
        #expect(codeCopied == "287082")
        #expect(pass.status == 0, "\(pass.errorText)")
        #expect(pass.outputText.replacing("theirs", with: "mine") == code.outputText)
        #expect(passCopied == codeCopied)
        #expect(uri.status == 0, "\(uri.errorText)")
        #expect(uri.outputText == "Copied OTP key URI for mine to clipboard. Will clear in 3 seconds.\n")
        #expect(uriCopied == "otpauth://hotp/Example:me?secret=\(Self.rfcSecret)&counter=1&issuer=Example")
    }
}
