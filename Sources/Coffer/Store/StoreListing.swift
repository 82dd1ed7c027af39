#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One item of a listing as `tree` shows it (see ``StoreListing``): its name, what `tree` needs to colour
/// it, the note it prints beside it, and the items drawn below it.
package struct ListingItem: Sendable {
    /// The name, as its bytes on disk.
    package var name: [UInt8]
    /// The item's own mode (`lstat`).
    package var mode: mode_t
    /// The mode of what a link leads to (0 when it leads nowhere); the item's own for others. Regular
    /// files are examined only when the listing asked for modes.
    package var targetMode: mode_t
    /// A link's target as written in it, or tree's words for a link that cannot be read.
    package var link: [UInt8]?
    /// Whether the item is a link whose target cannot be read.
    package var linkIsUnreadable: Bool
    /// Whether the item is a link that leads nowhere.
    package var isOrphan: Bool
    /// Whether the item is a folder, or a link to one, that the walk may go into.
    package var isFolder: Bool
    /// What tree prints in brackets after the name: `error opening dir`, `recursive, not followed`.
    package var note: String?
    /// The items drawn below it, in order; `nil` when none are.
    package var children: [ListingItem]?
    /// What the item leads to, to go into each folder once.
    var device: dev_t
    var inode: ino_t
}

/// The walk behind `tree`, `ls` and `find`: the items below a folder in tree 2.1's order, with its
/// rules. The CLI draws the result; ``PasswordStore/find(_:)`` returns it as nodes.
///
/// The rules, quirks included: names sorted with `strcoll`, dotfiles hidden, links followed into
/// folders, a link to a folder already seen not followed (`recursive, not followed`), unreadable
/// folders noted (`error opening dir`). With a pattern (tree's `-P PATTERN --matchdirs --prune
/// --ignore-case`), everything is read first in directory order, folders with nothing matching are
/// pruned, and a folder whose path matches lifts the pattern for its direct items.
package enum StoreListing {
    /// The items below `directory` (not the folder itself).
    ///
    /// - Parameters:
    ///   - pattern: the search pattern (see ``TreePattern/search(_:)``), or `nil` for the plain listing.
    ///   - examineModes: whether every file is examined for its mode (for colours); when not, regular
    ///     files cost no system call.
    package static func items(
        below directory: String, pattern: TreePattern? = nil, examineModes: Bool = false
    )
        -> [ListingItem]
    {
        var walk = Walk(pattern: pattern, examineModes: examineModes)
        return walk.run(Array(directory.utf8))
    }

    /// A file's device and inode (after following links).
    private struct Identity: Hashable {
        var device: dev_t
        var inode: ino_t
    }

    /// One walk: the folders seen so far and what was read ahead.
    private struct Walk {
        let pattern: TreePattern?
        let examineModes: Bool
        var seen = Set<Identity>()
        /// Folders read ahead on every core, by path: all their visible items in a listing, only those
        /// the pattern keeps in a search.
        var readAhead: [[UInt8]: [ListingItem]] = [:]

        init(pattern: TreePattern?, examineModes: Bool) {
            self.pattern = pattern
            self.examineModes = examineModes
        }

        mutating func run(_ path: [UInt8]) -> [ListingItem] {
            var info = stat()
            guard lstat(cPath(path), &info) == 0 else { return [] }
            seen.insert(Identity(device: info.st_dev, inode: info.st_ino))
            readAhead = readTree(path)
            defer { readAhead = [:] }
            if pattern != nil {
                var error: String?
                guard let items = fullTree(path, level: 0, error: &error) else { return [] }
                return finished(path, items, full: true)
            }
            guard let items = readFolder(path, usePattern: false) else { return [] }
            return finished(path, items, full: false)
        }

        // MARK: Reading

        /// The visible items of a folder, unsorted, from the read-ahead when it has them; `nil` when the
        /// folder cannot be opened.
        func readFolder(_ path: [UInt8], usePattern: Bool) -> [ListingItem]? {
            // What was read ahead is filtered exactly when this walk has a pattern.
            if usePattern == (pattern != nil), let items = readAhead[path] { return items }
            return Self.readFolder(path, pattern: usePattern ? pattern : nil, examineModes: examineModes)
        }

        /// Reads the folders at and below `root` (not through links) on every core, a level at a time.
        ///
        /// Examining ten thousand entries is mostly the kernel's work for each `fstatat`; spread over the
        /// cores it takes a fraction of the time. The walk itself still goes in tree's order afterwards.
        /// In a search the pattern is applied here too (folders always stay, so the walk goes on), and
        /// the files it leaves out are not even examined.
        func readTree(_ root: [UInt8]) -> [[UInt8]: [ListingItem]] {
            var found: [[UInt8]: [ListingItem]] = [:]
            var level = [root]
            let pattern = self.pattern
            let examineModes = self.examineModes
            while !level.isEmpty {
                let folders = level
                level = []
                // One window for the whole level: everything read is kept anyway. Should no worker
                // thread start, nothing is read ahead and the walk reads each folder itself.
                try? Parallel.forEach(folders, window: folders.count) { path in
                    Self.readFolder(path, pattern: pattern, examineModes: examineModes)
                } consume: { index, result in
                    guard case .success(let read) = result, let items = read else { return }
                    found[folders[index]] = items
                    for item in items where item.link == nil && item.isFolder {
                        level.append(join(folders[index], item.name))
                    }
                }
            }
            return found
        }

        /// The visible items of a folder as read from the disk, unsorted, those `pattern` leaves out left
        /// out; `nil` when it cannot be opened.
        static func readFolder(_ path: [UInt8], pattern: TreePattern?, examineModes: Bool) -> [ListingItem]? {
            let keep = pattern.map { pattern in
                { (name: [UInt8], isFolder: Bool) in isFolder || pattern.matches(name, isDirectory: false) }
            }
            return FileTree.contents(of: path, hidden: false, examineFiles: examineModes, keep: keep)?.map {
                item in
                // tree's `getinfo`: a link that cannot be read says so and is not gone into.
                ListingItem(
                    name: item.name, mode: item.mode, targetMode: item.targetMode,
                    link: item.linkUnreadable
                        ? Array("[Error reading symbolic link information]".utf8) : item.link,
                    linkIsUnreadable: item.linkUnreadable, isOrphan: item.isOrphan && !item.linkUnreadable,
                    isFolder: item.leadsToFolder && !item.linkUnreadable, note: nil, children: nil,
                    device: item.device, inode: item.inode)
            }
        }

        /// tree's `getfulltree` for the pruned search: reads everything first (in directory order, which
        /// decides which link to a folder is followed), prunes folders with nothing matching, then sorts.
        mutating func fullTree(_ path: [UInt8], level: Int, error: inout String?) -> [ListingItem]? {
            error = nil
            var usePattern = true
            if let pattern {
                // A folder whose path relative to the top (as far up as its depth) matches lifts the
                // pattern for its own items.
                var remaining = level
                var start = path.endIndex
                while start != path.startIndex {
                    if start < path.endIndex && path[start] == UInt8(ascii: "/") { remaining -= 1 }
                    if remaining <= 0 {
                        if start < path.endIndex { start += 1 }
                        break
                    }
                    start -= 1
                }
                let relative = Array(path[start...])
                if !relative.isEmpty && pattern.matches(relative, isDirectory: true) { usePattern = false }
            }
            guard var items = readFolder(path, usePattern: usePattern) else {
                error = "error opening dir"
                return nil
            }
            var index = 0
            while index < items.count {
                if items[index].isFolder {
                    let identity = Identity(device: items[index].device, inode: items[index].inode)
                    var childError: String?
                    if items[index].link != nil {
                        if seen.contains(identity) {
                            items[index].note = "recursive, not followed"
                        } else {
                            seen.insert(identity)
                            items[index].children = fullTree(
                                destination(of: items[index], in: path), level: level + 1, error: &childError)
                            items[index].note = childError
                        }
                    } else {
                        seen.insert(identity)
                        items[index].children = fullTree(
                            join(path, items[index].name), level: level + 1, error: &childError)
                        items[index].note = childError
                    }
                    let keep = pattern.map { $0.matches(items[index].name, isDirectory: true) } ?? false
                    if items[index].children == nil && !keep {
                        items.remove(at: index)
                        continue
                    }
                }
                index += 1
            }
            return items.isEmpty ? nil : sorted(items)
        }

        // MARK: Order and notes

        /// `items` sorted, each with the note tree prints and the items it draws below, in the order tree
        /// draws them (which decides which link to a folder is followed). In a search (`full`) the items
        /// below were read already.
        mutating func finished(_ path: [UInt8], _ items: [ListingItem], full: Bool) -> [ListingItem] {
            var items = sorted(items)
            for index in items.indices where items[index].isFolder {
                var item = items[index]
                var next = join(path, item.name)
                let identity = Identity(device: item.device, inode: item.inode)
                let found = seen.contains(identity)
                if !found { seen.insert(identity) }
                var descend = true
                var note: String?
                var children: [ListingItem]?
                if item.link != nil {
                    next = destination(of: item, in: path)
                    if found {
                        note = "recursive, not followed"
                        descend = false
                    }
                }
                if descend {
                    if full {
                        children = item.children
                        note = item.note
                    } else {
                        children = readFolder(next, usePattern: false)
                        if children == nil { note = "error opening dir" }
                        if children?.isEmpty == true { children = nil }
                    }
                }
                item.note = note
                // Set before going down: the items below see this one as seen, as tree's drawing does.
                item.children = nil
                items[index] = item
                if let children { items[index].children = finished(next, children, full: full) }
            }
            return items
        }

        /// `items` in tree's order: names compared with `strcoll`.
        func sorted(_ items: [ListingItem]) -> [ListingItem] {
            if StoreListing.collatesBytewise {
                // strcoll in these locales compares bytes, as memcmp does (then the shorter name first).
                return items.sorted { left, right in
                    left.name.withUnsafeBufferPointer { a in
                        right.name.withUnsafeBufferPointer { b in
                            let common = min(a.count, b.count)
                            let order = common == 0 ? 0 : memcmp(a.baseAddress!, b.baseAddress!, common)
                            return order != 0 ? order < 0 : a.count < b.count
                        }
                    }
                }
            }
            // NUL-terminated copies made once, not in every comparison; the sort moves indices, not items.
            let keys: [[CChar]] = items.map { $0.name.map { CChar(bitPattern: $0) } + [0] }
            let order = keys.indices.sorted { left, right in
                keys[left].withUnsafeBufferPointer { a in
                    keys[right].withUnsafeBufferPointer { b in strcoll(a.baseAddress!, b.baseAddress!) < 0 }
                }
            }
            return order.map { items[$0] }
        }
    }

    /// Whether the collation locale orders strings by their bytes (`C`, `POSIX`, glibc's `C.UTF-8`).
    private static let collatesBytewise: Bool = {
        guard let name = setlocale(LC_COLLATE, nil) else { return true }
        return ["C", "POSIX", "C.UTF-8", "C.utf8"].contains(String(cString: name))
    }()
}

/// Where a folder item leads: its own path, or (for a link) the link's target.
private func destination(of item: ListingItem, in folder: [UInt8]) -> [UInt8] {
    guard let link = item.link else { return join(folder, item.name) }
    if link.first == UInt8(ascii: "/") { return link }
    return folder + [UInt8(ascii: "/")] + link
}

/// A path as a NUL-terminated C string, byte for byte.
private func cPath(_ path: [UInt8]) -> [CChar] {
    path.map { CChar(bitPattern: $0) } + [0]
}

private func join(_ folder: [UInt8], _ name: [UInt8]) -> [UInt8] {
    folder.last == UInt8(ascii: "/") ? folder + name : folder + [UInt8(ascii: "/")] + name
}
