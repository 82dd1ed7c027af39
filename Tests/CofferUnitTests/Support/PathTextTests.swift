import CofferTestSupport
import Testing

@testable import Coffer

/// Paths are taken apart at `/` bytes, as the kernel does, whatever characters a `/` is joined to in
/// Swift's grapheme clusters (U+200D after it, U+0301 after it, U+0600 before it).
@Suite("Paths by bytes: a joined slash is still a slash")
struct PathTextTests {
    static let joiners = ["\u{200D}", "\u{0301}", "\u{093E}"]

    @Test(arguments: joiners)
    func aSlashBeforeACombiningCharacterIsASlash(_ joiner: String) {
        let name = "team/" + joiner + "x"
        #expect(name.parentPath == "team")
        #expect(name.lastPathPart == joiner + "x")
        #expect(name.pathParts == ["team", joiner + "x"])
        #expect(name.isPath(inside: "team"))
        #expect(PasswordStore.folder(of: name) == "team")
        #expect(FileSystem.parent(of: "/store/" + name) == "/store/team")
        #expect(("/store/" + name).droppingPathPrefix("/store") == name)
        #expect(EntryName.isSneaky("../" + joiner + "x"))
        #expect(EntryName.isSneaky("a/../" + joiner + "x"))
        #expect(EntryName.isSneaky("a/" + joiner + "/.."))
        #expect(throws: CofferError.self) { try EntryName.validate(name) }
        #expect(!EntryName.slashesStandAlone(name))
    }

    @Test func aSlashAfterAPrependedCharacterIsASlash() {
        let name = "team\u{0600}/x/"
        #expect(name.endsWithSlash)
        #expect(name.withoutTrailingSlashes == "team\u{0600}/x")
        #expect(name.withoutTrailingSlashes.parentPath == "team\u{0600}")
        #expect(!EntryName.slashesStandAlone(name))
    }

    @Test func plainNamesAreAsBefore() throws {
        for name in ["web/mail", "team/büro konto", "a/b/c", "x"] {
            try EntryName.validate(name)
            #expect(EntryName.slashesStandAlone(name))
        }
        #expect(!EntryName.isSneaky("a..b/..c"))
        #expect(EntryName.isSneaky(".."))
        #expect("x".parentPath == "." && "/x".parentPath == "/")
        #expect("a/b//".withoutLastSlash == "a/b/")
    }
}
