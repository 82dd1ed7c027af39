import Coffer
import CofferTestSupport

/// The files under the sandbox's home after a command, as text lines: folders, files with their mode,
/// `.gpg` files decrypted with their recipients' key ids (or `unchanged`), links, and each git
/// repository's log, status and local configuration; plus anything left in `TMPDIR`.
struct StoreSnapshot {
    let root: String
    let temporary: String
    let environment: [String: String]
    /// The bytes a file (by path relative to `root`) had before the command; `nil` when it was not there.
    let before: (String) -> [UInt8]?
    /// Rewrites the plaintext of an entry before it is shown (to mask generated passwords).
    let maskEntry: ([UInt8]) -> [UInt8]
    /// Where decryptions are kept, so that a file is decrypted once however often it is shown.
    let decryptions: DecryptionCache
    /// The bytes of every regular file that ``render()`` found, by path relative to `root`.
    private(set) var files: [String: [UInt8]] = [:]

    /// A snapshot of `root` against `before`.
    init(
        root: String, temporary: String, environment: [String: String],
        before: @escaping (String) -> [UInt8]?,
        maskEntry: @escaping ([UInt8]) -> [UInt8] = { $0 }, decryptions: DecryptionCache = DecryptionCache()
    ) {
        self.root = root
        self.temporary = temporary
        self.environment = environment
        self.before = before
        self.maskEntry = maskEntry
        self.decryptions = decryptions
    }

    /// A snapshot of `root` against the copy of it in `pristineRoot`, with the first line of every entry
    /// masked as a password of the `generated` shape (when set).
    init(
        root: String, pristineRoot: String, temporary: String, environment: [String: String],
        generated: GeneratedPassword?
    ) {
        self.init(
            root: root, temporary: temporary, environment: environment,
            before: { TestFiles.read(pristineRoot + "/" + $0) },
            maskEntry: { content in
                guard let generated else { return content }
                var content = content
                let firstEnd = content.firstIndex(of: UInt8(ascii: "\n")) ?? content.endIndex
                let password = String(decoding: content[..<firstEnd], as: UTF8.self)
                content.replaceSubrange(..<firstEnd, with: Array(generated.mask(password).utf8))
                return content
            })
    }

    mutating func render() throws -> [String] {
        // A sequence (a shrunk one, say) may leave no store at all: that is a state like any other.
        guard TestFiles.exists(root) else { return ["no store"] }
        let listing = try TestProcess.check(
            [
                "find", root, "-mindepth", "1", "-name", ".git", "-prune", "-printf", "G\\0%P\\0", "-o",
                "-type", "l", "-printf", "L\\0%P\\0%l\\0", "-o", "-type", "d", "-printf", "D\\0%m\\0%P\\0",
                "-o", "-printf", "F\\0%m\\0%P\\0",
            ], environment: environment)
        var fields = listing.standardOutput.split(separator: 0, omittingEmptySubsequences: false)
            .map { String(decoding: $0, as: UTF8.self) }[...]
        var entries: [(path: String, lines: [String])] = []
        while let kind = fields.popFirst(), !kind.isEmpty {
            switch kind {
            case "G":
                let path = fields.popFirst() ?? ""
                entries.append((path, try gitLines(path)))
            case "L":
                let path = fields.popFirst() ?? ""
                let target = fields.popFirst() ?? ""
                entries.append((path, ["link \(Report.escape(path)) -> \(Report.escape(target))"]))
            case "D":
                let mode = fields.popFirst() ?? ""
                let path = fields.popFirst() ?? ""
                entries.append((path, ["dir  \(mode) \(Report.escape(path))"]))
            default:
                let mode = fields.popFirst() ?? ""
                let path = fields.popFirst() ?? ""
                entries.append((path, try fileLines(path, mode: mode)))
            }
        }
        var lines = entries.sorted { Array($0.path.utf8).lexicographicallyPrecedes(Array($1.path.utf8)) }
            .flatMap(\.lines)
        let leftovers = try TestProcess.check(
            ["find", temporary, "-mindepth", "1", "-printf", "%P\\n"], environment: environment)
        for leftover in leftovers.outputText.split(separator: "\n").sorted() {
            lines.append("left in TMPDIR: \(Report.escape(String(leftover)))")
        }
        return lines
    }

    private mutating func fileLines(_ path: String, mode: String) throws -> [String] {
        let bytes = TestFiles.read(root + "/" + path) ?? []
        files[path] = bytes
        let before = self.before(path)
        let header = "file \(mode) \(Report.escape(path))"
        if before == bytes { return [header + " unchanged"] }
        let state = before == nil ? "new" : "rewritten"
        if path.hasSuffix(".sig") {
            // A detached signature differs at every signing (it holds the time): show who signed what.
            let verified = try TestProcess.run(
                [
                    "gpg", "--batch", "--status-fd=1", "--verify", root + "/" + path,
                    root + "/" + path.dropLast(4),
                ],
                environment: environment)
            let status = verified.outputText.split(separator: "\n").compactMap { line -> String? in
                let words = line.split(separator: " ")
                guard words.count > 2, ["VALIDSIG", "BADSIG", "ERRSIG", "NO_PUBKEY"].contains(words[1]) else {
                    return nil
                }
                return words[1] + " " + words[2]
            }
            return [header + " \(state) signature: " + status.joined(separator: ", ")]
        }
        guard path.hasSuffix(".gpg") else {
            return [header + " \(state)"] + Report.contentLines(bytes)
        }
        let format = bytes.starts(with: Array("-----BEGIN PGP".utf8)) ? "armored" : "binary"
        let decrypted = try decryptions.decrypt(bytes, file: root + "/" + path, environment: environment)
        let lines = [
            header + " \(state) \(format) to "
                + (decrypted.keys.isEmpty ? "(no key ids)" : decrypted.keys.joined(separator: ","))
        ]
        guard decrypted.status == 0 else {
            return lines + ["    <gpg cannot decrypt it: status \(decrypted.status)>"]
        }
        return lines + Report.contentLines(maskEntry(decrypted.plaintext))
    }

    private func gitLines(_ path: String) throws -> [String] {
        let worktree = root + "/" + String(path.dropLast(".git".count))
        var lines = ["git  \(Report.escape(path))"]
        let log = try TestProcess.run(
            ["git", "-C", worktree, "log", "--format=%G? %an <%ae> %s"], environment: environment)
        lines +=
            log.status == 0
            ? log.outputText.split(separator: "\n").map { "    log: " + Report.escape(String($0)) }
            : ["    log: (none)"]
        let status = try TestProcess.run(
            ["git", "-C", worktree, "status", "--porcelain", "--untracked-files=all"],
            environment: environment)
        lines += status.outputText.split(separator: "\n").map { "    status: " + Report.escape(String($0)) }
        let config = try TestProcess.run(
            ["git", "-C", worktree, "config", "--local", "--list"], environment: environment)
        lines += config.outputText.split(separator: "\n").map { "    config: " + Report.escape(String($0)) }
        return lines
    }
}

/// Entries decrypted by `gpg`, by their bytes: a file is decrypted once however many snapshots show it.
final class DecryptionCache: Sendable {
    /// What `gpg -d` made of a file.
    struct Decryption: Sendable {
        /// The long ids of the keys the file is encrypted to, sorted.
        let keys: [String]
        /// gpg's exit status.
        let status: Int32
        /// The plaintext (empty when gpg failed).
        let plaintext: [UInt8]
    }

    private let decryptions = Locked<[[UInt8]: Decryption]>([:])

    /// The decryption of `bytes` (the content of `file`), from the cache or from gpg; failures are not kept.
    func decrypt(_ bytes: [UInt8], file: String, environment: [String: String]) throws -> Decryption {
        if let known = decryptions.withLock({ $0[bytes] }) { return known }
        let result = try TestProcess.run(
            ["gpg", "--batch", "-v", "--keyid-format", "long", "-d", file], environment: environment)
        let keys = result.errorText.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("gpg: public key is ") else { return nil }
            return String(line.dropFirst("gpg: public key is ".count))
        }.sorted()
        let decryption = Decryption(
            keys: keys, status: result.status, plaintext: result.status == 0 ? result.standardOutput : [])
        if result.status == 0 {
            decryptions.withLock { $0[bytes] = decryption }
        }
        return decryption
    }
}

/// Renders and compares reports.
enum Report {
    /// The text of one program's outcome in a case of the table.
    static func render(
        result: ProcessResult, files: [String], generated: [String], scenario: DifferentialScenario
    ) -> String {
        render(result: result, files: files, unordered: scenario.unordered) {
            normalise($0, generated: generated, scenario: scenario)
        }
    }

    /// The text of one program's outcome: exit status, standard output and error (each passed through
    /// `normalise`; standard output's lines sorted when `unordered`), then the snapshot's lines.
    static func render(
        result: ProcessResult, files: [String], unordered: Bool, normalise: ([UInt8]) -> [UInt8]
    ) -> String {
        var lines = ["status: \(result.status)" + (result.timedOut ? " (killed after the time limit)" : "")]
        var output = normalise(result.standardOutput)
        if unordered {
            // The order is the file system's (readdir or inode order), which differs between copies.
            lines.append("stdout (lines sorted):")
            var lines: [ArraySlice<UInt8>] = []
            var start = output.startIndex
            while start < output.endIndex {
                let end =
                    output[start...].firstIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? output.endIndex
                lines.append(output[start..<end])
                start = end
            }
            output = lines.sorted { $0.lexicographicallyPrecedes($1) }.flatMap { $0 }
        } else {
            lines.append("stdout:")
        }
        lines += contentLines(output)
        lines.append("stderr:")
        lines += contentLines(normalise(result.standardError))
        lines.append("files:")
        lines += files.map { "    " + $0 }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Masks what legitimately differs between two runs: git's abbreviated commit hashes and line counts
    /// (``maskingGit(_:)``), and generated passwords (and their QR codes).
    static func normalise(_ bytes: [UInt8], generated: [String], scenario: DifferentialScenario) -> [UInt8] {
        guard var text = String(validating: bytes, as: UTF8.self) else { return bytes }
        text = maskingGit(text)
        if let shape = scenario.generated {
            for password in generated where !password.isEmpty {
                text = text.replacing(password, with: shape.mask(password))
            }
            text = text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
                line.contains(where: { "█▀▄".contains($0) })
                    ? "<QR code line of \(line.count) characters>" : line
            }.joined(separator: "\n")
        }
        return Array(text.utf8)
    }

    /// git's output with abbreviated commit hashes masked (dates and identity are fixed, but every
    /// encryption makes a different ciphertext, so the trees differ) and the line counts of a commit's
    /// summary masked (whether git counts lines in a ciphertext depends on its random bytes).
    static func maskingGit(_ text: String) -> String {
        var text = text.replacing(#/\[([^\] \n]+)( \(root-commit\))? [0-9a-f]{7,40}\]/#) { match in
            "[\(match.output.1)\(match.output.2 ?? "") HASH]"
        }
        text = text.replacing(
            #/(?m)^( \d+ files? changed)(, \d+ insertions?\(\+\))?(, \d+ deletions?\(-\))?$/#
        ) {
            match in "\(match.output.1), <counts>"
        }
        return text
    }

    /// Bytes as escaped lines, one per line of the text; the last shows whether a newline ends it.
    static func contentLines(_ bytes: [UInt8]) -> [String] {
        if bytes.isEmpty { return ["    (empty)"] }
        var lines: [String] = []
        var start = bytes.startIndex
        while start < bytes.endIndex {
            let end = bytes[start...].firstIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? bytes.endIndex
            lines.append("    | " + escape(bytes[start..<end]))
            start = end
        }
        return lines
    }

    /// Text with control characters, backslashes and invalid UTF-8 escaped.
    static func escape(_ text: String) -> String { escape(Array(text.utf8)[...]) }

    static func escape(_ bytes: ArraySlice<UInt8>) -> String {
        var result = ""
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let lead = bytes[index]
            let width = lead < 0xc0 ? 1 : lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2
            let end = min(bytes.endIndex, index + width)
            guard let decoded = String(validating: bytes[index..<end], as: UTF8.self),
                let scalar = decoded.unicodeScalars.first
            else {
                result += "\\x" + hex(lead)
                index += 1
                continue
            }
            index = end
            switch scalar {
            case "\n": result += "\\n"
            case "\t": result += "\\t"
            case "\r": result += "\\r"
            case "\u{1b}": result += "\\e"
            case "\\": result += "\\\\"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7f {
                    result += "\\x" + hex(UInt8(scalar.value))
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789abcdef")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 15)]])
    }

    /// A line diff of two reports (`-` pass, `+` coffer) with a little context.
    static func difference(_ left: String, _ right: String, context: Int = 2) -> String {
        let a = left.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let b = right.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in stride(from: a.count - 1, through: 0, by: -1) {
            for j in stride(from: b.count - 1, through: 0, by: -1) {
                table[i][j] = a[i] == b[j] ? table[i + 1][j + 1] + 1 : max(table[i + 1][j], table[i][j + 1])
            }
        }
        var operations: [(Character, String)] = []
        var i = 0
        var j = 0
        while i < a.count || j < b.count {
            if i < a.count && j < b.count && a[i] == b[j] {
                operations.append((" ", a[i]))
                i += 1
                j += 1
            } else if j < b.count && (i == a.count || table[i][j + 1] >= table[i + 1][j]) {
                operations.append(("+", b[j]))
                j += 1
            } else {
                operations.append(("-", a[i]))
                i += 1
            }
        }
        var shown = Set<Int>()
        for (index, operation) in operations.enumerated() where operation.0 != " " {
            for near in max(0, index - context)...min(operations.count - 1, index + context) {
                shown.insert(near)
            }
        }
        var output: [String] = []
        var previous = -1
        for index in shown.sorted() {
            if previous >= 0 && index > previous + 1 { output.append("   …") }
            output.append("\(operations[index].0) \(operations[index].1)")
            previous = index
        }
        return output.joined(separator: "\n")
    }
}
