#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension PasswordStore {
    /// The tree below the folder `subfolder` (the whole store for `""`).
    ///
    /// Each folder is in it once: a link to a folder the listing holds already (or to one of its own
    /// parents) is a folder without children, and a folder that is in the store under its own name is
    /// listed there rather than below a link to it.
    ///
    /// - Throws: ``CofferError/Code/notFound`` when the folder does not exist.
    public func list(_ subfolder: String = "") throws -> StoreNode {
        try EntryName.validate(subfolder)
        let path = folderPath(subfolder)
        guard FileSystem.isDirectory(path) else {
            throw CofferError(.notFound, "\(subfolder) is not in the password store.")
        }
        return StoreNode(
            name: EntryName.trimmed(subfolder), kind: .folder, children: try Self.tree(below: path))
    }

    /// The pruned tree of items whose name contains any of `terms`, ignoring case, as `coffer find` and
    /// pass's `find` show it.
    ///
    /// The terms make the pattern `*term1*|*term2*...`, matched as `tree -P PATTERN --matchdirs --prune
    /// --ignore-case` matches it: files by name, folders by their path as deep as they lie; a matching
    /// folder is shown with all its direct items, and folders with nothing matching are left out. Links to
    /// folders are listed without their items, as tree 2.1 draws them in a search.
    public func find(_ terms: [String]) throws -> StoreNode {
        guard FileSystem.isDirectory(root) else { return StoreNode(name: "", kind: .folder) }
        let pattern = TreePattern.search(terms)
        var seen = Set([Self.identity(of: root)])
        let children = search(Array(root.utf8), level: 0, pattern, seen: &seen) ?? []
        return StoreNode(name: "", kind: .folder, children: children)
    }

    /// Every entry name in the store (or below `subfolder`), in listing order.
    public func allEntries(in subfolder: String = "") throws -> [String] {
        let prefix = EntryName.trimmed(subfolder)
        return try list(subfolder).entryNames(prefix: prefix.isEmpty ? "" : prefix + "/")
    }

    /// A file's device and inode (after following links).
    private struct Identity: Hashable {
        var device: dev_t
        var inode: ino_t
    }

    private static func identity(of path: String) -> Identity {
        var info = stat()
        _ = stat(path, &info)
        return Identity(device: info.st_dev, inode: info.st_ino)
    }

    /// The visible items below the folder `path` in byte order, as the one walker goes through them (each
    /// folder once).
    private static func tree(below path: String) throws -> [StoreNode] {
        // The nodes of each folder's items, by the folder's path and a slash; the walk sorts them.
        var items: [String: [StoreNode]] = [:]
        try FileTree.walk(path, hidden: false, followLinks: true, sorted: true, examineFiles: true) {
            child, item in
            let folder = child.utf8.contains(0x2F) ? child.parentPath + "/" : ""
            items[folder, default: []].append(node(item))
            return item.leadsToFolder && !item.linkUnreadable
        }
        func children(_ folder: String) -> [StoreNode] {
            (items[folder] ?? []).map { item in
                var node = item
                if node.kind == .folder { node.children = children(folder + node.name + "/") }
                return node
            }
        }
        return children(path.endsWithSlash ? path : path + "/")
    }

    /// tree's pruned search of one folder `level` deep: its items that match or hold something that does;
    /// `nil` when there are none or the folder cannot be read.
    private func search(_ path: [UInt8], level: Int, _ pattern: TreePattern, seen: inout Set<Identity>)
        -> [StoreNode]?
    {
        // A folder whose path, as deep as it lies, matches shows all its direct items.
        let components = path.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        let relative = Array(components.suffix(level).joined(separator: [UInt8(ascii: "/")]))
        let showAll = level > 0 && pattern.matches(relative, isDirectory: true)
        let keep: ([UInt8], Bool) -> Bool = { name, isFolder in
            showAll || isFolder || pattern.matches(name, isDirectory: false)
        }
        guard let items = FileTree.contents(of: path, hidden: false, examineFiles: true, keep: keep) else {
            return nil
        }
        var nodes: [StoreNode] = []
        for item in items {
            var node = Self.node(item)
            if item.leadsToFolder && !item.linkUnreadable {
                let identity = Identity(device: item.device, inode: item.inode)
                var inner: [StoreNode]?
                // As tree does: a folder is always gone into, a link to one only the first time.
                if seen.insert(identity).inserted || item.link == nil {
                    var next = path + [UInt8(ascii: "/")] + item.name
                    if let link = item.link {
                        next = link.first == UInt8(ascii: "/") ? link : path + [UInt8(ascii: "/")] + link
                    }
                    inner = search(next, level: level + 1, pattern, seen: &seen)
                }
                guard inner != nil || pattern.matches(item.name, isDirectory: true) else { continue }
                // tree draws a link to a folder without its items ("recursive, not followed"), though
                // what they hold decides whether the link is shown.
                node.children = item.link == nil ? inner ?? [] : []
            }
            nodes.append(node)
        }
        return nodes.isEmpty ? nil : nodes.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
    }

    private static func node(_ item: FileTree.Item) -> StoreNode {
        let name = item.nameString
        if item.leadsToFolder && !item.linkUnreadable {
            return StoreNode(
                name: name, kind: .folder, linkTarget: item.link.map { String(decoding: $0, as: UTF8.self) })
        }
        return StoreNode(
            name: name, kind: name.hasSuffix(".gpg") ? .entry : .file,
            linkTarget: item.link.map { String(decoding: $0, as: UTF8.self) },
            isExecutable: item.targetMode & 0o111 != 0)
    }
}
