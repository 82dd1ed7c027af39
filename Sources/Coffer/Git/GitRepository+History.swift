extension GitRepository {
    /// The top folder of the work tree.
    package func topLevel() throws -> String {
        try run(["rev-parse", "--show-toplevel"]).outputText
    }

    /// The commits that touched `path` (relative to the top), newest first, following renames.
    ///
    /// git follows a rename only while the content stays similar; a move that re-encrypted the entry for
    /// other recipients changes every byte, so where git's history of a path starts with the path being
    /// added, the commit is looked at: when it removed entries, the history goes on with the one it
    /// was renamed from (the only one, or the one whose trailing path parts match best).
    package func history(of path: String) throws -> [EntryCommit] {
        var commits: [EntryCommit] = []
        var current = path
        var start = "HEAD"
        for _ in 0..<64 {
            let found = try history(of: current, from: start)
            commits += found
            guard let oldest = found.last, oldest.status == "A",
                let previous = try renamedFrom(oldest.path, in: oldest.hash)
            else { break }
            current = previous
            start = oldest.hash + "^"
        }
        return commits
    }

    /// When each file under `folder` (relative to the top) that exists in HEAD was first added (since it
    /// was last deleted) and last changed, by author date in seconds since 1970, from one `git log`.
    ///
    /// A file moved to its path counts as added there.
    package func fileDates(under folder: String) throws -> [String: (added: Int, changed: Int)] {
        // -z: each commit is `RS DATE NUL`, then `STATUS NUL PATH NUL` per file it touched.
        let output = try run([
            "log", "-z", "--no-renames", "--name-status", "--format=%x1e%at", "HEAD", "--", folder,
        ]).standardOutput
        var dates: [String: (added: Int, changed: Int)] = [:]
        var finished: Set<String> = []
        for record in output.split(separator: 0x1e) {
            let parts = record.split(separator: 0, omittingEmptySubsequences: false).map {
                String(decoding: $0, as: UTF8.self).trimmingNewlines()
            }
            guard let date = parts.first.flatMap({ Int($0) }) else { continue }
            var index = 1
            while index + 1 < parts.count {
                let status = parts[index]
                let path = parts[index + 1]
                index += 2
                guard !status.isEmpty, !finished.contains(path) else { continue }
                if status.hasPrefix("D") {
                    // Older commits are about an earlier file at this path.
                    finished.insert(path)
                    continue
                }
                if let known = dates[path] {
                    dates[path] = (date, known.changed)
                } else {
                    dates[path] = (date, date)
                }
                if status.hasPrefix("A") { finished.insert(path) }
            }
        }
        return dates
    }

    /// The entry file that `commit` removed when it added `path`, taken to be its old name.
    private func renamedFrom(_ path: String, in commit: String) throws -> String? {
        let output = try runUnchecked([
            "diff-tree", "-r", "-z", "--no-renames", "--name-status", "--no-commit-id", "\(commit)^", commit,
        ])
        guard output.status == 0 else { return nil }
        let fields = output.standardOutput.split(separator: 0, omittingEmptySubsequences: false)
        var removed: [String] = []
        var index = 0
        while index + 1 < fields.count {
            let status = String(decoding: fields[index], as: UTF8.self)
            let name = String(decoding: fields[index + 1], as: UTF8.self)
            if status == "D" && name.lowercased().hasSuffix(".gpg") { removed.append(name) }
            index += 2
        }
        let parts = path.pathParts
        func matchingTail(_ candidate: String) -> Int {
            zip(candidate.pathParts.reversed(), parts.reversed()).prefix { $0 == $1 }.count
        }
        return removed.max { matchingTail($0) < matchingTail($1) }
    }

    /// git's own `log --follow` of `path` from `revision`.
    private func history(of path: String, from revision: String) throws -> [EntryCommit] {
        // -z: names come unquoted whatever bytes they hold; the header ends with a NUL, then each
        // name-status entry is `STATUS NUL PATH NUL` (`R100 NUL OLD NUL NEW NUL` for a rename).
        let output = try run([
            "log", "-z", "--follow", "--name-status", "--date=iso",
            "--format=%x1e%h%x1f%H%x1f%ad%x1f%an%x1f%s", revision, "--", path,
        ]).standardOutput
        var commits: [EntryCommit] = []
        for record in output.split(separator: 0x1e) {
            let parts = record.split(separator: 0, omittingEmptySubsequences: false).map {
                String(decoding: $0, as: UTF8.self)
            }
            guard let header = parts.first else { continue }
            let fields = header.split(separator: "\u{1f}", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 5 else { continue }
            let changes = parts.dropFirst().map { $0.hasPrefix("\n") ? String($0.dropFirst()) : $0 }
                .filter { !$0.isEmpty }
            commits.append(
                EntryCommit(
                    shortHash: fields[0], hash: fields[1], date: fields[2], author: fields[3],
                    subject: fields[4], path: changes.last ?? path,
                    status: changes.first.map { String($0.prefix(1)) } ?? ""))
        }
        return commits
    }

    /// The full hash of `revision`, or `nil` when it names no commit.
    package func resolve(_ revision: String) -> String? {
        guard
            let output = try? run([
                "rev-parse", "--verify", "--quiet", "--end-of-options", revision + "^{commit}",
            ])
        else { return nil }
        return output.outputText.isEmpty ? nil : output.outputText
    }

    /// The bytes of `path` (relative to the top) as committed in `revision`, or `nil` when absent there.
    package func contents(of path: String, at revision: String) throws -> [UInt8]? {
        let output = try runUnchecked(["cat-file", "blob", "\(revision):\(path)"])
        return output.status == 0 ? output.standardOutput : nil
    }

    /// Whether `ancestor` is `descendant` or one of its ancestors.
    package func isAncestor(_ ancestor: String, of descendant: String) -> Bool {
        (try? runUnchecked(["merge-base", "--is-ancestor", ancestor, descendant]).status) == 0
    }

    /// Installs the entry merge driver in this clone, for people who run `git pull` themselves:
    /// `merge.coffer.*` in the repository's config, naming `executable` (an absolute path, so git finds it
    /// whatever the `PATH`), `merge.directoryRenames` off, and `*.gpg merge=coffer` in its local
    /// attributes file
    /// (`.git/info/attributes`).
    ///
    /// Nothing is committed, so the shared tree stays exactly as pass makes it, and a clone where coffer
    /// is not installed keeps git's ordinary conflict for binary files.
    package func installMergeDriver(executable: String) throws {
        let quoted = "'" + executable.replacing("'", with: "'\\''") + "'"
        try run(["config", "--local", "merge.coffer.name", "coffer: merge decrypted entries field by field"])
        try run(["config", "--local", "merge.coffer.driver", "\(quoted) git-merge-driver %O %A %B %P"])
        // A merge by hand treats folders as sync does: git's directory rename detection would move an
        // entry the other side added into the folder this side renamed, under other recipients.
        try run(["config", "--local", "merge.directoryRenames", "false"])
        try installEntryAttributes(mergeDriver: true)
    }

    /// Writes this clone's own attributes for entries (`.git/info/attributes`, which win over a pushed
    /// `.gitattributes`): entries are bytes git must keep as they are (`text` would turn LF into CR LF
    /// inside ciphertexts on checkout, a filter would replace them); with `mergeDriver`, they merge
    /// through coffer's driver.
    package func installEntryAttributes(mergeDriver: Bool) throws {
        var attributes = try run(["rev-parse", "--git-path", "info/attributes"]).outputText
        if !attributes.startsWithSlash { attributes = directory + "/" + attributes }
        // The recipient files and kept keys are bytes too: a pushed `working-tree-encoding` would turn a
        // `.gpg-id` into UTF-16 on checkout.
        let asBytes = "-text -eol -filter -ident -working-tree-encoding"
        let lines = [
            "*.gpg \(mergeDriver ? "merge=coffer" : "-merge") \(asBytes)",
            "*.GPG -text -filter",
            ".gpg-id \(asBytes)", ".gpg-id.sig \(asBytes)", ".public-keys/** \(asBytes)",
        ]
        let existing = FileSystem.isFile(attributes) ? try FileSystem.readFile(attributes) : []
        let text = String(decoding: existing, as: UTF8.self)
        var kept = text.split(separator: "\n").map(String.init).filter {
            !$0.hasPrefix("*.gpg merge=coffer") && !$0.hasPrefix("*.gpg -merge -text") && !lines.contains($0)
        }
        if text.split(separator: "\n").map(String.init).suffix(lines.count) == lines[...] { return }
        kept += lines
        let updated = kept.map { $0 + "\n" }.joined()
        try FileSystem.makeDirectories(FileSystem.parent(of: attributes), mode: 0o700)
        try FileSystem.atomicWrite(attributes, bytes: Array(updated.utf8), mode: 0o600)
    }
}

/// One commit that touched an entry.
public struct EntryCommit: Sendable, Equatable {
    /// The abbreviated hash.
    public let shortHash: String
    /// The full hash.
    public let hash: String
    /// The author date, `YYYY-MM-DD HH:MM:SS +ZZZZ`.
    public let date: String
    /// The author's name.
    public let author: String
    /// The first line of the message.
    public let subject: String
    /// The path of the file in that commit, relative to the top of the work tree.
    public let path: String
    /// How the commit changed the file: `A` added, `M` modified, `D` deleted, `R` renamed (git's letter).
    public let status: String
}

extension String {
    /// The text without leading and trailing line feeds.
    fileprivate func trimmingNewlines() -> String {
        var text = self[...]
        while text.first == "\n" { text = text.dropFirst() }
        while text.last == "\n" { text = text.dropLast() }
        return String(text)
    }
}
