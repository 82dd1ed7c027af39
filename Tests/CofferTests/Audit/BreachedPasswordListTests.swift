import CofferTestSupport
import Testing

@testable import Coffer

/// The offline Have I Been Pwned list: both ways of reading it (whole, and by bisection for large files)
/// find exactly the hashes that are there, and refuse a list that is malformed or out of order.
@Suite struct BreachedPasswordListTests {
    private static func hex(_ random: inout SeededRandom) -> [UInt8] {
        let digits = Array("0123456789ABCDEF".utf8)
        return (0..<40).map { _ in digits[random.below(16)] }
    }

    /// A folder of its own, removed afterwards.
    private final class Folder {
        let path: String
        init() throws {
            var template = Array("/tmp/coffer-hibp-XXXXXX".utf8CString)
            guard let made = mkdtemp(&template) else { throw CofferError(.io, "mkdtemp failed") }
            path = String(cString: made)
        }
        deinit { _ = try? ChildProcess(["rm", "-rf", path]).run() }

        func write(_ name: String, _ text: String) throws -> String {
            let file = path + "/" + name
            try FileSystem.atomicWrite(file, bytes: Array(text.utf8), mode: 0o600)
            return file
        }
    }

    /// A sorted list of `count` seeded hashes (CRLF line ends, as downloaded), and its contents by hash.
    private static func list(seed: UInt64, count: Int, lineEnd: String = "\r\n") -> (String, [String: Int]) {
        var random = SeededRandom(seed: seed)
        var entries: [String: Int] = [:]
        while entries.count < count {
            entries[String(decoding: hex(&random), as: UTF8.self)] = 1 + random.below(999_999)
        }
        let text = entries.keys.sorted().map { "\($0):\(entries[$0]!)\(lineEnd)" }.joined()
        return (text, entries)
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func bothWaysFindWhatIsThereAndNothingElse(seed: UInt64) throws {
        let folder = try Folder()
        let (text, entries) = Self.list(seed: seed, count: 5000, lineEnd: seed == 2 ? "\n" : "\r\n")
        // The last line without its line end, once.
        let file = try folder.write("list.txt", seed == 3 ? String(text.dropLast()) : text)
        var random = SeededRandom(seed: seed &+ 100)
        let present = entries.keys.sorted()
        var asked: [[UInt8]] = [Array(present.first!.utf8), Array(present.last!.utf8)]
        for _ in 0..<200 {
            asked.append(random.chance(0.5) ? Array(random.pick(present).utf8) : Self.hex(&random))
        }
        asked.append(Array(String(repeating: "0", count: 40).utf8))
        asked.append(Array(String(repeating: "F", count: 40).utf8))
        asked.append(asked[2])
        let expected = asked.map { entries[String(decoding: $0, as: UTF8.self)] }
        var whole = BreachedPasswordList(path: file)
        #expect(try whole.counts(of: asked) == expected)
        whole.wholeFileLimit = 0
        #expect(try whole.counts(of: asked) == expected)
    }

    @Test func aListOutOfOrderIsRefusedBothWays() throws {
        let folder = try Folder()
        let (text, _) = Self.list(seed: 7, count: 3000)
        let reversed = text.split(separator: "\r\n").reversed().joined(separator: "\r\n") + "\r\n"
        let file = try folder.write("reversed.txt", reversed)
        var list = BreachedPasswordList(path: file)
        var random = SeededRandom(seed: 8)
        let asked = (0..<20).map { _ in Self.hex(&random) }
        for limit in [64 << 20, 0] {
            list.wholeFileLimit = limit
            let error = Self.expectRefusal(of: asked, by: list, saying: "out of order")
            #expect(error?.message.contains("\n") == false)
        }
        // One pair swapped deep inside: reading the whole file finds it.
        var lines = text.split(separator: "\r\n").map(String.init)
        lines.swapAt(1500, 1501)
        list = BreachedPasswordList(
            path: try folder.write("swapped.txt", lines.joined(separator: "\n") + "\n"))
        Self.expectRefusal(of: asked, by: list, saying: "line 1502 is out of order")
    }

    @Test(arguments: [
        "0123456789ABCDEF0123456789ABCDEF01234567\n",  // no count
        "0123456789abcdef0123456789abcdef01234567:3\n",  // lower case
        "0123456789ABCDEF0123456789ABCDEF:3\n",  // an NTLM hash
        "0123456789ABCDEF0123456789ABCDEF01234567:x\n",
        "\n",
        "",
        "0123456789ABCDEF0123456789ABCDEF01234567 3\n",
    ])
    func malformedListsAreRefused(text: String) throws {
        let folder = try Folder()
        let good = "0000000000000000000000000000000000000001:5\n"
        let file = try folder.write(
            "list.txt", text.isEmpty ? "" : good + text + "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF:1\n")
        var list = BreachedPasswordList(path: file)
        for limit in [64 << 20, 0] where !(limit == 0 && text.isEmpty) {
            list.wholeFileLimit = limit
            let error = #expect(throws: CofferError.self) {
                try list.counts(of: [Array("8888888888888888888888888888888888888888".utf8)])
            }
            #expect(error?.code == .format, "\(text.debugDescription): \(error?.message ?? "")")
        }
    }

    /// Expects `list` to refuse to look up `hashes` with a `CofferError` whose message contains `part`.
    @discardableResult
    private static func expectRefusal(
        of hashes: [[UInt8]], by list: BreachedPasswordList, saying part: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> CofferError? {
        let error = #expect(throws: CofferError.self, sourceLocation: sourceLocation) {
            try list.counts(of: hashes)
        }
        #expect(
            error?.message.contains(part) == true, "\(error?.message ?? "")", sourceLocation: sourceLocation)
        return error
    }

    /// Lines of one length (`HASH:1`), sorted, `count` of them, LF line ends.
    private static func evenLines(seed: UInt64, count: Int) -> [String] {
        var random = SeededRandom(seed: seed)
        var hashes: Set<String> = []
        while hashes.count < count { hashes.insert(String(decoding: hex(&random), as: UTF8.self)) }
        return hashes.sorted().map { $0 + ":1" }
    }

    @Test(arguments: [
        "0123456789ABCDEF",  // cut mid-hash
        "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF",  // cut before the colon
        "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF:",  // cut before the count
        "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF:1\n\n",  // a blank line at the end
        "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF:1 \n",
    ])
    func aListThatEndsMidLineIsRefusedBothWays(ending: String) throws {
        let folder = try Folder()
        let lines = Self.evenLines(seed: 11, count: 3000)
        let file = try folder.write("cut.txt", lines.joined(separator: "\n") + "\n" + ending)
        var list = BreachedPasswordList(path: file)
        // A hash near the start: the search never comes near the end.
        let asked = [Array(lines[1].prefix(40).utf8)]
        for limit in [64 << 20, 0] {
            list.wholeFileLimit = limit
            #expect(list.isSearchedByBisection == (limit == 0))
            let error = #expect(throws: CofferError.self, "\(limit)") { try list.counts(of: asked) }
            #expect(error?.message.contains("is not HASH:COUNT") == true, "\(error?.message ?? "")")
        }
        // Whole, with or without its last newline, the same list is fine both ways.
        for text in [lines.joined(separator: "\n"), lines.joined(separator: "\r\n") + "\r\n"] {
            list = BreachedPasswordList(path: try folder.write("whole.txt", text))
            for limit in [64 << 20, 0] {
                list.wholeFileLimit = limit
                #expect(try list.counts(of: asked) == [1])
            }
        }
    }

    @Test func bisectionChecksTheLineAfterEachLineItLandsOn() throws {
        let folder = try Folder()
        var lines = Self.evenLines(seed: 12, count: 3000)
        let text = lines.joined(separator: "\n") + "\n"
        // The first step lands on the first line starting at or after the middle byte.
        let length = lines[0].utf8.count + 1
        let landing = (text.utf8.count / 2 + length - 1) / length
        lines.swapAt(landing, landing + 1)
        var list = BreachedPasswordList(
            path: try folder.write("swapped.txt", lines.joined(separator: "\n") + "\n"))
        list.wholeFileLimit = 0
        // Far below the landing line: the search goes left, never reading the lines after it again.
        Self.expectRefusal(of: [Array(lines[2].prefix(40).utf8)], by: list, saying: "out of order")
    }

    @Test func aByteOrderMarkIsRefusedBothWays() throws {
        let folder = try Folder()
        let lines = Self.evenLines(seed: 14, count: 3000)
        var list = BreachedPasswordList(
            path: try folder.write("bom.txt", "\u{FEFF}" + lines.joined(separator: "\n")))
        for limit in [64 << 20, 0] {
            list.wholeFileLimit = limit
            Self.expectRefusal(
                of: [Array(lines[2999].prefix(40).utf8)], by: list, saying: "is not HASH:COUNT")
        }
    }

    @Test func bisectionChecksTheFirstLineAgainstTheLast() throws {
        let folder = try Folder()
        let lines = Self.evenLines(seed: 13, count: 3000)
        // The last line moved to the front.
        let text = ([lines.last!] + lines.dropLast()).joined(separator: "\n") + "\n"
        var list = BreachedPasswordList(path: try folder.write("rotated.txt", text))
        list.wholeFileLimit = 0
        Self.expectRefusal(of: [Array(lines[1500].prefix(40).utf8)], by: list, saying: "out of order")
    }
}
