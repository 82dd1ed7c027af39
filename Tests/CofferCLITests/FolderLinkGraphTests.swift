import Coffer
import CofferTestSupport
import Testing

/// Links between folders inside the store, run as people run coffer (installed as `pass`): a ladder of 24
/// diamonds, folder `dN` holding links `a` and `b` to `d(N+1)`, has 2^24 paths to its foot; every
/// command that walks the store goes through each folder once and finishes at once.
@Suite("Links between folders: every walk goes through a folder once")
struct FolderLinkGraphTests {
    /// Strong passwords, none the same, so that audit finds nothing.
    static let first = "Vq8#Lm3!pX7$wK2@nR5-first\n"
    static let last = "Zt4&Hb9?qW2%eJ6*sM1-last\n"

    /// A store with `d0/first` and `d24/last`, and the folders between them joined by two links each.
    static func ladder() throws -> InstalledAsPass {
        let installed = try InstalledAsPass(git: false, entries: ["d0/first": first, "d24/last": last])
        for level in 1..<24 { try FileSystem.makeDirectories(installed.store + "/d\(level)", mode: 0o700) }
        for level in 0..<24 {
            for name in ["a", "b"] {
                symlink("../d\(level + 1)", installed.store + "/d\(level)/" + name)
            }
        }
        return installed
    }

    /// Runs the installed `pass` (or, with `asCoffer`, the same program by coffer's name) with a time
    /// limit: a walk through every path would not finish.
    static func run(
        _ installed: InstalledAsPass, _ arguments: [String], asCoffer: Bool = false, timeout: Double = 20
    ) throws -> ProcessResult {
        let program = asCoffer ? try CofferBinary.path() : installed.program
        return try TestProcess.run(
            [program] + arguments, environment: installed.environment, timeout: timeout)
    }

    /// How often `part` occurs in `text`.
    static func count(_ part: String, in text: String) -> Int {
        let (bytes, part) = (Array(text.utf8), Array(part.utf8))
        guard bytes.count >= part.count else { return 0 }
        return (0...(bytes.count - part.count)).filter { bytes[$0..<($0 + part.count)].elementsEqual(part) }
            .count
    }

    @Test("ls, ls --flat, find, grep, audit, fsck and recipients finish on a ladder of 24 diamonds")
    func ladder() throws {
        let installed = try Self.ladder()
        var outcomes: [String: ProcessResult] = [:]
        let commands = [
            ["ls"], ["ls", "--flat"], ["find", "last"], ["grep", "Zt4"], ["grep", "Vq8"], ["audit"], ["fsck"],
            ["recipients"],
        ]
        for arguments in commands {
            // Under pass's name `audit` is the pass-audit extension, as pass runs it: coffer's own audit is
            // run by coffer's name.
            let result = try Self.run(installed, arguments, asCoffer: arguments == ["audit"])
            let command = arguments.joined(separator: " ")
            #expect(!result.timedOut, "\(command) did not finish")
            #expect(
                result.standardOutput.count < 20_000,
                "\(command) printed \(result.standardOutput.count) bytes")
            outcomes[command] = result
        }
        // tree's listing: d24 drawn once below d0/a/a/... and once as itself; every other link is marked
        // (the b links below d0, both links of d1 to d23).
        let ls = try #require(outcomes["ls"])
        #expect(ls.status == 0)
        #expect(Self.count("last", in: ls.outputText) == 2, "\(ls.outputText)")
        #expect(Self.count("[recursive, not followed]", in: ls.outputText) == 24 + 23 * 2)
        // Each folder once, under its own name.
        #expect(outcomes["ls --flat"]?.outputText == "d0/first\nd24/last\n")
        let find = try #require(outcomes["find last"])
        #expect(find.status == 0)
        #expect(find.outputText.hasPrefix("Search Terms: last\n"), "\(find.outputText)")
        #expect(Self.count("last", in: find.outputText) == 2, "\(find.outputText)")
        let grep = try #require(outcomes["grep Zt4"])
        #expect(grep.status == 0)
        #expect(grep.outputText.hasPrefix("\u{1b}[94md24/\u{1b}[1mlast\u{1b}[0m:\n"), "\(grep.outputText)")
        #expect(Self.count("\u{1b}[0m:\n", in: grep.outputText) == 1, "\(grep.outputText)")
        let other = try #require(outcomes["grep Vq8"])
        #expect(other.status == 0)
        #expect(other.outputText.hasPrefix("\u{1b}[94md0/\u{1b}[1mfirst\u{1b}[0m:\n"), "\(other.outputText)")
        #expect(Self.count("\u{1b}[0m:\n", in: other.outputText) == 1, "\(other.outputText)")
        let audit = try #require(outcomes["audit"])
        #expect(audit.status == 0, "\(audit.outputText)\(audit.errorText)")
        #expect(audit.outputText.contains("2 entries"), "\(audit.outputText)")
        let fsck = try #require(outcomes["fsck"])
        #expect(fsck.status == 0, "\(fsck.outputText)\(fsck.errorText)")
        let recipients = try #require(outcomes["recipients"])
        #expect(recipients.status == 0, "\(recipients.errorText)")
        #expect(recipients.outputText.contains(installed.sandbox.keys[0].fingerprint))
    }

    @Test("cp of a folder with two ways into one folder is refused at once and copies nothing")
    func copy() throws {
        let installed = try Self.ladder()
        let result = try Self.run(installed, ["cp", "d0", "copied"])
        #expect(!result.timedOut, "cp did not finish")
        #expect(result.status == 1)
        #expect(result.errorText.hasPrefix("cp: cannot copy "), "\(result.errorText)")
        #expect(result.errorText.contains("it leads to the folder copied from"), "\(result.errorText)")
        #expect(!TestFiles.exists(installed.store + "/copied"))
        // A folder with one way into the folder below it is copied, through its link.
        try FileSystem.makeDirectories(installed.store + "/solo", mode: 0o700)
        symlink("../d24", installed.store + "/solo/down")
        try installed.check(["cp", "solo", "copied"])
        #expect(try installed.check(["show", "copied/down/last"]).outputText + "\n" == Self.last)
    }

    @Test("two links to a folder: grep and ls --flat give its entries once, under its own name")
    func diamond() throws {
        let installed = try InstalledAsPass(
            git: false, entries: ["shared/inner": "inner-password\n", "top": "top-password\n"])
        try FileSystem.makeDirectories(installed.store + "/pair", mode: 0o700)
        symlink("../shared", installed.store + "/pair/one")
        symlink("../shared", installed.store + "/pair/two")
        symlink("shared", installed.store + "/alias")
        #expect(try installed.check(["ls", "--flat"]).outputText == "shared/inner\ntop")
        #expect(try installed.check(["ls", "--flat", "pair"]).outputText == "pair/one/inner")
        let grep = try installed.check(["grep", "inner"])
        #expect(
            grep.outputText
                == "\u{1b}[94mshared/\u{1b}[1minner\u{1b}[0m:\n\u{1b}[01;31m\u{1b}[Kinner\u{1b}[m\u{1b}[K-password",
            "\(grep.outputText)")
        #expect(grep.errorText.isEmpty)
        // ls draws what tree draws: the first link to a folder followed, the others marked.
        let ls = try installed.check(["ls"], environment: ["TERM": "dumb"]).outputText
        #expect(Self.count("inner", in: ls) == 2, "\(ls)")
    }
}
