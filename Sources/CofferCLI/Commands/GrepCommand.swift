import Coffer

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `grep [GREPOPTIONS] search-string`: runs the system `grep --color=always` over every decrypted entry,
/// the plaintext on grep's standard input, and prints each matching entry's name and grep's output.
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
        try Parallel.forEach(files) { file in
            try search(file, engine: engine, arguments: arguments)
        } consume: { index, result in
            defer { meter.update(done: index + 1, total: files.count) }
            guard case .success(let found) = result else {
                meter.clear()
                standardError.line("\(invocation.program): grep: command not found")
                return
            }
            if found.diagnostic != nil || !found.grep.standardError.isEmpty { meter.clear() }
            if let diagnostic = found.diagnostic { standardError.line(diagnostic) }
            standardError.write(bytes: found.grep.standardError)
            guard found.decrypted && found.grep.status == 0,
                var name = entryName(of: files[index], prefix: prefix)
            else { return }
            if name.hasSuffix(".gpg") { name.removeLast(4) }
            var folder = ""
            if let slash = name.lastIndex(of: "/") {
                folder = String(name[...slash])
                name = String(name[name.index(after: slash)...])
            }
            meter.clear()
            var results = found.grep.standardOutput.filter { $0 != 0 }
            while results.last == UInt8(ascii: "\n") { results.removeLast() }
            standardOutput.write(
                bytes: Array("\u{1b}[94m\(folder)\u{1b}[1m\(name)\u{1b}[0m:\n".utf8) + results + [10])
        }
    }

    /// What searching one file gave: grep's output, whether it decrypted, and gpg's words when not.
    private struct Found {
        var grep: ChildProcess.Output
        var decrypted: Bool
        var diagnostic: String?
    }

    /// Decrypts one file and runs grep on the plaintext (on its standard input, never in a file).
    @Sendable private static func search(
        _ file: String, engine: any CryptoEngine, arguments: [String]
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
        let grep = try ChildProcess(["grep", "--color=always"] + arguments).run(input: plaintext)
        return Found(grep: grep, decrypted: decrypted, diagnostic: diagnostic)
    }

    /// `${passfile#$PREFIX/}`.
    private static func entryName(of file: String, prefix: String) -> String? {
        file.hasPrefix(prefix + "/") ? String(file.dropFirst(prefix.count + 1)) : file
    }
}

/// `find -L ROOT -path '*/.git' -prune -o -iname '*.gpg' -print`: pre-order, directory order, following
/// symlinks, reporting file-system loops as find does.
struct FindWalker {
    private struct Identity: Equatable {
        var device: dev_t
        var inode: ino_t
    }

    /// Calls `visit` with every path that `find` would print.
    mutating func walk(_ root: String, visit: (String) -> Void) {
        var ancestors: [(Identity, String)] = []
        visitPath(root, &ancestors, visit)
    }

    private func visitPath(_ path: String, _ ancestors: inout [(Identity, String)], _ visit: (String) -> Void)
    {
        var info = stat()
        if stat(path, &info) != 0 && lstat(path, &info) != 0 {
            standardError.line("find: \(quote(path)): \(String(cString: strerror(errno)))")
            return
        }
        if path.hasSuffix("/.git") { return }
        let base = path.split(separator: "/", omittingEmptySubsequences: true).last.map(String.init) ?? path
        if base.lowercased().hasSuffix(".gpg") { visit(path) }
        guard info.st_mode & S_IFMT == S_IFDIR else { return }
        let identity = Identity(device: info.st_dev, inode: info.st_ino)
        if let loop = ancestors.first(where: { $0.0 == identity }) {
            standardError.line(
                "find: File system loop detected; \(quote(path)) is part of the same file system loop as \(quote(loop.1))."
            )
            return
        }
        guard let folder = opendir(path) else {
            standardError.line("find: \(quote(path)): \(String(cString: strerror(errno)))")
            return
        }
        var names: [String] = []
        while let entry = readdir(folder) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        closedir(folder)
        ancestors.append((identity, path))
        for name in names {
            visitPath(path.hasSuffix("/") ? path + name : path + "/" + name, &ancestors, visit)
        }
        ancestors.removeLast()
    }

    /// find's quoting of names in messages (the locale's quotation marks).
    private func quote(_ path: String) -> String {
        let codeset = String(cString: nl_langinfo(nl_item(CODESET)))
        return codeset == "UTF-8" ? "\u{2018}\(path)\u{2019}" : "'\(path)'"
    }
}
