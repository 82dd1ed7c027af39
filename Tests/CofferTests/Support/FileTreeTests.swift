import CofferTestSupport
import Testing

@testable import Coffer

/// ``FileTree/walk(_:hidden:followLinks:sorted:examineFiles:visit:leave:failed:)`` on graphs of links:
/// each folder is walked once, whatever the number of paths to it.
@Suite("FileTree.walk: each folder once")
struct FileTreeTests {
    /// A folder of its own in `/tmp`, removed with what it holds when the test ends.
    final class Scratch {
        let root: String

        init() throws {
            var template = Array("/tmp/coffer-walk-XXXXXX".utf8CString)
            root = String(cString: try #require(mkdtemp(&template)))
        }

        deinit { try? FileSystem.removeTree(root) }

        func folder(_ name: String) {
            try? FileSystem.makeDirectories(root + "/" + name, mode: 0o700)
        }

        func file(_ name: String) {
            close(open(root + "/" + name, O_CREAT | O_WRONLY, 0o600))
        }

        func link(_ name: String, to target: String) {
            symlink(target, root + "/" + name)
        }

        /// Makes `folders` (with their parents), then empty `files`, then `links` (name and target).
        func plant(folders: [String], files: [String] = [], links: KeyValuePairs<String, String>) {
            for name in folders { folder(name) }
            for name in files { file(name) }
            for (name, target) in links { link(name, to: target) }
        }

        /// A diamond: `pair/one` and `pair/two`, links to the folder `shared`, which holds the file `entry`.
        func diamond(holding entry: String) {
            plant(
                folders: ["pair", FileSystem.parent(of: "shared/" + entry)], files: ["shared/" + entry],
                links: ["pair/one": "../shared", "pair/two": "../shared"])
        }

        /// Folders `d0` to `dN` (N = `levels`), each but the last holding links `a` and `b` to the next,
        /// and `dN/last.gpg`: 2^N paths through the links lead to the last folder.
        func ladder(levels: Int) {
            for level in 0...levels { folder("d\(level)") }
            for level in 0..<levels {
                link("d\(level)/a", to: "../d\(level + 1)")
                link("d\(level)/b", to: "../d\(level + 1)")
            }
            file("d\(levels)/last.gpg")
        }
    }

    /// What a walk saw, paths relative to the scratch folder.
    struct Walk {
        var visited: [String] = []
        var left: [String] = []
        var failures: [String: FileTree.Failure] = [:]
    }

    /// More visits than any of these trees has items: the walk went through some folder twice.
    struct TooManyVisits: Error {}

    /// Walks `folder` of `scratch` following links, in byte order, stopping after 1,000 visits.
    static func walk(_ scratch: Scratch, _ folder: String = "", followLinks: Bool = true) throws -> Walk {
        var walk = Walk()
        let skipped = scratch.root.count + 1
        func relative(_ path: String) -> String { String(path.dropFirst(skipped)) }
        func relative(_ failure: FileTree.Failure) -> FileTree.Failure {
            switch failure {
            case .unreadable: return failure
            case .loop(let ancestor): return .loop(ancestor: relative(ancestor))
            case .walkedAlready(let first): return .walkedAlready(first: relative(first))
            }
        }
        let start = folder.isEmpty ? scratch.root : scratch.root + "/" + folder
        try FileTree.walk(start, followLinks: followLinks, sorted: true) { path, _ in
            walk.visited.append(relative(path))
            if walk.visited.count > 1000 { throw TooManyVisits() }
            return true
        } leave: { path, _ in
            walk.left.append(relative(path))
        } failed: { path, failure in
            walk.failures[relative(path)] = relative(failure)
        }
        return walk
    }

    @Test("two links to one folder: walked once under its own name, the links reported")
    func diamond() throws {
        let scratch = try Scratch()
        scratch.diamond(holding: "inner.gpg")
        let walk = try Self.walk(scratch)
        #expect(walk.visited == ["pair", "pair/one", "pair/two", "shared", "shared/inner.gpg"])
        #expect(walk.left == ["pair", "shared"])
        #expect(
            walk.failures == [
                "pair/one": .walkedAlready(first: "shared"), "pair/two": .walkedAlready(first: "shared"),
            ])
    }

    @Test("a folder reached only through links is walked under the first of them")
    func diamondOutsideTheRoot() throws {
        let scratch = try Scratch()
        scratch.diamond(holding: "sub/inner.gpg")
        let walk = try Self.walk(scratch, "pair")
        #expect(walk.visited == ["pair/one", "pair/two", "pair/one/sub", "pair/one/sub/inner.gpg"])
        #expect(walk.left == ["pair/one/sub", "pair/one"])
        #expect(walk.failures == ["pair/two": .walkedAlready(first: "pair/one")])
    }

    @Test("links back up the tree are loops, named with the folder they lead back to")
    func loop() throws {
        let scratch = try Scratch()
        scratch.plant(
            folders: ["a/b"], files: ["a/b/deep.gpg"],
            links: ["a/b/up": "..", "a/self": ".", "a/b/top": "../..", "top": "a"])
        let walk = try Self.walk(scratch)
        #expect(walk.visited == ["a", "a/b", "a/b/deep.gpg", "a/b/top", "a/b/up", "a/self", "top"])
        #expect(walk.left == ["a/b", "a"])
        #expect(
            walk.failures == [
                "a/b/up": .loop(ancestor: "a"), "a/self": .loop(ancestor: "a"),
                "a/b/top": .loop(ancestor: ""),
                "top": .walkedAlready(first: "a"),
            ])
    }

    @Test("a loop found below a link names the folder on that way down")
    func loopBelowALink() throws {
        let scratch = try Scratch()
        scratch.plant(
            folders: ["store", "outside/inner"],
            links: ["outside/inner/back": "..", "store/out": "../outside"])
        let walk = try Self.walk(scratch, "store")
        #expect(walk.visited == ["store/out", "store/out/inner", "store/out/inner/back"])
        #expect(walk.failures == ["store/out/inner/back": .loop(ancestor: "store/out")])
    }

    @Test("a ladder of 24 diamonds (2^24 paths) is one visit an item", arguments: ["", "d0"])
    func ladder(from folder: String) throws {
        let scratch = try Scratch()
        scratch.ladder(levels: 24)
        let walk = try Self.walk(scratch, folder)
        let lasts = walk.visited.filter { $0.hasSuffix("/last.gpg") }
        #expect(Set(walk.visited).count == walk.visited.count)
        #expect(Set(walk.left).count == walk.left.count)
        #expect(lasts.count == 1)
        if folder.isEmpty {
            // Every folder is in the tree: each is walked under its own name, every link reported.
            #expect(walk.visited.count == 25 + 48 + 1)
            #expect(lasts == ["d24/last.gpg"])
            #expect(walk.failures.count == 48)
            #expect(walk.failures["d0/b"] == .walkedAlready(first: "d1"))
        } else {
            // From d0 the others are reached through links: through `a` first, `b` reported.
            #expect(walk.left.count == 24)
            #expect(lasts == ["d0" + String(repeating: "/a", count: 24) + "/last.gpg"])
            #expect(walk.failures.count == 24)
            #expect(walk.failures.values.allSatisfy { if case .walkedAlready = $0 { true } else { false } })
        }
    }

    @Test("without followLinks a link is visited, never gone into, and nothing is reported")
    func linksNotFollowed() throws {
        let scratch = try Scratch()
        scratch.ladder(levels: 3)
        scratch.link("d3/up", to: "..")
        let walk = try Self.walk(scratch, followLinks: false)
        #expect(walk.visited.filter { $0.hasSuffix("/last.gpg") } == ["d3/last.gpg"])
        #expect(walk.left == ["d0", "d1", "d2", "d3"])
        #expect(walk.failures.isEmpty)
    }
}
