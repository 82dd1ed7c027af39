extension GitRepository {
    /// A path git left unmerged: the object of each stage it has (1 the common ancestor, 2 ours,
    /// 3 theirs), by stage.
    struct UnmergedPath: Sendable {
        /// The path relative to the top of the work tree, as it is (never quoted).
        var path: String
        /// The mode (`100644`, `100755`, `120000`, ...) and object id of each stage present.
        var stages: [Int: (mode: String, object: String)] = [:]
    }

    /// The unmerged paths of the index (`git ls-files -u -z`), in path order.
    func unmergedPaths() throws -> [UnmergedPath] {
        let output = try run(["ls-files", "-u", "-z"]).standardOutput
        var paths: [UnmergedPath] = []
        for record in output.split(separator: 0) {
            // MODE SP OBJECT SP STAGE TAB PATH
            guard let tab = record.firstIndex(of: UInt8(ascii: "\t")) else { continue }
            let fields = record[..<tab].split(separator: UInt8(ascii: " ")).map {
                String(decoding: $0, as: UTF8.self)
            }
            guard fields.count == 3, let stage = Int(fields[2]) else { continue }
            let path = String(decoding: record[(tab + 1)...], as: UTF8.self)
            if paths.last?.path != path { paths.append(UnmergedPath(path: path)) }
            paths[paths.count - 1].stages[stage] = (fields[0], fields[1])
        }
        return paths
    }

    /// The mode and object of the file at `path` in `commit`, or `nil` when it holds no file there.
    func file(_ path: String, in commit: String) throws -> (mode: String, object: String)? {
        let output = try run(["ls-tree", "-z", "--full-tree", commit, "--", path]).standardOutput
        for record in output.split(separator: 0) {
            // MODE SP TYPE SP OBJECT TAB PATH
            guard let tab = record.firstIndex(of: UInt8(ascii: "\t")),
                String(decoding: record[(tab + 1)...], as: UTF8.self) == path
            else { continue }
            let fields = record[..<tab].split(separator: UInt8(ascii: " ")).map {
                String(decoding: $0, as: UTF8.self)
            }
            if fields.count == 3 && fields[1] == "blob" { return (fields[0], fields[2]) }
        }
        return nil
    }

    /// The bytes of a blob.
    func blob(_ object: String) throws -> [UInt8] {
        try run(["cat-file", "blob", object]).standardOutput
    }

    /// The files that differ between two commits, with git's letter (`A`, `M`, `D`, `T`), names as they are.
    func changes(from old: String, to new: String) throws -> [(status: String, path: String)] {
        let output = try run(["diff", "-z", "--name-status", "--no-renames", old, new, "--"]).standardOutput
        let fields = output.split(separator: 0, omittingEmptySubsequences: false).map {
            String(decoding: $0, as: UTF8.self)
        }
        var result: [(String, String)] = []
        var index = 0
        while index + 1 < fields.count {
            result.append((fields[index], fields[index + 1]))
            index += 2
        }
        return result
    }

    /// Every version of a file the commits reachable from `new` and not from `old` wrote or replaced
    /// (`git log --raw`, merges against each parent, so that what a merge's resolution wrote is read
    /// too): its path
    /// relative to the top of the work tree and the objects before and after each change.
    func fileVersions(since old: String, to new: String) throws -> [(path: String, objects: [String])] {
        let output = try run([
            "log", "--format=", "--raw", "-m", "-z", "--no-renames", "--no-abbrev", "\(old)..\(new)", "--",
        ]).standardOutput
        let fields = output.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        var result: [(String, [String])] = []
        var index = 0
        while index + 1 < fields.count {
            // `:MODE MODE OBJECT OBJECT STATUS`, then the path.
            let meta = fields[index].split(separator: " ")
            guard fields[index].hasPrefix(":"), meta.count >= 5 else {
                index += 1
                continue
            }
            let objects = [meta[2], meta[3]].map(String.init).filter { $0.contains { $0 != "0" } }
            result.append((fields[index + 1], objects))
            index += 2
        }
        return result
    }

    /// The mode and object of every file in `revision`'s tree, by path relative to the top of the work
    /// tree.
    func treeFiles(at revision: String) throws -> [String: (mode: String, object: String)] {
        let output = try run(["ls-tree", "-r", "-z", "--full-tree", revision]).standardOutput
        var files: [String: (mode: String, object: String)] = [:]
        for record in output.split(separator: 0) {
            // MODE SP TYPE SP OBJECT TAB PATH
            guard let tab = record.firstIndex(of: UInt8(ascii: "\t")) else { continue }
            let fields = record[..<tab].split(separator: UInt8(ascii: " ")).map {
                String(decoding: $0, as: UTF8.self)
            }
            guard fields.count == 3, fields[1] == "blob" else { continue }
            files[String(decoding: record[(tab + 1)...], as: UTF8.self)] = (fields[0], fields[2])
        }
        return files
    }

    /// The branch HEAD is on (`main`), or `nil` on a detached HEAD.
    ///
    /// - Throws: when git cannot be run at all (not on `PATH`), which is no detached HEAD.
    func currentBranch() throws -> String? {
        let output = try runUnchecked(["symbolic-ref", "-q", "--short", "HEAD"])
        guard output.status == 0 else { return nil }
        return output.outputText.isEmpty ? nil : output.outputText
    }

    /// Whether the index holds changes that are not committed.
    func hasStagedChanges() throws -> Bool {
        let staged = try runUnchecked(["diff", "--cached", "--quiet"])
        guard staged.status <= 1 else { throw CofferError(.git, "git diff failed: \(staged.errorText)") }
        return staged.status == 1
    }

    /// Whether `path` (a file or a folder) differs from HEAD in the work tree, untracked files included.
    package func hasChanges(_ path: String) throws -> Bool {
        !(try run(["status", "--porcelain", "-z", "--untracked-files=all", "--", pathspec(path)])
            .standardOutput
            .isEmpty)
    }

    /// The tracked files that differ from HEAD in the index or the work tree.
    func uncommittedChanges() throws -> [String] {
        let output = try run(["status", "--porcelain", "-z", "--untracked-files=no"]).standardOutput
        // Each record is `XY PATH`; a rename adds the old path as a record of its own.
        return output.split(separator: 0).compactMap { record in
            record.count > 3 && record[record.startIndex + 2] == UInt8(ascii: " ")
                ? String(decoding: record.dropFirst(3), as: UTF8.self) : nil
        }
    }
}
