import Coffer

/// `grep [GREPOPTIONS] search-string`: searches every decrypted entry as `grep --color=always` would (in
/// the process for grep's common options, else with the system grep, the plaintext on its standard
/// input), and prints each matching entry's name and grep's output.
///
/// Entries are visited as pass's `find -L "$PREFIX" -path '*/.git' -prune -o -iname '*.gpg' -print0`
/// visits them: directory order, symlinks followed, dotfiles included, `.git` skipped.
enum GrepCommand {
    /// `grep`.
    static let command = Command(
        names: ["grep"], usage: "[GREPOPTIONS] search-string", operands: .text,
        help: { _ in ["Search for password files containing search-string when decrypted."] },
        passHead: "grep [GREPOPTIONS] search-string", run: run)

    /// Runs the command.
    static func run(_ arguments: [String], _ invocation: Invocation) throws {
        guard !arguments.isEmpty else { throw invocation.usage("[GREPOPTIONS] search-string") }
        invocation.warnAboutUnappliedGPGOptions(encrypting: false)
        let store = invocation.store
        let prefix = invocation.prefix
        var files: [String] = []
        var walker = FindWalker()
        walker.walk(prefix) { files.append($0) }
        // Decrypting and grepping run on every core; results are printed in find's order.
        let engine = store.engine
        let meter = ProgressMeter(label: "searching", environment: invocation.environment)
        defer { meter.clear() }
        let matcher = InProcessGrep(arguments, environment: invocation.environment)
        try Parallel.forEach(files) { file in
            try search(file, engine: engine, arguments: arguments, matcher: matcher)
        } consume: { index, result in
            defer { meter.update(done: index + 1, total: files.count) }
            guard case .success(let found) = result else {
                meter.clear()
                standardError.line("\(invocation.program): grep: command not found")
                return
            }
            if found.diagnostic != nil || !found.errors.isEmpty { meter.clear() }
            if let diagnostic = found.diagnostic { standardError.line(diagnostic) }
            standardError.write(bytes: found.errors)
            guard found.decrypted && found.status == 0,
                var name = entryName(of: files[index], prefix: prefix)
            else { return }
            if name.hasSuffix(".gpg") { name.removeLast(4) }
            var folder = ""
            if name.utf8.contains(0x2F) {
                folder = name.parentPath + "/"
                name = name.lastPathPart
            }
            meter.clear()
            var results = found.output.filter { $0 != 0 }
            while results.last == UInt8(ascii: "\n") { results.removeLast() }
            standardOutput.write(
                bytes: Array("\u{1b}[94m\(folder)\u{1b}[1m\(name)\u{1b}[0m:\n".utf8) + results + [10])
        }
    }

    /// What searching one file gave: grep's output and status, whether it decrypted, and gpg's words when
    /// not.
    private struct Found {
        var output: [UInt8]
        var errors: [UInt8] = []
        var status: Int32
        var decrypted: Bool
        var diagnostic: String?
    }

    /// Decrypts one file and searches the plaintext: in the process when `matcher` can, else with grep
    /// (the plaintext on its standard input, never in a file).
    @Sendable private static func search(
        _ file: String, engine: any CryptoEngine, arguments: [String], matcher: InProcessGrep?
    ) throws -> Found {
        // gpg's own words for the files find lists but gpg cannot read; grep still runs, on nothing.
        var plaintext = SecureBytes([])
        var decrypted = false
        var diagnostic: String?
        if FileSystem.isDirectory(file) {
            diagnostic =
                "gpg: \(file): read error: Is a directory\ngpg: decrypt_message failed: Unknown system error"
        } else if !FileSystem.exists(file) {
            diagnostic = GPGMessages.cannotOpen(file)
        } else {
            do {
                plaintext = try engine.decrypt(fileAt: file)
                decrypted = true
            } catch let error as GPGError {
                diagnostic = GPGMessages.decryptionFailure(error)
            } catch {
                diagnostic = "Error: \(error)"
            }
        }
        if let result = matcher?.search(plaintext) {
            return Found(
                output: result.output, status: result.status, decrypted: decrypted, diagnostic: diagnostic)
        }
        let grep = try ChildProcess(["grep", "--color=always"] + arguments).run(input: plaintext)
        return Found(
            output: grep.standardOutput, errors: grep.standardError, status: grep.status,
            decrypted: decrypted, diagnostic: diagnostic)
    }

    /// `${passfile#$PREFIX/}`.
    private static func entryName(of file: String, prefix: String) -> String? {
        file.isPath(inside: prefix) ? String(file.droppingPathPrefix(prefix)) : file
    }
}

/// `find -L ROOT -path '*/.git' -prune -o -iname '*.gpg' -print`, but each folder searched once: directory
/// order, folders reached through links after the others, reporting unreadable folders and file-system
/// loops as find does.
///
/// find -L follows every path through the links, so a folder two links lead to is searched twice, and a
/// ladder of such folders as often as it has paths (2^24 for 24 levels); coffer searches a folder under the
/// first name the walk reaches it by (its own, when it is in the store).
struct FindWalker {
    /// Calls `visit` with every path that `find` would print, a folder reached again left out.
    mutating func walk(_ root: String, visit: (String) -> Void) {
        var info = stat()
        if stat(root, &info) != 0 && lstat(root, &info) != 0 {
            standardError.line("find: \(quote(root)): \(String(cString: strerror(errno)))")
            return
        }
        if root.hasSuffix("/.git") { return }
        let base = root.withoutTrailingSlashes.lastPathPart
        if base.lowercased().hasSuffix(".gpg") { visit(root) }
        guard info.st_mode & S_IFMT == S_IFDIR else { return }
        try? FileTree.walk(root, followLinks: true) { path, item in
            if item.name == Self.git { return false }
            if item.nameString.lowercased().hasSuffix(".gpg") { visit(path) }
            return true
        } failed: { path, failure in
            switch failure {
            case .unreadable(let number):
                standardError.line("find: \(quote(path)): \(String(cString: strerror(number)))")
            case .loop(let ancestor):
                standardError.line(
                    "find: File system loop detected; \(quote(path)) is part of the same file system loop as \(quote(ancestor))."
                )
            case .walkedAlready:
                // find -L would search the folder again for every path to it; grep searches it once.
                break
            }
        }
    }

    private static let git = Array(".git".utf8)

    /// find's quoting of names in messages (the locale's quotation marks).
    private func quote(_ path: String) -> String { CoreutilsMessages.localeQuote(path) }
}
