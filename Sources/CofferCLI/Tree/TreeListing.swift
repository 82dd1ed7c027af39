import Coffer

/// pass's listing, drawn natively: what `tree -N -C -l --noreport [-P PATTERN --prune --matchdirs
/// --ignore-case] DIR | tail -n +2 | sed -E 's/\.gpg(\x1B\[[0-9]+m)?( ->|$)/\1\2/g'` prints with tree 2.1.
///
/// It draws the library's walk (``StoreListing``), which keeps tree's rules and order; this adds the
/// connectors, the colours, symlinks as `name -> target`, the notes in brackets and pass's `.gpg`
/// stripping.
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

    /// The search pattern (`-P ... --ignore-case --matchdirs --prune`), or `nil` for a plain listing.
    var pattern: TreePattern?
    /// The colours.
    var colors: TreeColors
    /// The connectors.
    var lines: LineDrawing

    private var output: [UInt8] = []
    /// The line being built, reused for every line.
    private var line: [UInt8] = []

    /// A listing with the colours and connectors `environment` chooses.
    init(pattern: TreePattern? = nil, environment: [String: String]) {
        self.pattern = pattern
        colors = TreeColors(environment: environment)
        lines = LineDrawing.current(environment: environment)
    }

    /// The lines below `directory` (tree's first line, the folder itself, left out), `.gpg` stripped.
    mutating func render(_ directory: String) -> [UInt8] {
        output = []
        let items = StoreListing.items(below: directory, pattern: pattern, examineModes: colors.enabled)
        var levels = [Int](repeating: 0, count: 2)
        draw(items, level: 1, levels: &levels)
        return output
    }

    // MARK: - Printing

    private mutating func draw(_ items: [ListingItem], level: Int, levels: inout [Int]) {
        while levels.count <= level + 1 { levels.append(0) }
        levels[level] = items.count > 1 ? 1 : 2
        for (position, item) in items.enumerated() {
            line.removeAll(keepingCapacity: true)
            appendIndentation(level: level, levels: levels)
            appendName(of: item)
            if let note = item.note { line += Array("  [\(note)]".utf8) }
            Self.appendStrippingGPG(line, to: &output)
            output.append(UInt8(ascii: "\n"))
            if let children = item.children { draw(children, level: level + 1, levels: &levels) }
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

    private mutating func appendName(of item: ListingItem) {
        let mode = item.link != nil && colors.linkAsTarget ? item.targetMode : item.mode
        let start = colors.start(mode: mode, name: item.name, orphan: item.isOrphan, isLinkTarget: false)
        if let start { line += start }
        line += item.name
        if start != nil { line += colors.end }
        if let link = item.link {
            line += Self.arrow
            let linkStart = colors.start(
                mode: item.targetMode, name: link, orphan: item.isOrphan, isLinkTarget: true)
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
