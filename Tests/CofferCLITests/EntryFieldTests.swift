import Coffer
import CofferTestSupport
import Testing

/// Fields and JSON for scripts: `show --field`, `show --json` (read back by Python's own JSON parser),
/// `ls --flat` and `insert --field`; coffer's own long options take no abbreviation, so pass's (`--f` for
/// `--force`) keep their meaning.
@Suite("show --field and --json, ls --flat, insert --field")
struct EntryFieldTests {
    private func storeWithEntries() throws -> InstalledAsPass {
        let installed = try InstalledAsPass(git: true)
        try installed.insert(
            "web/site",
            "pw \"one\"\nlogin: bob\nurl: https://x\nURL: https://y\nnotes: |\n  two\n  lines\nfree text\n")
        try installed.insert("bank", "1234\n")
        try installed.insert("web/deep/other", "x\n")
        return installed
    }

    @Test("show --field prints one field, password is line 1, a missing field fails")
    func field() throws {
        let installed = try storeWithEntries()
        #expect(try installed.check(["show", "--field", "login", "web/site"]).outputText == "bob")
        #expect(try installed.check(["show", "--field", "LOGIN", "web/site"]).outputText == "bob")
        #expect(try installed.check(["show", "--field", "password", "web/site"]).outputText == "pw \"one\"")
        #expect(try installed.check(["show", "--field=notes", "web/site"]).outputText == "two\nlines")
        let missing = try installed.run(["show", "--field", "pin", "web/site"])
        #expect(missing.status == 1)
        #expect(missing.errorText == "Error: web/site has no field pin.")
        #expect(missing.outputText.isEmpty)
        #expect(try installed.run(["show", "--fie", "login", "web/site"]).status == 1, "no abbreviation")
    }

    @Test("show --json is valid JSON with name, password, fields (arrays for repeated keys) and text")
    func json() throws {
        let installed = try storeWithEntries()
        let output = try installed.check(["show", "--json", "web/site"])
        let script = """
            import json, sys
            entry = json.load(sys.stdin)
            print(entry["name"]); print(entry["password"]); print(entry["fields"]["login"])
            print("|".join(entry["fields"]["url"])); print(entry["fields"]["notes"].replace("\\n", "/"))
            print(entry["text"].count("\\n")); print(sorted(entry))
            """
        let parsed = try installed.sandbox.check(["python3", "-c", script], input: output.standardOutput)
        #expect(
            parsed.outputText == """
                web/site
                pw "one"
                bob
                https://x|https://y
                two/lines
                8
                ['fields', 'name', 'password', 'text']
                """)
        #expect(try installed.run(["show", "--json", "--clip", "web/site"]).status == 1)
    }

    @Test("show --json escapes C1 controls and U+2028/U+2029; Python reads the same text back")
    func jsonEscapesTerminalControls() throws {
        let installed = try InstalledAsPass(git: true)
        let text = "pw\u{9b}31m\nnote: a\u{2028}b\u{85}\n"
        try installed.insert("odd", text)
        let output = try installed.check(["show", "--json", "odd"])
        #expect(!output.outputText.unicodeScalars.contains { [0x9b, 0x85, 0x2028].contains($0.value) })
        #expect(output.outputText.contains("\\u009b") && output.outputText.contains("\\u2028"))
        let script = "import json, sys; sys.stdout.buffer.write(json.load(sys.stdin)[\"text\"].encode())"
        let parsed = try installed.sandbox.check(["python3", "-c", script], input: output.standardOutput)
        #expect(parsed.standardOutput == Array(text.utf8))
    }

    @Test("ls --flat prints one entry name per line")
    func flat() throws {
        let installed = try storeWithEntries()
        #expect(try installed.check(["ls", "--flat"]).outputText == "bank\nweb/deep/other\nweb/site")
        #expect(try installed.check(["ls", "--flat", "web"]).outputText == "web/deep/other\nweb/site")
        #expect(try installed.run(["ls", "--flat", "nothing"]).status == 1)
    }

    @Test("insert --field sets fields, keeps every other line, commits; KEY alone reads stdin")
    func insertField() throws {
        let installed = try storeWithEntries()
        try installed.check(
            ["insert", "--field", "login=carol", "--field", "pin", "web/site"], input: "9876\n")
        #expect(
            try installed.decrypted("web/site")
                == "pw \"one\"\nlogin: carol\nurl: https://x\nURL: https://y\nnotes: |\n  two\n  lines\nfree text\npin: 9876\n"
        )
        #expect(try installed.lastCommit() == "Set fields login, pin of web/site.")
        #expect(try installed.uncommitted() == "")
        let absent = try installed.run(["insert", "--field", "login=x", "nope"])
        #expect(absent.status == 1)
        #expect(!FileSystem.exists(installed.store + "/nope.gpg"))
        #expect(try installed.run(["insert", "--field", "bad:key=x", "bank"]).status == 1)
        // pass's abbreviation: --f is --force.
        try installed.check(["insert", "-e", "--f", "bank"], input: "5555\n")
        #expect(try installed.decrypted("bank") == "5555\n")
    }
}
