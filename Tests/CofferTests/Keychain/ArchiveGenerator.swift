import CofferTestSupport

@testable import Coffer

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The shape of a value as coffer-store(5) describes it, built by hand next to each generated value
/// (not from its `Encodable` conformance), and the text the document says it is written as.
indirect enum ArchiveDocument {
    /// A single value's text, before escaping.
    case scalar(String)
    case null
    /// Entries in the order they are written (declaration order, or sorted keys for a dictionary).
    case object([(String, ArchiveDocument)])
    case array([ArchiveDocument])

    /// A dictionary's entries sorted as the format says: numerically when every key is a whole number.
    static func dictionary(_ entries: [(String, ArchiveDocument)]) -> ArchiveDocument {
        let numeric = entries.allSatisfy { Int($0.0) != nil }
        return .object(
            entries.sorted { left, right in
                if numeric, Int(left.0)! != Int(right.0)! { return Int(left.0)! < Int(right.0)! }
                return Array(left.0.utf8).lexicographicallyPrecedes(Array(right.0.utf8))
            })
    }

    /// The entry text of a top-level value.
    func rendered() -> String {
        var lineOne = ""
        var fields: [String] = []
        switch self {
        case .scalar(let text): lineOne = text
        case .null: break
        case .object(let entries):
            for (key, value) in entries {
                if key == "password", case .scalar(let text) = value {
                    lineOne = text
                } else {
                    value.emit(at: [key], into: &fields)
                }
            }
        case .array(let elements):
            for (index, element) in elements.enumerated() { element.emit(at: [String(index)], into: &fields) }
        }
        return ([lineOne] + fields).joined(separator: "\n") + "\n"
    }

    private func emit(at path: [String], into fields: inout [String]) {
        switch self {
        case .scalar(let text):
            fields.append(Self.field(path, Self.escaped(text)))
        case .null:
            fields.append(Self.field(path, "~"))
        case .object(let entries):
            if entries.isEmpty { fields.append(Self.field(path, "{}")) }
            for (key, value) in entries { value.emit(at: path + [key], into: &fields) }
        case .array(let elements):
            if elements.isEmpty { fields.append(Self.field(path, "[]")) }
            let texts = elements.compactMap { element -> String? in
                if case .scalar(let text) = element { return text }
                return nil
            }
            if texts.count == elements.count {
                for text in texts { fields.append(Self.field(path, Self.escaped(text))) }
            } else {
                for (index, element) in elements.enumerated() {
                    element.emit(at: path + [String(index)], into: &fields)
                }
            }
        }
    }

    /// `key: value`, `key:` for an empty value, or the `key: |` block for a value with line breaks or `|`.
    private static func field(_ path: [String], _ written: String) -> String {
        let key = path.map(quotedKey).joined(separator: ".")
        if written.contains("\n")
            || written.reversed().drop(while: { $0 == " " || $0 == "\t" }).elementsEqual("|")
        {
            return key + ": |\n"
                + written.split(separator: "\n", omittingEmptySubsequences: false)
                .map { "  " + $0 }.joined(separator: "\n")
        }
        return written.isEmpty ? key + ":" : key + ": " + written
    }

    private static func quotedKey(_ key: String) -> String {
        let needsQuotes =
            key.isEmpty || key.hasPrefix("#") || key.hasPrefix(" ") || key.hasPrefix("\t")
            || key.hasSuffix(" ")
            || key.hasSuffix("\t")
            || key.unicodeScalars.contains {
                ".\"\\:".unicodeScalars.contains($0) || $0.value < 32 || $0.value == 127
            }
        return needsQuotes ? jsonString(key, colon: true) : key
    }

    private static func jsonString(_ text: String, colon: Bool) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case ":" where colon: result += "\\u003A"
            case _ where scalar.value < 32 || scalar.value == 127:
                let hex = String(scalar.value, radix: 16, uppercase: true)
                result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }

    /// The field text of a single value.
    static func escaped(_ text: String) -> String {
        if text.contains("\r\n") || text.hasSuffix("\r") { return "\\" + jsonString(text, colon: false) }
        let rest = text.drop { $0 == "\\" }
        let special =
            ["~", "[]", "{}"].contains(String(rest.reversed().drop { $0 == " " || $0 == "\t" }.reversed()))
            || rest.hasPrefix(" ") || rest.hasPrefix("\t")
            || (rest.count < text.count && rest.hasPrefix("\""))
        return special ? "\\" + text : text
    }
}

/// Generated values of every shape the archive supports, each with its document.
enum ArchiveGenerator {
    struct Server: Codable, Equatable {
        var host: String
        var port: Int
        var tags: [String]
        var options: [String: String]?
        var replicas: [Server]
    }

    struct Empty: Codable, Equatable {}

    enum Kind: String, Codable, Equatable {
        case personal, work
    }

    indirect enum Auth: Codable, Equatable {
        case none
        case password(String)
        case key(name: String, data: Data)
        case chain([Auth])
    }

    struct Tree: Codable, Equatable {
        var label: String
        var children: [Tree]
        var attributes: [String: String]
    }

    struct Record: Codable, Equatable {
        var password: String
        var name: String
        var servers: [Server]
        var matrix: [[Int]]
        var grid: [[String]]?
        var byName: [String: Server]
        var byID: [Int: String]
        var scores: [String: Double]
        var auth: Auth
        var history: [Auth]
        var note: String?
        var nested: String??
        var tags: [String?]
        var created: Date
        var blob: Data
        var home: URL?
        var price: Decimal
        var flags: [Bool]
        var empty: Empty
        var maybeEmpty: Empty?
        var tree: Tree
        var kind: Kind
        var count: Int8
        var big: UInt64
    }

    /// A generated value: how to store and check it, and the text `gpg -d` must print.
    struct Sample: @unchecked Sendable {
        let seed: UInt64
        let shape: String
        let expectedText: String
        let store: (Keychain, String) throws -> Void
        /// Whether the keychain gives back a value equal to the one stored.
        let roundTrips: (Keychain, String) throws -> Bool
        /// Whether the encoder writes the document's text and the decoder reads the value back (no gpg).
        let checkWithoutStore: () throws -> Bool
        let debugText: () -> String
    }

    private static func sample<Value: Codable & Equatable>(
        _ seed: UInt64, _ shape: String, _ value: Value, _ document: ArchiveDocument
    ) -> Sample {
        Sample(
            seed: seed, shape: shape, expectedText: document.rendered(),
            store: { keychain, account in try keychain.set(value, account: account) },
            roundTrips: { keychain, account in try keychain.value(Value.self, account: account) == value },
            checkWithoutStore: {
                let secret = try SecretEncoder().encode(value)
                let decoded = try SecretDecoder().decode(Value.self, from: secret)
                return String(decoding: secret.formatted(), as: UTF8.self) == document.rendered()
                    && decoded == value
            },
            debugText: {
                guard let secret = try? SecretEncoder().encode(value) else { return "encode failed" }
                let text = String(decoding: secret.formatted(), as: UTF8.self)
                var result = "TEXT SAME\n"
                let mine = text.split(separator: "\n", omittingEmptySubsequences: false)
                let theirs = document.rendered().split(separator: "\n", omittingEmptySubsequences: false)
                if let index = zip(mine, theirs).enumerated().first(where: { $0.element.0 != $0.element.1 })?
                    .offset ?? (mine.count == theirs.count ? nil : min(mine.count, theirs.count))
                {
                    result =
                        "LINE \(index): encoded \(index < mine.count ? String(mine[index]).debugDescription : "-") expected \(index < theirs.count ? String(theirs[index]).debugDescription : "-")\n"
                }
                do {
                    let decoded = try SecretDecoder().decode(Value.self, from: secret)
                    result +=
                        decoded == value
                        ? "DECODED SAME"
                        : "DECODED DIFFERS: \(String(describing: decoded).prefix(3000))\nVALUE:   \(String(describing: value).prefix(3000))"
                } catch { result += "DECODE ERROR \(error)" }
                return result
            })
    }

    /// The value of seed `seed`: a `Record` most of the time, else a top-level array, dictionary or enum.
    static func sample(seed: UInt64) -> Sample {
        var random = SeededRandom(seed: seed)
        switch random.below(10) {
        case 0:
            let (value, document) = list(&random, depth: 2) { server(&$0, depth: $1) }
            return sample(seed, "[Server]", value, document)
        case 1:
            let (value, document) = dictionary(&random, depth: 2) { tree(&$0, depth: $1) }
            return sample(seed, "[String: Tree]", value, document)
        case 2:
            let (value, document) = auth(&random, depth: 3)
            return sample(seed, "Auth", value, document)
        case 3:
            let (value, document) = intDictionary(&random) { list(&$0, depth: 1) { string(&$0, depth: $1) } }
            return sample(seed, "[Int: [String]]", value, document)
        default:
            let (value, document) = record(&random)
            return sample(seed, "Record", value, document)
        }
    }

    // MARK: - Single values

    private static let pieces = [
        "a", "b", "Z", "0", "7", " ", " ", "\t", "\n", "\n", "\r", ".", ":", "\"", "\\", "#", "|", "~", "[]",
        "{}", "é", "🔑", "password", "-", "otpauth://", "key: value", "=",
    ]

    private static let whole = [
        "", "~", "[]", "{}", "\\~", "\\", "\\\\[]", " ", "|", "| ", "\n", "a\r", "a\r\nb", "\"q\"", "\\\"q\"",
        "x\n  indented\n\ttab", "#", "password", "0", "-1", "a.b", "a:b", "\u{7}bell", "\u{0}nul",
    ]

    static func text(_ random: inout SeededRandom, singleLine: Bool = false) -> String {
        var result = random.chance(0.3) ? random.pick(whole) : ""
        for _ in 0..<random.below(random.chance(0.1) ? 40 : 8) { result += random.pick(pieces) }
        if singleLine {
            result = String(
                String.UnicodeScalarView(result.unicodeScalars.filter { $0 != "\n" && $0 != "\r" }))
        }
        return result
    }

    private static func string(_ random: inout SeededRandom, depth: Int) -> (String, ArchiveDocument) {
        let value = text(&random)
        return (value, .scalar(value))
    }

    private static func date(_ random: inout SeededRandom) -> (Date, ArchiveDocument) {
        let seconds = Int64.random(in: -2_000_000_000...4_000_000_000, using: &random)
        let fraction = random.pick([0, 0, 0.5, 0.25, 0.125, 0.75])
        let date = Date(timeIntervalSince1970: TimeInterval(seconds) + fraction)
        var text = Date(timeIntervalSince1970: TimeInterval(seconds)).formatted(.iso8601)
        if fraction > 0 { text = text.dropLast() + String(String(fraction).dropFirst()) + "Z" }
        return (date, .scalar(text))
    }

    private static func url(_ random: inout SeededRandom) -> (URL?, ArchiveDocument?) {
        guard random.chance(0.7) else { return (nil, nil) }
        let text = random.pick([
            "https://example.com", "https://example.com/a?b=c#d", "ssh://git@host:22/repo.git", "~", "[]",
            "mailto:a@example.com", "file:///tmp/x", "relative/path",
        ])
        let url = URL(string: text)!
        return (url, .scalar(url.absoluteString))
    }

    private static func decimal(_ random: inout SeededRandom) -> (Decimal, ArchiveDocument) {
        let text = random.pick(["0", "12.34", "-0.001", "123456789012345678901234567890.5", "1e20", "-7"])
        let value = Decimal(string: text)!
        return (value, .scalar(value.description))
    }

    private static func data(_ random: inout SeededRandom) -> (Data, ArchiveDocument) {
        let data = Data((0..<random.below(20)).map { _ in UInt8.random(in: 0...255, using: &random) })
        return (data, .scalar(data.base64EncodedString()))
    }

    // MARK: - Containers

    private static func list<Element>(
        _ random: inout SeededRandom, depth: Int,
        _ element: (inout SeededRandom, Int) -> (Element, ArchiveDocument)
    ) -> ([Element], ArchiveDocument) {
        let count = depth <= 0 ? 0 : random.pick([0, 1, 1, 2, 3])
        var values: [Element] = []
        var documents: [ArchiveDocument] = []
        for _ in 0..<count {
            let (value, document) = element(&random, depth - 1)
            values.append(value)
            documents.append(document)
        }
        return (values, .array(documents))
    }

    private static func dictionary<Value>(
        _ random: inout SeededRandom, depth: Int,
        _ element: (inout SeededRandom, Int) -> (Value, ArchiveDocument)
    ) -> ([String: Value], ArchiveDocument) {
        var values: [String: Value] = [:]
        var entries: [(String, ArchiveDocument)] = []
        let numeric = random.chance(0.15)
        for _ in 0..<(depth <= 0 ? 0 : random.pick([0, 1, 2, 3])) {
            let key = numeric ? String(random.below(30) - 5) : text(&random, singleLine: random.chance(0.5))
            guard values[key] == nil else { continue }
            let (value, document) = element(&random, depth - 1)
            values[key] = value
            entries.append((key, document))
        }
        return (values, .dictionary(entries))
    }

    private static func intDictionary<Value>(
        _ random: inout SeededRandom, _ element: (inout SeededRandom) -> (Value, ArchiveDocument)
    ) -> ([Int: Value], ArchiveDocument) {
        var values: [Int: Value] = [:]
        var entries: [(String, ArchiveDocument)] = []
        for _ in 0..<random.pick([0, 1, 2, 4]) {
            let key = random.chance(0.2) ? random.pick([Int.min, Int.max, -1]) : random.below(200)
            guard values[key] == nil else { continue }
            let (value, document) = element(&random)
            values[key] = value
            entries.append((String(key), document))
        }
        return (values, .dictionary(entries))
    }

    private static func server(_ random: inout SeededRandom, depth: Int) -> (Server, ArchiveDocument) {
        let host = text(&random)
        let port = Int.random(in: -70_000...70_000, using: &random)
        let (tags, tagsDocument) = list(&random, depth: 1) { string(&$0, depth: $1) }
        var options: [String: String]?
        var optionsDocument: ArchiveDocument?
        if random.chance(0.5) {
            let made = dictionary(&random, depth: 1) { string(&$0, depth: $1) }
            (options, optionsDocument) = (made.0, made.1)
        }
        let (replicas, replicasDocument) = list(&random, depth: depth) { server(&$0, depth: $1) }
        var entries: [(String, ArchiveDocument)] = [
            ("host", .scalar(host)), ("port", .scalar(String(port))), ("tags", tagsDocument),
        ]
        if let optionsDocument { entries.append(("options", optionsDocument)) }
        entries.append(("replicas", replicasDocument))
        return (
            Server(host: host, port: port, tags: tags, options: options, replicas: replicas), .object(entries)
        )
    }

    private static func auth(_ random: inout SeededRandom, depth: Int) -> (Auth, ArchiveDocument) {
        switch random.below(depth > 0 ? 4 : 3) {
        case 0:
            return (.none, .object([("none", .object([]))]))
        case 1:
            let value = text(&random)
            return (.password(value), .object([("password", .object([("_0", .scalar(value))]))]))
        case 2:
            let name = text(&random)
            let (bytes, bytesDocument) = data(&random)
            return (
                .key(name: name, data: bytes),
                .object([("key", .object([("name", .scalar(name)), ("data", bytesDocument)]))])
            )
        default:
            let (chain, document) = list(&random, depth: depth) { auth(&$0, depth: $1) }
            return (.chain(chain), .object([("chain", .object([("_0", document)]))]))
        }
    }

    private static func tree(_ random: inout SeededRandom, depth: Int) -> (Tree, ArchiveDocument) {
        let label = text(&random)
        // Now and then a long chain of single children: very deep nesting.
        let deep = depth > 0 && random.chance(0.05)
        let (children, childrenDocument): ([Tree], ArchiveDocument)
        if deep {
            var chain = Tree(label: "leaf", children: [], attributes: [:])
            var document = ArchiveDocument.object([
                ("label", .scalar("leaf")), ("children", .array([])), ("attributes", .object([])),
            ])
            for level in 0..<20 {
                chain = Tree(label: String(level), children: [chain], attributes: [:])
                document = .object([
                    ("label", .scalar(String(level))), ("children", .array([document])),
                    ("attributes", .object([])),
                ])
            }
            (children, childrenDocument) = ([chain], .array([document]))
        } else {
            (children, childrenDocument) = list(&random, depth: depth) { tree(&$0, depth: $1) }
        }
        let (attributes, attributesDocument) = dictionary(&random, depth: 1) { string(&$0, depth: $1) }
        return (
            Tree(label: label, children: children, attributes: attributes),
            .object([
                ("label", .scalar(label)), ("children", childrenDocument), ("attributes", attributesDocument),
            ])
        )
    }

    private static func record(_ random: inout SeededRandom) -> (Record, ArchiveDocument) {
        var entries: [(String, ArchiveDocument)] = []
        func add(_ key: String, _ document: ArchiveDocument?) {
            if let document { entries.append((key, document)) }
        }
        let password = text(&random, singleLine: true)
        add("password", .scalar(password))
        let name = text(&random)
        add("name", .scalar(name))
        let (servers, serversDocument) = list(&random, depth: 2) { server(&$0, depth: $1) }
        add("servers", serversDocument)
        let (matrix, matrixDocument) = list(&random, depth: 2) { random, depth in
            list(&random, depth: depth) { random, _ in
                let number = Int.random(in: -1000...1000, using: &random)
                return (number, .scalar(String(number)))
            }
        }
        add("matrix", matrixDocument)
        var grid: [[String]]?
        if random.chance(0.5) {
            let made = list(&random, depth: 2) { random, depth in
                list(&random, depth: depth) { string(&$0, depth: $1) }
            }
            grid = made.0
            add("grid", made.1)
        }
        let (byName, byNameDocument) = dictionary(&random, depth: 2) { server(&$0, depth: $1) }
        add("byName", byNameDocument)
        let (byID, byIDDocument) = intDictionary(&random) { random in
            let value = text(&random)
            return (value, .scalar(value))
        }
        add("byID", byIDDocument)
        let (scores, scoresDocument) = dictionary(&random, depth: 1) { random, _ in
            let score = random.pick([0.1, -0.0, 1e300, 42, .pi, -.infinity, Double.leastNonzeroMagnitude])
            return (score, .scalar(score.description))
        }
        add("scores", scoresDocument)
        let (authValue, authDocument) = auth(&random, depth: 2)
        add("auth", authDocument)
        let (history, historyDocument) = list(&random, depth: 2) { auth(&$0, depth: $1) }
        add("history", historyDocument)
        let note: String? = random.chance(0.5) ? text(&random) : nil
        add("note", note.map { .scalar($0) })
        let nested: String?? = random.pick([.none, .some(.none), .some(.some(text(&random)))])
        switch nested {
        case .none: break
        case .some(.none): add("nested", .null)
        case .some(.some(let value)): add("nested", .scalar(value))
        }
        var tags: [String?] = []
        var tagDocuments: [ArchiveDocument] = []
        for _ in 0..<random.pick([0, 1, 3]) {
            let tag: String? = random.chance(0.3) ? nil : text(&random)
            tags.append(tag)
            tagDocuments.append(tag.map { .scalar($0) } ?? .null)
        }
        add("tags", .array(tagDocuments))
        let (created, createdDocument) = date(&random)
        add("created", createdDocument)
        let (blob, blobDocument) = data(&random)
        add("blob", blobDocument)
        let (home, homeDocument) = url(&random)
        add("home", homeDocument)
        let (price, priceDocument) = decimal(&random)
        add("price", priceDocument)
        let flags = (0..<random.below(3)).map { _ in random.chance(0.5) }
        add("flags", .array(flags.map { .scalar($0 ? "true" : "false") }))
        add("empty", .object([]))
        let maybeEmpty: Empty? = random.chance(0.5) ? Empty() : nil
        add("maybeEmpty", maybeEmpty.map { _ in .object([]) })
        let (treeValue, treeDocument) = tree(&random, depth: 2)
        add("tree", treeDocument)
        let kind: Kind = random.chance(0.5) ? .personal : .work
        add("kind", .scalar(kind.rawValue))
        let count = Int8.random(in: .min ... .max, using: &random)
        add("count", .scalar(String(count)))
        let big = random.next()
        add("big", .scalar(String(big)))
        let record = Record(
            password: password, name: name, servers: servers, matrix: matrix, grid: grid, byName: byName,
            byID: byID, scores: scores, auth: authValue, history: history, note: note, nested: nested,
            tags: tags,
            created: created, blob: blob, home: home, price: price, flags: flags, empty: Empty(),
            maybeEmpty: maybeEmpty, tree: treeValue, kind: kind, count: count, big: big)
        return (record, .object(entries))
    }
}
