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
