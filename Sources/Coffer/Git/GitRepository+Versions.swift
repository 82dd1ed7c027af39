/// One committed version of an entry's file: the commit's author date and the file's blob there.
package struct EntryVersion: Sendable, Equatable {
    /// The author date of the commit, in seconds since 1970.
    package let time: Int
    /// The blob the commit left at the entry's path (40 hexadecimal digits).
    package let blob: String
}

extension GitRepository {
    /// The committed versions of each of `paths` (relative to the top), newest first, from one `git log`
    /// of the first-parent history (from `HEAD` back through the first parent of each merge, a merge
    /// counting as the change it made to its first parent, which `--first-parent` implies from git 2.31
    /// on; older gits show no change at a merge, so a version taken from the other side is not dated):
    /// renames are followed (git's rename detection, and pass's re-encrypting moves, which add the new
    /// file and remove the old one in one commit: the removed entry whose trailing path parts match best
    /// is taken to be the old name). A path with no commit has no versions; a repository without commits
    /// has none at all.
    ///
    /// - Throws: ``CofferError`` when git cannot read the repository (git missing, a repository git
    ///   refuses, such as one owned by someone else, or any other failure), and when the clone is
    ///   shallow: its history is cut short, so no version before the cut can be known.
    package func versions(of paths: [String]) throws -> [String: [EntryVersion]] {
        var result: [String: [EntryVersion]] = [:]
        // The path each entry had at the point of history being read, going back in time.
        var tracked: [String: String] = [:]
        for path in paths { tracked[path] = path }
        let shallow = try readHistory(["rev-parse", "--is-shallow-repository"]).outputText
        if shallow == "true" {
            throw CofferError(
                .git,
                "the git history of \(directory) is shallow (a shallow clone), so the ages of passwords cannot "
                    + "be known; fetch all of it with git fetch --unshallow, or leave ages out with --age 0")
        }
        // No HEAD commit (a repository without commits) is the only failure that means no history.
        let head = try runUnchecked(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"])
        guard head.status == 0, !head.outputText.isEmpty else { return result }
        let output = try readHistory([
            "log", "-z", "--raw", "--no-abbrev", "-M", "--first-parent",
            "--format=%x1e%at", "HEAD",
        ]).standardOutput
        for record in output.split(separator: 0x1e) {
            let tokens = record.split(separator: 0, omittingEmptySubsequences: false).map {
                String(decoding: $0, as: UTF8.self)
            }
            guard let header = tokens.first, let time = Int(header.trimmingNewlines) else { continue }
            var changes: [Change] = []
            var index = 1
            while index < tokens.count {
                let token = tokens[index].trimmingNewlines
                index += 1
                guard token.hasPrefix(":") else { continue }
                let fields = token.split(separator: " ")
                guard fields.count >= 5, index < tokens.count else { break }
                let status = String(fields[4].prefix(1))
                let first = tokens[index]
                index += 1
                if status == "R" || status == "C", index < tokens.count {
                    changes.append(
                        Change(status: status, old: first, new: tokens[index], blob: String(fields[3])))
                    index += 1
                } else {
                    changes.append(Change(status: status, old: first, new: first, blob: String(fields[3])))
                }
            }
            let removed = changes.filter { $0.status == "D" && $0.old.lowercased().hasSuffix(".gpg") }.map(
                \.old)
            var renamed: [(from: String, to: String)] = []
            for change in changes where change.status != "D" {
                guard let entry = tracked[change.new] else { continue }
                result[entry, default: []].append(EntryVersion(time: time, blob: change.blob))
                if change.status == "R" {
                    renamed.append((change.new, change.old))
                } else if change.status == "A" {
                    if let old = Self.bestMatch(for: change.new, among: removed) {
                        renamed.append((change.new, old))
                    } else {
                        renamed.append((change.new, ""))
                    }
                }
            }
            for (from, to) in renamed {
                let entry = tracked.removeValue(forKey: from)
                if let entry, !to.isEmpty { tracked[to] = entry }
            }
        }
        return result
    }

    /// Runs git to read the history; any failure (git missing included) is an error naming the
    /// repository and git's own reason (its `fatal:` line when it gives one).
    private func readHistory(_ arguments: [String]) throws -> ChildProcess.Output {
        let output: ChildProcess.Output
        do {
            output = try runUnchecked(arguments)
        } catch let error as CofferError {
            throw CofferError(
                .git,
                "cannot read the git history of \(directory): "
                    + (error.code == .notFound ? "git is not installed (not found in PATH)" : error.message)
                    + " (--age 0 leaves ages out)")
        }
        guard output.status != 0 else { return output }
        let lines = output.errorText.split(separator: "\n").map(String.init).filter { !$0.isEmpty }
        let reason =
            lines.first { $0.hasPrefix("fatal:") || $0.hasPrefix("error:") } ?? lines.last
            ?? "git \(arguments.first ?? "") exited with status \(output.status)"
        throw CofferError(
            .git, "cannot read the git history of \(directory): \(reason) (--age 0 leaves ages out)",
            exitStatus: output.status)
    }

    /// The removed file whose trailing path parts match `path`'s best (`nil` when none was removed).
    private static func bestMatch(for path: String, among removed: [String]) -> String? {
        let parts = path.pathParts
        func matchingTail(_ candidate: String) -> Int {
            zip(candidate.pathParts.reversed(), parts.reversed()).prefix { $0 == $1 }.count
        }
        return removed.max { matchingTail($0) < matchingTail($1) }
    }

    /// One file changed by a commit.
    private struct Change {
        var status: String
        var old: String
        var new: String
        var blob: String
    }
}

extension String {
    /// The text without line feeds at either end.
    fileprivate var trimmingNewlines: String {
        var text = Substring(self)
        while text.first == "\n" { text.removeFirst() }
        while text.last == "\n" { text.removeLast() }
        return String(text)
    }
}
