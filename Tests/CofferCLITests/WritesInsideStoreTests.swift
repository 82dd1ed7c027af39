import Coffer
import CofferTestSupport
import Testing

/// No command writes, makes, renames or removes anything outside the store through a symlink in it (one
/// that came with a pull, say): each is refused with one line, and the store and the folder outside stay
/// as they were.
@Suite("Every write stays inside the store")
struct WritesInsideStoreTests {
    /// A git store with `sub/e1`, `first` and a folder `dest`, and a folder outside it with `deep/o.gpg`.
    struct Fixture {
        let installed: InstalledAsPass
        /// A folder outside the store.
        let outside: String

        init() throws {
            installed = try InstalledAsPass(entries: [
                "sub/e1": "one\n", "first": "first\n", "dest/kept": "k\n",
            ])
            outside = installed.sandbox.directory + "/outside"
            mkdir(outside, 0o700)
            mkdir(outside + "/deep", 0o700)
            try TestFiles.write(
                TestFiles.read(installed.store + "/first.gpg") ?? [], to: outside + "/deep/o.gpg")
        }

        /// Links `name` in the store to the folder outside, committed as another clone would push it.
        func link(_ name: String) throws {
            try #require(symlink(outside, installed.store + "/" + name) == 0)
            try installed.git(["add", "--", name])
            try installed.git(["commit", "-q", "-m", "Link \(name).", "--", name])
        }

        /// Everything in the folder outside, with sizes.
        func outsideListing() throws -> String {
            try installed.sandbox.check(["find", outside, "-printf", "%P %y %s\n"]).outputText
        }

        /// Runs each of `commands` (with a line on standard input) and checks that it is refused with one
        /// line that says why, changing nothing outside and committing nothing.
        func expectRefused(_ commands: [String]...) throws {
            for arguments in commands {
                let outsideBefore = try outsideListing()
                let head = try installed.git(["rev-parse", "HEAD"])
                let output = try installed.run(arguments, input: "secret\n")
                #expect(output.status == 1, "\(arguments)")
                #expect(
                    output.errorText.contains("outside the password store")
                        && !output.errorText.contains("\n"),
                    "\(arguments): \(output.errorText)")
                #expect(try outsideListing() == outsideBefore, "\(arguments)")
                #expect(try installed.git(["rev-parse", "HEAD"]) == head, "\(arguments)")
                #expect(try installed.uncommitted().isEmpty, "\(arguments)")
            }
        }
    }

    @Test("insert and generate into a new folder below a link out of the store make no folder there")
    func newFoldersThroughALink() throws {
        let fixture = try Fixture()
        try fixture.link("link")
        try fixture.expectRefused(
            ["insert", "-m", "link/new/x"], ["generate", "link/made/x", "12"],
            ["insert", "-m", "link/deep/y"])
    }

    @Test("cp and mv into a folder that is a link out of the store are refused")
    func intoAFolderThatIsALink() throws {
        let fixture = try Fixture()
        // dest/sub is a link out: copying or moving sub into dest/ would land in it.
        try fixture.link("dest/sub")
        try fixture.expectRefused(
            ["cp", "sub", "dest/"], ["mv", "sub", "dest/"], ["cp", "first", "dest/sub/"],
            ["mv", "first", "dest/sub/first"])
        // Nor is a link further down in the copy's place: nest/sub is a folder, nest/sub/sub a link.
        try fixture.installed.insert("sub/sub/e2", "two\n")
        try fixture.installed.insert("nest/sub/x", "x\n")
        try fixture.link("nest/sub/sub")
        try fixture.expectRefused(["cp", "sub", "nest"])
        #expect(!FileSystem.exists(fixture.installed.store + "/nest/sub/e1.gpg"))
    }

    @Test("mv takes nothing out of a folder that a link out of the store leads to")
    func outOfAFolderThatIsALink() throws {
        let fixture = try Fixture()
        try fixture.link("link")
        try fixture.expectRefused(["mv", "link/deep/o", "moved"], ["mv", "link/deep", "moved"])
        #expect(!FileSystem.exists(fixture.installed.store + "/moved.gpg"))
        // The link itself moves as it is, as pass moves it.
        try fixture.installed.check(["mv", "link", "renamed"])
        #expect(FileSystem.kind(fixture.installed.store + "/renamed") == .symlink)
        #expect(try fixture.outsideListing().contains("deep/o.gpg f"))
    }

    @Test("git init writes no .gitattributes through a link out of the store")
    func gitAttributesThroughALink() throws {
        let installed = try InstalledAsPass(git: false, entries: ["site": "s\n"])
        let outside = installed.sandbox.directory + "/outside"
        mkdir(outside, 0o700)
        try TestFiles.write("theirs\n", to: outside + "/attributes")
        try #require(symlink(outside + "/attributes", installed.store + "/.gitattributes") == 0)
        let output = try installed.run(["git", "init"])
        #expect(output.status == 1)
        #expect(
            output.errorText.contains(".gitattributes leads outside the password store"),
            "\(output.errorText)")
        #expect(TestFiles.read(outside + "/attributes") == Array("theirs\n".utf8))
    }
}
