import Coffer
import CofferTestSupport
import Testing

@testable import CofferCLI

/// The listing (the library's walk, drawn by the CLI) against tree 2.1 itself, as pass runs it: on seeded
/// random trees with links, loops and tricky names, `ls` and `find` draw the same bytes, and the library's
/// ``PasswordStore/find(_:)`` holds the items drawn.
@Suite("the listing against tree 2.1, and the library's find")
struct TreeOracleTests {
    /// Builds a random tree of folders, entries, other files and links under `root`.
    private static func plant(_ root: String, _ random: inout SeededRandom) {
        let names = ["a", "B", "ab", "mail", "Mail", "x.gpg", "sub", "c d", "[x]", "wéb", "a.b"]
        var folders = [root]
        for _ in 0..<Int.random(in: 4...18, using: &random) {
            let folder = random.pick(folders)
            let name =
                random.pick(names) + (random.chance(0.3) ? String(Int.random(in: 0...2, using: &random)) : "")
            let path = folder + "/" + name
            guard access(path, F_OK) != 0 else { continue }
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<3:
                mkdir(path, 0o700)
                folders.append(path)
            case 3..<7:
                close(open(path + (random.chance(0.8) ? ".gpg" : ""), O_CREAT | O_WRONLY, 0o600))
            case 7:
                close(open(path, O_CREAT | O_WRONLY, 0o600))
            default:
                // A link to a folder (perhaps one above, making a loop) or to a file, relative or absolute.
                let target = random.pick(folders)
                let relative =
                    target == folder
                    ? "."
                    : target.hasPrefix(folder + "/") ? String(target.dropFirst(folder.count + 1)) : target
                symlink(random.chance(0.5) ? relative : target, path)
            }
        }
    }

    /// The paths the drawing shows, `.gpg` and link targets left out, from its ASCII lines.
    private static func drawnPaths(_ text: String) -> [String] {
        var stack: [String] = []
        var paths: [String] = []
        for line in text.split(separator: "\n") {
            let bytes = Array(line.utf8)
            var depth = 0
            while bytes.count >= (depth + 1) * 4,
                ["|   ", "    "].contains(
                    String(decoding: bytes[(depth * 4)..<(depth * 4 + 4)], as: UTF8.self))
            {
                depth += 1
            }
            var name = String(decoding: bytes.dropFirst(depth * 4 + 4), as: UTF8.self)
            for marker in [" -> ", "  ["] {
                if let index = Self.index(of: marker, in: name) { name = String(name[..<index]) }
            }
            stack = Array(stack.prefix(depth)) + [name]
            paths.append(stack.joined(separator: "/"))
        }
        return paths
    }

    private static func index(of marker: String, in text: String) -> String.Index? {
        text.indices.first { text[$0...].hasPrefix(marker) }
    }

    /// The same paths from the library's tree.
    private static func nodePaths(_ node: StoreNode, prefix: String = "") -> [String] {
        node.children.flatMap { child -> [String] in
            let name = child.name.hasSuffix(".gpg") ? String(child.name.dropLast(4)) : child.name
            return [prefix + name] + nodePaths(child, prefix: prefix + name + "/")
        }
    }

    /// What pass prints for the tree below `root`: `tree -N -l --noreport [-P PATTERN --prune --matchdirs
    /// --ignore-case] --charset ascii ROOT | tail -n +2 | sed -E ...`.
    private static func treeOutput(_ root: String, pattern: String?) throws -> [UInt8] {
        let search = pattern.map { ["-P", $0, "--prune", "--matchdirs", "--ignore-case"] } ?? []
        let result = try TestProcess.run(
            ["tree", "-N", "-l", "--noreport", "--charset", "ascii"] + search + ["--", root],
            environment: ["PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8"])
        let lines = result.standardOutput.split(separator: 10, omittingEmptySubsequences: false).dropFirst()
        return lines.map { TreeListing.strippingGPG(Array($0)) }.joined(separator: [10]).map { $0 }
    }

    @Test("seeded trees and terms", arguments: 0..<60)
    func agree(seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        var template = Array("/tmp/coffer-find-XXXXXX".utf8CString)
        let root = try #require(mkdtemp(&template).map { String(cString: $0) })
        defer { _ = system("rm -rf '\(root)'") }
        Self.plant(root, &random)
        let termChoices = ["a", "b", "mail", "x", "sub", "c d", "[a-c]", "*", "?", "a/b", "wé", ".gpg", "|"]
        let terms = (0..<Int.random(in: 1...2, using: &random)).map { _ in random.pick(termChoices) }
        // pass's find: terms="*$(printf '%s*|*' "$@")", then "${terms%|*}".
        let pattern = terms.map { "*" + $0 + "*" }.joined(separator: "|")
        var listing = TreeListing(pattern: TreePattern.search(terms), environment: ["TREE_CHARSET": "ascii"])
        let drawnBytes = listing.render(root)
        #expect(
            String(decoding: drawnBytes, as: UTF8.self)
                == String(decoding: try Self.treeOutput(root, pattern: pattern), as: UTF8.self),
            "seed \(seed), terms \(terms)")
        var plain = TreeListing(environment: ["TREE_CHARSET": "ascii"])
        #expect(
            String(decoding: plain.render(root), as: UTF8.self)
                == String(decoding: try Self.treeOutput(root, pattern: nil), as: UTF8.self), "seed \(seed)")
        let drawn = Self.drawnPaths(String(decoding: drawnBytes, as: UTF8.self))
        let found = Self.nodePaths(try PasswordStore(root: root).find(terms))
        #expect(found == drawn, "seed \(seed), terms \(terms)")
    }
}
