#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension FileSystem {
    /// Whether no other user can change where `path`, as spelled, leads: each folder the spelling goes
    /// through (links followed, as the kernel follows them) belongs to this user or to root and may be
    /// written by no one else unless it is sticky (as `/tmp`), and a link met in a folder others may
    /// write belongs to this user or to root. What `path` names itself is not judged, nor what is
    /// missing at its end (the user makes that).
    ///
    /// Checking the real path alone is not enough: a link another user owns in `/tmp` may point at the
    /// user's own folder when checked and elsewhere a moment later.
    package static func leadsOnlyThroughGuardedFolders(_ path: String) -> Bool {
        // A relative path goes on from the current folder, by its real path.
        var spelled = path
        if !path.startsWithSlash {
            guard let here = realPath(".") else { return false }
            spelled = here + "/" + path
        }
        var pending = spelled.split(separator: "/").map(String.init)
        // A real folder: no link in its spelling.
        var current = "/"
        var links = 0
        while !pending.isEmpty {
            let name = pending.removeFirst()
            if name == "." { continue }
            var folder = stat()
            guard lstat(current, &folder) == 0, folder.st_mode & S_IFMT == S_IFDIR,
                folder.st_uid == geteuid() || folder.st_uid == 0
            else { return false }
            let othersWrite = folder.st_mode & 0o022 != 0
            if othersWrite && folder.st_mode & S_ISVTX == 0 { return false }
            if name == ".." {
                current = current.parentPath
                continue
            }
            let next = current == "/" ? "/" + name : current + "/" + name
            var item = stat()
            guard lstat(next, &item) == 0 else { return true }
            if item.st_mode & S_IFMT == S_IFLNK {
                if othersWrite && item.st_uid != geteuid() && item.st_uid != 0 { return false }
                links += 1
                guard links <= 40, let target = linkTargetBytes(next), !target.isEmpty else { return false }
                let spelled = String(decoding: target, as: UTF8.self)
                if spelled.startsWithSlash { current = "/" }
                pending = spelled.split(separator: "/").map(String.init) + pending
                continue
            }
            if pending.isEmpty { return true }
            guard item.st_mode & S_IFMT == S_IFDIR else { return true }
            current = next
        }
        return true
    }

    /// Whether `folder` and every folder above it, as spelled, can be changed by no other user: the
    /// spelling leads only through guarded folders (``leadsOnlyThroughGuardedFolders(_:)``), and the
    /// folder it reaches is one too.
    package static func isGuardedFolder(_ folder: String) -> Bool {
        guard leadsOnlyThroughGuardedFolders(folder), let real = realPath(folder) else { return false }
        var info = stat()
        return lstat(real, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
            && (info.st_uid == geteuid() || info.st_uid == 0)
            && (info.st_mode & 0o022 == 0 || info.st_mode & S_ISVTX != 0)
    }
}
