#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The POSIX file operations the store needs, in one place, with errors that name the path.
package enum FileSystem {
    /// What is at a path, without following a final symlink.
    package enum Kind: Equatable {
        case missing, file, directory, symlink, other
    }

    /// What is at a path, without following a final symlink (`lstat`).
    package static func kind(_ path: String) -> Kind { kind(path, followingSymlinks: false) }

    /// What a path resolves to after following symlinks.
    package static func resolvedKind(_ path: String) -> Kind { kind(path, followingSymlinks: true) }

    /// What is at `path` as `stat` (following symlinks, so never `.symlink`) or `lstat` sees it.
    private static func kind(_ path: String, followingSymlinks: Bool) -> Kind {
        var info = stat()
        guard (followingSymlinks ? stat(path, &info) : lstat(path, &info)) == 0 else { return .missing }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return .file
        case S_IFDIR: return .directory
        case S_IFLNK: return .symlink
        default: return .other
        }
    }

    /// `[[ -d PATH ]]`: a folder, or a symlink to one.
    package static func isDirectory(_ path: String) -> Bool { resolvedKind(path) == .directory }
    /// `[[ -f PATH ]]`: a regular file, or a symlink to one.
    package static func isFile(_ path: String) -> Bool { resolvedKind(path) == .file }
    /// `[[ -e PATH ]]`: something is there (a symlink counts when it leads somewhere).
    package static func exists(_ path: String) -> Bool { resolvedKind(path) != .missing }
    /// `[[ -x PATH ]]`.
    package static func isExecutable(_ path: String) -> Bool { access(path, X_OK) == 0 }

    static func error(_ what: String, _ path: String, _ number: Int32 = errno) -> CofferError {
        CofferError(.io, what, path: path, errno: number)
    }

    /// Reads a whole file.
    package static func readFile(_ path: String) throws -> [UInt8] {
        let descriptor = try SystemCall.open(path, O_RDONLY)
        defer { SystemCall.close(descriptor) }
        return try SystemCall.readAll(descriptor, path: path)
    }

    /// Writes all of `bytes` to an open descriptor.
    static func writeAll(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws {
        try SystemCall.writeAll(descriptor, bytes, path: path)
    }

    /// Replaces `path` atomically: a temporary file in the same folder, fsync, rename, fsync of the folder.
    ///
    /// On failure the old file is intact and the temporary file is removed.
    package static func atomicWrite(_ path: String, bytes: [UInt8], mode: mode_t) throws {
        let directory = parent(of: path)
        var temporary = ""
        var descriptor: Int32 = -1
        for _ in 0..<16 {
            // The temporary name does not repeat the file's: a name part may be up to 251 bytes long
            // (pass's limit with `.gpg`), and `.NAME.coffer-tmp-XXXX` would exceed NAME_MAX.
            temporary = directory + "/" + temporaryMarker + randomToken()
            descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode)
            if descriptor >= 0 || errno != EEXIST { break }
        }
        guard descriptor >= 0 else { throw error("cannot create a file in", directory) }
        var succeeded = false
        defer {
            if descriptor >= 0 { close(descriptor) }
            if !succeeded { unlink(temporary) }
        }
        fchmod(descriptor, mode)
        try bytes.withUnsafeBytes { try writeAll(descriptor, $0, path: temporary) }
        guard fsync(descriptor) == 0 else { throw error("cannot sync", temporary) }
        guard close(descriptor) == 0 else {
            descriptor = -1
            throw error("cannot close", temporary)
        }
        descriptor = -1
        guard rename(temporary, path) == 0 else { throw error("cannot replace", path) }
        succeeded = true
        syncDirectory(directory)
    }

    /// The prefix that marks this program's temporary files (`.coffer-tmp-XXXX`).
    package static let temporaryMarker = ".coffer-tmp-"

    package static func syncDirectory(_ path: String) {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        fsync(descriptor)
        close(descriptor)
    }

    /// Creates `path` and its missing parents with `mode`.
    package static func makeDirectories(_ path: String, mode: mode_t) throws {
        if isDirectory(path) { return }
        let above = parent(of: path)
        if above != path && !above.isEmpty { try makeDirectories(above, mode: mode) }
        if mkdir(path, mode) != 0 {
            if errno == EEXIST { return }
            throw error("cannot create folder", path)
        }
        chmod(path, mode)
    }

    /// The entries of a folder (no `.` and `..`), in byte order of their names, or in directory order.
    ///
    /// - Throws: ``CofferError/Code/io`` naming the folder when it cannot be read.
    package static func contents(of path: String, sorted: Bool = true) throws -> [String] {
        guard let names = FileTree.names(of: Array(path.utf8))?.map({ String(decoding: $0, as: UTF8.self) })
        else {
            throw error("cannot read folder", path)
        }
        return sorted ? names.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) } : names
    }

    /// Removes a file or an empty folder.
    package static func remove(_ path: String) throws {
        if FileSystem.kind(path) == .directory {
            guard rmdir(path) == 0 else { throw error("cannot remove", path) }
        } else {
            guard unlink(path) == 0 else { throw error("cannot remove", path) }
        }
    }

    /// Removes a file or a folder with everything in it; symlinks are removed, never followed.
    package static func removeTree(_ path: String) throws {
        if kind(path) == .directory {
            try FileTree.walk(path) { child, item in
                if !item.isFolder { try remove(child) }
                return true
            } leave: { child, _ in
                try remove(child)
            } failed: { child, failure in
                if case .unreadable(let number) = failure { throw error("cannot read folder", child, number) }
            }
        }
        if kind(path) != .missing { try remove(path) }
    }

    package static func parent(of path: String) -> String { path.parentPath }

    /// A random hexadecimal token for temporary names.
    package static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return String(generator.next() as UInt64, radix: 16)
    }

    /// Where a symlink points, or `nil` when `path` is not one.
    package static func linkTarget(_ path: String) -> String? {
        linkTargetBytes(path).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The bytes a symlink holds, as `readlink` gives them, or `nil` when `path` is not one.
    package static func linkTargetBytes(_ path: String) -> [UInt8]? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count >= 0 else { return nil }
        return buffer[0..<count].map { UInt8(bitPattern: $0) }
    }

    /// Whether two paths name the same file (after following symlinks), as `mv` and `cp` decide it.
    package static func isSameFile(_ first: String, _ second: String) -> Bool {
        var one = stat()
        var other = stat()
        guard stat(first, &one) == 0, stat(second, &other) == 0 else { return false }
        return one.st_dev == other.st_dev && one.st_ino == other.st_ino
    }

    /// `path` with its longest existing part resolved (symlinks, `.`), and the rest appended as spelled.
    package static func canonicalPath(_ path: String) -> String {
        var existing = path
        var rest: [Substring] = []
        while realPath(existing) == nil {
            let above = parent(of: existing)
            guard above != existing, existing.utf8.contains(0x2F) else { return path }
            rest.insert(Substring(existing.lastPathPart), at: 0)
            existing = above
        }
        let resolved = realPath(existing) ?? existing
        return ([Substring(resolved)] + rest.filter { !$0.isEmpty && $0 != "." }).joined(separator: "/")
    }

    /// The canonical absolute path (symlinks resolved), or `nil` when it does not exist.
    package static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
