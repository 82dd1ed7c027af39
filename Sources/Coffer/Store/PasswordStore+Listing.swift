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
    /// pass's `find` show it, from the walk that draws it (`StoreListing`), in its order.
    ///
    /// The terms make the pattern `*term1*|*term2*...`, matched as `tree -P PATTERN --matchdirs --prune
    /// --ignore-case` matches it: files by name, folders by their path as deep as they lie; a matching
    /// folder is shown with all its direct items, and folders with nothing matching are left out. Links to
    /// folders are listed without their items, as tree 2.1 draws them in a search.
    public func find(_ terms: [String]) throws -> StoreNode {
        guard FileSystem.isDirectory(root) else { return StoreNode(name: "", kind: .folder) }
        let items = StoreListing.items(below: root, pattern: TreePattern.search(terms), examineModes: true)
        return StoreNode(name: "", kind: .folder, children: items.map(Self.node))
    }

    /// A node for an item of tree's walk and those drawn below it (a link to a folder is drawn without
    /// its items in a search).
    private static func node(_ item: ListingItem) -> StoreNode {
        let name = String(decoding: item.name, as: UTF8.self)
        let target = item.linkIsUnreadable ? nil : item.link.map { String(decoding: $0, as: UTF8.self) }
        if item.isFolder {
            return StoreNode(
                name: name, kind: .folder, linkTarget: target, children: (item.children ?? []).map(node))
        }
        return StoreNode(
            name: name, kind: name.hasSuffix(".gpg") ? .entry : .file, linkTarget: target,
            isExecutable: item.targetMode & 0o111 != 0)
    }

    /// Every entry name in the store (or below `subfolder`), in listing order.
    public func allEntries(in subfolder: String = "") throws -> [String] {
        let prefix = EntryName.trimmed(subfolder)
        return try list(subfolder).entryNames(prefix: prefix.isEmpty ? "" : prefix + "/")
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
