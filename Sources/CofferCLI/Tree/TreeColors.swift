/// The colours `tree -C` (tree 2.1) gives names: from `TREE_COLORS` or `LS_COLORS`, else tree's built-in
/// scheme; none at all when `TERM` is unset.
struct TreeColors {
    /// The `LS_COLORS` keys tree understands.
    enum Key: String, CaseIterable {
        case reset = "rs", normal = "no", file = "fi", directory = "di", link = "ln", fifo = "pi"
        case door = "do", block = "bd", character = "cd", orphan = "or", socket = "so", setUID = "su"
        case setGID = "sg", stickyOtherWritable = "tw", otherWritable = "ow", sticky = "st"
        case executable = "ex", missing = "mi", leftCode = "lc", rightCode = "rc", endCode = "ec"
    }

    /// tree's scheme when neither variable gives one.
    static let builtIn =
        ":no=00:rs=0:fi=00:di=01;34:ln=01;36:pi=40;33:so=01;35:bd=40;33;01:cd=40;33;01:or=40;31;01:ex=01;32"
        + ":*.bat=01;32:*.BAT=01;32:*.btm=01;32:*.BTM=01;32:*.cmd=01;32:*.CMD=01;32:*.com=01;32:*.COM=01;32"
        + ":*.dll=01;32:*.DLL=01;32:*.exe=01;32:*.EXE=01;32:*.arj=01;31:*.bz2=01;31:*.deb=01;31:*.gz=01;31"
        + ":*.lzh=01;31:*.rpm=01;31:*.tar=01;31:*.taz=01;31:*.tb2=01;31:*.tbz2=01;31:*.tbz=01;31:*.tgz=01;31"
        + ":*.tz2=01;31:*.z=01;31:*.Z=01;31:*.zip=01;31:*.ZIP=01;31:*.zoo=01;31:*.asf=01;35:*.ASF=01;35"
        + ":*.avi=01;35:*.AVI=01;35:*.bmp=01;35:*.BMP=01;35:*.flac=01;35:*.FLAC=01;35:*.gif=01;35"
        + ":*.GIF=01;35:*.jpg=01;35:*.JPG=01;35:*.jpeg=01;35:*.JPEG=01;35:*.m2a=01;35:*.M2a=01;35"
        + ":*.m2v=01;35:*.M2V=01;35:*.mov=01;35:*.MOV=01;35:*.mp3=01;35:*.MP3=01;35:*.mpeg=01;35"
        + ":*.MPEG=01;35:*.mpg=01;35:*.MPG=01;35:*.ogg=01;35:*.OGG=01;35:*.ppm=01;35:*.rm=01;35:*.RM=01;35"
        + ":*.tga=01;35:*.TGA=01;35:*.tif=01;35:*.TIF=01;35:*.wav=01;35:*.WAV=01;35:*.wmv=01;35:*.WMV=01;35"
        + ":*.xbm=01;35:*.xpm=01;35:"

    /// Whether names are coloured at all.
    private(set) var enabled = false
    private var codes: [Key: [UInt8]] = [:]
    /// Name endings and their whole escape sequences, the last given first (tree searches them in that
    /// order), filed under their last byte so that a name is compared with the endings it can have only.
    private var extensions: [[(ending: [UInt8], sequence: [UInt8])]] = []
    /// Whether an empty ending (`*=...`, matching every file) was given; then the buckets are not enough.
    private var hasEmptyEnding = false
    /// The whole escape sequence of each key that has a code, made once.
    private var sequences: [Key: [UInt8]] = [:]
    /// `ln=target`: colour a link as what it points to.
    private(set) var linkAsTarget = false

    /// Colours as `tree -C` chooses them from `environment`.
    init(environment: [String: String]) {
        guard environment["TERM"] != nil else { return }
        var scheme = environment["TREE_COLORS"] ?? environment["LS_COLORS"] ?? ""
        if scheme.isEmpty { scheme = Self.builtIn }
        enabled = true
        var endings: [(ending: [UInt8], code: [UInt8])] = []
        for item in scheme.utf8.split(separator: UInt8(ascii: ":")) {
            let parts = item.split(separator: UInt8(ascii: "="))
            guard let name = parts.first else { continue }
            let value = parts.count > 1 ? Array(parts[1]) : nil
            if name.first == UInt8(ascii: "*") {
                if let value { endings.insert((Array(name.dropFirst()), value), at: 0) }
                continue
            }
            guard let key = Key(rawValue: String(decoding: name, as: UTF8.self)) else { continue }
            if key == .link, let value, String(decoding: value, as: UTF8.self).lowercased() == "target" {
                linkAsTarget = true
                codes[.link] = Array("01;36".utf8)
                continue
            }
            if let value { codes[key] = value }
        }
        if codes[.leftCode] == nil { codes[.leftCode] = [0x1b, UInt8(ascii: "[")] }
        if codes[.rightCode] == nil { codes[.rightCode] = [UInt8(ascii: "m")] }
        if codes[.reset] == nil { codes[.reset] = [UInt8(ascii: "0")] }
        if codes[.endCode] == nil {
            codes[.endCode] = codes[.leftCode]! + codes[.reset]! + codes[.rightCode]!
        }
        let (left, right) = (codes[.leftCode]!, codes[.rightCode]!)
        for (key, code) in codes { sequences[key] = left + code + right }
        extensions = Array(repeating: [], count: 256)
        for (ending, code) in endings {
            let sequence = left + code + right
            if let last = ending.last {
                extensions[Int(last)].append((ending, sequence))
            } else {
                hasEmptyEnding = true
            }
        }
        if hasEmptyEnding {
            // Keep tree's order across all endings: one bucket holding every ending, searched for every name.
            extensions = [endings.map { ($0.ending, left + $0.code + right) }]
        }
    }

    /// The escape sequence that ends a coloured name.
    var end: [UInt8] { codes[.endCode] ?? [] }

    /// The escape sequence that starts `name` of type `mode`, or `nil` when tree prints it uncoloured.
    ///
    /// `orphan` marks a link whose target is missing; `isLinkTarget` says the name is the `-> target` part.
    func start(mode: mode_t, name: [UInt8], orphan: Bool, isLinkTarget: Bool) -> [UInt8]? {
        guard enabled else { return nil }
        if orphan, let code = sequence(isLinkTarget ? .missing : .orphan) { return code }
        switch mode & S_IFMT {
        case S_IFIFO: return sequence(.fifo)
        case S_IFCHR: return sequence(.character)
        case S_IFDIR:
            if mode & S_ISVTX != 0 {
                if mode & S_IWOTH != 0, let code = sequence(.stickyOtherWritable) { return code }
                if mode & S_IWOTH == 0, let code = sequence(.sticky) { return code }
            }
            if mode & S_IWOTH != 0, let code = sequence(.otherWritable) { return code }
            return sequence(.directory)
        case S_IFBLK: return sequence(.block)
        case S_IFLNK: return sequence(.link)
        case S_IFSOCK: return sequence(.socket)
        case S_IFREG:
            if mode & S_ISUID != 0, let code = sequence(.setUID) { return code }
            if mode & S_ISGID != 0, let code = sequence(.setGID) { return code }
            if mode & (S_IXUSR | S_IXGRP | S_IXOTH) != 0, let code = sequence(.executable) { return code }
            // tree compares the name's last bytes with each ending, in order.
            if let last = name.last ?? (hasEmptyEnding ? 0 : nil) {
                let bucket = hasEmptyEnding ? extensions[0] : extensions[Int(last)]
                for (ending, sequence) in bucket where Self.name(name, endsWith: ending) { return sequence }
            }
            return sequence(.file)
        default:
            return sequence(.normal)
        }
    }

    private func sequence(_ key: Key) -> [UInt8]? { sequences[key] }

    /// Whether `name`'s last bytes are `ending`.
    private static func name(_ name: [UInt8], endsWith ending: [UInt8]) -> Bool {
        guard name.count >= ending.count else { return false }
        return name.withUnsafeBytes { nameBytes in
            ending.withUnsafeBytes { endingBytes in
                endingBytes.isEmpty
                    || memcmp(
                        nameBytes.baseAddress! + (nameBytes.count - endingBytes.count),
                        endingBytes.baseAddress!, endingBytes.count) == 0
            }
        }
    }
}
