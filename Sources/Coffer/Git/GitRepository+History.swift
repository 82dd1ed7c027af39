extension GitRepository {
    /// One commit that touched an entry.
    public struct Commit: Sendable, Equatable {
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
    }

    /// The top folder of the work tree.
    public func topLevel() throws -> String {
        try run(["rev-parse", "--show-toplevel"]).outputText
    }

    /// The commits that touched `path` (relative to the top), newest first, following renames.
    public func history(of path: String) throws -> [Commit] {
        let output = try run([
            "log", "--follow", "--name-status", "--date=iso",
            "--format=%x1e%h%x1f%H%x1f%ad%x1f%an%x1f%s", "--", path,
        ]).outputText
        var commits: [Commit] = []
        for record in output.split(separator: "\u{1e}") {
            let lines = record.split(separator: "\n", omittingEmptySubsequences: true)
            guard let header = lines.first else { continue }
            let fields = header.split(separator: "\u{1f}", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 5 else { continue }
            // The name-status line: "M\tpath", "D\tpath" or "R100\told\tnew"; the last column is the path then.
            let status = lines.dropFirst().last.map { $0.split(separator: "\t").map(String.init) } ?? []
            commits.append(
                Commit(
                    shortHash: fields[0], hash: fields[1], date: fields[2], author: fields[3],
                    subject: fields[4],
                    path: status.last ?? path))
        }
        return commits
    }

    /// The full hash of `revision`, or `nil` when it names no commit.
    public func resolve(_ revision: String) -> String? {
        guard
            let output = try? run([
                "rev-parse", "--verify", "--quiet", "--end-of-options", revision + "^{commit}",
            ])
        else { return nil }
        return output.outputText.isEmpty ? nil : output.outputText
    }

    /// The bytes of `path` (relative to the top) as committed in `revision`, or `nil` when absent there.
    public func contents(of path: String, at revision: String) throws -> [UInt8]? {
        let output = try runUnchecked(["cat-file", "blob", "\(revision):\(path)"])
        return output.status == 0 ? output.standardOutput : nil
    }

    /// Whether `ancestor` is `descendant` or one of its ancestors.
    public func isAncestor(_ ancestor: String, of descendant: String) -> Bool {
        (try? runUnchecked(["merge-base", "--is-ancestor", ancestor, descendant]).status) == 0
    }

    /// Installs the entry merge driver in this clone: `merge.coffer.*` in the repository's config and
    /// `*.gpg merge=coffer` in its local attributes file (`.git/info/attributes`).
    ///
    /// Nothing is committed, so the shared tree stays exactly as pass makes it, and a clone where coffer
    /// is not installed (or not on the path) keeps git's ordinary conflict for binary files.
    public func installMergeDriver() throws {
        try run(["config", "--local", "merge.coffer.name", "coffer: merge decrypted entries field by field"])
        try run(["config", "--local", "merge.coffer.driver", "coffer git-merge-driver %O %A %B %P"])
        var attributes = try run(["rev-parse", "--git-path", "info/attributes"]).outputText
        if !attributes.hasPrefix("/") { attributes = directory + "/" + attributes }
        let line = "*.gpg merge=coffer"
        let existing = FileSystem.isFile(attributes) ? try FileSystem.readFile(attributes) : []
        let text = String(decoding: existing, as: UTF8.self)
        if text.split(separator: "\n").contains(where: { $0 == line }) { return }
        let updated = text + (text.isEmpty || text.hasSuffix("\n") ? "" : "\n") + line + "\n"
        try FileSystem.makeDirectories(FileSystem.parent(of: attributes), mode: 0o700)
        try FileSystem.atomicWrite(attributes, bytes: Array(updated.utf8), mode: 0o600)
    }
}
