#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What makes a change of several files of the store whole or absent: before the change writes anything,
/// the journal keeps the files as they are (their bytes, or that they are missing), their index entries
/// and the commit HEAD names. A change that fails is put back from it at once; one that was killed
/// (SIGKILL, SIGTERM, a power cut) is put back by the next command that writes, or by `fsck --fix`.
///
/// It lives in `<git folder>/coffer-journal`, or in `<store>/.coffer-journal` for a store without git.
/// It holds only what the store holds on disk: ciphertexts and recipient lists, never plaintext.
package struct ChangeJournal {
    /// The journal's folder.
    let folder: String
    /// The store's repository, when it has one.
    let repository: GitRepository?
    /// The store's root: folders above it are never the change's.
    let root: String
    /// The manifest's lines so far.
    private var manifest: String
    /// The files kept so far.
    private var kept: Set<String> = []
    /// The folders missing when the change began, which it may make.
    private var madeFolders: Set<String> = []

    /// The journal folders this process has open: a nested write must not take its own change's
    /// journal for one left by a killed process.
    private static let active = Locked<Set<String>>([])

    /// The folder of the journal of `store`: in its git folder, else in the user's private cache folder
    /// (a store without git may be a folder others write to, by a file-sync tool say; a journal there
    /// could name any file for coffer to put back). `nil` when there is no such folder.
    /// Only `creating` makes the cache folder: looking for a journal (at every command's start) writes
    /// nothing.
    static func folder(for store: PasswordStore, creating: Bool = false) -> String? {
        if let gitDirectory = repositoryFolder(store) {
            // A git folder elsewhere (`.git` a file naming it) is used only where no other user can move
            // it or re-point a link to it: else they could keep a journal from being removed and have
            // the next command put an old change back (red team, another local user).
            guard FileSystem.isGuardedFolder(gitDirectory) else { return nil }
            return gitDirectory + "/coffer-journal"
        }
        // Looking for a journal takes the cache folder only when no other user can have swapped it.
        guard let cache = creating ? try? EncryptionPlans.folder() : EncryptionPlans.existingFolder() else {
            return nil
        }
        let name = Hex.upper(Gcrypt.sha1(Array(FileSystem.canonicalPath(store.root).utf8)))
        return cache + "/journal-" + name
    }

    /// The store's git folder, when it has one.
    private static func repositoryFolder(_ store: PasswordStore) -> String? {
        store.git(for: store.root + "/.gpg-id")?.gitDirectory()
    }

    /// Whether `folder` is a journal this user made: a folder of theirs no one else may enter.
    static func isOwn(_ folder: String) -> Bool {
        var info = stat()
        return lstat(folder, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR && info.st_uid == geteuid()
            && info.st_mode & 0o077 == 0
    }

    /// Whether the journal may touch `path`: inside the store, reached through no link that leads out.
    func mayTouch(_ path: String) -> Bool {
        guard !path.pathParts.contains(".."), !path.pathParts.contains(".") else { return false }
        let root = FileSystem.canonicalPath(root)
        // The store's records in its git folder (accepted recipients) are the change's too.
        if let gitDirectory = repository?.gitDirectory().map(FileSystem.canonicalPath),
            path.isPath(inside: gitDirectory),
            !path.dropFirst(gitDirectory.count + 1).contains("/")
        {
            return true
        }
        guard path.isPath(inside: root) else { return false }
        var parent = FileSystem.parent(of: path)
        while FileSystem.kind(parent) == .missing && parent.isPath(inside: root) {
            parent = FileSystem.parent(of: parent)
        }
        guard let real = FileSystem.realPath(parent), let realRoot = FileSystem.realPath(root) else {
            return false
        }
        return real == realRoot || real.isPath(inside: realRoot)
    }

    /// Keeps `paths` (absolute paths of files in the store) as they are now, then returns the journal.
    static func begin(_ store: PasswordStore, paths: [String]) throws -> ChangeJournal {
        guard let folder = folder(for: store, creating: true) else {
            // Why: the git folder is not guarded, or the cache folder cannot be had.
            if let gitDirectory = repositoryFolder(store) {
                throw CofferError(
                    .io,
                    "the store's git folder \(Quoting.quoted(gitDirectory)) (or a folder above it) may be changed "
                        + "by another user; nothing was changed")
            }
            if EncryptionPlans.folderPath() != nil {
                do {
                    _ = try EncryptionPlans.folder()
                } catch let error as CofferError {
                    throw CofferError(error.code, error.message + "; nothing was changed")
                }
            }
            throw CofferError(
                .io, "no private folder for the journal of a change (set HOME); nothing was changed")
        }
        let repository = store.git(for: store.root + "/.gpg-id")
        try? FileSystem.removeTree(folder)
        try FileSystem.makeDirectories(folder, mode: 0o700)
        // The spellings of the root and the git folder the paths are written with: the next command may
        // reach the store by another (a link to it, `PASSWORD_STORE_DIR=$HOME/./store`).
        var manifest = "head \(repository?.resolve("HEAD") ?? "-")\n"
        manifest += "root - 0 \(Hex.upper(Array(plain(store.root).utf8)))\n"
        if let gitDirectory = repository?.gitDirectory() {
            manifest += "gitdir - 0 \(Hex.upper(Array(plain(gitDirectory).utf8)))\n"
        }
        var journal = ChangeJournal(
            folder: folder, repository: repository, root: plain(store.root), manifest: manifest)
        active.withLock { _ = $0.insert(folder) }
        do {
            try journal.add(paths)
        } catch {
            journal.end()
            // Nothing was begun: the folders this process made for the change go too (pass's `mkdir -p`
            // came first), deepest first, when they are empty.
            let made = Set(paths.flatMap { missingFolders(above: $0, root: journal.root) })
            for folder in made.sorted(by: { $0.utf8.count > $1.utf8.count }) { rmdir(folder) }
            throw error
        }
        return journal
    }

    /// Keeps `paths` too, as they are now (before the change writes them).
    ///
    /// A file is kept by a hard link, which needs no room on a full disk: every write of the store puts
    /// a new file in place, so the linked one keeps the old bytes.
    mutating func add(_ paths: [String]) throws {
        var index = kept.count
        var added: [String] = []
        for path in Set(paths.map(Self.plain)).subtracting(kept).sorted() {
            var info = stat()
            let hex = Hex.upper(Array(path.utf8))
            if lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG {
                let copy = folder + "/\(index)"
                if link(path, copy) != 0 {
                    try FileSystem.atomicWrite(copy, bytes: try FileSystem.readFile(path), mode: 0o600)
                }
                manifest += "file \(index) \(String(info.st_mode & 0o7777, radix: 8)) \(hex)\n"
            } else if lstat(path, &info) != 0 {
                manifest += "missing \(index) 0 \(hex)\n"
            } else if (info.st_mode & S_IFMT) == S_IFLNK, let target = FileSystem.linkTargetBytes(path) {
                // A link that a move takes away: its target's spelling is kept, to make it again.
                try FileSystem.atomicWrite(folder + "/\(index)", bytes: target, mode: 0o600)
                manifest += "link \(index) 0 \(hex)\n"
            } else {
                // A folder is not a file this change replaces: it is left as it is.
                continue
            }
            kept.insert(path)
            added.append(path)
            index += 1
            // The folders the change will make for it go when it is put back.
            for folder in Self.missingFolders(above: path, root: root) where !madeFolders.contains(folder) {
                madeFolders.insert(folder)
                manifest += "folder - 0 \(Hex.upper(Array(folder.utf8)))\n"
            }
        }
        if let repository {
            let relative = tracked(Array(kept), in: repository)
            let entries =
                relative.isEmpty
                ? [] : try repository.run(["ls-files", "-s", "-z", "--"] + relative).standardOutput
            try FileSystem.atomicWrite(folder + "/index", bytes: entries, mode: 0o600)
        }
        // The manifest last: a journal without one was never begun, and is only removed.
        try FileSystem.atomicWrite(folder + "/manifest", bytes: Array(manifest.utf8), mode: 0o600)
    }

    /// The folders this process made for the store (``PasswordStore/makeFolders(_:onEvent:)``, as pass's
    /// `mkdir -p` before a write): a change begun after them made them too.
    private static let made = Locked<Set<String>>([])

    /// Notes that this process made `folder`.
    static func noteMade(_ folder: String) {
        made.withLock { _ = $0.insert(plain(folder)) }
    }

    /// Removes the folders this process made for the store that are still empty, deepest first: a
    /// command that failed leaves no folder it made for a write that never happened.
    package static func removeEmptyMadeFolders() {
        let folders = made.withLock { folders in
            defer { folders = [] }
            return folders
        }
        for folder in folders.sorted(by: { $0.utf8.count > $1.utf8.count }) { rmdir(folder) }
    }

    /// The folders above `path`, up to `root`, that do not exist yet or that this process made.
    static func missingFolders(above path: String, root: String) -> [String] {
        var folders: [String] = []
        var parent = FileSystem.parent(of: plain(path))
        while parent.isPath(inside: root),
            FileSystem.kind(parent) == .missing || made.withLock({ $0.contains(parent) })
        {
            folders.append(parent)
            parent = FileSystem.parent(of: parent)
        }
        return folders
    }

    /// Notes `folders`, which the change made (they did not exist before it): they go when it is put back
    /// and they are empty.
    mutating func add(folders: [String]) throws {
        for folder in folders.map(Self.plain) where !madeFolders.contains(folder) {
            madeFolders.insert(folder)
            manifest += "folder - 0 \(Hex.upper(Array(folder.utf8)))\n"
        }
        try FileSystem.atomicWrite(self.folder + "/manifest", bytes: Array(manifest.utf8), mode: 0o600)
    }

    /// Keeps `folders` too (folders of the store a move may take away): putting back makes them again,
    /// with their permission bits, when they are missing.
    mutating func keep(folders: [String]) throws {
        for folder in folders.map(Self.plain) {
            var info = stat()
            guard lstat(folder, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else { continue }
            manifest += "dir - \(String(info.st_mode & 0o777, radix: 8)) \(Hex.upper(Array(folder.utf8)))\n"
        }
        try FileSystem.atomicWrite(self.folder + "/manifest", bytes: Array(manifest.utf8), mode: 0o600)
    }

    /// `path` without the `//` and `/./` that pass's spellings leave in it (`$PREFIX//.gpg-id`).
    static func plain(_ path: String) -> String {
        var path = path
        while path.contains("/./") { path = path.replacing("/./", with: "/") }
        while path.contains("//") { path = path.replacing("//", with: "/") }
        while path.hasSuffix("/.") { path.removeLast(2) }
        return path
    }

    /// The paths of `paths` in the work tree (not in the git folder), as git names them.
    private func tracked(_ paths: [String], in repository: GitRepository) -> [String] {
        // Paths are spelled as the store was, or canonical (put back from a journal).
        let folders = [repository.directory, FileSystem.canonicalPath(repository.directory)]
        let gitDirectory = repository.gitDirectory() ?? repository.directory + "/.git"
        let gitFolders = [gitDirectory, FileSystem.canonicalPath(gitDirectory)]
        return paths.compactMap { path in
            guard !gitFolders.contains(where: { path.isPath(inside: $0) }),
                let folder = folders.first(where: { path.isPath(inside: $0) })
            else { return nil }
            return String(path.droppingPathPrefix(folder))
        }
    }

    /// Whether the index holds, for a path the change keeps, something HEAD does not.
    func leftStaged() -> Bool {
        guard let repository else { return false }
        let relative = tracked(Array(kept), in: repository)
        guard !relative.isEmpty,
            let compared = try? repository.runUnchecked(
                ["diff", "--cached", "--quiet", "HEAD", "--"] + relative)
        else { return false }
        return compared.status == 1
    }

    /// Removes the folders the change made that are empty, deepest first.
    func removeEmptyMadeFolders() {
        for folder in madeFolders.sorted(by: { $0.utf8.count > $1.utf8.count }) { rmdir(folder) }
    }

    /// The change is whole: the journal goes.
    func end() {
        try? FileSystem.removeTree(folder)
        Self.active.withLock { _ = $0.remove(folder) }
    }

    /// Puts every file back as the journal has it, the index and HEAD too, then removes the journal.
    /// Returns how many files (and links) it put back or took away.
    @discardableResult
    func rollBack() throws -> Int {
        defer { Self.active.withLock { _ = $0.remove(folder) } }
        // Checked again: a folder above it that others may write lets them swap the journal meanwhile.
        guard Self.isOwn(folder) else {
            throw CofferError(
                .io, "the journal of the change is no longer a private folder of yours", path: folder,
                errno: EPERM)
        }
        guard let bytes = try? FileSystem.readFile(folder + "/manifest") else {
            try? FileSystem.removeTree(folder)
            return 0
        }
        var head: String?
        var paths: [String] = []
        var folders: [String] = []
        var spelled: (root: String?, gitDirectory: String?) = (nil, nil)
        let gitDirectory = repository?.gitDirectory().map(FileSystem.canonicalPath)
        let canonicalRoot = FileSystem.canonicalPath(root)
        // A path with the recorded root or git folder swapped for their canonical paths.
        func respelled(_ path: String) -> String {
            if let recorded = spelled.gitDirectory, let gitDirectory, path.isPath(inside: recorded) {
                return gitDirectory + String(path.utf8.dropFirst(recorded.utf8.count))!
            }
            if let recorded = spelled.root, path.isPath(inside: recorded) {
                return canonicalRoot + String(path.utf8.dropFirst(recorded.utf8.count))!
            }
            return path
        }
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            let fields = line.split(separator: " ").map(String.init)
            if fields.count == 2, fields[0] == "head" {
                head = fields[1] == "-" ? nil : fields[1]
                continue
            }
            guard fields.count == 4, let name = Hex.bytes(fields[3]) else { continue }
            let recorded = String(decoding: name, as: UTF8.self)
            if fields[0] == "root" || fields[0] == "gitdir" {
                if fields[0] == "root" { spelled.root = recorded } else { spelled.gitDirectory = recorded }
                continue
            }
            let path = respelled(recorded)
            // Nothing outside the store, whatever the manifest says.
            guard mayTouch(path) else { continue }
            if fields[0] == "folder" {
                folders.append(path)
                continue
            }
            if fields[0] == "dir" {
                // A folder the change took away is made again, its permission bits only.
                if FileSystem.kind(path) == .missing {
                    try FileSystem.makeDirectories(path, mode: (mode_t(fields[2], radix: 8) ?? 0o700) & 0o777)
                }
                continue
            }
            paths.append(path)
            if fields[0] == "file" {
                let copy = folder + "/" + fields[1]
                // Already put back by an earlier roll-back that was itself cut short.
                guard FileSystem.kind(copy) == .file else { continue }
                try FileSystem.makeDirectories(FileSystem.parent(of: path), mode: 0o700)
                // Permission bits only, whatever the manifest says.
                let mode = (mode_t(fields[2], radix: 8) ?? 0o600) & 0o777
                chmod(copy, mode)
                if rename(copy, path) != 0 {
                    try FileSystem.atomicWrite(
                        path, bytes: try FileSystem.readFile(copy), mode: mode
                    )
                }
            } else if fields[0] == "link" {
                // A link the change took away is made again where it was; one still there is left.
                guard FileSystem.kind(path) == .missing,
                    let target = try? FileSystem.readFile(folder + "/" + fields[1])
                else { continue }
                try FileSystem.makeDirectories(FileSystem.parent(of: path), mode: 0o700)
                // The target's bytes as they were, NUL-terminated: a name that is not UTF-8 stays as it is.
                let made = (target + [0]).withUnsafeBufferPointer { bytes in
                    bytes.withMemoryRebound(to: CChar.self) { symlink($0.baseAddress!, path) }
                }
                if made != 0 {
                    throw CofferError(.io, "cannot make the link again", path: path, errno: errno)
                }
            } else if fields[0] == "missing",
                [FileSystem.Kind.file, .symlink].contains(FileSystem.kind(path))
            {
                // What the change made (a file, or a link a copy brought) goes.
                try FileSystem.remove(path)
            }
        }
        // A write killed half-way left its temporary file beside the file it was to replace.
        for folder in Set(paths.map(FileSystem.parent(of:)) + folders) {
            for name in (try? FileSystem.contents(of: folder, sorted: false)) ?? []
            where name.hasPrefix(FileSystem.temporaryMarker) {
                unlink(folder + "/" + name)
            }
        }
        // Deepest first: a folder the change made goes once it is empty again.
        for folder in folders.sorted(by: { $0.utf8.count > $1.utf8.count }) { rmdir(folder) }
        if let repository {
            // The killed process's git may still be finishing.
            try repository.waitForOtherGit()
            repository.removeStaleLocks()
            // Commits the change made go: HEAD and the branch back to where they were.
            if let head, repository.resolve("HEAD") != head {
                try repository.run(["reset", "--quiet", "--soft", head])
            }
            let relative = tracked(paths, in: repository)
            if !relative.isEmpty {
                let saved = (try? FileSystem.readFile(folder + "/index")) ?? []
                let before = Set(
                    saved.split(separator: 0).compactMap { entry in
                        entry.firstIndex(of: 9).map {
                            String(decoding: entry[entry.index(after: $0)...], as: UTF8.self)
                        }
                    })
                _ = try repository.runUnchecked(["reset", "--quiet", "--"] + relative)
                let gone = relative.filter { !before.contains($0) }
                if !gone.isEmpty {
                    _ = try repository.runUnchecked(["update-index", "--force-remove", "--"] + gone)
                }
                if !saved.isEmpty {
                    try repository.run(["update-index", "-z", "--index-info"], input: saved)
                }
            }
        }
        try FileSystem.removeTree(folder)
        return paths.count
    }

    /// Puts back a change a killed process left half done, when there is one (not one this process is
    /// making); returns how many files it put back, `nil` when none.
    static func recover(_ store: PasswordStore) throws -> Int? {
        guard let folder = folder(for: store), isOwn(folder), !active.withLock({ $0.contains(folder) }) else {
            return nil
        }
        let count = try ChangeJournal(
            folder: folder, repository: store.git(for: store.root + "/.gpg-id"), root: plain(store.root),
            manifest: ""
        ).rollBack()
        return count == 0 ? nil : count
    }
}

extension PasswordStore {
    /// Runs `change`, which writes, removes and commits `paths` (absolute paths of files in the store),
    /// so that it is whole or absent: when it fails, every file, the index and HEAD are put back as they
    /// were, and the error says so; when the process is killed, the next write puts them back.
    ///
    /// `change` may add the files it finds it will write (``ChangeJournal/add(_:)``) before writing them.
    /// With `undoingFailures` false, a failure leaves what `change` did (a single entry's write whose
    /// commit a hook refused stays written, as under pass); a kill is still put back.
    package func whole<Result>(
        _ paths: [String], undoingFailures: Bool = true, _ change: (inout ChangeJournal) throws -> Result
    ) throws -> Result {
        try withStoreLock {
            var journal = try ChangeJournal.begin(self, paths: paths)
            do {
                let result = try change(&journal)
                journal.end()
                return result
            } catch {
                // A failed single write stays made, as under pass, when git could take it out of the index
                // (on a full disk it may not): else it is put back like the others.
                if !undoingFailures && !journal.leftStaged() {
                    // A write that put nothing in place (a full disk) leaves none of the folders made for it.
                    journal.removeEmptyMadeFolders()
                    journal.end()
                    throw error
                }
                do {
                    try journal.rollBack()
                } catch {
                    // The journal stays for the next command to put back.
                    throw Self.undone(error, "the next command puts the change back")
                }
                throw Self.undone(error)
            }
        }
    }

    /// `error` saying `what` happened to the change instead of that it is made but not committed.
    static func undone(_ error: any Error, _ what: String = "nothing was changed") -> any Error {
        guard let error = error as? CofferError else { return error }
        let made = "; the change is made but not committed"
        let message =
            error.message.hasSuffix(made)
            ? String(error.message.dropLast(made.count)) + "; " + what
            : error.message + " (\(what))"
        return CofferError(
            error.code, message, paths: error.paths, errno: error.errno, exitStatus: error.exitStatus)
    }

    /// Puts back a change a killed process left half done, when its journal is there (told to
    /// ``notices``); nothing when there is none or it cannot be put back now (the next write tries again).
    public func putBackInterruptedChange() {
        guard let folder = ChangeJournal.folder(for: self), FileSystem.kind(folder) == .directory else {
            return
        }
        _ = try? withStoreLock {}
    }

    /// Runs `body` under the store's lock, after putting back a change a killed process left half done
    /// (told to ``notices``).
    package func withStoreLock<Result>(_ body: () throws -> Result) throws -> Result {
        try StoreLock.withLock(root: root, timeout: configuration.lockTimeout) {
            if let files = try ChangeJournal.recover(self) {
                notices?(.undidInterruptedChange(files: files))
            }
            return try body()
        }
    }
}
