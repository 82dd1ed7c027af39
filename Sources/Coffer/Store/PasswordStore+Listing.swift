#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension PasswordStore {
    /// The tree below the folder `subfolder` (the whole store for `""`).
    ///
    /// - Throws: ``CofferError/Code/notFound`` when the folder does not exist.
    public func list(_ subfolder: String = "") throws -> StoreNode {
        try EntryName.validate(subfolder)
        let path = folderPath(subfolder)
        guard FileSystem.isDirectory(path) else {
            throw CofferError(.notFound, "\(subfolder) is not in the password store.")
        }
        var visited = Set<String>()
        return StoreNode(
            name: EntryName.trimmed(subfolder), kind: .folder,
            children: try children(of: path, visited: &visited, match: nil))
    }

    /// The pruned tree of items whose name matches any of `terms` as `*term*`, case-insensitively.
    ///
    /// A matching folder is shown whole, as `tree -P ... --matchdirs --prune --ignore-case` does.
    public func find(_ terms: [String]) throws -> StoreNode {
        let patterns = terms.map { GlobPattern("*" + $0 + "*", caseInsensitive: true) }
        var visited = Set<String>()
        let children =
            FileSystem.isDirectory(root) ? try children(of: root, visited: &visited, match: patterns) : []
        return StoreNode(name: "", kind: .folder, children: children)
    }

    /// Every entry name in the store (or below `subfolder`), in listing order.
    public func allEntries(in subfolder: String = "") throws -> [String] {
        let prefix = EntryName.trimmed(subfolder)
        return try list(subfolder).entryNames(prefix: prefix.isEmpty ? "" : prefix + "/")
    }

    private func children(of path: String, visited: inout Set<String>, match: [GlobPattern]?) throws
        -> [StoreNode]
    {
        let real = FileSystem.realPath(path) ?? path
        guard visited.insert(real).inserted else { return [] }
        defer { visited.remove(real) }
        var nodes: [StoreNode] = []
        for name in try FileSystem.contents(of: path) where !name.hasPrefix(".") {
            let full = path + "/" + name
            var linkTarget: String?
            if FileSystem.kind(full) == .symlink { linkTarget = FileSystem.linkTarget(full) }
            var info = stat()
            let resolves = stat(full, &info) == 0
            let isFolder = resolves && (info.st_mode & S_IFMT) == S_IFDIR
            let matched = match.map { patterns in patterns.contains { $0.matches(name) } }
            if isFolder {
                // A folder whose name matches is shown whole.
                let inner = try children(of: full, visited: &visited, match: matched == true ? nil : match)
                if match != nil && matched != true && inner.isEmpty { continue }
                nodes.append(StoreNode(name: name, kind: .folder, linkTarget: linkTarget, children: inner))
            } else {
                if matched == false { continue }
                let kind: StoreNode.Kind = name.hasSuffix(".gpg") ? .entry : .file
                let executable = resolves && (info.st_mode & 0o111) != 0
                nodes.append(
                    StoreNode(name: name, kind: kind, linkTarget: linkTarget, isExecutable: executable))
            }
        }
        return nodes
    }
}
