#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The shell's file tests, for the places where pass decides by them.
enum FileKind {
    /// `[[ -e PATH ]]`: something is there (a symlink counts when it leads somewhere).
    static func exists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    /// `[[ -f PATH ]]`.
    static func isFile(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFREG
    }

    /// `[[ -d PATH ]]`.
    static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
    }

    /// `[[ -x PATH ]]`.
    static func isExecutable(_ path: String) -> Bool { access(path, X_OK) == 0 }
}
