import CofferTestSupport

/// What the generator believes the store holds, so that operations often name what exists. It follows
/// pass's rules roughly; where it is wrong an operation just names something that is not there, which is a
/// case worth running too.
struct FuzzModel {
    /// Whether the store has a `.gpg-id` at its top.
    var initialised = false
    /// Whether the store is a git repository.
    var git = false
    /// Entry names.
    var entries: Set<String> = []
    /// Folders with a `.gpg-id` of their own.
    var recipientFolders: Set<String> = []
    /// The entries that hold NULs or bytes that are not UTF-8.
    var binaryEntries: Set<String> = []

    /// Every folder that holds an entry or a `.gpg-id`, sorted.
    var folders: [String] {
        var result = recipientFolders
        for entry in entries {
            var parts = entry.split(separator: "/", omittingEmptySubsequences: false).dropLast()
            while !parts.isEmpty {
                result.insert(parts.joined(separator: "/"))
                parts = parts.dropLast()
            }
        }
        return result.sorted()
    }

    /// The names under `folder`, relative to it.
    func entries(under folder: String) -> [String] {
        entries.filter { $0.hasPrefix(folder + "/") }.map { String($0.dropFirst(folder.count + 1)) }.sorted()
    }

    /// The last part of a name.
    static func baseName(_ name: String) -> String {
        String(name.split(separator: "/", omittingEmptySubsequences: false).last ?? "")
    }

    /// Applies a move or copy of `source` to `destination` as pass would.
    mutating func transfer(_ source: String, to destination: String, move: Bool) {
        let trimmed = source.hasSuffix("/") ? String(source.dropLast()) : source
        let folders = Set(self.folders)
        let isEntry = entries.contains(trimmed) && !(source.hasSuffix("/") && folders.contains(trimmed))
        let target = destination.hasSuffix("/") ? String(destination.dropLast()) : destination
        let into = folders.contains(target) || destination.hasSuffix("/")
        if isEntry {
            let new = into ? (target.isEmpty ? "" : target + "/") + Self.baseName(trimmed) : target
            let binary = binaryEntries.contains(trimmed)
            if move { entries.remove(trimmed) }
            entries.insert(new)
            if binary { binaryEntries.insert(new) } else { binaryEntries.remove(new) }
        } else if folders.contains(trimmed) {
            let base = folders.contains(target) ? target + "/" + Self.baseName(trimmed) : target
            for inner in entries(under: trimmed) {
                if binaryEntries.contains(trimmed + "/" + inner) { binaryEntries.insert(base + "/" + inner) }
                if move { entries.remove(trimmed + "/" + inner) }
                entries.insert(base + "/" + inner)
            }
            if recipientFolders.contains(trimmed) {
                if move { recipientFolders.remove(trimmed) }
                recipientFolders.insert(base)
            }
        }
        binaryEntries.formIntersection(entries)
    }
}

/// Makes seeded sequences of 20–60 operations over every command and flag that changes a store.
struct FuzzGenerator {
    private var random: SeededRandom
    private var model = FuzzModel()

    /// The sequence of `seed`.
    static func sequence(seed: UInt64) -> FuzzSequence {
        var generator = FuzzGenerator(random: SeededRandom(seed: seed))
        return generator.make(seed: seed)
    }

    private mutating func make(seed: UInt64) -> FuzzSequence {
        let locale: TestLocale = random.chance(0.2) ? .c : .utf8
        let count = 20 + random.below(41)
        var operations = [initialise(top: true)]
        if random.chance(0.55) { operations.append(gitInit()) }
        while operations.count < count {
            operations.append(nextOperation())
        }
        return FuzzSequence(seed: seed, locale: locale, operations: operations)
    }

    private mutating func nextOperation() -> FuzzOperation {
        let binary = model.binaryEntries
        var operation = plainOperation()
        let command = operation.shape.prefix { $0 != " " }
        if operation.names.contains(where: { binary.contains(trimmedName($0)) }) {
            operation.features.append("\(command) binary entry")
        }
        if command == "grep" && !binary.isEmpty { operation.features.append("grep with binary entries") }
        // Now and then coffer also runs a write killed or out of room (not generate: its password is new
        // at every run, so its change cannot be compared).
        if ["insert", "rm", "mv", "cp", "init"].contains(command), random.chance(Self.hazardChance) {
            let hazard = hazard()
            operation.hazard = hazard
            operation.features += hazard.features
        }
        return operation
    }

    /// How often a write of coffer's meets a ``FuzzHazard`` too.
    static let hazardChance = 0.15

    private mutating func hazard() -> FuzzHazard {
        let recovery: FuzzHazard.Recovery = random.chance(0.5) ? .fsck : .nextWrite
        let kind: FuzzHazard.Kind
        switch random.weighted([(4, 0), (3, 1), (3, 2), (1, 3)]) {
        case 0 where model.git: kind = .killedAtCommit
        case 0, 1: kind = .killedAfter(milliseconds: random.pick([2, 10, 30, 60, 100, 150, 250, 400]))
        case 2: kind = .fullDisk(roomKiB: random.pick([0, 4, 8, 12, 16, 24, 32, 64, 128]))
        default: kind = .fileSizeLimit(bytes: random.pick([0, 64, 300, 1000, 4096]))
        }
        return FuzzHazard(kind: kind, recovery: recovery)
    }

    private mutating func plainOperation() -> FuzzOperation {
        let kind = random.weighted([
            (20, "insert"), (11, "generate"), (12, "edit"), (10, "rm"), (10, "mv"), (10, "cp"), (8, "init"),
            (8, "git"), (5, "read"),
        ])
        switch kind {
        case "insert": return insert()
        case "generate": return generate()
        case "edit": return edit()
        case "rm": return remove()
        case "mv": return transfer(move: true)
        case "cp": return transfer(move: false)
        case "init": return initialise(top: false)
        case "git": return gitOperation()
        default: return read()
        }
    }

    // MARK: - Names

    /// Parts of names: plain, with spaces, unicode, glob characters, shell and printf characters.
    static let plainParts = ["bank", "mail", "web", "a", "b", "work", "home", "x1", "team", "Zeta"]
    static let spacedParts = ["my site", "two  spaces", " lead", "trail ", "a b c"]
    static let unicodeParts = ["ünïcødé", "日本語", "émoji 😀", "e\u{301}", "Ωmega", "ß"]
    static let globParts = ["star*name", "q?mark", "[br]acket", "a{b,c}", "*", "?", "[!x]"]
    static let specialParts = [
        "-dash", "it's", #"back\slash"#, "100%s", "cost$5", "semi;colon", #"quo"te"#, ".hidden", "a.b",
        "tilde~", "#hash", "a=b", "..dots", "x.gpg",
    ]

    /// A part of exactly `bytes` bytes (`bytes` ≤ 251, the most pass can store with `.gpg`).
    private mutating func longPart() -> String {
        let bytes = random.pick([100, 200, 225, 226, 240, 250, 251])
        if random.chance(0.3) {
            let wide = String(repeating: "é", count: bytes / 2)
            return wide + String(repeating: "x", count: bytes % 2)
        }
        return random.pick(["l", "m", "n"]) + String(repeating: "o", count: bytes - 1)
    }

    private mutating func part() -> String {
        switch random.weighted([(45, 0), (12, 1), (12, 2), (12, 3), (11, 4), (8, 5)]) {
        case 0: return random.pick(Self.plainParts)
        case 1: return random.pick(Self.spacedParts)
        case 2: return random.pick(Self.unicodeParts)
        case 3: return random.pick(Self.globParts)
        case 4: return random.pick(Self.specialParts)
        default: return longPart()
        }
    }

    /// A name that probably does not exist yet, often inside an existing folder.
    private mutating func newName() -> String {
        let folders = model.folders.filter { $0.utf8.count < Self.longestPrefix }
        var prefix = ""
        if !folders.isEmpty && random.chance(0.5) {
            prefix = random.pick(folders) + "/"
        } else if random.chance(0.35) {
            prefix = part() + "/"
            if random.chance(0.3) { prefix += part() + "/" }
        }
        return prefix + part()
    }

    /// The longest folder a new name is made in: names stay far below `PATH_MAX` (coffer refuses longer
    /// paths on purpose).
    static let longestPrefix = 1_200

    private mutating func existingEntry() -> String {
        if !model.binaryEntries.isEmpty && random.chance(0.3) {
            return random.pick(model.binaryEntries.sorted())
        }
        return model.entries.isEmpty ? newName() : random.pick(model.entries.sorted())
    }

    private mutating func existingFolder() -> String {
        let folders = model.folders
        return folders.isEmpty ? newName() : random.pick(folders)
    }

    /// An entry name: an existing entry, a new name, or now and then the name of a folder.
    private mutating func entryName(existing percent: Int) -> String {
        let roll = random.below(100)
        if roll < percent { return existingEntry() }
        if roll < percent + 8, !model.folders.isEmpty { return existingFolder() }
        return newName()
    }

    /// `--` before the names when one starts with a dash (else sometimes).
    private mutating func separator(_ names: [String]) -> [String] {
        names.contains { $0.hasPrefix("-") } || random.chance(0.2) ? ["--"] : []
    }

    // MARK: - Operations

    private mutating func insert() -> FuzzOperation {
        let name = entryName(existing: 30)
        let mode = random.weighted([(40, "-e"), (35, "-m"), (25, "")])
        let force = random.chance(0.5)
        var flags: [String] = []
        switch mode {
        case "-e": flags = [random.chance(0.7) ? "-e" : "--echo"]
        case "-m": flags = [random.chance(0.7) ? "-m" : "--multiline"]
        default: break
        }
        if force {
            if mode == "-e" && random.chance(0.3) {
                flags = ["-ef"]
            } else {
                flags.append(random.chance(0.7) ? "-f" : "--force")
            }
        }
        if mode == "-m" && random.chance(0.35) {
            let input = binaryInput()
            if model.initialised {
                model.entries.insert(trimmedName(name))
                model.binaryEntries.insert(trimmedName(name))
            }
            return FuzzOperation(
                arguments: ["insert"] + flags + separator([name]) + [name], input: input,
                shape: "insert -m\(force ? " -f" : "")", names: [name], features: ["insert -m binary"])
        }
        let input: String
        switch mode {
        case "-e":
            input = random.pick(["line\n", "  spaced out  \n", "", "first\nsecond\n", "back\\slash\n", "pw"])
        case "-m":
            input = random.pick([
                "l1\nl2\n", "no newline", "", "pw\nlogin: alice\nurl: https://e.example\n", "a\u{1}b\n",
                "\n\nthird\n",
            ])
        default: input = random.pick(["pw\npw\n", "pw\npw\n", "one\ntwo\n", "pw\n"])
        }
        if model.initialised { model.entries.insert(trimmedName(name)) }
        model.binaryEntries.remove(trimmedName(name))
        return FuzzOperation(
            arguments: ["insert"] + flags + separator([name]) + [name], input: Array(input.utf8),
            shape: "insert \(mode.isEmpty ? "(hidden)" : mode)\(force ? " -f" : "")", names: [name])
    }

    private mutating func generate() -> FuzzOperation {
        let inPlace = random.chance(0.3)
        let name = entryName(existing: inPlace ? 80 : 30)
        let force = random.chance(inPlace ? 0.08 : 0.4)
        let noSymbols = random.chance(0.35)
        var flags: [String] = []
        if noSymbols { flags.append(random.chance(0.5) ? "-n" : "--no-symbols") }
        if inPlace { flags.append(random.chance(0.5) ? "-i" : "--in-place") }
        if force { flags.append(random.chance(0.5) ? "-f" : "--force") }
        let length = random.pick([nil, nil, 8, 12, 40, 64] as [Int?])
        var arguments = ["generate"] + flags + separator([name]) + [name]
        if let length { arguments.append(String(length)) }
        if !inPlace && model.initialised { model.entries.insert(trimmedName(name)) }
        if !inPlace || random.chance(0.5) { model.binaryEntries.remove(trimmedName(name)) }
        let shape = GeneratedPassword(length: length ?? 25, characters: noSymbols ? .alphanumeric : .graph)
        return FuzzOperation(
            arguments: arguments, generated: shape,
            shape: (["generate"] + (noSymbols ? ["-n"] : []) + (inPlace ? ["-i"] : [])
                + (force ? ["-f"] : []))
                .joined(separator: " "),
            names: [name])
    }

    /// The editors `edit` runs: the scripts of ``DifferentialSandbox/editors``, `:` and none (`editor`).
    static let editors: [String?] = [
        "edit-append", "edit-append", "edit-replace", "edit-nothing", "edit-fail", "edit-change-then-fail",
        "edit-delete", "edit-binary", "edit-args --wait", ":", ":", nil,
    ]

    private mutating func edit() -> FuzzOperation {
        let name = entryName(existing: 70)
        let editor = random.pick(Self.editors)
        let value = editor.map { $0 == ":" ? ":" : "$SANDBOX/bin/" + $0 }
        if let editor, ["edit-append", "edit-replace", "edit-binary", "edit-args --wait"].contains(editor),
            model.initialised
        {
            model.entries.insert(trimmedName(name))
            model.binaryEntries.remove(trimmedName(name))
        }
        return FuzzOperation(
            arguments: ["edit"] + separator([name]) + [name], environment: ["EDITOR": value],
            shape: "edit EDITOR=\(editor ?? "(unset)")", names: [name])
    }

    private mutating func remove() -> FuzzOperation {
        let target: String
        let roll = random.below(100)
        if roll < 45 {
            target = existingEntry()
        } else if roll < 80 {
            target = existingFolder()
        } else if roll < 90 {
            target = existingFolder() + "/"
        } else {
            target = newName()
        }
        let recursive = random.chance(roll >= 45 && roll < 90 ? 0.75 : 0.25)
        let force = random.chance(0.5)
        var flags: [String] = []
        if recursive && force && random.chance(0.3) {
            flags = [random.chance(0.5) ? "-rf" : "-fr"]
        } else {
            if recursive { flags.append(random.chance(0.7) ? "-r" : "--recursive") }
            if force { flags.append(random.chance(0.7) ? "-f" : "--force") }
        }
        let trimmed = trimmedName(target)
        if model.entries.contains(trimmed) && !(target.hasSuffix("/") && model.folders.contains(trimmed)) {
            model.entries.remove(trimmed)
        } else if recursive {
            model.entries = model.entries.filter { !$0.hasPrefix(trimmed + "/") }
            model.recipientFolders = model.recipientFolders.filter {
                $0 != trimmed && !$0.hasPrefix(trimmed + "/")
            }
        }
        model.binaryEntries.formIntersection(model.entries)
        return FuzzOperation(
            arguments: [random.weighted([(8, "rm"), (1, "remove"), (1, "delete")])] + flags
                + separator([target])
                + [target],
            unordered: true,
            shape: "rm" + (recursive ? " -r" : "") + (force ? " -f" : ""), names: [target])
    }

    private mutating func transfer(move: Bool) -> FuzzOperation {
        let command =
            move ? random.weighted([(4, "mv"), (1, "rename")]) : random.weighted([(4, "cp"), (1, "copy")])
        let roll = random.below(100)
        let source = roll < 55 ? existingEntry() : roll < 90 ? existingFolder() : newName()
        let sourceKind = roll < 55 ? "entry" : roll < 90 ? "folder" : "new name"
        let destination: String
        let destinationKind: String
        switch random.below(100) {
        case 0..<28:
            destination = newName()
            destinationKind = "new name"
        case 28..<46:
            destination = existingEntry()
            destinationKind = "existing entry"
        case 46..<60:
            destination = existingFolder()
            destinationKind = "existing folder"
        case 60..<68:
            destination = newName() + "/"
            destinationKind = "new folder/"
        case 68..<77:
            destination = source
            destinationKind = "itself"
        case 77..<90:
            let folders = model.recipientFolders.sorted()
            destination =
                (folders.isEmpty ? newName() : random.pick(folders))
                + (random.chance(0.5) ? "/" : "/" + part())
            destinationKind = "folder with its own .gpg-id"
        default:
            let inside = trimmedName(source)
            destination = (inside.utf8.count < Self.longestPrefix ? inside + "/" : "") + part()
            destinationKind = "inside itself"
        }
        let force = random.chance(0.45)
        let flags = force ? [random.chance(0.7) ? "-f" : "--force"] : []
        model.transfer(source, to: destination, move: move)
        return FuzzOperation(
            arguments: [command] + flags + separator([source, destination]) + [source, destination],
            unordered: true, shape: (move ? "mv" : "cp") + (force ? " -f" : ""),
            names: [source, destination],
            features: [
                (move ? "mv" : "cp") + " source \(sourceKind)",
                (move ? "mv" : "cp") + " onto \(destinationKind)",
            ])
    }

    private mutating func initialise(top: Bool) -> FuzzOperation {
        let keys =
            top
            ? random.weighted([(6, ["$K1"]), (2, ["$K1", "$K2"])])
            : random.weighted([
                (5, ["$K1"]), (3, ["$K2"]), (4, ["$K1", "$K2"]), (3, ["$K3"]), (3, ["$K2", "$K3"]), (4, [""]),
            ])
        var path: String?
        if !top {
            switch random.below(100) {
            case 0..<35: path = nil
            case 35..<65: path = existingFolder()
            case 65..<80:
                let folders = model.recipientFolders.sorted()
                path = folders.isEmpty ? existingFolder() : random.pick(folders)
            default: path = newName()
            }
            if keys == [""] && path == nil && random.chance(0.7) { path = existingFolder() }
        }
        var flags: [String] = []
        if let path {
            switch random.below(3) {
            case 0: flags = ["-p", path]
            case 1: flags = ["--path=" + path]
            default: flags = ["--path", path]
            }
        }
        if let path {
            if keys == [""] {
                model.recipientFolders.remove(path)
            } else {
                model.recipientFolders.insert(path)
            }
        } else {
            model.initialised = keys != [""]
        }
        let shape = "init" + (path == nil ? "" : " -p") + (keys == [""] ? " \"\"" : " \(keys.count) key(s)")
        return FuzzOperation(
            arguments: ["init"] + flags + keys, unordered: true, shape: shape, names: path.map { [$0] } ?? [])
    }

    private mutating func gitInit() -> FuzzOperation {
        model.git = true
        return FuzzOperation(arguments: ["git", "init"], shape: "git init")
    }

    private mutating func gitOperation() -> FuzzOperation {
        if !model.git && random.chance(0.7) { return gitInit() }
        let arguments = random.weighted([
            (2, ["init"]), (3, ["log", "--format=%s"]), (3, ["status", "--porcelain"]),
            (3, ["revert", "--no-edit", "HEAD"]), (3, ["reset", "-q", "--hard", "HEAD~1"]),
            (2, ["commit", "-q", "-m", "by hand"]), (1, ["rm", "-q", "-r", "--cached", "."]),
        ])
        if arguments == ["init"] { return gitInit() }
        return FuzzOperation(
            arguments: ["git"] + arguments, shape: "git " + arguments[0])
    }

    private mutating func read() -> FuzzOperation {
        switch random.below(4) {
        case 0:
            let name = existingEntry()
            return FuzzOperation(
                arguments: ["show"] + separator([name]) + [name], shape: "show", names: [name])
        case 1:
            let folder = random.chance(0.5) ? [] : [existingFolder()]
            return FuzzOperation(arguments: ["ls"] + separator(folder) + folder, shape: "ls", names: folder)
        case 2:
            let term = random.pick(["a", "*", "?", "ü", "x.gpg", "[br]", "o"])
            return FuzzOperation(arguments: ["find", term], shape: "find")
        default:
            // Patterns no generated password can hold (they are random, and grep colours what matches).
            let pattern = random.pick([
                "appended: line", "login: alice", "spaced out", "written by", "no newline", "nul", "bytes",
            ])
            let options = random.chance(0.3) ? ["-i", "--", pattern.uppercased()] : ["--", pattern]
            return FuzzOperation(arguments: ["grep"] + options, unordered: true, shape: "grep")
        }
    }

    /// Entry contents that are not text: NULs, bytes that are not UTF-8, and seeded random bytes.
    static let binaryInputs: [[UInt8]] = [
        [0], [0, 0, 0], Array("nul\0in the middle\n".utf8), Array("pw\nnul\0line\n".utf8),
        Array("latin-1 caf".utf8) + [0xe9, 10], [0xff, 0xfe, 0xfd],
        Array("bytes ".utf8) + [0xc3, 0x28, 0x20, 0x80, 10],
        Array("crlf\r\n\0".utf8), Array("ends in nuls\0\0".utf8), [0xef, 0xbb, 0xbf, 0, 10],
    ]

    private mutating func binaryInput() -> [UInt8] {
        if random.chance(0.7) { return random.pick(Self.binaryInputs) }
        return (0..<(1 + random.below(48))).map { _ in UInt8(truncatingIfNeeded: random.next()) }
    }

    private func trimmedName(_ name: String) -> String {
        var name = name
        while name.hasSuffix("/") { name.removeLast() }
        return name
    }
}
