import Coffer

/// pass's listing, drawn natively: what `tree -N -C -l --noreport [-P PATTERN --prune --matchdirs
/// --ignore-case] DIR | tail -n +2 | sed -E 's/\.gpg(\x1B\[[0-9]+m)?( ->|$)/\1\2/g'` prints with tree 2.1.
///
/// tree's own behaviour is kept, quirks included: names sorted with `strcoll`, dotfiles hidden, symlinks
/// shown as `name -> target` and followed into folders, a folder already seen shown once with
/// `[recursive, not followed]`, `[error opening dir]` for unreadable folders, and (in the pruned search) a
/// matching folder lifting the pattern for its direct contents only.
struct TreeListing {
    /// The line-drawing strings of one character set.
    struct LineDrawing {
        /// A continuing parent level.
        var vertical: [UInt8]
        /// An item with more after it.
        var branch: [UInt8]
        /// The last item.
        var corner: [UInt8]

        /// `├── `, `│   ` (with no-break spaces, as tree writes them) and `└── `.
        static let utf8 = LineDrawing(
            vertical: Array("\u{2502}\u{a0}\u{a0}".utf8), branch: Array("\u{251c}\u{2500}\u{2500}".utf8),
            corner: Array("\u{2514}\u{2500}\u{2500}".utf8))
        /// `|-- `, `|   ` and `` `-- ``.
        static let ascii = LineDrawing(
            vertical: Array("|  ".utf8), branch: Array("|--".utf8), corner: Array("`--".utf8))

        /// The set tree picks: the one named by `TREE_CHARSET` (tree's names, any case), else UTF-8 when
        /// the locale's codeset is UTF-8, else ASCII.
        static func current(environment: [String: String]) -> LineDrawing {
            var charset = environment["TREE_CHARSET"]
            if charset == nil {
                let codeset = String(cString: nl_langinfo(nl_item(CODESET)))
                if codeset == "UTF-8" || codeset == "utf8" { charset = "UTF-8" }
            }
            guard let name = charset?.lowercased() else { return .ascii }
            return charsets.first { $0.names.contains(name) }?.drawing ?? .ascii
        }

        private init(vertical: [UInt8], branch: [UInt8], corner: [UInt8]) {
            self.vertical = vertical
            self.branch = branch
            self.corner = corner
        }

        private init(_ vertical: [UInt8], _ branch: [UInt8], _ corner: [UInt8]) {
            self.init(vertical: vertical, branch: branch, corner: corner)
        }

        /// tree 2.1's character sets whose lines differ from ASCII, by their (lower-cased) names.
        private static let charsets: [(names: Set<String>, drawing: LineDrawing)] = [
            (["utf-8", "utf8"], .utf8),
            (
                [
                    "iso-8859-1", "iso-8859-1:1987", "iso_8859-1", "latin1", "l1", "ibm819", "cp819",
                    "csisolatin1",
                    "iso-8859-3", "iso_8859-3:1988", "iso_8859-3", "latin3", "ls", "csisolatin3",
                    "iso-8859-7",
                    "iso_8859-7:1987", "iso_8859-7", "elot_928", "ecma-118", "greek", "greek8",
                    "csisolatingreek",
                    "iso-8859-8", "iso_8859-8:1988", "iso-ir-138", "iso_8859-8", "hebrew", "csisolatinhebrew",
                    "iso-8859-9", "iso_8859-9:1989", "iso-ir-148", "iso_8859-9", "latin5", "l5",
                    "csisolatin5",
                ],
                LineDrawing(Array("|  ".utf8), Array("|--".utf8), Array("&middot;--".utf8))
            ),
            (
                ["shift_jis", "ms_kanji", "csshiftjis"],
                LineDrawing([0o204, 0o240, 32], [0o204, 0o245], [0o204, 0o244])
            ),
            (
                ["euc-jp", "extended_unix_code_packed_format_for_japanese", "cseucpkdfmtjapanese"],
                LineDrawing([0o250, 0o242, 32], [0o250, 0o247], [0o250, 0o246])
            ),
            (["euc-kr", "cseuckr"], LineDrawing([0o246, 0o242, 32], [0o246, 0o247], [0o246, 0o246])),
            (
                ["iso-2022-jp", "csiso2022jp", "iso-2022-jp-2", "csiso2022jp2"],
                LineDrawing(
                    Array("\u{1b}$B(\"\u{1b}(B ".utf8), Array("\u{1b}$B('\u{1b}(B".utf8),
                    Array("\u{1b}$B(&\u{1b}(B".utf8))
            ),
            (
                [
                    "ibm437", "cp437", "437", "cspc8codepage437", "ibm852", "cp852", "852", "cspcp852",
                    "ibm863",
                    "cp863", "863", "csibm863", "ibm855", "cp855", "855", "csibm855", "ibm865", "cp865",
                    "865",
                    "csibm865", "ibm866", "cp866", "866", "csibm866", "ibm850", "cp850", "850",
                    "cspc850multilingual", "ibm00858", "ccsid00858", "cp00858", "pc-multilingual-850+euro",
                    "ibm869", "cp869", "869", "cp-gr", "csibm869",
                ],
                LineDrawing([0o263, 32, 32], [0o303, 0o304, 0o304], [0o300, 0o304, 0o304])
            ),
            (["gb2312", "csgb2312"], LineDrawing([0o251, 0o246, 32], [0o251, 0o300], [0o251, 0o270])),
            (["big5", "csbig5"], LineDrawing([0o242, 0x78, 32], [0o242, 0x75], [0o242, 0x7c])),
            (
                ["koi8-r", "cskoi8r", "koi8-u"],
                LineDrawing([0o201, 32, 32], [0o206, 0o200, 0o200], [0o204, 0o200, 0o200])
            ),
        ]
    }

    /// One item read from a folder.
    private struct Item {
        var name: [UInt8]
        /// `lstat` mode.
        var mode: mode_t
        /// `stat` mode of what a link points to (0 when it points nowhere).
        var targetMode: mode_t
        var device: dev_t
        var inode: ino_t
        var isDirectory: Bool
        var link: [UInt8]?
        var orphan: Bool
        var error: String?
        var children: [Item]?
    }

    /// The search pattern (`-P ... --ignore-case --matchdirs --prune`), or `nil` for a plain listing.
    var pattern: TreePattern?
    /// The colours.
    var colors: TreeColors
    /// The connectors.
    var lines: LineDrawing

    private var seen = Set<FileIdentity>()
    private var output: [UInt8] = []
    /// The line being built, reused for every line.
    private var line: [UInt8] = []
    /// Folders read ahead on every core, by path: all their visible items in a listing, only those the
    /// pattern keeps in a search.
    private var readAhead: [[UInt8]: [Item]] = [:]

    private struct FileIdentity: Hashable {
        var device: dev_t
        var inode: ino_t
    }

    /// A listing with the colours and connectors `environment` chooses.
    init(pattern: TreePattern? = nil, environment: [String: String]) {
        self.pattern = pattern
        colors = TreeColors(environment: environment)
        lines = LineDrawing.current(environment: environment)
    }

    /// The lines below `directory` (tree's first line, the folder itself, left out), `.gpg` stripped.
    mutating func render(_ directory: String) -> [UInt8] {
        output = []
        seen = []
        let path = Array(directory.utf8)
        var info = stat()
        guard lstat(Self.cPath(path), &info) == 0 else { return [] }
        seen.insert(FileIdentity(device: info.st_dev, inode: info.st_ino))
        readAhead = Self.readTree(path, pattern: pattern, fileModes: colors.enabled)
        defer { readAhead = [:] }
        var levels = [Int](repeating: 0, count: 2)
        if pattern != nil {
            var error: String?
            if let items = fullTree(path, level: 0, error: &error) {
                list(path, items, level: 1, levels: &levels, full: true)
            }
        } else if let items = readFolder(path, usePattern: false) {
            list(path, items, level: 1, levels: &levels, full: false)
        }
        return output
    }

    // MARK: - Reading

    /// The visible items of a folder, unsorted, from the read-ahead when it has them; `nil` when the
    /// folder cannot be opened.
    private func readFolder(_ path: [UInt8], usePattern: Bool) -> [Item]? {
        // What was read ahead is filtered exactly when this listing has a pattern.
        if usePattern == (pattern != nil), let items = readAhead[path] { return items }
        return Self.readFolder(path, pattern: usePattern ? pattern : nil, fileModes: colors.enabled)
    }

    /// Reads the folders at and below `root` (not through links) on every core, a level at a time.
    ///
    /// Examining ten thousand entries is mostly the kernel's work for each `fstatat`; spread over the
    /// cores it takes a fraction of the time. The listing itself still runs in tree's order afterwards.
    ///
    /// In a search the pattern is applied there too (folders always stay, so the walk goes on), and the
    /// files it leaves out are not even examined.
    private static func readTree(_ root: [UInt8], pattern: TreePattern?, fileModes: Bool) -> [[UInt8]: [Item]]
    {
        var found: [[UInt8]: [Item]] = [:]
        var level = [root]
        while !level.isEmpty {
            let folders = level
            level = []
            // One window for the whole level: everything read is kept anyway. Should no worker thread
            // start, nothing is read ahead and the drawing reads each folder itself.
            try? Parallel.forEach(folders, window: folders.count) { path in
                readFolder(path, pattern: pattern, fileModes: fileModes)
            } consume: { index, result in
                guard case .success(let read) = result, let items = read else { return }
                found[folders[index]] = items
                for item in items where item.link == nil && item.isDirectory {
                    level.append(join(folders[index], item.name))
                }
            }
        }
        return found
    }

    /// The visible items of a folder as read from the disk, unsorted, those `pattern` leaves out left
    /// out; `nil` when it cannot be opened.
    ///
    /// Without `fileModes` (no colours, so a file's permissions change nothing in the listing), regular
    /// files are taken as the folder lists them, and a file the pattern leaves out is never examined: tree
    /// would examine it only to leave it out.
    private static func readFolder(_ path: [UInt8], pattern: TreePattern?, fileModes: Bool) -> [Item]? {
        let keep = pattern.map { pattern in
            { (name: [UInt8], isFolder: Bool) in isFolder || pattern.matches(name, isDirectory: false) }
        }
        return FileTree.contents(of: path, hidden: false, examineFiles: fileModes, keep: keep)?.map { item in
            // tree's `getinfo`: a link that cannot be read says so and is not gone into.
            Item(
                name: item.name, mode: item.mode, targetMode: item.targetMode, device: item.device,
                inode: item.inode, isDirectory: item.leadsToFolder && !item.linkUnreadable,
                link: item.linkUnreadable
                    ? Array("[Error reading symbolic link information]".utf8) : item.link,
                orphan: item.isOrphan && !item.linkUnreadable)
        }
    }

    /// `items` in tree's order: names compared with `strcoll`.
    private func sorted(_ items: [Item]) -> [Item] {
        if Self.collatesBytewise {
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

    /// Whether the collation locale orders strings by their bytes (`C`, `POSIX`, glibc's `C.UTF-8`).
    private static let collatesBytewise: Bool = {
        guard let name = setlocale(LC_COLLATE, nil) else { return true }
        return ["C", "POSIX", "C.UTF-8", "C.utf8"].contains(String(cString: name))
    }()

    /// Where a folder item leads: its own path, or (for a link) the link's target.
    private static func destination(of item: Item, in folder: [UInt8]) -> [UInt8] {
        guard let link = item.link else { return join(folder, item.name) }
        if link.first == UInt8(ascii: "/") { return link }
        return folder + [UInt8(ascii: "/")] + link
    }

    /// A path as a NUL-terminated C string, byte for byte.
    private static func cPath(_ path: [UInt8]) -> [CChar] {
        path.map { CChar(bitPattern: $0) } + [0]
    }

    private static func join(_ folder: [UInt8], _ name: [UInt8]) -> [UInt8] {
        folder.last == UInt8(ascii: "/") ? folder + name : folder + [UInt8(ascii: "/")] + name
    }

    /// tree's `getfulltree` for the pruned search: reads everything first (in directory order, which
    /// decides which link to a folder is followed), prunes folders with nothing matching, then sorts.
    private mutating func fullTree(_ path: [UInt8], level: Int, error: inout String?) -> [Item]? {
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
            if items[index].isDirectory {
                let identity = FileIdentity(device: items[index].device, inode: items[index].inode)
                var childError: String?
                if items[index].link != nil {
                    if seen.contains(identity) {
                        items[index].error = "recursive, not followed"
                    } else {
                        seen.insert(identity)
                        items[index].children = fullTree(
                            Self.destination(of: items[index], in: path), level: level + 1, error: &childError
                        )
                        items[index].error = childError
                    }
                } else {
                    seen.insert(identity)
                    items[index].children = fullTree(
                        Self.join(path, items[index].name), level: level + 1, error: &childError)
                    items[index].error = childError
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

    // MARK: - Printing

    private mutating func list(_ path: [UInt8], _ items: [Item], level: Int, levels: inout [Int], full: Bool)
    {
        let items = sorted(items)
        while levels.count <= level + 1 { levels.append(0) }
        levels[level] = items.count > 1 ? 1 : 2
        for (position, item) in items.enumerated() {
            line.removeAll(keepingCapacity: true)
            appendIndentation(level: level, levels: levels)
            var descend = false
            var error: String?
            var children: [Item]?
            var next: [UInt8] = []
            if item.isDirectory {
                next = Self.join(path, item.name)
                let identity = FileIdentity(device: item.device, inode: item.inode)
                let found = seen.contains(identity)
                if !found { seen.insert(identity) }
                descend = true
                if item.link != nil {
                    next = Self.destination(of: item, in: path)
                    if found {
                        error = "recursive, not followed"
                        descend = false
                    }
                }
                if descend {
                    if full {
                        children = item.children
                        error = item.error
                    } else {
                        children = readFolder(next, usePattern: false)
                        if children == nil { error = "error opening dir" }
                        if children?.isEmpty == true { children = nil }
                    }
                    if children == nil { descend = false }
                }
            }
            appendName(of: item)
            if let error { line += Array("  [\(error)]".utf8) }
            Self.appendStrippingGPG(line, to: &output)
            output.append(UInt8(ascii: "\n"))
            if descend, let children {
                list(next, children, level: level + 1, levels: &levels, full: full)
            }
            if position + 1 < items.count && position + 2 == items.count { levels[level] = 2 }
        }
        levels[level] = 0
    }

    private mutating func appendIndentation(level: Int, levels: [Int]) {
        var index = 1
        while index <= level && levels[index] != 0 {
            if levels[index + 1] != 0 {
                if levels[index] == 1 {
                    line += lines.vertical
                } else {
                    line += Self.threeSpaces
                }
            } else {
                line += levels[index] == 1 ? lines.branch : lines.corner
            }
            line.append(UInt8(ascii: " "))
            index += 1
        }
    }

    private static let threeSpaces = Array("   ".utf8)
    private static let arrow = Array(" -> ".utf8)

    private mutating func appendName(of item: Item) {
        let mode = item.link != nil && colors.linkAsTarget ? item.targetMode : item.mode
        let start = colors.start(mode: mode, name: item.name, orphan: item.orphan, isLinkTarget: false)
        if let start { line += start }
        line += item.name
        if start != nil { line += colors.end }
        if let link = item.link {
            line += Self.arrow
            let linkStart = colors.start(
                mode: item.targetMode, name: link, orphan: item.orphan, isLinkTarget: true)
            if let linkStart { line += linkStart }
            line += link
            if linkStart != nil { line += colors.end }
        }
    }

    /// pass's `sed -E 's/\.gpg(\x1B\[[0-9]+m)?( ->|$)/\1\2/g'` on one line.
    static func strippingGPG(_ line: [UInt8]) -> [UInt8] {
        var result: [UInt8] = []
        appendStrippingGPG(line, to: &result)
        return result
    }

    /// ``strippingGPG(_:)``, appending to `result` (one pass, no copies: it runs for every line).
    static func appendStrippingGPG(_ line: [UInt8], to result: inout [UInt8]) {
        line.withUnsafeBufferPointer { bytes in
            let count = bytes.count
            /// Whether ` ->` or the end of the line is at `position`.
            func endsMatch(at position: Int) -> Bool {
                position == count
                    || (position + 3 <= count && bytes[position] == UInt8(ascii: " ")
                        && bytes[position + 1] == UInt8(ascii: "-")
                        && bytes[position + 2] == UInt8(ascii: ">"))
            }
            var index = 0
            var copied = 0
            while index + 4 <= count {
                guard bytes[index] == UInt8(ascii: "."), bytes[index + 1] == UInt8(ascii: "g"),
                    bytes[index + 2] == UInt8(ascii: "p"), bytes[index + 3] == UInt8(ascii: "g")
                else {
                    index += 1
                    continue
                }
                let after = index + 4
                var resume: Int?
                // The optional colour: ESC [ digits m.
                if after + 2 < count && bytes[after] == 0x1b && bytes[after + 1] == UInt8(ascii: "[") {
                    var digits = after + 2
                    while digits < count && (48...57).contains(bytes[digits]) { digits += 1 }
                    if digits > after + 2 && digits < count && bytes[digits] == UInt8(ascii: "m")
                        && endsMatch(at: digits + 1)
                    {
                        resume = after
                    }
                }
                if resume == nil && endsMatch(at: after) { resume = after }
                if let resume {
                    result.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[copied..<index]))
                    copied = resume
                    index = resume
                } else {
                    index += 1
                }
            }
            result.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[copied..<count]))
        }
    }
}
