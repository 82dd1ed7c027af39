#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The one way coffer reads folder trees: each folder once with `readdir`, each item examined relative
/// to its open folder (`fstatat`, so the kernel does not walk the whole path again for every item), and
/// regular files taken as the folder lists them when nothing asks for more.
///
/// ``contents(of:hidden:examineFiles:keep:)`` reads one folder; ``walk(_:hidden:followLinks:sorted:visit:leave:failed:)``
/// goes through a tree depth first. Listing, searching, grep's walk, re-encryption, checking, copying and
/// removing all read through it.
package enum FileTree {
    /// One item of a folder.
    package struct Item: Sendable {
        /// The name, as its bytes.
        package var name: [UInt8]
        /// The item's own mode (`lstat`).
        package var mode: mode_t
        /// The mode of what a link leads to (`stat`); 0 when it leads nowhere. The item's own for others.
        package var targetMode: mode_t
        /// The device and inode of what the item leads to.
        package var device: dev_t
        /// See ``device``.
        package var inode: ino_t
        /// Where a link points, as written in it; `nil` for other items.
        package var link: [UInt8]?
        /// Whether the item is a link that could not be read.
        package var linkUnreadable = false
        /// The user who owns the item itself; `nil` when it was not examined.
        package var owner: uid_t?

        /// The name as text.
        package var nameString: String { String(decoding: name, as: UTF8.self) }
        /// Whether the item itself is a symbolic link.
        package var isLink: Bool { mode & S_IFMT == S_IFLNK }
        /// Whether the item itself is a folder (not a link to one).
        package var isFolder: Bool { mode & S_IFMT == S_IFDIR }
        /// Whether the item itself is a regular file.
        package var isFile: Bool { mode & S_IFMT == S_IFREG }
        /// Whether what the item leads to (through a link) is a folder.
        package var leadsToFolder: Bool { targetMode & S_IFMT == S_IFDIR }
        /// Whether what the item leads to (through a link) is a regular file.
        package var leadsToFile: Bool { targetMode & S_IFMT == S_IFREG }
        /// Whether the item is a link that leads nowhere.
        package var isOrphan: Bool { isLink && targetMode == 0 }
    }

    /// The items of the folder `path` in directory order; `nil` when it cannot be opened (`errno` says
    /// why).
    ///
    /// - Parameters:
    ///   - hidden: whether names starting with `.` are read (`.` and `..` never are).
    ///   - examineFiles: whether regular files are examined too (for their mode); when not, a file the
    ///     folder lists as regular costs no system call.
    ///   - keep: decides, from the name and whether the item leads to a folder, which items are kept;
    ///     regular files are asked before they would be examined.
    package static func contents(
        of path: [UInt8], hidden: Bool, examineFiles: Bool,
        keep: ((_ name: [UInt8], _ isFolder: Bool) -> Bool)? = nil
    ) -> [Item]? {
        let cPath = path.map { CChar(bitPattern: $0) } + [0]
        guard let folder = opendir(cPath) else { return nil }
        defer { closedir(folder) }
        let descriptor = dirfd(folder)
        var items: [Item] = []
        while let entry = readdir(folder) {
            let item = withUnsafePointer(to: &entry.pointee.d_name) { tuple in
                tuple.withMemoryRebound(to: CChar.self, capacity: 256) { name -> Item? in
                    let length = strlen(name)
                    if name[0] == CChar(UInt8(ascii: ".")) {
                        if !hidden || length == 1 || (length == 2 && name[1] == CChar(UInt8(ascii: "."))) {
                            return nil
                        }
                    }
                    let bytes = Array(UnsafeRawBufferPointer(start: name, count: length))
                    guard Int32(entry.pointee.d_type) == Int32(DT_REG) else {
                        return examine(name, bytes, at: descriptor, keep: keep)
                    }
                    if let keep, !keep(bytes, false) { return nil }
                    guard examineFiles else {
                        let mode = mode_t(S_IFREG)
                        return Item(
                            name: bytes, mode: mode, targetMode: mode, device: 0,
                            inode: ino_t(entry.pointee.d_ino),
                            link: nil)
                    }
                    return examine(name, bytes, at: descriptor, keep: nil)
                }
            }
            if let item { items.append(item) }
        }
        return items
    }

    /// The names in the folder `path` (all of them but `.` and `..`) in directory order, nothing
    /// examined; `nil` when it cannot be opened (`errno` says why).
    package static func names(of path: [UInt8]) -> [[UInt8]]? {
        let cPath = path.map { CChar(bitPattern: $0) } + [0]
        guard let folder = opendir(cPath) else { return nil }
        defer { closedir(folder) }
        var names: [[UInt8]] = []
        while let entry = readdir(folder) {
            let name = withUnsafeBytes(of: &entry.pointee.d_name) { raw in Array(raw.prefix { $0 != 0 }) }
            if name != [UInt8(ascii: ".")] && name != [UInt8(ascii: "."), UInt8(ascii: ".")] {
                names.append(name)
            }
        }
        return names
    }

    /// `fstatat` (and for a link `readlinkat`) of the item `name` of the open folder; `nil` when it
    /// cannot be examined or `keep` leaves it out.
    private static func examine(
        _ name: UnsafePointer<CChar>, _ bytes: [UInt8], at folder: Int32, keep: (([UInt8], Bool) -> Bool)?
    ) -> Item? {
        var own = stat()
        guard fstatat(folder, name, &own, AT_SYMLINK_NOFOLLOW) == 0 else { return nil }
        var target = own
        let isLink = own.st_mode & S_IFMT == S_IFLNK
        if isLink && fstatat(folder, name, &target, 0) != 0 { target = stat() }
        if let keep, !keep(bytes, target.st_mode & S_IFMT == S_IFDIR) { return nil }
        var item = Item(
            name: bytes, mode: own.st_mode, targetMode: target.st_mode,
            device: isLink ? target.st_dev : own.st_dev,
            inode: isLink ? target.st_ino : own.st_ino, link: nil)
        item.owner = own.st_uid
        if isLink {
            var buffer = [UInt8](repeating: 0, count: Int(PATH_MAX) + 1)
            let count = buffer.withUnsafeMutableBufferPointer { raw in
                raw.baseAddress!.withMemoryRebound(to: CChar.self, capacity: raw.count) {
                    readlinkat(folder, name, $0, raw.count - 1)
                }
            }
            if count < 0 {
                item.linkUnreadable = true
            } else {
                item.link = Array(buffer[0..<count])
            }
        }
        return item
    }

    /// Why the walk did not go into a folder.
    package enum Failure: Sendable, Equatable {
        /// The folder could not be read; the `errno` says why.
        case unreadable(Int32)
        /// A link leads back to `ancestor`, a folder already on the way down.
        case loop(ancestor: String)
        /// The folder was walked already under the path `first` (not on the way down), and is reached
        /// again through a link.
        case walkedAlready(first: String)
    }

    /// Goes through the tree below the folder `root`, each folder once, in directory order (byte order of
    /// the names with `sorted`).
    ///
    /// `visit` is called for each item with its path and says whether to go into it (only folders, and
    /// with `followLinks` links to folders, are gone into); `leave` is called after a folder's items;
    /// `failed` hears of a folder that cannot be read and of a folder that is not gone into because the
    /// walk has been there (``Failure/loop(ancestor:)``, ``Failure/walkedAlready(first:)``). With
    /// `examineFiles` regular files carry their full mode (permissions), otherwise only their type.
    ///
    /// The folders below `root` are walked depth first. With `followLinks`, the links to folders wait
    /// until then and are gone into in the order they were met (their own folders depth first, their
    /// links waiting again): a folder a link leads to is walked once, under its own name when it is
    /// below `root` too, and a graph of links costs one walk of each folder rather than one for each
    /// path through the links.
    package static func walk(
        _ root: String, hidden: Bool = true, followLinks: Bool = false, sorted: Bool = false,
        examineFiles: Bool = false, visit: (_ path: String, _ item: Item) throws -> Bool,
        leave: (_ path: String, _ item: Item) throws -> Void = { _, _ in },
        failed: (_ path: String, _ failure: Failure) throws -> Void = { _, _ in }
    ) throws {
        /// A folder's device and inode.
        struct Identity: Hashable {
            var device: dev_t
            var inode: ino_t
        }
        /// Every folder walked, with the path it was walked under.
        var walked: [Identity: String] = [:]
        /// The folders on the way down, innermost last.
        var ancestors: [(identity: Identity, path: String)] = []
        /// Links to folders not gone into yet, with the folders on their way down.
        var waiting: [(path: [UInt8], item: Item, ancestors: [(identity: Identity, path: String)])] = []
        var info = stat()
        if stat(root, &info) == 0 {
            let identity = Identity(device: info.st_dev, inode: info.st_ino)
            walked[identity] = root
            ancestors.append((identity, root))
        }
        func enter(_ folder: [UInt8], _ item: Item) throws {
            let path = String(decoding: folder, as: UTF8.self)
            let identity = Identity(device: item.device, inode: item.inode)
            if let loop = ancestors.first(where: { $0.identity == identity }) {
                return try failed(path, .loop(ancestor: loop.path))
            }
            if let first = walked[identity] { return try failed(path, .walkedAlready(first: first)) }
            walked[identity] = path
            ancestors.append((identity, path))
            try walk(folder)
            ancestors.removeLast()
            try leave(path, item)
        }
        func walk(_ folder: [UInt8]) throws {
            guard var items = contents(of: folder, hidden: hidden, examineFiles: examineFiles) else {
                try failed(String(decoding: folder, as: UTF8.self), .unreadable(errno))
                return
            }
            if sorted { items.sort { $0.name.lexicographicallyPrecedes($1.name) } }
            let prefix = folder.last == UInt8(ascii: "/") ? folder : folder + [UInt8(ascii: "/")]
            for item in items {
                let path = prefix + item.name
                guard try visit(String(decoding: path, as: UTF8.self), item) else { continue }
                if item.isFolder {
                    try enter(path, item)
                } else if followLinks && item.isLink && item.leadsToFolder {
                    waiting.append((path, item, ancestors))
                }
            }
        }
        try walk(Array(root.utf8))
        var next = 0
        while next < waiting.count {
            let link = waiting[next]
            next += 1
            ancestors = link.ancestors
            try enter(link.path, link.item)
        }
    }
}
