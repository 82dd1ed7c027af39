import Testing

@testable import Coffer

@Suite struct EntryMergeTests {
    func merge(_ base: String, _ ours: String, _ theirs: String) -> (String, Bool) {
        let result = EntryMerge.merge(
            base: Array(base.utf8), ours: Array(ours.utf8), theirs: Array(theirs.utf8))
        return (String(decoding: result.bytes, as: UTF8.self), result.hasConflicts)
    }

    @Test func differentFieldsMergeCleanly() {
        let base = "pw\nlogin: alice\nurl: https://a.example\nnote line\n"
        let ours = "pw\nlogin: alice2\nurl: https://a.example\nnote line\n"
        let theirs = "pw\nlogin: alice\nurl: https://b.example\nnote line\n"
        #expect(
            merge(base, ours, theirs) == ("pw\nlogin: alice2\nurl: https://b.example\nnote line\n", false))
    }

    @Test func passwordAgainstFieldMergesCleanly() {
        let (text, conflict) = merge("old\nuser: a\n", "new\nuser: a\n", "old\nuser: b\n")
        #expect(text == "new\nuser: b\n")
        #expect(!conflict)
    }

    @Test func sameFieldDifferentlyIsAConflictWithBothValues() {
        let (text, conflict) = merge("pw\nlogin: a\n", "pw\nlogin: b\n", "pw\nlogin: c\n")
        #expect(conflict)
        #expect(text == "pw\n<<<<<<< ours\nlogin: b\n=======\nlogin: c\n>>>>>>> theirs\n")
        #expect(EntryMerge.containsConflict(Array(text.utf8)))
        #expect(!EntryMerge.containsConflict(Array("pw\n=======\n".utf8)))
    }

    @Test func addedFieldsFromBothSidesAreKept() {
        let (text, conflict) = merge("pw\n", "pw\nlogin: a\n", "pw\nurl: u\n")
        #expect(!conflict)
        #expect(text == "pw\nlogin: a\nurl: u\n")
    }

    @Test func removedFieldStaysRemovedUnlessEditedOnTheOtherSide() {
        #expect(
            merge("pw\nlogin: a\nurl: u\n", "pw\nurl: u\n", "pw\nlogin: a\nurl: v\n") == (
                "pw\nurl: v\n", false
            ))
        #expect(merge("pw\nlogin: a\n", "pw\n", "pw\nlogin: b\n").1)
    }

    @Test func freeTextMergesLineWise() {
        let base = "pw\nline one\nline two\nline three\nline four\n"
        let ours = "pw\nline ONE\nline two\nline three\nline four\n"
        let theirs = "pw\nline one\nline two\nline three\nline FOUR\n"
        #expect(merge(base, ours, theirs) == ("pw\nline ONE\nline two\nline three\nline FOUR\n", false))
        #expect(
            merge(
                base, "pw\nx\nline two\nline three\nline four\n", "pw\ny\nline two\nline three\nline four\n"
            ).1)
    }

    @Test func identicalChangesAndOneSidedChanges() {
        #expect(merge("a\n", "b\n", "b\n") == ("b\n", false))
        #expect(merge("a\n", "a\n", "c\n") == ("c\n", false))
        #expect(merge("", "x\n", "") == ("x\n", false))
    }
}

@Suite("Entry merge keeps the entry as its sides wrote it")
struct EntryMergeLayoutTests {
    func merge(_ base: String, _ ours: String, _ theirs: String) -> (String, Bool) {
        let result = EntryMerge.merge(
            base: Array(base.utf8), ours: Array(ours.utf8), theirs: Array(theirs.utf8))
        return (String(decoding: result.bytes, as: UTF8.self), result.hasConflicts)
    }

    @Test("Line endings stay CRLF")
    func crlfStays() {
        let base = "pw\r\nlogin: a\r\nurl: u\r\nnote\r\n"
        let ours = "pw\r\nlogin: b\r\nurl: u\r\nnote\r\n"
        let theirs = "pw\r\nlogin: a\r\nurl: v\r\nnote\r\n"
        #expect(merge(base, ours, theirs) == ("pw\r\nlogin: b\r\nurl: v\r\nnote\r\n", false))
        let separate = merge(
            base, "pw2\r\nlogin: a\r\nurl: u\r\nnote\r\n", "pw\r\nlogin: a\r\nurl: u\r\nnote 2\r\n")
        #expect(separate == ("pw2\r\nlogin: a\r\nurl: u\r\nnote 2\r\n", false))
    }

    @Test("Free text between fields stays where it was")
    func freeTextStaysInPlace() {
        let base = "pw\nlogin: a\nremember: the blue door\nurl: u\nsecurity question\nemail: e\n"
        let ours = "pw\nlogin: b\nremember: the blue door\nurl: u\nsecurity question\nemail: e\n"
        let theirs = "pw\nlogin: a\nremember: the blue door\nurl: v\nsecurity question\nemail: f\n"
        let (text, conflict) = merge(base, ours, theirs)
        #expect(!conflict)
        #expect(text == "pw\nlogin: b\nremember: the blue door\nurl: v\nsecurity question\nemail: f\n")
        let interleaved = "pw\nlogin: a\nfirst note\nurl: u\nsecond note\n"
        let (mixed, mixedConflict) = merge(
            interleaved, "pw\nlogin: b\nfirst note\nurl: u\nsecond note\n",
            "pw\nlogin: a\nfirst note\nurl: v\nsecond note\n")
        #expect(!mixedConflict)
        #expect(mixed == "pw\nlogin: b\nfirst note\nurl: v\nsecond note\n")
    }

    @Test("A field only the other side added comes after our last field")
    func addedFieldsAfterOurs() {
        let (text, conflict) = merge(
            "pw\nlogin: a\nnotes\n", "pw2\nlogin: a\nnotes\n", "pw\nlogin: a\nurl: u\nnotes\n")
        #expect(!conflict)
        #expect(text == "pw2\nlogin: a\nurl: u\nnotes\n")
    }

    @Test("A password both sides changed stays a password on line 1: ours, with the conflict after it")
    func passwordConflictKeepsAPasswordOnLineOne() {
        let (text, conflict) = merge("old\nlogin: a\n", "mine\nlogin: a\n", "theirs\nlogin: a\n")
        #expect(conflict)
        #expect(text == "mine\n<<<<<<< ours\nmine\n=======\ntheirs\n>>>>>>> theirs\nlogin: a\n")
        #expect(EntryMerge.containsConflict(Array(text.utf8)))
    }
}

@Suite("Entry merge keeps every byte of entries that are not text")
struct BinaryEntryMergeTests {
    /// A reproducible generator (SplitMix64).
    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var value = state
            value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
            value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
            return value ^ (value >> 31)
        }
    }

    /// Bytes with lines, so that a line-wise merge would find separate hunks to splice.
    static func lines(_ generator: inout Generator, binary: Bool) -> [UInt8] {
        var bytes: [UInt8] = []
        for _ in 0..<Int.random(in: 3...8, using: &generator) {
            for _ in 0..<Int.random(in: 1...6, using: &generator) {
                bytes.append(UInt8.random(in: 97...122, using: &generator))
            }
            bytes.append(10)
        }
        if binary {
            // A NUL or a byte that is never UTF-8, somewhere.
            let position = Int.random(in: 0..<bytes.count, using: &generator)
            bytes.insert(Bool.random(using: &generator) ? 0 : 0xFF, at: position)
        }
        return bytes
    }

    /// `bytes` with one line (not the first: a separate place for each side) replaced.
    static func changed(_ bytes: [UInt8], line: Int) -> [UInt8] {
        var parts = bytes.split(separator: 10, omittingEmptySubsequences: false).map(Array.init)
        let index = min(line, parts.count - 2)
        parts[index] = Array("changed \(line)".utf8)
        return Array(parts.joined(separator: [10]))
    }

    @Test("A side that left a binary entry as it was takes the other's bytes; both changed is unmergeable")
    func generatedBinaryMerges() {
        var generator = Generator(state: 23)
        for _ in 0..<300 {
            let base = Self.lines(&generator, binary: true)
            let ours = Self.changed(base, line: 0)
            let theirs = Self.changed(base, line: 3)
            let one = EntryMerge.merge(base: base, ours: base, theirs: theirs)
            #expect(one.bytes == theirs && !one.isUnmergeable && !one.hasConflicts)
            let other = EntryMerge.merge(base: base, ours: ours, theirs: base)
            #expect(other.bytes == ours && !other.isUnmergeable)
            let both = EntryMerge.merge(base: base, ours: ours, theirs: theirs)
            #expect(both.isUnmergeable)
            #expect(both.bytes == ours)
            #expect(!EntryMerge.containsConflict(both.bytes))
            // A text base whose one side became binary is not text to merge either.
            let textBase = Self.lines(&generator, binary: false)
            let binarySide = Self.lines(&generator, binary: true)
            #expect(
                EntryMerge.merge(base: textBase, ours: Self.changed(textBase, line: 2), theirs: binarySide)
                    .isUnmergeable)
        }
    }

    @Test("Text in separate places still merges line by line")
    func textStillMerges() {
        let base = Array("pw\na\nb\nc\nd\n".utf8)
        let result = EntryMerge.merge(
            base: base, ours: Array("pw\nA\nb\nc\nd\n".utf8), theirs: Array("pw\na\nb\nc\nD\n".utf8))
        #expect(String(decoding: result.bytes, as: UTF8.self) == "pw\nA\nb\nc\nD\n")
        #expect(!result.isUnmergeable)
        #expect(!EntryMerge.isText([0x70, 0xC3]))
        #expect(EntryMerge.isText(Array("pässword\r\n".utf8)))
    }
}

@Suite("Entry merge of HOTP counters takes the greater")
struct HOTPCounterMergeTests {
    static func entry(_ counter: String, note: String = "note") -> [UInt8] {
        Array(
            "pw\nlogin: a\notpauth://hotp/Example:alice?secret=JBSWY3DPEHPK3PXP&counter=\(counter)&issuer=Example\n\(note)\n"
                .utf8)
    }

    @Test("Generated counters on each side: the merge holds the greater one, with no conflict")
    func generatedCounters() throws {
        var generator = BinaryEntryMergeTests.Generator(state: 4226)
        for _ in 0..<300 {
            let start = UInt64.random(in: 0...1_000_000, using: &generator)
            let ours = start + UInt64.random(in: 1...50, using: &generator)
            let theirs = start + UInt64.random(in: 1...50, using: &generator)
            let result = EntryMerge.merge(
                base: Self.entry("\(start)"), ours: Self.entry("\(ours)"), theirs: Self.entry("\(theirs)"))
            #expect(!result.hasConflicts)
            let uri = try #require(OneTimePassword.uri(in: result.bytes))
            #expect(try OneTimePassword(uri: uri).counter == Int64(max(ours, theirs)))
        }
    }

    @Test("A counter and a change elsewhere both apply; counters of many digits compare by value")
    func counterWithOtherChange() throws {
        let result = EntryMerge.merge(
            base: Self.entry("9"), ours: Self.entry("10"), theirs: Self.entry("0011", note: "other note"))
        let text = String(decoding: result.bytes, as: UTF8.self)
        #expect(!result.hasConflicts)
        #expect(text.contains("counter=0011") && text.contains("other note"))
    }

    @Test(
        "A counter past 64 bits (otp would read it wrapped, as a small one) is not the greater: it conflicts")
    func wrappingCounterIsNotGreater() {
        let result = EntryMerge.merge(
            base: Self.entry("3"), ours: Self.entry("6"), theirs: Self.entry("18446744073709551617"))
        #expect(result.hasConflicts)
        #expect(
            !String(decoding: result.bytes, as: UTF8.self).hasPrefix(
                "pw\nlogin: a\notpauth://hotp/Example:alice?secret=JBSWY3DPEHPK3PXP&counter=18446744073709551617"
            ))
    }

    @Test("Keys with different secrets are not counters to merge: they conflict")
    func differentSecretsConflict() {
        let theirs = Array(
            String(decoding: Self.entry("2"), as: UTF8.self).replacing("JBSWY3DP", with: "KRUGKIDR").utf8)
        let result = EntryMerge.merge(base: Self.entry("1"), ours: Self.entry("3"), theirs: theirs)
        #expect(result.hasConflicts)
    }
}
