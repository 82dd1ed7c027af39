#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension PasswordStore {
    // MARK: - Removing

    /// Removes the entry or (with `recursive`) the folder `name`, then any folders left empty.
    ///
    /// Like pass, `name/` or a name with no entry means the folder. Commits `Remove NAME from store.`
    public func remove(_ name: String, recursive: Bool, onEvent: (StoreEvent) -> Void = { _ in }) throws {
        try withStoreLock {
            try EntryName.validate(name)
            // rm refuses `.`; pass would run `rm -rf "$PREFIX/"` for an empty name and lose the store.
            if EntryName.isStoreRoot(name) || EntryName.endsInDot(name) {
                let spelled = root + "/" + (name.isEmpty || name.endsWithSlash ? name : name + "/")
                throw CofferError(
                    .invalidArgument, "refusing to remove '.' or '..' directory: skipping '\(spelled)'",
                    paths: [spelled])
            }
            let folder = root + "/" + EntryName.trimmed(name)
            var target = entryPath(name)
            let isFolderTarget =
                (FileSystem.isFile(target) && FileSystem.isDirectory(folder) && name.endsWithSlash)
                || !FileSystem.isFile(target)
            // pass's `${passdir%/}/`: the store itself is `PREFIX/`, not `PREFIX//`.
            if isFolderTarget { target = folder.endsWithSlash ? folder : folder + "/" }
            guard FileSystem.kind(EntryName.trimmed(target)) != .missing else {
                throw CofferError(.notFound, "\(name) is not in the password store.")
            }
            try checkInsideStore(EntryName.trimmed(target))
            try git(for: target)?.ensureNoUnfinishedOperation()
            // A removal killed before its commit is put back by the next write.
            // Links and folders too: `rm -r` takes them away with the files. A folder's removal is a
            // change of several files: whole or absent, its commit included; an entry's stays made when
            // only its commit fails, as any single write.
            let below = try Self.itemsBelow(EntryName.trimmed(target))
            try whole(below.files + below.links, undoingFailures: isFolderTarget) { journal in
                try journal.keep(folders: below.folders)
                try removeAndCommit(
                    name, target: target, folder: folder, isFolder: isFolderTarget,
                    recursive: recursive, onEvent: onEvent)
            }
        }
    }

    private func removeAndCommit(
        _ name: String, target: String, folder: String, isFolder isFolderTarget: Bool, recursive: Bool,
        onEvent: (StoreEvent) -> Void
    ) throws {
        if isFolderTarget && FileSystem.kind(folder) == .directory {
            guard recursive else {
                throw CofferError(.invalidArgument, "cannot remove '\(target)': Is a directory")
            }
            try removeTree(folder, spelled: target, onEvent: onEvent)
        } else {
            try FileSystem.remove(EntryName.trimmed(target))
            onEvent(.removedFile(target))
        }
        // Like pass's `rmdir -p "${passfile%/*}"`, also when git fails: from an entry's folder up, but
        // for a folder from the folder itself, which is gone, so its parents stay.
        defer {
            removeEmptyFolders(from: target.utf8.contains(0x2F) ? target.parentPath : target)
        }
        try commit([target], "Remove \(name) from store.")
    }

    /// Removes the entries `names` and the folders they leave empty, committed as one change with
    /// `commitMessage`; names without an entry are skipped.
    ///
    /// When removing one fails, the entries already removed are still committed before the error is thrown.
    package func remove(entries names: [String], commitMessage: String) throws {
        try withStoreLock {
            for name in names { try EntryName.validate(name) }
            let paths = names.map(entryPath).filter(FileSystem.isFile)
            guard let first = paths.first else { return }
            for path in paths { try checkInsideStore(path) }
            try git(for: first)?.ensureNoUnfinishedOperation()
            var removed: [String] = []
            var failure: (any Error)?
            for path in paths {
                do {
                    try FileSystem.remove(path)
                    removed.append(path)
                } catch {
                    failure = error
                    break
                }
            }
            defer {
                for folder in Set(removed.map(FileSystem.parent(of:))) { removeEmptyFolders(from: folder) }
            }
            if !removed.isEmpty { try commit(removed, commitMessage) }
            if let failure { throw failure }
        }
    }

    /// One entry's part of a change of several entries (``change(_:commitMessage:)``).
    package enum EntryChange {
        /// Entry `name` becomes what the closure makes of its plaintext (`nil` when it is new).
        case set(String, (SecureBytes?) throws -> SecureBytes)
        /// Entry `name` goes (nothing when it is not there).
        case remove(String)

        var name: String {
            switch self {
            case .set(let name, _), .remove(let name): name
            }
        }
    }

    /// Writes and removes several entries as one change, committed with `commitMessage`: whole or
    /// absent, the commit included. Every new text is encrypted before any file is touched; entries that
    /// are links are refused.
    package func change(_ changes: [EntryChange], commitMessage: String) throws {
        try withStoreLock {
            var writes: [(path: String, ciphertext: [UInt8])] = []
            var removals: [String] = []
            for change in changes {
                let name = change.name
                try validateNewName(name)
                let path = entryPath(name)
                try checkInsideStore(path)
                let kind = FileSystem.kind(path)
                guard kind == .file || kind == .missing else {
                    throw CofferError(
                        .invalidName, "\(Quoting.quoted(name)) is not a plain file; nothing was changed",
                        paths: [name])
                }
                switch change {
                case .remove:
                    if kind == .file { removals.append(path) }
                case .set(_, let make):
                    if kind == .file {
                        let version = try readVersion(name)
                        let text = try make(version.plaintext)
                        writes.append(
                            (path, try encryptForRewrite(text, name: name, existing: version.ciphertext)))
                    } else {
                        writes.append((path, try encryptForWrite(try make(nil), name: name)))
                    }
                }
            }
            let paths = writes.map(\.path) + removals
            guard let first = paths.first else { return }
            try git(for: first)?.ensureNoUnfinishedOperation()
            // After the change or its undoing: a folder that still holds a file put back stays.
            defer {
                for folder in Set(removals.map(FileSystem.parent(of:))) { removeEmptyFolders(from: folder) }
            }
            try whole(paths) { _ in
                for write in writes {
                    try FileSystem.makeDirectories(
                        FileSystem.parent(of: write.path), mode: configuration.folderMode)
                    removeStrayTemporaryFiles(in: FileSystem.parent(of: write.path))
                    try FileSystem.atomicWrite(
                        write.path, bytes: write.ciphertext, mode: configuration.fileMode)
                    try? recordWritten(write.ciphertext, at: write.path)
                }
                for path in removals { try FileSystem.remove(path) }
                try commit(paths, commitMessage)
            }
        }
    }

    /// Runs `change`, which writes or removes the entries `names` and commits, under the store's lock. When
    /// it fails because git did not commit (a hook refused, git was stopped), the entries are put back as
    /// they were: changed or removed files get their old bytes, new ones go with the folders they leave
    /// empty. A failure then means that nothing changed, and a retry makes no second copy.
    package func undoingUncommitted<Result>(_ names: [String], _ change: () throws -> Result) throws -> Result
    {
        try withStoreLock {
            var saved: [(path: String, bytes: [UInt8]?, mode: mode_t)] = []
            for name in names {
                try EntryName.validate(name)
                var path = entryPath(name)
                if FileSystem.kind(path) == .symlink, let resolved = FileSystem.realPath(path) {
                    path = resolved
                }
                // What is put back on failure is put back inside the store.
                try checkInsideStore(path)
                var info = stat()
                let isFile = lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
                saved.append(
                    (
                        path, isFile ? try FileSystem.readFile(path) : nil,
                        isFile ? info.st_mode & 0o7777 : configuration.fileMode
                    ))
            }
            do {
                return try change()
            } catch let error as CofferError where error.code == .git {
                for entry in saved {
                    let current = FileSystem.isFile(entry.path) ? try? FileSystem.readFile(entry.path) : nil
                    guard current != entry.bytes else { continue }
                    if let bytes = entry.bytes {
                        try FileSystem.makeDirectories(
                            FileSystem.parent(of: entry.path), mode: configuration.folderMode)
                        try FileSystem.atomicWrite(entry.path, bytes: bytes, mode: entry.mode)
                    } else {
                        try FileSystem.remove(entry.path)
                        removeEmptyFolders(from: FileSystem.parent(of: entry.path))
                    }
                }
                throw Self.undone(error, "the change is undone")
            }
        }
    }

    /// Removes a folder depth first in directory order, reporting each item as `rm -rv` does.
    private func removeTree(_ path: String, spelled: String, onEvent: (StoreEvent) -> Void) throws {
        // The walk's paths start with `path` and a slash (none added when `path` ends with one).
        let skipped = path.endsWithSlash ? path.utf8.count : path.utf8.count + 1
        let spelledPrefix = spelled.endsWithSlash ? spelled : spelled + "/"
        func spelling(_ child: String) -> String {
            spelledPrefix + String(decoding: child.utf8.dropFirst(skipped), as: UTF8.self)
        }
        try FileTree.walk(path) { child, item in
            guard !item.isFolder else { return true }
            try FileSystem.remove(child)
            onEvent(.removedFile(spelling(child)))
            return false
        } leave: { child, _ in
            try FileSystem.remove(child)
            onEvent(.removedFolder(spelling(child)))
        } failed: { child, failure in
            if case .unreadable(let number) = failure {
                throw CofferError(.io, "cannot read folder", path: child, errno: number)
            }
        }
        try FileSystem.remove(path)
        onEvent(.removedFolder(spelled))
    }

    /// Removes `path` and its parents while they are empty, never above the store root (`rmdir -p`), nor
    /// a folder that a symlink on the way leads to outside the store.
    package func removeEmptyFolders(from path: String) {
        var current = path
        while current == root || current.isPath(inside: root) {
            guard (try? checkInsideStore(current)) != nil, rmdir(current) == 0 else { return }
            current = FileSystem.parent(of: current)
        }
    }

    // MARK: - Folders

    /// `mkdir -p -v PATH`: creates the folder `path` and its missing parents with the store's folder mode.
    ///
    /// Each created folder is reported as coreutils spells it: a parent as `path` up to the end of that
    /// component (`/s//a` for `/s//a/b`), the last one as `path` itself, trailing slashes included.
    /// pass runs this before every write (`mkdir -p -v "$PREFIX/$(dirname -- NAME)"`), so the command line
    /// calls it where pass does. Nothing is made when a symlink on the way leads outside the store.
    package func makeFolders(_ path: String, onEvent: (StoreEvent) -> Void = { _ in }) throws {
        try checkInsideStore(path)
        let bytes = Array(path.utf8)
        var prefixes: [String] = []
        var index = 0
        while index < bytes.count {
            while index < bytes.count && bytes[index] == UInt8(ascii: "/") { index += 1 }
            if index == bytes.count { break }
            while index < bytes.count && bytes[index] != UInt8(ascii: "/") { index += 1 }
            prefixes.append(String(decoding: bytes[..<index], as: UTF8.self))
        }
        for (position, prefix) in prefixes.enumerated() where !FileSystem.isDirectory(prefix) {
            if mkdir(prefix, configuration.folderMode) != 0 {
                if errno == EEXIST && FileSystem.isDirectory(prefix) { continue }
                throw CofferError(
                    .io, "cannot create directory", path: prefix, errno: errno)
            }
            chmod(prefix, configuration.folderMode)
            // A change begun later in this process goes with the folders made for it when it is put back.
            ChangeJournal.noteMade(prefix)
            onEvent(.createdFolder(position == prefixes.count - 1 ? path : prefix))
        }
    }
}
