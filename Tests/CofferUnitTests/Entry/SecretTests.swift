import CofferTestSupport
import Testing

@testable import Coffer

@Suite("Secret: the pass entry format")
struct EntrySecretTests {
    private func secret(_ text: String) -> Secret {
        Secret(parsing: Array(text.utf8))
    }

    /// Sets the field `key` of `entry` to `value` and expects the entry's bytes to be `expected`'s then.
    private func setField(
        _ key: String, _ value: String, in entry: inout Secret, expecting expected: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        try entry.setField(key, value)
        #expect(entry.formatted() == Array(expected.utf8), sourceLocation: sourceLocation)
    }

    @Test func readsPasswordFieldsAndOTPAuth() {
        let entry = secret(
            """
            hunter2
            login: alice
            URL:https://example.com
            otpauth://totp/Example:alice?secret=JBSWY3DPEHPK3PXP&issuer=Example
            Some free text
            notes: |
              first line
                indented second line

              after a blank line
            email :  alice@example.com

            """
        )
        #expect(entry.password == "hunter2")
        #expect(entry.passwordBytes == Array("hunter2".utf8))
        #expect(
            entry.fields == [
                Secret.Field(key: "login", value: "alice"),
                Secret.Field(key: "URL", value: "https://example.com"),
                Secret.Field(key: "notes", value: "first line\n  indented second line\n\nafter a blank line"),
                Secret.Field(key: "email", value: "alice@example.com"),
            ]
        )
        #expect(entry.field("url") == "https://example.com")
        #expect(entry.field("Login") == "alice")
        #expect(entry.field("missing") == nil)
        #expect(entry.otpauthURIs == ["otpauth://totp/Example:alice?secret=JBSWY3DPEHPK3PXP&issuer=Example"])
    }

    @Test func firstMatchingFieldWinsIgnoringCase() {
        let entry = secret("pw\nUser: first\nuser: second\n")
        #expect(entry.field("user") == "first")
        #expect(entry.field("USER") == "first")
    }

    @Test("Grouped fields: each key once, spelled as it first appears, with every value in order")
    func groupedFields() {
        let secret = Secret(parsing: "pw\nURL: a\nlogin: alice\nurl: b\nnote\nUrl: c\n")
        let grouped = secret.groupedFields.map { "\($0.key)=\($0.values.joined(separator: ","))" }
        #expect(grouped == ["URL=a,b,c", "login=alice"])
        #expect(Secret(parsing: "pw\n").groupedFields.isEmpty)
    }

    @Test func lineOneIsAlwaysThePassword() {
        let entry = secret("login: not a field\nlogin: alice")
        #expect(entry.password == "login: not a field")
        #expect(entry.fields == [Secret.Field(key: "login", value: "alice")])
    }

    @Test func crlfLineEndingsAreNotPartOfValues() {
        let bytes = Array("pass\r\nlogin: alice\r\nnotes: |\r\n  a\r\n  b\r\n".utf8)
        let entry = Secret(parsing: bytes)
        #expect(entry.password == "pass")
        #expect(entry.field("login") == "alice")
        #expect(entry.field("notes") == "a\nb")
        #expect(entry.formatted() == bytes)
    }

    @Test func trailingBlanksOfAValueAreKept() {
        #expect(secret("pw\nkey: value  \n").field("key") == "value  ")
    }

    @Test func uriLinesAndIndentedLinesAreNotFields() {
        let entry = secret("pw\nhttps://example.com\n  indented: no\n\tTab: no\n: no key\nplain text\n")
        #expect(entry.fields.isEmpty)
    }

    @Test func pipeWithoutIndentedLinesIsALiteralValue() {
        let entry = secret("pw\nsymbol: |\nnext: x\n")
        #expect(entry.field("symbol") == "|")
        #expect(entry.field("next") == "x")
    }

    @Test func emptyAndPasswordOnlyEntries() {
        #expect(secret("").password == "")
        #expect(secret("").fields.isEmpty)
        #expect(secret("").formatted().isEmpty)
        #expect(secret("only").password == "only")
        #expect(secret("only").formatted() == Array("only".utf8))
        #expect(secret("\n").password == "")
    }

    @Test func nonUTF8BytesSurvive() {
        let bytes: [UInt8] = [0xFF, 0xFE, 0x0A] + Array("key: ".utf8) + [0xC3, 0x28]
        let entry = Secret(parsing: bytes)
        #expect(entry.passwordBytes == [0xFF, 0xFE])
        #expect(entry.password == "\u{FFFD}\u{FFFD}")
        #expect(entry.field("key") == "\u{FFFD}(")
        #expect(entry.formatted() == bytes)
    }

    @Test func buildsANewEntry() throws {
        let entry = try Secret(
            password: "hunter2",
            fields: [("login", "alice"), ("notes", "two\nlines"), ("tag", "a"), ("tag", "b")],
            otpauthURIs: ["otpauth://totp/x?secret=A"],
            notes: "free text"
        )
        #expect(
            entry.formatted()
                == Array(
                    """
                    hunter2
                    login: alice
                    notes: |
                      two
                      lines
                    tag: a
                    tag: b
                    otpauth://totp/x?secret=A
                    free text

                    """.utf8
                )
        )
        #expect(try Secret(password: "x").formatted() == Array("x\n".utf8))
    }

    @Test func multiLineLastFieldDoesNotSwallowIndentedNotes() throws {
        let entry = try Secret(password: "pw", fields: [("notes", "a\nb")], notes: "  indented note\n")
        #expect(entry.field("notes") == "a\nb")
        #expect(entry.formatted() == Array("pw\nnotes: |\n   a\n   b\n  indented note\n".utf8))
    }

    @Test func builderRejectsWhatCannotBeReadBack() {
        #expect(throws: CofferError.self) { try Secret(password: "two\nlines") }
        #expect(throws: CofferError.self) { try Secret(password: "cr\r") }
        #expect(throws: CofferError.self) { try Secret(password: "x", fields: [("a:b", "v")]) }
        #expect(throws: CofferError.self) { try Secret(password: "x", fields: [("", "v")]) }
        #expect(throws: CofferError.self) { try Secret(password: "x", fields: [(" a", "v")]) }
        #expect(throws: CofferError.self) { try Secret(password: "x", fields: [("a\nb", "v")]) }
        #expect(throws: CofferError.self) { try Secret(password: "x", fields: [("a", " v")]) }
        #expect(throws: CofferError.self) { try Secret(password: "x", fields: [("a", "v\r")]) }
        #expect(throws: CofferError.self) { try Secret(password: "x", otpauthURIs: ["https://x"]) }
        let error = #expect(throws: CofferError.self) { try Secret(password: "x", fields: [("a:b", "v")]) }
        #expect(error?.code == .format)
        #expect(error?.message == "The field key \"a:b\" cannot contain ':'.")
    }

    @Test func setPasswordKeepsEverythingElse() throws {
        var entry = secret("old\r\nlogin: alice\r\nfree text")
        try entry.setPassword("new")
        #expect(entry.formatted() == Array("new\r\nlogin: alice\r\nfree text".utf8))

        var empty = secret("")
        try empty.setPassword("first")
        #expect(empty.formatted() == Array("first\n".utf8))

        var noNewline = secret("old")
        try noNewline.setPassword("new")
        #expect(noNewline.formatted() == Array("new".utf8))

        #expect(throws: CofferError.self) { try entry.setPassword("a\nb") }
        #expect(entry.password == "new")
    }

    @Test func setFieldReplacesInPlaceOrAppends() throws {
        var entry = secret("pw\nLogin :alice\nurl: x\nlogin: second\nfree text")
        try setField(
            "login", "bob", in: &entry, expecting: "pw\nLogin: bob\nurl: x\nlogin: second\nfree text")

        try setField(
            "email", "bob@example.com", in: &entry,
            expecting: "pw\nLogin: bob\nurl: x\nlogin: second\nfree text\nemail: bob@example.com\n")

        try entry.setField("url", "")
        #expect(entry.field("url") == "")
        #expect(entry.formatted().starts(with: Array("pw\nLogin: bob\nurl:\n".utf8)))

        var empty = secret("")
        try setField("login", "alice", in: &empty, expecting: "\nlogin: alice\n")
        #expect(empty.password == "")
    }

    @Test func setFieldWritesMultiLineValues() throws {
        var entry = secret("pw\nnotes: |\n  old\n  value\nafter: x\n")
        try setField("notes", "one line", in: &entry, expecting: "pw\nnotes: one line\nafter: x\n")
        try setField(
            "notes", "new\n\nvalue", in: &entry, expecting: "pw\nnotes: |\n  new\n  \n  value\nafter: x\n")
        #expect(entry.field("notes") == "new\n\nvalue")
    }

    @Test func multiLineValueIsIndentedPastFollowingIndentedText() throws {
        var entry = secret("pw\nnotes: short\n   indented free text\n")
        try setField(
            "notes", "a\nb", in: &entry, expecting: "pw\nnotes: |\n    a\n    b\n   indented free text\n")
        #expect(entry.field("notes") == "a\nb")
    }

    @Test func removeFieldRemovesEveryMatchAndItsLines() {
        var entry = secret("pw\nTag: a\nnotes: |\n  x\n  y\ntag: b\nfree\n")
        let removedTags = entry.removeField("tag")
        #expect(removedTags)
        #expect(entry.formatted() == Array("pw\nnotes: |\n  x\n  y\nfree\n".utf8))
        let removedNotes = entry.removeField("notes")
        #expect(removedNotes)
        #expect(entry.formatted() == Array("pw\nfree\n".utf8))
        let removedAgain = entry.removeField("notes")
        #expect(!removedAgain)
    }

    @Test func removeFieldKeepsThePreviousMultiLineValue() {
        var entry = secret("pw\nnotes: |\n  one\nremove: me\n  indented free text\n")
        entry.removeField("remove")
        #expect(entry.field("notes") == "one")
        #expect(entry.formatted() == Array("pw\nnotes: |\n   one\n  indented free text\n".utf8))

        var literal = secret("pw\nsymbol: |\nremove: me\n  indented free text\n")
        literal.removeField("remove")
        #expect(literal.field("symbol") == "|")
    }

    @Test func descriptionHidesTheSecret() {
        let entry = secret("hunter2\nlogin: alice\n")
        #expect(!entry.description.contains("hunter2"))
        #expect(!entry.debugDescription.contains("alice"))
        #expect(entry.description == "Secret(2 lines, 1 field)")
    }

    @Test func equalityIsByteEquality() {
        #expect(secret("a\nb") == secret("a\nb"))
        #expect(secret("a\nb") != secret("a\nb\n"))
        #expect(secret("") != secret("\n"))
    }
}

@Suite("Secret: generated inputs")
struct EntrySecretPropertyTests {
    static let inputCount = 3_000

    /// Inputs that are easy to get wrong, then generated ones.
    static func inputs() -> [[UInt8]] {
        var random = SeededRandom(seed: 0xC0FFEE)
        var inputs: [[UInt8]] = [
            [], [0x0A], [0x0D], [0x0D, 0x0A], [0x0A, 0x0A], [0xFF], Array("pw".utf8), Array("pw\n".utf8),
            Array("pw\nkey:value".utf8), Array("pw\r\nKEY :  v\r\n".utf8), Array("pw\nk: |\n  a\n\n  b".utf8),
            Array("pw\nk: |\n\n".utf8), Array("pw\n\totpauth://x\n".utf8),
        ]
        while inputs.count < inputCount { inputs.append(EntryInputGenerator.bytes(&random)) }
        return inputs
    }

    @Test func parseThenFormatIsByteIdentical() {
        let inputs = Self.inputs()
        #expect(inputs.count >= 1_000)
        var failures = 0
        for bytes in inputs where Secret(parsing: bytes).formatted() != bytes {
            failures += 1
            Issue.record("round trip changed \(bytes)")
            if failures > 5 { break }
        }
    }

    @Test func readersAgreeWithEachOther() {
        for bytes in Self.inputs() {
            let entry = Secret(parsing: bytes)
            for field in entry.fields {
                let first = entry.fields.first { $0.key.lowercased() == field.key.lowercased() }
                #expect(entry.field(field.key) == first?.value)
            }
            let lineOne =
                bytes.split(separator: 0x0A, maxSplits: 1, omittingEmptySubsequences: false).first ?? []
            #expect(entry.passwordBytes == Array(lineOne.last == 0x0D ? lineOne.dropLast() : lineOne))
            #expect(Secret(parsing: entry.formatted()) == entry)
        }
    }

    @Test func setPasswordChangesOnlyLineOne() throws {
        var random = SeededRandom(seed: 7)
        for bytes in Self.inputs() {
            var entry = Secret(parsing: bytes)
            let scalars = EntryInputGenerator.value(&random).unicodeScalars.filter {
                $0 != "\n" && $0 != "\r"
            }
            let password = String(String.UnicodeScalarView(scalars))
            try entry.setPassword(password)
            #expect(entry.password == password)
            let rest = { (data: [UInt8]) in data.firstIndex(of: 0x0A).map { Array(data[$0...]) } ?? [] }
            #expect(rest(entry.formatted()) == (bytes.isEmpty ? [0x0A] : rest(bytes)))
        }
    }

    @Test func setFieldChangesOnlyThatField() {
        var random = SeededRandom(seed: 11)
        for bytes in Self.inputs() {
            var entry = Secret(parsing: bytes)
            let before = entry.fields
            let keys = EntryInputGenerator.keys + before.map(\.key)
            let key = random.pick(keys)
            let value = EntryInputGenerator.value(&random)
            let valid =
                SecretSyntax.valueProblem(Array(value.utf8)) == nil && SecretSyntax.keyProblem(key) == nil
            do {
                try entry.setField(key, value)
                #expect(valid)
            } catch {
                #expect(!valid)
                #expect(entry.formatted() == bytes)
                continue
            }
            var expected = before
            if let index = expected.firstIndex(where: { $0.key.lowercased() == key.lowercased() }) {
                expected[index].value = value
            } else {
                expected.append(Secret.Field(key: key, value: value))
            }
            #expect(
                entry.fields == expected,
                "setField(\(key.debugDescription), \(value.debugDescription)) on \(bytes)")
            #expect(entry.field(key) == value)
            #expect(entry.passwordBytes == Secret(parsing: bytes).passwordBytes)
        }
    }

    @Test func removeFieldChangesOnlyThatField() {
        var random = SeededRandom(seed: 13)
        for bytes in Self.inputs() {
            var entry = Secret(parsing: bytes)
            let before = entry.fields
            let key = random.pick(EntryInputGenerator.keys + before.map(\.key))
            let removed = entry.removeField(key)
            let expected = before.filter { $0.key.lowercased() != key.lowercased() }
            #expect(removed == (expected.count != before.count))
            #expect(entry.fields == expected, "removeField(\(key.debugDescription)) on \(bytes)")
            #expect(entry.passwordBytes == Secret(parsing: bytes).passwordBytes)
            #expect(entry.otpauthURIs == Secret(parsing: bytes).otpauthURIs)
        }
    }
}
