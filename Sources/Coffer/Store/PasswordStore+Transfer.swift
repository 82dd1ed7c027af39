#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension PasswordStore {
    /// Moves (renames) an entry or folder, re-encrypting what lands under other recipients.
    ///
    /// `overwrite` is asked before replacing an existing entry; `nil` means replace. Commits
    /// `Rename OLD to NEW.` Nothing changes unless the whole move can be made: every entry that needs
    /// other recipients at its new place is encrypted for them before the first file moves.
    public func move(
        _ source: String, to destination: String, overwrite: ((String) -> Bool)? = nil,
        onEvent: (StoreEvent) -> Void = { _ in }
    ) throws {
        try withStoreLock {
            try transfer(source, to: destination, copy: false, overwrite: overwrite, onEvent: onEvent)
        }
    }

    /// Copies an entry or folder, re-encrypting what lands under other recipients. Commits `Copy OLD to NEW.`
    ///
    /// As with ``move(_:to:overwrite:onEvent:)``, nothing changes unless the whole copy can be made.
    public func copy(
        _ source: String, to destination: String, overwrite: ((String) -> Bool)? = nil,
        onEvent: (StoreEvent) -> Void = { _ in }
    ) throws {
        try withStoreLock {
            try transfer(source, to: destination, copy: true, overwrite: overwrite, onEvent: onEvent)
        }
    }

    /// What a move or copy will do, worked out before anything changes.
    private struct TransferPlan {
        /// The file or folder moved or copied.
        var source: String
        /// Where it lands (inside `destination` when that is a folder).
        var target: String
        /// The new ciphertext of every entry whose recipients differ at its place after the transfer, by
        /// the path it has then.
        var reencrypted: [String: [UInt8]] = [:]
        /// The key ids of each re-encrypted entry, by the path it has then (for the events).
        var keyIDs: [String: [String]] = [:]
        /// Where the source's entries land.
        var landing: Set<String> = []
        /// Where entries land that were not written for the folder they came from (they keep their
        /// origins).
        var foreign: Set<String> = []
    }

    private func transfer(
        _ source: String, to destination: String, copy: Bool, overwrite: ((String) -> Bool)?,
        onEvent: (StoreEvent) -> Void
    ) throws {
        try EntryName.validate(source)
        try validateNewName(destination)
        if EntryName.isStoreRoot(source) || EntryName.endsInDot(source) {
            throw CofferError(
                .intoItself, "cannot move or copy the folder \(source) itself", paths: [root + "/" + source])
        }
        var oldPath = root + "/" + EntryName.trimmed(source)
        var oldFolder = oldPath
        let oldIsFolder =
            (FileSystem.isFile(oldPath + ".gpg") && FileSystem.isDirectory(oldPath) && source.endsWithSlash)
            || !FileSystem.isFile(oldPath + ".gpg")
        if !oldIsFolder {
            oldFolder = FileSystem.parent(of: oldPath)
            oldPath += ".gpg"
        }
        guard FileSystem.kind(oldPath) != .missing else {
            throw CofferError(.notFound, "\(source) is not in the password store.")
        }
        var newPath = root + "/" + destination
        try checkInsideStore(newPath)
        try git(for: oldPath)?.ensureNoUnfinishedOperation()
        try git(for: newPath)?.ensureNoUnfinishedOperation()
        let sourceIsFolder = FileSystem.isDirectory(oldPath)
        // pass's `mkdir -p -v "${new_path%/*}"` makes a destination spelled with a final slash a folder.
        let destinationIsFolder = FileSystem.isDirectory(newPath) || newPath.endsWithSlash
        if !(sourceIsFolder || destinationIsFolder) { newPath += ".gpg" }
        // Like mv and cp: a destination that is a folder receives the source inside it.
        var target = newPath
        if destinationIsFolder {
            let base = EntryName.trimmed(oldPath).lastPathPart
            target = newPath.endsWithSlash ? newPath + base : newPath + "/" + base
        }
        // Nothing is written or removed through a symlink that leads out of the store: not in the
        // source's folder (a move takes the source away), nor in the target (a copy fills it, a folder
        // receives what is moved into it; a move replaces a link to a file as a link).
        if !copy { try checkInsideStore(FileSystem.parent(of: oldPath)) }
        // Nor through a link to a folder on the source's way, in a store with git (it tracks nothing there).
        try checkNoFolderLink(above: oldPath)
        try checkInsideStore(copy || FileSystem.isDirectory(target) ? target : FileSystem.parent(of: target))
        if let refusal = Self.refusal(moving: oldPath, to: target, copy: copy) {
            // mv and cp refuse after pass has made the destination's folders.
            try makeFolders(FileSystem.parent(of: newPath), onEvent: onEvent)
            throw refusal
        }
        // A folder's accepted recipients go where it goes, as its `.gpg-id` files do.
        var acceptance = try acceptance(at: newPath)
        if sourceIsFolder {
            acceptance?.accepted.transfer(
                from: String(oldPath.droppingPathPrefix(root)), to: String(target.droppingPathPrefix(root)),
                copy: copy)
        }
        let plan = try plan(
            TransferPlan(source: oldPath, target: target), destination: destinationIsFolder ? newPath : nil,
            copy: copy, acceptance: acceptance)

        // What makeFolders makes: the folder that receives the target and those above it.
        let made = ChangeJournal.missingFolders(
            above: FileSystem.parent(of: newPath) + "/-", root: ChangeJournal.plain(root))
        // Whole or absent: every file the transfer takes, replaces or makes, and the commits.
        // Links go along with the files (a move takes them away, a copy makes new ones), and the
        // folders below a folder are made where it lands.
        let below = try Self.itemsBelow(oldPath)
        let sources = below.files + below.links
        func landed(_ path: String) -> String { target + String(path.utf8.dropFirst(oldPath.utf8.count))! }
        let landing = sources.map(landed)
        // Entries of the destination folder that pass re-encrypts with the move are the change's too,
        // and so is every file in a destination folder: the commit adds the folder as pass's does, which
        // stages files there that were not (an entry a killed write left untracked), and an undoing puts
        // the index of each back.
        let changing =
            (copy ? [] : sources) + landing + (try Self.filesBelow(destinationIsFolder ? newPath : target))
            + (try indexedFilesBelow(destinationIsFolder ? newPath : target))
            + (acceptance.map { [$0.file] } ?? []) + Array(plan.reencrypted.keys)
        let madeBelow = below.folders.map(landed).filter { FileSystem.kind($0) == .missing }
        try whole(changing) { journal in
            // The folders are made once the journal names them; a refused overwrite keeps them, as pass's.
            try journal.add(folders: made + madeBelow)
            if !copy { try journal.keep(folders: below.folders) }
            try makeFolders(FileSystem.parent(of: newPath), onEvent: onEvent)
            if FileSystem.kind(target) != .missing, !FileSystem.isDirectory(target), let overwrite,
                !overwrite(target)
            {
                return
            }
            let replacing = FileSystem.kind(target) != .missing
            try finishTransfer(
                plan, source: source, destination: destination, paths: (oldPath, newPath, oldFolder),
                copy: copy, replacing: replacing, acceptance: acceptance, onEvent: onEvent)
        }
    }

    /// The regular files, the links and the folders at or below `path` (`.git` folders left out), not
    /// through links.
    static func itemsBelow(_ path: String) throws -> (files: [String], links: [String], folders: [String]) {
        switch FileSystem.kind(path) {
        case .file: return ([path], [], [])
        case .symlink: return ([], [path], [])
        case .directory: break
        default: return ([], [], [])
        }
        var found: (files: [String], links: [String], folders: [String]) = ([], [], [path])
        try FileTree.walk(path) { file, item in
            if item.isFile { found.files.append(file) }
            if item.isLink { found.links.append(file) }
            let descend = item.isFolder && item.name != Array(".git".utf8)
            if descend { found.folders.append(file) }
            return descend
        } failed: { folder, failure in
            if case .unreadable(let number) = failure {
                throw CofferError(.io, "cannot read folder", path: folder, errno: number)
            }
        }
        return found
    }

    /// The regular files at or below `path` (`.git` folders left out), not through links.
    static func filesBelow(_ path: String) throws -> [String] {
        switch FileSystem.kind(path) {
        case .file: return [path]
        case .directory: break
        default: return []
        }
        var files: [String] = []
        try FileTree.walk(path) { file, item in
            if item.isFile { files.append(file) }
            return item.isFolder && item.name != Array(".git".utf8)
        } failed: { folder, failure in
            if case .unreadable(let number) = failure {
                throw CofferError(.io, "cannot read folder", path: folder, errno: number)
            }
        }
        return files
    }

    /// The files git's index holds at or below `path` (those the work tree lost too: the commit's
    /// `git add` of the folder stages their removal, which an undoing must take back; fuzz soak seed
    /// 15532850711906744126).
    func indexedFilesBelow(_ path: String) throws -> [String] {
        guard let repository = git(for: path + "/-") ?? git(for: path), FileSystem.kind(path) != .missing
        else { return [] }
        let listed = try repository.runUnchecked(["ls-files", "-z", "--", repository.pathspec(path)])
        guard listed.status == 0 else { return [] }
        return listed.standardOutput.split(separator: 0).map {
            repository.directory + "/" + String(decoding: $0, as: UTF8.self)
        }
    }

    /// Moves or copies the files as `plan` says and commits, as ``transfer(_:to:copy:overwrite:onEvent:)``
    /// has decided.
    private func finishTransfer(
        _ plan: TransferPlan, source: String, destination: String,
        paths: (old: String, new: String, oldFolder: String), copy: Bool, replacing: Bool,
        acceptance: Acceptance?, onEvent: (StoreEvent) -> Void
    ) throws {
        let (oldPath, newPath, oldFolder) = paths
        try apply(plan, copy: copy, onEvent: onEvent)
        try acceptance?.save()
        // What the user moved or copied comes from its new folder now (re-encrypted entries are noted
        // as they are made).
        if let acceptance {
            var written: [CiphertextOrigins.Record] = []
            for file in plan.landing.sorted()
            where plan.reencrypted[file] == nil && !plan.foreign.contains(file) && FileSystem.isFile(file) {
                let name = String(file.droppingPathPrefix(root).dropLast(4))
                written.append(
                    .written(
                        blob: Self.ciphertextID(of: try FileSystem.readFile(file)),
                        folder: Self.folder(of: name)))
            }
            // The log only makes origins stricter: a move it misses leaves the entries' older ones.
            try? CiphertextOrigins.append(written, to: acceptance.originsFile)
        }
        // Like pass's final `rmdir -p` after a move.
        defer { if !copy { removeEmptyFolders(from: oldFolder) } }
        // The re-encryption lines come after mv's and cp's, in the order pass's `find` lists the files.
        for file in try Self.entryFiles(at: newPath) {
            guard let keyIDs = plan.keyIDs[file] else { continue }
            onEvent(.reencrypted(name: String(file.droppingPathPrefix(root).dropLast(4)), keyIDs: keyIDs))
        }
        if copy {
            try commit([newPath], "Copy \(source) to \(destination).")
            return
        }
        // As pass: the rename is one commit where the old and new names share a repository; an old name
        // in another repository (a folder with a git of its own) has its removal committed there.
        let newRepository = git(for: newPath)
        let oldRepository = git(for: oldPath)
        let together = newRepository != nil && newRepository?.directory == oldRepository?.directory
        if let newRepository {
            // An entry moved onto one with the same bytes changes nothing there: as in pass, only the
            // removal is committed, under its message. pass looks at its destination as given: a folder
            // destination also shows the old name's removal when the old name is inside it.
            let unchanged = try replacing && together && !newRepository.hasChanges(newPath)
            try newRepository.commit(
                paths: together ? [newPath, oldPath] : [newPath],
                message: unchanged ? "Remove \(source)." : "Rename \(source) to \(destination).",
                output: gitOutput)
        }
        if !together, let oldRepository {
            try oldRepository.commit(paths: [oldPath], message: "Remove \(source).", output: gitOutput)
        }
    }

    /// Why mv or cp would refuse to move `source` to `target`: the same file, or a folder into itself.
    private static func refusal(moving source: String, to target: String, copy: Bool) -> CofferError? {
        if FileSystem.isSameFile(source, target) {
            return CofferError(
                .sameFile, "\(source) and \(target) are the same file", paths: [source, target])
        }
        let canonicalSource = FileSystem.canonicalPath(source)
        let canonicalTarget = FileSystem.canonicalPath(target)
        guard FileSystem.isDirectory(source), canonicalTarget.isPath(inside: canonicalSource) else {
            return nil
        }
        let message =
            copy
            ? "cannot copy a directory, \(source), into itself, \(target)"
            : "cannot move \(source) to a subdirectory of itself, \(target)"
        return CofferError(.intoItself, message, paths: [source, target])
    }

    /// Works out which entries need other recipients after the transfer and encrypts them for those, in
    /// memory: the entries moved or copied (for keys the user accepted at their new place), and (as
    /// pass's `reencrypt_path` of the destination does) the entries already in a `destination` folder,
    /// which nobody asked to re-encrypt (see ``AutomaticPolicy``).
    private func plan(_ plan: TransferPlan, destination: String?, copy: Bool, acceptance: Acceptance?) throws
        -> TransferPlan
    {
        var plan = plan
        var jobs: [Reencryption] = []
        var policy = try AutomaticPolicy(store: self, acceptance: acceptance)
        var wantedByRecipients: [[String]: Set<String>] = [:]
        func consider(_ file: String, landingAt place: String) throws {
            let ciphertext = try FileSystem.readFile(file)
            // A public key or a signature kept in the store moves as it is.
            if OpenPGPPackets.isKeyOrSignature(ciphertext) { return }
            let recipients = try recipientsAfterTransfer(of: place, plan, copy: copy)
            try verifyRecipientsFile(recipients.file)
            let wanted =
                try wantedByRecipients[recipients.ids] ?? engine.encryptionKeyIDs(for: recipients.ids)
            wantedByRecipients[recipients.ids] = wanted
            if OpenPGPPackets.recipientKeyIDs(ciphertext) == wanted { return }
            // An entry that was not written for its folder (someone copied it in), moved alone or with
            // its folder, is the user's to move, not to hand to more readers: it keeps those it has, at
            // most. One in a shape other than the usual moves as it is: who reads it cannot be told.
            if file != place, acceptance != nil {
                let relative = file.droppingPathPrefix(root)
                // A folder with no `.gpg-id` above it (the store's removed with `init ''`) names no one.
                let here =
                    gpgIDFile(forFolder: Self.folder(of: relative)) == nil
                    ? Recipients(ids: [], file: nil)
                    : try self.recipients(forFolder: Self.folder(of: relative))
                let folder = Self.folder(of: relative)
                if try !OpenPGPPackets.isUsualMessage(ciphertext)
                    || policy.isForeign(ciphertext, inFolder: folder, wanted: here)
                    || !policy.otherOrigins(of: ciphertext, besides: folder).isEmpty
                {
                    plan.foreign.insert(place)
                    guard let readers = try readers(of: ciphertext) else { return }
                    let keys = try resolve(recipients.ids).filter { !$0.isAmbiguous }.flatMap(\.keys)
                    let kept = Set(keys.map(\.fingerprint)).intersection(readers.union(try ownKeys()))
                    guard !kept.isEmpty else { return }
                    let keyIDs = try engine.encryptionKeyIDs(for: kept.sorted())
                    if OpenPGPPackets.recipientKeyIDs(ciphertext) == keyIDs { return }
                    jobs.append(
                        Reencryption(
                            file: file, destination: place, recipients: kept.sorted(),
                            keyIDs: keyIDs.sorted(),
                            allowed: kept))
                    return
                }
            }
            jobs.append(
                Reencryption(
                    file: file, destination: place, recipients: recipients.ids, keyIDs: wanted.sorted()))
        }
        for file in try Self.entryFiles(at: plan.source) {
            let place =
                plan.target + String(decoding: file.utf8.dropFirst(plan.source.utf8.count), as: UTF8.self)
            plan.landing.insert(place)
            try consider(file, landingAt: place)
        }
        if let destination, FileSystem.isDirectory(destination) {
            for file in try Self.entryFiles(at: destination) where !plan.landing.contains(file) {
                if file.isPath(inside: plan.target) {
                    try consider(file, landingAt: file)
                } else {
                    jobs += try automaticReencryptions(of: [file], policy: &policy).jobs
                }
            }
        }
        try encryptAgain(jobs, acceptance: acceptance) { index, ciphertext in
            plan.reencrypted[jobs[index].destination] = ciphertext
            plan.keyIDs[jobs[index].destination] = jobs[index].keyIDs
        }
        return plan
    }

    /// The recipients an entry at `place` has once the plan's source is at its target: `.gpg-id` files
    /// that travel with a folder count at their new place (for a copy, over those already there).
    private func recipientsAfterTransfer(of place: String, _ plan: TransferPlan, copy: Bool) throws
        -> Recipients
    {
        if let override = configuration.keyOverride { return Recipients(ids: override, file: nil) }
        var folder = FileSystem.parent(of: place)
        while folder == root || folder.isPath(inside: root) {
            var candidates: [String] = []
            if folder == plan.target || folder.isPath(inside: plan.target) {
                candidates.append(
                    plan.source
                        + String(decoding: folder.utf8.dropFirst(plan.target.utf8.count), as: UTF8.self)
                        + "/.gpg-id")
                if copy { candidates.append(folder + "/.gpg-id") }
            } else {
                // pass spells the root's file `<root>/./.gpg-id` for an entry at the top.
                let spelled = folder == root && folder == FileSystem.parent(of: place) ? root + "/." : folder
                candidates.append(spelled + "/.gpg-id")
            }
            if let file = candidates.first(where: FileSystem.isFile) {
                return Recipients(ids: GPGIDFile.parse(try FileSystem.readFile(file)), file: file)
            }
            if folder == root { break }
            folder = FileSystem.parent(of: folder)
        }
        let name = String(place.droppingPathPrefix(root))
        throw CofferError(.noRecipients, "no .gpg-id for \(name); run init")
    }

    /// Moves or copies the plan's source and writes its re-encrypted entries; when a step fails, the
    /// steps already made are undone, so the store is as it was.
    private func apply(_ plan: TransferPlan, copy: Bool, onEvent: (StoreEvent) -> Void) throws {
        var undo: [() -> Void] = []
        do {
            if copy {
                try copyTree(plan.source, to: plan.target, plan, undo: &undo, onEvent: onEvent)
            } else {
                let replaced = FileSystem.isFile(plan.target) ? try FileSystem.readFile(plan.target) : nil
                guard rename(plan.source, plan.target) == 0 else {
                    throw CofferError(
                        .io,
                        "cannot move '\(plan.source)' to '\(plan.target)': \(String(cString: strerror(errno)))"
                    )
                }
                let mode = configuration.fileMode
                undo.append {
                    rename(plan.target, plan.source)
                    if let replaced { try? FileSystem.atomicWrite(plan.target, bytes: replaced, mode: mode) }
                }
                FileSystem.syncDirectory(FileSystem.parent(of: plan.target))
                onEvent(.renamed(from: plan.source, to: plan.target))
            }
            // A copy has written the entries it copied re-encrypted already.
            for (file, ciphertext) in plan.reencrypted.sorted(by: { $0.key < $1.key })
            where !(copy && plan.landing.contains(file)) {
                try replace(file, with: ciphertext, undo: &undo)
            }
        } catch {
            for step in undo.reversed() { step() }
            throw error
        }
    }

    /// Replaces an entry's ciphertext, recording how to put the old one back.
    private func replace(_ file: String, with ciphertext: [UInt8], undo: inout [() -> Void]) throws {
        let original = try FileSystem.readFile(file)
        try FileSystem.atomicWrite(file, bytes: ciphertext, mode: configuration.fileMode)
        let mode = configuration.fileMode
        undo.append { try? FileSystem.atomicWrite(file, bytes: original, mode: mode) }
    }

    /// `cp -r -v`: copies a file or a folder tree, reporting every item; entries the plan re-encrypted
    /// are written with their new ciphertext.
    private func copyTree(
        _ source: String, to target: String, _ plan: TransferPlan, undo: inout [() -> Void],
        onEvent: (StoreEvent) -> Void
    ) throws {
        guard FileSystem.isDirectory(source) else {
            return try copyFile(source, to: target, plan, undo: &undo, onEvent: onEvent)
        }
        try copyFolder(source, to: target, undo: &undo, onEvent: onEvent)
        // The walk's paths start with `source` and a slash; the copy's with `target` and one.
        let skipped = source.endsWithSlash ? source.utf8.count : source.utf8.count + 1
        try FileTree.walk(source, followLinks: true) { path, item in
            let copy = target + "/" + String(decoding: path.utf8.dropFirst(skipped), as: UTF8.self)
            if item.leadsToFolder {
                try copyFolder(path, to: copy, undo: &undo, onEvent: onEvent)
                return true
            }
            try copyFile(path, to: copy, plan, undo: &undo, onEvent: onEvent)
            return false
        } failed: { path, failure in
            switch failure {
            case .unreadable(let number):
                throw CofferError(.io, "cannot read folder", path: path, errno: number)
            case .loop: throw CofferError(.io, "cannot copy a folder into itself", path: path, errno: ELOOP)
            case .walkedAlready(let first):
                // Each folder is copied once: a second way into one would copy it again for every path.
                throw CofferError(
                    .io, "cannot copy \(path): it leads to the folder copied from \(first)",
                    paths: [path, first])
            }
        }
    }

    /// Creates the copy of a folder unless it is there.
    private func copyFolder(
        _ source: String, to target: String, undo: inout [() -> Void], onEvent: (StoreEvent) -> Void
    ) throws {
        try checkInsideStore(target)
        guard !FileSystem.isDirectory(target) else { return }
        try FileSystem.makeDirectories(target, mode: configuration.folderMode)
        undo.append { rmdir(target) }
        onEvent(.copied(from: source, to: target))
    }

    /// Copies one file (its new ciphertext when the plan re-encrypted it).
    private func copyFile(
        _ source: String, to target: String, _ plan: TransferPlan, undo: inout [() -> Void],
        onEvent: (StoreEvent) -> Void
    ) throws {
        try checkInsideStore(FileSystem.parent(of: target))
        let replaced = FileSystem.kind(target) == .missing ? nil : try FileSystem.readFile(target)
        let bytes = try plan.reencrypted[target] ?? FileSystem.readFile(source)
        try FileSystem.atomicWrite(target, bytes: bytes, mode: configuration.fileMode)
        let mode = configuration.fileMode
        undo.append {
            if let replaced {
                try? FileSystem.atomicWrite(target, bytes: replaced, mode: mode)
            } else {
                unlink(target)
            }
        }
        onEvent(.copied(from: source, to: target))
    }
}
