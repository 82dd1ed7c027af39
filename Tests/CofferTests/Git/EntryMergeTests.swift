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
