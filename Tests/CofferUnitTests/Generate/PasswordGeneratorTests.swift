import Testing

@testable import Coffer

@Suite struct PasswordGeneratorTests {
    @Test func expandsTrSyntax() throws {
        #expect(try PasswordGenerator.expand("a-e") == Array("abcde".utf8))
        #expect(try PasswordGenerator.expand("[:digit:]x\\n") == Array("0123456789x\n".utf8))
        #expect(try PasswordGenerator.expand("[:alnum:]").count == 62)
        #expect(try PasswordGenerator.expand("[:punct:][:alnum:]").count == 94)
        #expect(try PasswordGenerator.expand("\\101-C") == Array("ABC".utf8))
        #expect(throws: CofferError.self) { try PasswordGenerator.expand("z-a") }
        #expect(throws: CofferError.self) { try PasswordGenerator.expand("[:nope:]") }
    }

    @Test func generatesTheLengthFromTheSet() throws {
        let generator = try PasswordGenerator(characterSet: "[:digit:]")
        let password = generator.generate(length: 200)
        #expect(password.count == 200)
        #expect(password.bytes.allSatisfy { (48...57).contains($0) })
        // 200 digits drawn uniformly: every digit appears (fails with probability ~ 10 * 0.9^200).
        #expect(Set(password.bytes).count == 10)
    }

    @Test func emptySetIsAnError() throws {
        #expect(throws: CofferError.self) { try PasswordGenerator(characterSet: "") }
        // A newline, a tab or NUL would cut line 1 short or forge more lines.
        for set in ["\n", "a\\n", "[:space:]", "[:cntrl:]", "\\000", "a\t"] {
            #expect(throws: CofferError.self, "\(set)") { try PasswordGenerator(characterSet: set) }
        }
        #expect(try PasswordGenerator(characterSet: "a ").characterSet.sorted() == [32, 97])
    }
}
