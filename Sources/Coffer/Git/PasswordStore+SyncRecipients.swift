/// What `sync` does about recipients that arrive: where ciphertexts were written, which `.gpg-id`
/// files and kept keys changed, which signed `.gpg-id` files the user's trusted signers vouch for, and
/// what the report says of it.
extension PasswordStore {
    /// Everything this clone knows of where ciphertexts (by ``ciphertextID(of:)``) were written: the
    /// origins log, brought up to date first with every commit of every ref (and of `revisions`) not
    /// looked at before. A ciphertext that was ever in a folder, in any commit of the history this clone
    /// has, keeps that folder, however it was moved, copied, renamed, deleted and added again since.
    /// The first call reads the whole history (once); later ones only what arrived since.
    package func updatedOrigins(_ repository: GitRepository, revisions: [String] = []) throws -> BlobOrigins {
        guard let gitDirectory = repository.gitDirectory() else { return [:] }
        let logFile = gitDirectory + "/coffer-origins"
        let scannedFile = gitDirectory + "/coffer-scanned"
        var origins = CiphertextOrigins.read(logFile)
        let scanned = ((try? FileSystem.readFile(scannedFile)) ?? []).split(separator: 10).map {
            String(decoding: $0, as: UTF8.self)
        }.filter { $0.utf8.count == 40 }
        // `-m`: a merge commit's changes too (against each parent), where a merged entry is written.
        let log =
            ["log", "-m", "-z", "--raw", "--no-renames", "--no-abbrev", "--format=%x01%H", "--all"]
            + revisions
        var output = try repository.runUnchecked(log + (scanned.isEmpty ? [] : ["--not"] + scanned))
        // A ref scanned before and gone since (a force-push, a gc): everything again.
        if output.status != 0 { output = try repository.runUnchecked(log) }
        // No commit yet: nothing to learn.
        guard output.status == 0 else { return origins }
        var seen: [(blob: String, path: String)] = []
        let tokens = output.standardOutput.split(separator: 0, omittingEmptySubsequences: false)
        var index = 0
        while index < tokens.count {
            let token = tokens[index].drop { $0 == 10 }
            index += 1
            // `:OLDMODE NEWMODE OLD NEW STATUS`, then the path.
            guard token.first == UInt8(ascii: ":"), index < tokens.count else { continue }
            let fields = token.split(separator: 32)
            if fields.count == 5, !fields[3].allSatisfy({ $0 == UInt8(ascii: "0") }) {
                seen.append(
                    (
                        String(decoding: fields[3], as: UTF8.self),
                        String(decoding: tokens[index], as: UTF8.self)
                    ))
            }
            index += 1
        }
        let payloads = try ciphertextIDs(repository, blobs: Set(seen.map(\.blob)))
        var records: [CiphertextOrigins.Record] = []
        for (blob, path) in seen {
            guard let id = payloads[blob] else { continue }
            let folder = Self.folder(of: relativeName(repository, Substring(path)))
            if origins[id, default: []].insert(folder).inserted {
                records.append(.seen(blob: id, folder: folder))
            }
        }
        try CiphertextOrigins.append(records, to: logFile)
        let tips = try repository.run(["rev-parse", "--all"] + revisions).outputText.split(separator: "\n")
            .filter { $0.utf8.count == 40 }
        try FileSystem.atomicWrite(
            scannedFile, bytes: Array(tips.map { $0 + "\n" }.joined().utf8), mode: 0o600)
        return origins
    }

    /// The blobs of a tree, with their paths (relative to the top of the work tree).
    private func treeBlobs(_ repository: GitRepository, _ tree: String) throws -> [(
        blob: String, path: String
    )] {
        let listing = try repository.run(["ls-tree", "-r", "-z", tree]).standardOutput
        return listing.split(separator: 0).compactMap { record in
            // `MODE TYPE OBJECT<TAB>PATH`
            guard let tab = record.firstIndex(of: 9) else { return nil }
            let fields = record[..<tab].split(separator: 32)
            guard fields.count == 3, fields[1].elementsEqual("blob".utf8) else { return nil }
            return (
                String(decoding: fields[2], as: UTF8.self),
                String(decoding: record[(tab + 1)...], as: UTF8.self)
            )
        }
    }

    /// The ciphertext ids of git blobs: read once with `git cat-file --batch` and kept, as they never
    /// change, in `<git folder>/coffer-payloads`.
    func ciphertextIDs(_ repository: GitRepository, blobs: Set<String>) throws -> [String: String] {
        guard let gitDirectory = repository.gitDirectory() else { return [:] }
        let file = gitDirectory + "/coffer-payloads"
        var known: [String: String] = [:]
        if let bytes = try? FileSystem.readFile(file) {
            for line in bytes.split(separator: 10) {
                let fields = line.split(separator: 32).map { String(decoding: $0, as: UTF8.self) }
                if fields.count == 2 { known[fields[0]] = fields[1] }
            }
        }
        let missing = blobs.filter { known[$0] == nil }.sorted()
        guard !missing.isEmpty else { return known }
        let output = try repository.run(
            ["cat-file", "--batch"], input: Array(missing.map { $0 + "\n" }.joined().utf8)
        ).standardOutput
        var added = ""
        var offset = 0
        // `OBJECT blob SIZE\nCONTENTS\n`, or `OBJECT missing\n`.
        while offset < output.count, let end = output[offset...].firstIndex(of: 10) {
            let header = output[offset..<end].split(separator: 32).map { String(decoding: $0, as: UTF8.self) }
            offset = end + 1
            guard header.count == 3, let size = Int(header[2]), offset + size <= output.count else {
                continue
            }
            let id = Self.ciphertextID(of: Array(output[offset..<(offset + size)]))
            known[header[0]] = id
            added += header[0] + " " + id + "\n"
            offset += size + 1
        }
        try CiphertextOrigins.appendText(added, to: file)
        return known
    }

    /// The keys a sync gives each folder's recipients: those it names now that this clone's version
    /// (`local`) and the remote's (`remote`) did not both name before. Only they may reach entries
    /// that were written for the folder; see ``AutomaticPolicy/isForeign(_:inFolder:wanted:)``.
    func gainedKeys(_ repository: GitRepository, local: String, remote: String) -> (String) throws -> Set<
        String
    > {
        final class Known {
            var keys: [[String]: Set<String>] = [:]
            var lines: [String: [String]] = [:]
        }
        let known = Known()
        let store = self
        func keys(_ ids: [String]) throws -> Set<String> {
            if let found = known.keys[ids] { return found }
            let found = Set(
                try store.resolve(ids).filter { !$0.isAmbiguous }.flatMap { $0.keys.map(\.fingerprint) })
            known.keys[ids] = found
            return found
        }
        // The lines of the `.gpg-id` that rules `folder` in `revision`'s tree.
        func lines(_ folder: String, at revision: String) throws -> [String] {
            let key = revision + "\u{0}" + folder
            if let found = known.lines[key] { return found }
            var current = folder
            var found: [String] = []
            while true {
                let path = current.isEmpty ? ".gpg-id" : current + "/.gpg-id"
                if let bytes = try repository.contents(of: path, at: revision) {
                    found = GPGIDFile.parse(bytes)
                    break
                }
                if current.isEmpty { break }
                current = Self.folder(of: current)
            }
            known.lines[key] = found
            return found
        }
        return { folder in
            guard let now = try? store.recipients(forFolder: folder).ids else { return [] }
            let before = try keys(lines(folder, at: local)).intersection(try keys(lines(folder, at: remote)))
            return try keys(now).subtracting(before)
        }
    }

    /// The folder of a `.gpg-id` named relative to the store root (`team/.gpg-id`: `team`).
    static func folder(ofGPGIDName name: String) -> String {
        name == ".gpg-id" ? "" : String(name.dropLast("/.gpg-id".count))
    }

    /// A path of `repository` as a name relative to the store root.
    private func relativeName(_ repository: GitRepository, _ path: Substring) -> String {
        (repository.directory + "/" + path).droppingPathPrefix(root)
    }

    /// The `.gpg-id` files (relative to the top) and kept key files (their names) that differ between
    /// `old` and `new`.
    func recipientFiles(_ repository: GitRepository, changedFrom old: String, to new: String) throws -> (
        gpgIDs: [String], keys: [String]
    ) {
        var gpgIDs: [String] = []
        var keys: [String] = []
        let prefix = Self.publicKeysFolder + "/"
        for change in try repository.changes(from: old, to: new) {
            if change.path == ".gpg-id" || change.path.hasSuffix("/.gpg-id") { gpgIDs.append(change.path) }
            if change.path.hasPrefix(prefix) { keys.append(String(change.path.dropFirst(prefix.count))) }
        }
        return (gpgIDs, keys)
    }

    /// The fingerprints the user trusts to sign `.gpg-id` files: `PASSWORD_STORE_SIGNING_KEY`'s and
    /// those listed (space or comma separated) in `git config coffer.trustedsigners`.
    package func trustedSigners(_ repository: GitRepository?) -> Set<String> {
        var signers = Set(configuration.signingKeys.filter(Self.isFullFingerprint))
        if let output = try? repository?.runUnchecked(["config", "--get-all", "coffer.trustedsigners"]),
            output.status == 0
        {
            for word in output.outputText.split(whereSeparator: { " ,\t\n".contains($0) }) {
                let fingerprint = word.uppercased()
                if Self.isFullFingerprint(fingerprint) { signers.insert(fingerprint) }
            }
        }
        return signers
    }

    /// Whether the `.gpg-id` at `file` (in `repository`'s work tree, as committed) was last changed,
    /// among the commits `range` names (all of `tip`'s history when `nil`), by a commit with a good git
    /// signature by one of `signers`. The commit's signature covers the file's place and its history,
    /// which a `.gpg-id.sig` does not: a signed `.gpg-id` copied into another folder, or an old one
    /// put back, is a commit of whoever did it.
    ///
    /// The commit is the newest, in topological order, that changed the file against any of its
    /// parents (`--full-history`, no simplification): a merge whose version of the file differs from
    /// one of its sides is the change, and a merge vouches for nothing, signed or not. Following the
    /// side a merge takes the file from (git's simplification, or the first parents) would let a
    /// pusher graft any commit the signer ever signed (in another store, or an old one of this store)
    /// in as either parent of a merge. And the file must be as that commit has it.
    package func isSigned(
        _ file: String, by signers: Set<String>, in repository: GitRepository, range: String? = nil,
        tip: String = "HEAD"
    ) -> Bool {
        let file = file.replacing("/./", with: "/")
        guard !signers.isEmpty, (try? repository.hasChanges(file)) == false else { return false }
        let pathspec = repository.pathspec(file)
        let arguments =
            [
                "log", "-1", "--full-history", "--topo-order", "--format=%H%x00%G?%x00%GF%x00%GP%x00%P",
                range ?? tip,
            ]
            + ["--", pathspec]
        guard let output = try? repository.runUnchecked(arguments), output.status == 0 else { return false }
        let fields = output.outputText.split(separator: "\u{0}", omittingEmptySubsequences: false).map(
            String.init)
        guard fields.count == 5, ["G", "U"].contains(fields[1]),
            signers.contains(fields[2].uppercased()) || signers.contains(fields[3].uppercased()),
            !fields[4].contains(" ")
        else { return false }
        let same = try? repository.runUnchecked(["diff", "--quiet", fields[0], "HEAD", "--", pathspec])
        return same?.status == 0
    }

    /// After a sync brought the `.gpg-id` files `changed` (relative to the top of `repository`): each
    /// one signed by a key the user trusts to sign them becomes its folder's record (its keys made
    /// usable for encryption); every record under a changed file keeps only the keys its folder still
    /// names (a key someone removed must be accepted again to come back). Saves the records.
    ///
    /// A file counts as signed when the remote's commits (up to `upstream`) last changed it in a signed
    /// commit that is no merge: this clone's merge of it is no signature of anyone's.
    func settleAcceptance(
        _ acceptance: inout Acceptance, changed: [String], repository: GitRepository, since before: String,
        upstream: String?
    ) throws {
        let tip = upstream ?? "HEAD"
        let signers = trustedSigners(repository)
        var resolved: [[String]: [ResolvedRecipient]] = [:]
        func keys(ofFolder folder: String) throws -> (lines: [ResolvedRecipient], keys: Set<String>)? {
            guard let ids = try? recipients(forFolder: folder).ids else { return nil }
            let lines = try resolved[ids] ?? resolve(ids)
            resolved[ids] = lines
            return (lines, Set(lines.filter { !$0.isAmbiguous }.flatMap { $0.keys.map(\.fingerprint) }))
        }
        let folders = changed.map { Self.folder(ofGPGIDName: relativeName(repository, Substring($0))) }
        for (path, folder) in zip(changed, folders) {
            let file = repository.directory + "/" + path
            guard FileSystem.isFile(file),
                isSigned(file, by: signers, in: repository, range: "\(before)..\(tip)", tip: tip),
                let named = try keys(ofFolder: folder)
            else { continue }
            for line in named.lines where !line.isAmbiguous {
                for key in line.keys { makeUsableIfItCan(key, namedBy: line.line) }
            }
            acceptance.accepted.set(named.keys, forFolder: folder)
        }
        for (folder, accepted) in acceptance.accepted.records {
            let touched = folders.contains { changedFolder in
                changedFolder.isEmpty || folder == changedFolder || folder.isPath(inside: changedFolder)
            }
            guard touched, FileSystem.isDirectory(folderPath(folder)), let named = try keys(ofFolder: folder)
            else { continue }
            acceptance.accepted.set(accepted.intersection(named.keys), forFolder: folder)
        }
        try acceptance.save()
    }

    /// What the commits between `old` and `new` changed about who may read a folder, for the report.
    func recipientChanges(
        _ repository: GitRepository, from old: String, to new: String, acceptance: Acceptance?
    ) throws -> [RecipientChange] {
        var changes: [RecipientChange] = []
        func lastCommit(_ path: String) -> String? {
            guard
                let output = try? repository.runUnchecked([
                    "log", "-1", "--full-history", "--topo-order", "--format=%h %an", "\(old)..\(new)", "--",
                    path,
                ]),
                output.status == 0, !output.outputText.isEmpty
            else { return nil }
            let parts = output.outputText.split(separator: " ", maxSplits: 1).map(String.init)
            return parts[0] + (parts.count > 1 ? " by " + Quoting.quoted(parts[1]) : "")
        }
        func fingerprints(_ bytes: [UInt8]?) throws -> Set<String> {
            guard let bytes else { return [] }
            return Set(try resolve(GPGIDFile.parse(bytes)).flatMap { $0.keys.map(\.fingerprint) })
        }
        func described(_ fingerprints: Set<String>) throws -> [String] {
            try fingerprints.sorted().map { fingerprint in
                try engine.keys(matching: [fingerprint], secretOnly: false).first.map(Self.describe)
                    ?? fingerprint
            }
        }
        let prefix = Self.publicKeysFolder + "/"
        for change in try repository.changes(from: old, to: new) {
            let path = change.path
            let name = relativeName(repository, Substring(path))
            if path == ".gpg-id" || path.hasSuffix("/.gpg-id") {
                let before = try fingerprints(repository.contents(of: path, at: old))
                let folder = Self.folder(ofGPGIDName: name)
                // A removed `.gpg-id` leaves its folder to the one above: those are its recipients now.
                let after =
                    change.status.hasPrefix("D")
                    ? try fingerprints(gpgIDFile(forFolder: folder).map { try FileSystem.readFile($0) })
                    : try fingerprints(repository.contents(of: path, at: new))
                var unaccepted: [String] = []
                if let acceptance, let now = try? resolve(recipients(forFolder: folder).ids) {
                    let accepted = acceptance.accepted.keys(forFolder: folder)
                    unaccepted = now.flatMap { $0.keys.map(\.fingerprint) }.filter { !accepted.contains($0) }
                }
                changes.append(
                    RecipientChange(
                        kind: change.status.hasPrefix("D") ? .removed : .recipients, path: name,
                        added: try described(after.subtracting(before)),
                        removed: try described(before.subtracting(after)),
                        unaccepted: Array(Set(unaccepted)).sorted(), commit: lastCommit(path)))
            } else if path == ".gpg-id.sig" || path.hasSuffix("/.gpg-id.sig") {
                changes.append(
                    RecipientChange(
                        kind: .signature, path: name, added: [], removed: [], unaccepted: [],
                        commit: lastCommit(path)))
            } else if path.hasPrefix(prefix) {
                changes.append(
                    RecipientChange(
                        kind: .publicKey, path: name, added: [], removed: [], unaccepted: [],
                        commit: lastCommit(path)))
            }
        }
        return changes
    }
}
