#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An estimate of how many guesses a password needs, in bits, in the manner of zxcvbn: the password is
/// split into the pieces an attacker would guess separately (common passwords, dictionary words with
/// capitals and l33t substitutions, words from the entry's own name, sequences such as `abc` or `4321`,
/// repeats, keyboard runs such as `qwerty` or `1qaz`, years and dates), the rest is counted character by
/// character, and the cheapest split wins.
///
/// The estimate is the base-2 logarithm of the guesses of that split: the product of its pieces' guesses
/// times the number of orders the pieces could come in. A random password of twelve letters, digits and
/// symbols comes out near 78 bits; `Summer2019!` near 21.
public struct PasswordStrength: Sendable, Equatable {
    /// A kind of piece a password was split into.
    public enum Pattern: String, Sendable, Equatable, CaseIterable {
        /// A password from the bundled list of the most common ones.
        case commonPassword = "common password"
        /// A word from the bundled list of frequent words and names.
        case dictionaryWord = "dictionary word"
        /// A word taken from the entry itself (its name or fields).
        case entryWord = "word from the entry"
        /// Characters in order: `abc`, `4321`.
        case sequence
        /// Characters or groups repeated: `aaaa`, `abcabc`.
        case repetition = "repetition"
        /// Keys next to each other on a keyboard: `qwerty`, `1qaz`, `asdf`.
        case keyboardRun = "keyboard run"
        /// A year or a date.
        case date = "date"
        /// Characters guessed one by one.
        case characters = "other characters"
    }

    /// The estimate, in bits (the base-2 logarithm of the number of guesses).
    public let bits: Double
    /// Whether the whole password (ignoring case) is in the bundled list of the most common passwords.
    public let isCommon: Bool
    /// The kinds of the pieces of the cheapest split, in the password's order.
    public let patterns: [Pattern]

    /// The longest stretch of a password that is analysed; characters beyond it count one by one.
    static let analysedLength = 128

    /// Estimates `password`; `userWords` are words an attacker who knows the entry would try first (its
    /// name's parts, its login).
    ///
    /// The copies of the password the estimate makes are wiped before it returns; `password` itself is
    /// the caller's (prefer ``estimate(_:userWords:)-(SecureBytes,_)`` for a password read from a store).
    public static func estimate(_ password: String, userWords: [String] = []) -> PasswordStrength {
        var scalars: [Unicode.Scalar] = []
        scalars.reserveCapacity(password.unicodeScalars.count)
        scalars.append(contentsOf: password.unicodeScalars)
        defer { wipe(&scalars) }
        return estimate(scalars: scalars, userWords: userWords)
    }

    /// Estimates a password held in wiped memory (UTF-8; bytes that are not UTF-8 count one character
    /// each, read as Latin-1); every copy the estimate makes is wiped before it returns.
    public static func estimate(_ password: SecureBytes, userWords: [String] = []) -> PasswordStrength {
        var scalars = password.withUnsafeBytes { bytes -> [Unicode.Scalar] in
            var result: [Unicode.Scalar] = []
            result.reserveCapacity(bytes.count)
            var iterator = bytes.makeIterator()
            var decoder = Unicode.UTF8()
            while true {
                switch decoder.decode(&iterator) {
                case .scalarValue(let scalar): result.append(scalar)
                case .emptyInput: return result
                case .error:
                    result.removeAll(keepingCapacity: true)
                    for byte in bytes { result.append(Unicode.Scalar(byte)) }
                    return result
                }
            }
        }
        defer { wipe(&scalars) }
        return estimate(scalars: scalars, userWords: userWords)
    }

    private static func estimate(scalars: [Unicode.Scalar], userWords: [String]) -> PasswordStrength {
        guard !scalars.isEmpty else { return PasswordStrength(bits: 0, isCommon: false, patterns: []) }
        var analysed = Array(scalars.prefix(analysedLength))
        var lower = analysed.map(lowercase)
        defer {
            wipe(&analysed)
            wipe(&lower)
        }
        let isCommon = Dictionaries.shared.passwords.rank(of: lower[...]) != nil
        var ranks: [(String, Int)] = []
        for word in userWords {
            let key = word.lowercased()
            if key.unicodeScalars.count >= 3 && !ranks.contains(where: { $0.0 == key }) {
                ranks.append((key, ranks.count + 1))
            }
        }
        var (bits, patterns) = Estimator(original: analysed, lower: lower, userWords: WordList(ranks)).best()
        for scalar in scalars.dropFirst(analysedLength) { bits += log2(Double(cardinality(scalar))) }
        if scalars.count > analysedLength { patterns.append(.characters) }
        return PasswordStrength(bits: bits, isCommon: isCommon, patterns: patterns)
    }

    /// Overwrites an array's elements in place (it must not share its storage).
    static func wipe<Element>(_ array: inout [Element]) {
        array.withUnsafeMutableBytes { wipeMemory($0.baseAddress, count: $0.count) }
    }

    /// Words and their ranks, found by a hash of the characters of a stretch of the password computed as
    /// the stretch grows, so that no string or array is made of it. Each word is kept spelled forwards
    /// and backwards (a reversed word costs one bit more).
    private struct WordList: Sendable {
        struct Word: Sendable {
            let scalars: [Unicode.Scalar]
            let rank: Int
            let reversed: Bool
        }

        private(set) var buckets: [UInt64: [Word]] = [:]
        /// The length of the longest word.
        private(set) var longest = 0

        /// The words with their ranks (the first of a repeated word counts).
        init(_ ranked: [(String, Int)]) {
            var seen = Set<String>()
            for (word, rank) in ranked where seen.insert(word).inserted {
                let scalars = Array(word.unicodeScalars)
                longest = max(longest, scalars.count)
                buckets[Self.hash(scalars), default: []].append(
                    Word(scalars: scalars, rank: rank, reversed: false))
                let backwards = Array(scalars.reversed())
                if backwards != scalars {
                    buckets[Self.hash(backwards), default: []].append(
                        Word(scalars: backwards, rank: rank, reversed: true))
                }
            }
        }

        /// The rank of the word spelled (forwards) by `characters`, or `nil`.
        func rank(of characters: ArraySlice<Unicode.Scalar>) -> Int? {
            guard characters.count <= longest else { return nil }
            return buckets[Self.hash(characters)]?.first {
                !$0.reversed && $0.scalars.elementsEqual(characters)
            }?
            .rank
        }

        static let basis: UInt64 = 0xcbf2_9ce4_8422_2325

        /// One more character into an FNV-1a hash.
        static func step(_ hash: UInt64, _ scalar: Unicode.Scalar) -> UInt64 {
            (hash ^ UInt64(scalar.value)) &* 0x100_0000_01b3
        }

        private static func hash<Characters: Sequence>(_ characters: Characters) -> UInt64
        where Characters.Element == Unicode.Scalar {
            characters.reduce(basis, step)
        }
    }

    /// The ranked lists, built once.
    private struct Dictionaries: Sendable {
        let passwords: WordList
        let words: WordList

        static let shared = Dictionaries()

        private init() {
            passwords = WordList(CommonPasswords.passwords.enumerated().map { ($0.element, $0.offset + 1) })
            words = WordList(CommonPasswords.words.enumerated().map { ($0.element, $0.offset + 1) })
        }
    }

    /// One piece: characters `start..<end`, guessed in `bits`.
    private struct Piece {
        var start: Int
        var end: Int
        var bits: Double
        var pattern: Pattern
    }

    /// The analysis of one password (or of a repeated group inside one).
    private struct Estimator {
        let original: [Unicode.Scalar]
        let lower: [Unicode.Scalar]
        let userWords: WordList
        var depth = 0

        var count: Int { original.count }

        /// The cheapest split: its bits (with the orderings of its pieces) and its patterns.
        func best() -> (Double, [Pattern]) {
            let pieces = allPieces()
            var ending = [[Piece]](repeating: [], count: count + 1)
            for piece in pieces { ending[piece.end].append(piece) }
            // cost[end][k]: the cheapest cover of the first `end` characters by `k` pieces. At most
            // `most` pieces: their orderings alone (log2 of 12!) are near 29 bits, and a cover by fewer
            // always exists (characters one by one make a single piece), so the cap can only raise an
            // estimate that is high already, while it keeps the work small.
            let most = min(count, 12)
            let infinity = Double.infinity
            let width = most + 1
            var cost = [Double](repeating: infinity, count: (count + 1) * width)
            var back = [Piece?](repeating: nil, count: (count + 1) * width)
            cost[0] = 0
            for end in 1...count {
                // Characters guessed one by one, as a piece of any length ending here.
                var characterBits = 0.0
                var candidates = ending[end]
                for start in stride(from: end - 1, through: 0, by: -1) {
                    characterBits += log2(Double(PasswordStrength.cardinality(original[start])))
                    candidates.append(
                        Piece(start: start, end: end, bits: characterBits, pattern: .characters))
                }
                for piece in candidates {
                    let minimum: Double =
                        piece.end - piece.start == count
                        ? 0 : piece.end - piece.start == 1 ? log2(10.0) : log2(50.0)
                    let bits = max(piece.bits, minimum)
                    for pieces in 0..<min(end, most) where cost[piece.start * width + pieces] < infinity {
                        let total = cost[piece.start * width + pieces] + bits
                        if total < cost[end * width + pieces + 1] {
                            cost[end * width + pieces + 1] = total
                            back[end * width + pieces + 1] = piece
                        }
                    }
                }
            }
            var bestBits = infinity
            var bestCount = 1
            var orderings = 0.0
            for pieces in 1...most {
                orderings += log2(Double(pieces))
                if cost[count * width + pieces] + orderings < bestBits {
                    bestBits = cost[count * width + pieces] + orderings
                    bestCount = pieces
                }
            }
            var patterns: [Pattern] = []
            var position = (count, bestCount)
            while position.0 > 0, position.1 > 0, let piece = back[position.0 * width + position.1] {
                patterns.append(piece.pattern)
                position = (piece.start, position.1 - 1)
            }
            var merged: [Pattern] = []
            for pattern in patterns.reversed() where merged.last != pattern || pattern != .characters {
                merged.append(pattern)
            }
            return (max(bestBits, 0), merged)
        }

        func allPieces() -> [Piece] {
            dictionaryPieces() + sequencePieces() + repetitionPieces() + keyboardPieces() + datePieces()
        }

        // MARK: Dictionaries

        private static let leet: [Unicode.Scalar: [Unicode.Scalar]] = [
            "4": ["a"], "@": ["a"], "8": ["b"], "(": ["c"], "3": ["e"], "6": ["g"], "9": ["g"],
            "1": ["i", "l"], "!": ["i"], "|": ["i", "l"], "0": ["o"], "$": ["s"], "5": ["s"], "7": ["t"],
            "+": ["t"], "2": ["z"], "%": ["x"],
        ]

        private func dictionaryPieces() -> [Piece] {
            let dictionaries = Dictionaries.shared
            let lists: [(WordList, Pattern, Double)] = [
                (userWords, .entryWord, 0), (dictionaries.passwords, .commonPassword, 0),
                // Words are tried after the common passwords.
                (dictionaries.words, .dictionaryWord, 10),
            ]
            let longest = lists.map(\.0.longest).max() ?? 0
            var pieces: [Piece] = []
            for start in 0..<count {
                // The stretch as written, and with l33t substitutions undone (`1` and `|` may stand for
                // i or for l: both are tried); each kind of substitution counts one bit.
                var hashes = [WordList.basis, WordList.basis, WordList.basis]
                var kinds = Set<UInt32>()
                var ambiguous = false
                for end in (start + 1)...min(count, start + longest) {
                    let scalar = lower[end - 1]
                    hashes[0] = WordList.step(hashes[0], scalar)
                    if let options = Self.leet[scalar] {
                        kinds.insert(scalar.value)
                        ambiguous = ambiguous || options.count > 1
                        hashes[1] = WordList.step(hashes[1], options[0])
                        hashes[2] = WordList.step(hashes[2], options[options.count - 1])
                    } else {
                        hashes[1] = WordList.step(hashes[1], scalar)
                        hashes[2] = WordList.step(hashes[2], scalar)
                    }
                    let length = end - start
                    guard length >= 3 || length == count else { continue }
                    let choices = kinds.isEmpty ? 1 : ambiguous ? 3 : 2
                    for choice in 0..<choices {
                        for (list, pattern, offset) in lists {
                            guard let bucket = list.buckets[hashes[choice]] else { continue }
                            for word in bucket where word.scalars.count == length {
                                guard spells(word.scalars, start, choice: choice) else { continue }
                                let extra =
                                    log2(capitalVariations(start, end))
                                    + Double(choice == 0 ? 0 : kinds.count)
                                    + (word.reversed ? 1 : 0)
                                pieces.append(
                                    Piece(
                                        start: start, end: end,
                                        bits: log2(Double(word.rank) + offset) + extra,
                                        pattern: pattern))
                            }
                        }
                    }
                }
            }
            return pieces
        }

        /// Whether the password from `start` spells `word` (with substitutions undone for choices 1 and 2).
        private func spells(_ word: [Unicode.Scalar], _ start: Int, choice: Int) -> Bool {
            for (offset, letter) in word.enumerated() {
                var scalar = lower[start + offset]
                if choice > 0, let options = Self.leet[scalar] {
                    scalar = options[choice == 1 ? 0 : options.count - 1]
                }
                if scalar != letter { return false }
            }
            return true
        }

        /// zxcvbn's count of the ways capitals could be placed in a word of this shape.
        private func capitalVariations(_ start: Int, _ end: Int) -> Double {
            var upper = 0
            var lowered = 0
            for scalar in original[start..<end] {
                if Self.isUppercase(scalar) {
                    upper += 1
                } else if Self.isLowercase(scalar) {
                    lowered += 1
                }
            }
            if upper == 0 { return 1 }
            if lowered == 0 { return 2 }
            if upper == 1 && (Self.isUppercase(original[start]) || Self.isUppercase(original[end - 1])) {
                return 2
            }
            var variations = 0.0
            for chosen in 1...min(upper, lowered) { variations += binomial(upper + lowered, chosen) }
            return max(variations, 2)
        }

        private static func isUppercase(_ scalar: Unicode.Scalar) -> Bool {
            scalar.isASCII ? ("A"..."Z").contains(scalar) : scalar.properties.isUppercase
        }

        private static func isLowercase(_ scalar: Unicode.Scalar) -> Bool {
            scalar.isASCII ? ("a"..."z").contains(scalar) : scalar.properties.isLowercase
        }

        // MARK: Sequences, repetitions, keyboard runs, dates

        private func sequencePieces() -> [Piece] {
            var pieces: [Piece] = []
            var start = 0
            while start < count - 2 {
                let step = Int(original[start + 1].value) - Int(original[start].value)
                guard abs(step) == 1, PasswordStrength.characterClass(original[start]) != .other,
                    PasswordStrength.characterClass(original[start])
                        == PasswordStrength.characterClass(original[start + 1])
                else {
                    start += 1
                    continue
                }
                var end = start + 2
                while end < count, Int(original[end].value) - Int(original[end - 1].value) == step,
                    PasswordStrength.characterClass(original[end])
                        == PasswordStrength.characterClass(original[start])
                {
                    end += 1
                }
                if end - start >= 3 {
                    for from in start..<(end - 2) {
                        for to in (from + 3)...end {
                            let first = original[from]
                            let base: Double =
                                "aAzZ019".unicodeScalars.contains(first)
                                ? 4 : PasswordStrength.characterClass(first) == .digit ? 10 : 26
                            let guesses = base * Double(to - from) * (step < 0 ? 2 : 1)
                            pieces.append(
                                Piece(start: from, end: to, bits: log2(guesses), pattern: .sequence))
                        }
                    }
                }
                start = end - 1
            }
            return pieces
        }

        /// Runs of a group repeated: only maximal runs (not one that starts inside a longer run of the same
        /// group) of primitive groups (not themselves repeats), each group estimated once.
        private func repetitionPieces() -> [Piece] {
            var pieces: [Piece] = []
            for start in 0..<count {
                for length in 1...max(1, (count - start) / 2) where start + 2 * length <= count {
                    let group = original[start..<(start + length)]
                    if start >= length && original[(start - length)..<start].elementsEqual(group) { continue }
                    var repeats = 1
                    while start + (repeats + 1) * length <= count,
                        original[(start + repeats * length)..<(start + (repeats + 1) * length)].elementsEqual(
                            group)
                    {
                        repeats += 1
                    }
                    guard repeats >= 2, !Self.isRepeat(group) else { continue }
                    let groupBits: Double
                    if length == 1 {
                        groupBits = log2(Double(PasswordStrength.cardinality(group.first!)))
                    } else if depth < 1 {
                        // The group estimated as a password of its own (its copies wiped after).
                        var groupOriginal = Array(group)
                        var groupLower = Array(lower[start..<(start + length)])
                        groupBits = Self.estimateGroup(
                            groupOriginal, groupLower, userWords: userWords, depth: depth + 1)
                        PasswordStrength.wipe(&groupOriginal)
                        PasswordStrength.wipe(&groupLower)
                    } else {
                        groupBits = group.reduce(0) { $0 + log2(Double(PasswordStrength.cardinality($1))) }
                    }
                    for times in 2...repeats {
                        pieces.append(
                            Piece(
                                start: start, end: start + times * length,
                                bits: groupBits + log2(Double(times)),
                                pattern: .repetition))
                    }
                }
            }
            return pieces
        }

        /// The bits of a repeated group, by an estimator that is gone when this returns.
        private static func estimateGroup(
            _ original: [Unicode.Scalar], _ lower: [Unicode.Scalar], userWords: WordList, depth: Int
        ) -> Double {
            var inner = Estimator(original: original, lower: lower, userWords: userWords)
            inner.depth = depth
            return inner.best().0
        }

        /// Whether `group` is a shorter group repeated (`abab`).
        private static func isRepeat(_ group: ArraySlice<Unicode.Scalar>) -> Bool {
            let length = group.count
            for unit in 1..<max(1, length) where length % unit == 0 {
                let head = group.prefix(unit)
                if stride(from: unit, to: length, by: unit).allSatisfy({
                    group[(group.startIndex + $0)..<(group.startIndex + $0 + unit)].elementsEqual(head)
                }) {
                    return true
                }
            }
            return false
        }

        /// Keyboard rows, columns and blocks (qwerty, azerty, qwertz, the numeric pad).
        private static let keyboards: [[Unicode.Scalar]] = [
            "`1234567890-=", "qwertyuiop[]\\", "asdfghjkl;'", "zxcvbnm,./",
            "1qaz2wsx3edc4rfv5tgb6yhn7ujm8ik,9ol.0p;/-['=]",
            "zaq1xsw2cde3vfr4bgt5nhy6mju7,ki8.lo9/;p0", "qazwsxedcrfvtgbyhnujmikolp", "qweasdzxc",
            "azertyuiop",
            "qsdfghjklm", "wxcvbn", "qwertzuiop", "yxcvbnm", "7894561230", "1470258369", "7418529630",
        ].map { Array($0.unicodeScalars) }

        private static let shifted: [Unicode.Scalar: Unicode.Scalar] = [
            "~": "`", "!": "1", "@": "2", "#": "3", "$": "4", "%": "5", "^": "6", "&": "7", "*": "8",
            "(": "9",
            ")": "0", "_": "-", "+": "=", "{": "[", "}": "]", "|": "\\", ":": ";", "\"": "'", "<": ",",
            ">": ".", "?": "/",
        ]

        private func keyboardPieces() -> [Piece] {
            var pieces: [Piece] = []
            var keys = lower.map { Self.shifted[$0] ?? $0 }
            var shifted = zip(original, lower).map { original, lower in
                original != lower || Self.shifted[original] != nil
            }
            defer {
                PasswordStrength.wipe(&keys)
                PasswordStrength.wipe(&shifted)
            }
            for (index, layout) in Self.keyboards.enumerated() {
                for line in [layout, layout.reversed()] {
                    for start in 0..<count {
                        var end = start
                        while end < count, end - start < line.count {
                            guard Self.contains(line, keys[start...end]) else { break }
                            end += 1
                        }
                        guard end - start >= 3 else { continue }
                        for to in (start + 3)...end {
                            let length = Double(to - start)
                            // Straight rows turn never; columns and blocks turn every few keys.
                            let turns = index < 4 || index >= 8 && index < 13 ? 1.0 : ceil(length / 4)
                            var bits = log2(47) + turns * log2(4) + log2(length - 1)
                            let shifts = shifted[start..<to].filter { $0 }.count
                            if shifts > 0 { bits += shifts == to - start ? 1 : log2(length) }
                            pieces.append(Piece(start: start, end: to, bits: bits, pattern: .keyboardRun))
                        }
                    }
                }
            }
            return pieces
        }

        private static func contains(_ line: [Unicode.Scalar], _ run: ArraySlice<Unicode.Scalar>) -> Bool {
            guard let first = run.first, run.count <= line.count else { return false }
            for offset in 0...(line.count - run.count) where line[offset] == first {
                if line[offset..<(offset + run.count)].elementsEqual(run) { return true }
            }
            return false
        }

        private func datePieces() -> [Piece] {
            var pieces: [Piece] = []
            var digits = original.map { ("0"..."9").contains($0) ? Int($0.value) - 48 : -1 }
            defer { PasswordStrength.wipe(&digits) }
            func number(_ from: Int, _ length: Int) -> Int? {
                guard from + length <= count else { return nil }
                var value = 0
                for index in from..<(from + length) {
                    guard digits[index] >= 0 && digits[index] <= 9 else { return nil }
                    value = value * 10 + digits[index]
                }
                return value
            }
            func yearSpace(_ year: Int) -> Double { Double(max(abs(year - 2025), 20)) }
            for start in 0..<count {
                if let year = number(start, 4), (1900...2039).contains(year) {
                    pieces.append(
                        Piece(start: start, end: start + 4, bits: log2(yearSpace(year)), pattern: .date))
                }
                func plausible(_ day: Int, _ month: Int) -> Bool {
                    (1...31).contains(day) && (1...12).contains(month)
                }
                if let all = number(start, 8) {
                    let (a, b, c) = (all / 1_000_000, all / 10_000 % 100, all % 10_000)
                    let (y, m, d) = (all / 10_000, all / 100 % 100, all % 100)
                    var years: [Int] = []
                    if (1900...2039).contains(c) && (plausible(a, b) || plausible(b, a)) { years.append(c) }
                    if (1900...2039).contains(y) && plausible(d, m) { years.append(y) }
                    if let year = years.first {
                        pieces.append(
                            Piece(
                                start: start, end: start + 8, bits: log2(365 * yearSpace(year)),
                                pattern: .date))
                    }
                }
                if let all = number(start, 6) {
                    let (a, b, c) = (all / 10_000, all / 100 % 100, all % 100)
                    if plausible(a, b) || plausible(b, a) || plausible(c, b) {
                        pieces.append(
                            Piece(start: start, end: start + 6, bits: log2(365 * 100), pattern: .date))
                    }
                }
            }
            return pieces
        }
    }

    // MARK: Characters

    enum CharacterClass {
        case digit, lower, upper, symbol, other
    }

    static func characterClass(_ scalar: Unicode.Scalar) -> CharacterClass {
        switch scalar {
        case "0"..."9": return .digit
        case "a"..."z": return .lower
        case "A"..."Z": return .upper
        case "!"..."~": return .symbol
        default: return .other
        }
    }

    /// How many characters of its kind an attacker tries for one position.
    static func cardinality(_ scalar: Unicode.Scalar) -> Int {
        switch characterClass(scalar) {
        case .digit: return 10
        case .lower, .upper: return 26
        case .symbol: return 33
        case .other: return 100
        }
    }

    static func lowercase(_ scalar: Unicode.Scalar) -> Unicode.Scalar {
        if ("A"..."Z").contains(scalar) { return Unicode.Scalar(scalar.value + 32)! }
        guard !scalar.isASCII, scalar.properties.isUppercase else { return scalar }
        let lowered = scalar.properties.lowercaseMapping.unicodeScalars
        return lowered.count == 1 ? lowered.first! : scalar
    }
}

/// `n` choose `k`, as a floating-point number.
private func binomial(_ n: Int, _ k: Int) -> Double {
    guard k >= 0 && k <= n else { return 0 }
    var result = 1.0
    for index in 0..<k { result = result * Double(n - index) / Double(index + 1) }
    return result
}
