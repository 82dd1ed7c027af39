#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A repair `check(fix:confirmWidening:)` asks about: encrypting an entry for keys that cannot read it
/// now.
public struct Widening: Sendable, Equatable {
    /// The entry.
    public let name: String
    /// The keys that would be added, as `FINGERPRINT "user id"`.
    public let keys: [String]
    /// The last commit that changed the entry, as `HASH AUTHOR`, when git knows one (its author is what
    /// whoever made it wrote).
    public let lastChange: String?
    /// Other folders its ciphertext is known to have been written in.
    public var writtenIn: [String] = []
    /// Whether some key its folder names, that the user accepted there, cannot read it: it was not
    /// written for this folder.
    public var notWrittenHere = false
}

/// One problem `check` found.
public struct StoreFinding: Sendable, Equatable, CustomStringConvertible {
    /// What kind of problem.
    public enum Kind: String, Sendable {
        /// A file or folder others may read or write.
        case permissions
        /// An entry encrypted to other keys than its `.gpg-id` names, or a `.gpg-id` naming a key that
        /// cannot be encrypted to.
        case recipients
        /// An entry that does not decrypt (corrupt, truncated, empty, or for someone else).
        case undecryptable
        /// A temporary file left by an interrupted write.
        case strayFile
        /// A `.gpg-id` whose signature is missing or bad.
        case signature
        /// An entry that holds merge conflict markers.
        case conflict
        /// The git work tree is not clean or an operation is half done.
        case git
    }

    /// What kind of problem.
    public let kind: Kind
    /// The path relative to the store root (or `git`).
    public let path: String
    /// What is wrong, in one line.
    public let message: String
    /// Whether `check(fix: true)` repaired it.
    public let fixed: Bool

    /// `path: message`, with ` (fixed)` when it was repaired.
    public var description: String { "\(path): \(message)\(fixed ? " (fixed)" : "")" }
}

extension PasswordStore {
    /// Checks the whole store: permissions, recipients against `.gpg-id`, that every entry decrypts,
    /// stray temporary files, `.gpg-id` signatures, merge conflicts and git state.
    ///
    /// Entries are decrypted on several threads (on every core); findings come in the order of a walk of
    /// the store. With `fix`, mis-encrypted entries are re-encrypted (one at a time, like
    /// ``reencrypt(_:onEvent:skipping:)``), permissions tightened and stray files removed.
    ///
    /// A repair never widens who can read an entry by itself: an entry encrypted to fewer keys than its
    /// `.gpg-id` names (a ciphertext copied or moved in from another folder, or left narrow by a sync)
    /// is encrypted for the missing keys only when each is accepted for its folder and
    /// `confirmWidening` says yes (the command line asks on a terminal); otherwise it is reported and
    /// left as it is.
    public func check(fix: Bool = false, confirmWidening: ((Widening) -> Bool)? = nil) throws
        -> [StoreFinding]
    {
        // Repairs are changes: they wait for other writers and are committed as one.
        guard fix else { return try examineStore(fix: false, confirm: nil) }
        return try withStoreLock {
            var undone: [StoreFinding] = []
            if let repository = storeRepository, let undo = try undoInterruptedSync(repository) {
                let kept = undo.kept.map { "; the commits it had started are kept at \($0)" } ?? ""
                undone.append(
                    StoreFinding(
                        kind: .git, path: "git", message: "an interrupted sync was undone\(kept)", fixed: true
                    ))
            }
            try storeRepository?.ensureNoUnfinishedOperation()
            // The entries it re-encrypts and their commit are whole or absent, as any change of several files.
            let entries = (try? Self.entryFiles(at: root)) ?? []
            return try whole(entries) { _ in try undone + examineStore(fix: true, confirm: confirmWidening) }
        }
    }

    /// The store's own repository (a `.git` at the root), if it has one.
    private var storeRepository: GitRepository? {
        guard FileSystem.kind(root + "/.git") != .missing else { return nil }
        return git(for: root + "/.gpg-id")
    }

    private func examineStore(fix: Bool, confirm: ((Widening) -> Bool)?) throws -> [StoreFinding] {
        guard FileSystem.isDirectory(root) else {
            throw CofferError(.notFound, "password store is empty: there is nothing to check", paths: [root])
        }
        // The walk finds what needs no decryption at once and lists the entries, in walk order.
        var steps: [CheckStep] = []
        var wantedByRecipients: [[String]: Result<Set<String>, any Error>] = [:]
        func entryCheck(_ path: String) -> EntryCheck {
            let entry = String(relative(path).dropLast(4))
            guard let recipients = try? recipients(for: entry) else {
                return EntryCheck(
                    path: path, relative: relative(path), recipients: nil, wanted: [],
                    problem: "no .gpg-id applies")
            }
            if wantedByRecipients[recipients.ids] == nil {
                wantedByRecipients[recipients.ids] = Result {
                    try self.engine.encryptionKeyIDs(for: recipients.ids)
                }
            }
            switch wantedByRecipients[recipients.ids]! {
            case .success(let wanted):
                return EntryCheck(
                    path: path, relative: relative(path), recipients: recipients, wanted: wanted, problem: nil
                )
            case .failure(let error):
                return EntryCheck(
                    path: path, relative: relative(path), recipients: recipients, wanted: [],
                    problem: "cannot resolve its recipients: \(error)")
            }
        }
        var checkedSignatures = Set<String>()
        // Whether the keys a `.gpg-id` names can be encrypted to at all, once per list of ids.
        var problemsByRecipients: [[String]: [String]] = [:]
        let acceptance = try acceptance(at: root + "/.gpg-id")
        func recipientProblems(_ file: String) -> [String] {
            guard let ids = try? GPGIDFile.parse(FileSystem.readFile(file)), !ids.isEmpty else { return [] }
            let folder = String(Self.folder(ofGPGID: file).droppingPathPrefix(root))
            if let known = problemsByRecipients[ids + ["\u{0}" + folder]] { return known }
            var problems: [String]
            do {
                problems = try self.engine.recipientProblems(ids).map(\.message)
                let lines = try resolve(ids)
                for line in lines where line.isAmbiguous {
                    problems.append(
                        "the line \(Quoting.quoted(line.line)) matches \(line.keys.count) keys ("
                            + line.keys.map(Self.describe).joined(separator: ", ")
                            + "); name one by its fingerprint")
                }
                if let acceptance {
                    let accepted = acceptance.accepted.keys(forFolder: folder)
                    let own = try ownKeys()
                    for key in lines.flatMap(\.keys)
                    where !accepted.contains(key.fingerprint) && !own.contains(key.fingerprint) {
                        problems.append(
                            "names \(Self.describe(key)), which you have not accepted for "
                                + (folder.isEmpty ? "the store" : Quoting.quoted(folder))
                                + "; if it should read it, run "
                                + "\(configuration.program) recipients accept "
                                + (folder.isEmpty ? "" : "-p \(Quoting.quoted(folder)) ") + key.fingerprint)
                    }
                }
            } catch {
                problems = ["cannot check its recipients: \(error)"]
            }
            problemsByRecipients[ids + ["\u{0}" + folder]] = problems
            return problems
        }
        func relative(_ path: String) -> String { String(path.droppingPathPrefix(root)) }
        func found(_ kind: StoreFinding.Kind, _ path: String, _ message: String, fixed: Bool = false) {
            steps.append(
                .found(StoreFinding(kind: kind, path: relative(path), message: message, fixed: fixed)))
        }

        // The store folder itself: another user who may write it can put entries there.
        var rootInfo = stat()
        // Followed: a store root that is a link (to a synced folder, say) is the folder it leads to.
        if stat(root, &rootInfo) == 0 {
            if rootInfo.st_uid != geteuid() {
                found(
                    .permissions, root + "/.", "owned by user \(rootInfo.st_uid), not by you (\(geteuid()))")
            } else if rootInfo.st_mode & 0o777 & ~configuration.folderMode != 0 {
                if fix { chmod(root, rootInfo.st_mode & 0o777 & configuration.folderMode) }
                found(
                    .permissions, root + "/.",
                    "mode \(String(rootInfo.st_mode & 0o777, radix: 8)), expected at most "
                        + String(configuration.folderMode, radix: 8),
                    fixed: fix)
            }
        }
        try FileTree.walk(root, sorted: true, examineFiles: true) { path, item in
            let name = item.nameString
            if item.isLink || (name == ".git" && FileSystem.parent(of: path) == root) { return false }
            if let owner = item.owner, owner != geteuid() {
                found(.permissions, path, "owned by user \(owner), not by you (\(geteuid()))")
            }
            let expected = item.isFolder ? configuration.folderMode : configuration.fileMode
            if item.mode & 0o777 & ~expected != 0 {
                if fix { chmod(path, item.mode & 0o777 & expected) }
                found(
                    .permissions, path,
                    "mode \(String(item.mode & 0o777, radix: 8)), expected at most "
                        + String(expected, radix: 8),
                    fixed: fix)
            }
            if item.isFolder { return true }
            if Self.isStrayTemporaryFile(name) {
                if fix { unlink(path) }
                found(.strayFile, path, "temporary file left by an interrupted write", fixed: fix)
                return false
            }
            if name == ".gpg-id", let bytes = try? FileSystem.readFile(path),
                EntryMerge.containsConflict(bytes)
            {
                found(
                    .conflict, path, "holds merge conflict markers; keep one recipient a line and remove them"
                )
            }
            if name == ".gpg-id" && !configuration.signingKeys.isEmpty
                && checkedSignatures.insert(path).inserted
            {
                do {
                    try verifyRecipientsFile(path)
                } catch let error as CofferError {
                    found(.signature, path, error.message)
                }
            }
            if name == ".gpg-id" {
                for problem in recipientProblems(path) { found(.recipients, path, problem) }
            }
            if name.hasSuffix(".gpg") { steps.append(.entry(entryCheck(path))) }
            return false
        } failed: { folder, failure in
            if case .unreadable(let number) = failure {
                throw CofferError(.io, "cannot read folder", path: folder, errno: number)
            }
        }

        // Entries decrypt on every core; findings are gathered in walk order on this thread.
        let entries = steps.enumerated().compactMap { position, step -> (Int, EntryCheck)? in
            if case .entry(let entry) = step { return (position, entry) }
            return nil
        }
        var findings: [StoreFinding] = []
        var nextStep = 0
        func flush(upTo position: Int) {
            while nextStep < position {
                if case .found(let finding) = steps[nextStep] { findings.append(finding) }
                nextStep += 1
            }
        }
        let engine = self.engine
        var repair = Repair(
            acceptance: acceptance, confirm: confirm,
            policy: try AutomaticPolicy(store: self, acceptance: acceptance))
        try Parallel.forEach(entries.map(\.1)) { entry in
            try Self.examine(entry, engine: engine)
        } consume: { index, result in
            flush(upTo: entries[index].0)
            nextStep += 1
            findings += try settle(entries[index].1, result.get(), fix: fix, repair: &repair)
            progress?(index + 1, entries.count)
        }
        flush(upTo: steps.count)
        let reencrypted = findings.filter { $0.kind == .recipients && $0.fixed }.map { root + "/" + $0.path }
        if !reencrypted.isEmpty {
            try commit(
                reencrypted,
                "Reencrypt \(reencrypted.count) \(reencrypted.count == 1 ? "entry" : "entries") "
                    + "to match .gpg-id.")
        }
        if let repository = storeRepository {
            findings += try gitFindings(repository, fix: fix)
        }
        return findings
    }

    /// What the walk of ``check(fix:confirmWidening:)`` met: a finding made at once, or an entry to decrypt.
    private enum CheckStep {
        case found(StoreFinding)
        case entry(EntryCheck)
    }

    /// An entry to check, with its recipients and the encryption subkeys they stand for.
    private struct EntryCheck: Sendable {
        let path: String
        let relative: String
        /// `nil` when no `.gpg-id` applies.
        let recipients: Recipients?
        let wanted: Set<String>
        /// Why the recipients cannot be compared, when they cannot.
        let problem: String?
    }

    /// What decrypting one entry showed (worked out on any thread).
    private struct Examined: Sendable {
        var findings: [StoreFinding] = []
        /// The plaintext, kept when the entry is encrypted to other keys than it should be, with its
        /// ciphertext.
        var misencrypted:
            (plaintext: SecureBytes, ciphertext: [UInt8], current: Set<String>, wanted: Set<String>)?
    }

    /// What repairs of mis-encrypted entries need: the accepted recipients, the user's own keys and who
    /// confirms a widening.
    private struct Repair {
        let acceptance: Acceptance?
        let confirm: ((Widening) -> Bool)?
        var own: Set<String>?
        var resolved: [[String]: [ResolvedRecipient]] = [:]
        /// What is known of where ciphertexts were written.
        var policy: AutomaticPolicy
    }

    /// Decrypts one entry and compares it with what its `.gpg-id` wants.
    @Sendable private static func examine(_ entry: EntryCheck, engine: any CryptoEngine) throws -> Examined {
        var examined = Examined()
        func found(_ kind: StoreFinding.Kind, _ message: String) {
            examined.findings.append(
                StoreFinding(kind: kind, path: entry.relative, message: message, fixed: false))
        }
        let ciphertext = try FileSystem.readFile(entry.path)
        // A public key or a signature kept in the store (`.public-keys/KEY.gpg`) is no entry.
        if OpenPGPPackets.isKeyOrSignature(ciphertext) { return examined }
        let plaintext: SecureBytes
        do {
            guard !ciphertext.isEmpty else { throw CofferError(.format, "the file is empty") }
            plaintext = try engine.decrypt(ciphertext)
        } catch {
            found(.undecryptable, "does not decrypt: \(error)")
            return examined
        }
        if plaintext.withUnsafeBytes({ EntryMerge.containsConflict($0) }) {
            found(.conflict, "holds a merge conflict; resolve it with edit")
        }
        if let problem = entry.problem {
            found(.recipients, problem)
            return examined
        }
        let current = OpenPGPPackets.recipientKeyIDs(ciphertext) ?? []
        if current != entry.wanted { examined.misencrypted = (plaintext, ciphertext, current, entry.wanted) }
        return examined
    }

    /// The findings of one examined entry, re-encrypting it first when it is mis-encrypted and `fix` is
    /// set, unless that would widen who can read it without the user's confirmation.
    private func settle(_ entry: EntryCheck, _ examined: Examined, fix: Bool, repair: inout Repair) throws
        -> [StoreFinding]
    {
        guard let misencrypted = examined.misencrypted, let recipients = entry.recipients else {
            return examined.findings
        }
        var message =
            "encrypted to \(misencrypted.current.sorted().joined(separator: " ")), .gpg-id wants "
            + misencrypted.wanted.sorted().joined(separator: " ")
        var fixed = false
        let refusal = try widening(
            of: entry, misencrypted.ciphertext, recipients, repair: &repair, asking: fix)
        if !fix, let refusal {
            message += " (\(refusal))"
        } else if fix {
            if let refusal {
                message += " (not fixed: \(refusal))"
            } else {
                try verifyRecipientsFile(recipients.file)
                let encrypted = try engine.encrypt(misencrypted.plaintext, to: recipients.ids)
                let folder = Self.folder(of: String(entry.relative.dropLast(4)))
                let allowed = try readers(of: misencrypted.ciphertext).map {
                    $0.union(try resolvedKeys(recipients.ids, &repair))
                }
                try checkAccepted(
                    encrypted, forFolder: folder, acceptance: repair.acceptance, allowed: allowed)
                try FileSystem.atomicWrite(entry.path, bytes: encrypted, mode: configuration.fileMode)
                fixed = true
            }
        }
        return examined.findings + [
            StoreFinding(kind: .recipients, path: entry.relative, message: message, fixed: fixed)
        ]
    }

    /// The keys `ids` stand for, unambiguously.
    private func resolvedKeys(_ ids: [String], _ repair: inout Repair) throws -> Set<String> {
        let lines = try repair.resolved[ids] ?? resolve(ids)
        repair.resolved[ids] = lines
        return Set(lines.filter { !$0.isAmbiguous }.flatMap { $0.keys.map(\.fingerprint) })
    }

    /// Why re-encrypting a mis-encrypted entry for its `.gpg-id` must wait, or `nil` when it may go on:
    /// it adds readers (keys not the user's own that cannot read it now) and one of them is not
    /// accepted for its folder, or the user did not confirm.
    private func widening(
        of entry: EntryCheck, _ ciphertext: [UInt8], _ recipients: Recipients, repair: inout Repair,
        asking: Bool
    ) throws -> String? {
        let own = try repair.own ?? ownKeys()
        repair.own = own
        let current = try readers(of: ciphertext) ?? []
        let added = try resolvedKeys(recipients.ids, &repair).subtracting(current).subtracting(own).sorted()
        guard !added.isEmpty else { return nil }
        let keys = try added.map { fingerprint in
            try engine.keys(matching: [fingerprint], secretOnly: false).first.map(Self.describe)
                ?? fingerprint
        }
        let folder = Self.folder(of: String(entry.relative.dropLast(4)))
        if let acceptance = repair.acceptance {
            let accepted = acceptance.accepted.keys(forFolder: folder)
            if let first = added.first(where: { !accepted.contains($0) }) {
                return "it would add \(keys.joined(separator: ", ")), and \(first) is not accepted for "
                    + (folder.isEmpty ? "the store" : Quoting.quoted(folder)) + "; \(configuration.program) "
                    + "recipients accept \(folder.isEmpty ? "" : "-p \(Quoting.quoted(folder)) ")\(first) first"
            }
        }
        guard asking else {
            return "it would add \(keys.joined(separator: ", ")); fsck --fix asks on a terminal first"
        }
        let name = String(entry.relative.dropLast(4))
        let lastCommit = try? git(for: entry.path)?.runUnchecked([
            "log", "-1", "--format=%h %an", "--", entry.path,
        ])
        var request = Widening(
            name: name, keys: keys,
            lastChange: lastCommit.flatMap { $0.status == 0 && !$0.outputText.isEmpty ? $0.outputText : nil })
        request.writtenIn = repair.policy.otherOrigins(of: ciphertext, besides: folder).sorted()
        request.notWrittenHere = try repair.policy.isForeign(ciphertext, inFolder: folder, wanted: recipients)
        guard let confirm = repair.confirm, confirm(request) else {
            return "it would add \(keys.joined(separator: ", ")); fsck --fix asks on a terminal before it "
                + "lets more keys read an entry"
        }
        return nil
    }

    private func gitFindings(_ repository: GitRepository, fix: Bool) throws -> [StoreFinding] {
        var findings: [StoreFinding] = []
        if let operation = repository.unfinishedOperation() {
            let message =
                operation == "sync"
                ? "a sync was interrupted; sync or fsck --fix undoes what it left"
                : "a \(operation) is in progress; finish it with git \(operation) --continue or undo it with "
                    + "git \(operation) --abort"
            findings.append(StoreFinding(kind: .git, path: "git", message: message, fixed: false))
        }
        // What a git killed half-way leaves: its index lock (when no git holds it) and the copies it makes
        // for a merge driver.
        for lock in repository.staleLocks {
            if fix { unlink(lock) }
            findings.append(
                StoreFinding(
                    kind: .git,
                    path: lock.isPath(inside: root) ? String(lock.droppingPathPrefix(root)) : lock,
                    message: "left by a git that was killed; git refuses to work until it is removed",
                    fixed: fix))
        }
        for leftover in SyncIntegration.mergeLeftovers(in: repository) {
            if fix { unlink(leftover) }
            findings.append(
                StoreFinding(
                    kind: .strayFile, path: String(leftover.droppingPathPrefix(root)),
                    message: "a copy git made for a merge and left when it was killed", fixed: fix))
        }
        let status = try repository.runUnchecked(["status", "--porcelain"])
        if status.status != 0 {
            findings.append(
                StoreFinding(
                    kind: .git, path: "git", message: "git status failed: \(status.errorText)", fixed: false))
        } else if !status.standardOutput.isEmpty {
            let count = status.outputText.split(separator: "\n").count
            findings.append(
                StoreFinding(
                    kind: .git, path: "git", message: "\(count) uncommitted change(s) in the work tree",
                    fixed: false))
        }
        return findings
    }

    /// Whether `name` is a temporary file of an interrupted write (coffer's or pass's).
    static func isStrayTemporaryFile(_ name: String) -> Bool {
        name.contains(FileSystem.temporaryMarker) || (name.contains(".gpg.tmp.") && name.hasSuffix(".--"))
    }
}
