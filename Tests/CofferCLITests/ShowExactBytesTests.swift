import Coffer
import CofferTestSupport
import Testing

/// `show --json` and `show --field` never change a byte: an entry that is not UTF-8 comes out of `--json`
/// whole in `textBase64` (its text fields `null`), and `--field` prints a value's exact bytes. Run as a
/// `pass` link and as coffer by its absolute path, with real gpg.
@Suite("show --json and --field keep every byte")
struct ShowExactBytesTests {
    /// `printf 'pa\xffss\nlogin: al\xfeice\nurl: https://x\n'`: a password and a field that are not UTF-8.
    static let entry: [UInt8] =
        Array("pa".utf8) + [0xFF] + Array("ss\nlogin: al".utf8) + [0xFE] + Array("ice\nurl: https://x\n".utf8)
    /// U+FFFD as UTF-8, which a lossy decoding puts where the bytes were.
    static let replacement: [UInt8] = [0xEF, 0xBF, 0xBD]

    /// A store holding `keys/blob` (``entry``, through `insert -m`) and the text entry `web/site`, and the
    /// two ways of running coffer: the `pass` link and coffer's own absolute path.
    private func storeWithEntries() throws -> (InstalledAsPass, programs: [String]) {
        let installed = try InstalledAsPass(git: true, entries: ["web/site": "hunter2\nlogin: bob\n"])
        try installed.sandbox.check(
            [installed.program, "insert", "-m", "keys/blob"], input: Self.entry,
            environment: installed.environment)
        #expect(try installed.sandbox.read(installed.store + "/keys/blob.gpg").count > 0)
        return (installed, [installed.program, try CofferBinary.path()])
    }

    /// Runs `program` with `arguments` in the installed sandbox; no run that exits 0 prints U+FFFD.
    private func run(_ installed: InstalledAsPass, _ program: String, _ arguments: [String]) throws
        -> ChildProcess.Output
    {
        let output = try installed.sandbox.run([program] + arguments, environment: installed.environment)
        if output.status == 0 {
            #expect(
                output.standardOutput.firstRange(of: Self.replacement) == nil,
                "\(program) \(arguments.joined(separator: " ")) exited 0 with U+FFFD")
        }
        return output
    }

    @Test("show --json of an entry that is not UTF-8: textBase64 holds its bytes, its text fields are null")
    func jsonOfBytesThatAreNotUTF8() throws {
        let (installed, programs) = try storeWithEntries()
        let script = """
            import base64, json, sys
            entry = json.load(sys.stdin)
            print(sorted(entry))
            print(entry["name"], entry["password"], entry["fields"], entry["text"])
            print(base64.b64decode(entry["textBase64"], validate=True).hex())
            """
        for program in programs {
            for arguments in [
                ["show", "--json", "keys/blob"], ["show", "--revision", "HEAD", "--json", "keys/blob"],
            ] {
                let output = try run(installed, program, arguments)
                #expect(output.status == 0 && output.standardError.isEmpty, "\(program): \(output.errorText)")
                let parsed = try installed.sandbox.check(
                    ["python3", "-c", script], input: output.standardOutput)
                #expect(
                    parsed.outputText == """
                        ['fields', 'name', 'password', 'text', 'textBase64']
                        keys/blob None None None
                        \(Self.entry.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined())
                        """, "\(program) \(arguments)")
            }
            // A text entry keeps its text fields and has no textBase64.
            let text = try run(installed, program, ["show", "--json", "web/site"])
            #expect(
                String(decoding: text.standardOutput, as: UTF8.self)
                    == "{\"name\": \"web/site\", \"password\": \"hunter2\", \"fields\": {\"login\": \"bob\"}, "
                    + "\"text\": \"hunter2\\nlogin: bob\\n\"}\n")
        }
    }

    @Test("show --field prints the exact bytes of a value that is not UTF-8")
    func fieldOfBytesThatAreNotUTF8() throws {
        let (installed, programs) = try storeWithEntries()
        for program in programs {
            let expected: [(field: String, bytes: [UInt8])] = [
                ("password", Array("pa".utf8) + [0xFF] + Array("ss\n".utf8)),
                ("login", Array("al".utf8) + [0xFE] + Array("ice\n".utf8)),
                ("LOGIN", Array("al".utf8) + [0xFE] + Array("ice\n".utf8)),
                ("url", Array("https://x\n".utf8)),
            ]
            for (field, bytes) in expected {
                let output = try run(installed, program, ["show", "--field", field, "keys/blob"])
                #expect(output.status == 0 && output.standardError.isEmpty, "\(program) --field \(field)")
                #expect(output.standardOutput == bytes, "\(program) --field \(field)")
            }
            let missing = try run(installed, program, ["show", "--field", "pin", "keys/blob"])
            #expect(missing.status == 1 && missing.standardOutput.isEmpty)
            #expect(missing.errorText == "Error: keys/blob has no field pin.")
        }
    }
}
