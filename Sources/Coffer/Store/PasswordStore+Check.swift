#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

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
    public func check(fix: Bool = false) throws -> [StoreFinding] {
        // Repairs are changes: they wait for other writers and are committed as one.
        guard fix else { return try examineStore(fix: false) }
        return try StoreLock.withLock(root: root, timeout: configuration.lockTimeout) {
            var undone: [StoreFinding] = []
            if let repository = storeRepository, let undo = try undoInterruptedSync(repository) {
                let kept = undo.kept.map { "; the commits it had started are kept at \($0)" } ?? ""
                undone.append(
                    StoreFinding(
                        kind: .git, path: "git", message: "an interrupted sync was undone\(kept)", fixed: true
                    ))
            }
            try storeRepository?.ensureNoUnfinishedOperation()
            return try undone + examineStore(fix: true)
        }
    }

    /// The store's own repository (a `.git` at the root), if it has one.
    private var storeRepository: GitRepository? {
        guard FileSystem.kind(root + "/.git") != .missing else { return nil }
        return git(for: root + "/.gpg-id")
    }

    private func examineStore(fix: Bool) throws -> [StoreFinding] {
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
        func recipientProblems(_ file: String) -> [String] {
            guard let ids = try? GPGIDFile.parse(FileSystem.readFile(file)), !ids.isEmpty else { return [] }
            if let known = problemsByRecipients[ids] { return known }
            let problems: [String]
            do {
                problems = try self.engine.recipientProblems(ids).map(\.message)
            } catch {
                problems = ["cannot check its recipients: \(error)"]
            }
            problemsByRecipients[ids] = problems
            return problems
        }
        func relative(_ path: String) -> String { String(path.dropFirst(root.count + 1)) }
        func found(_ kind: StoreFinding.Kind, _ path: String, _ message: String, fixed: Bool = false) {
            steps.append(
                .found(StoreFinding(kind: kind, path: relative(path), message: message, fixed: fixed)))
        }

        try FileTree.walk(root, sorted: true, examineFiles: true) { path, item in
            let name = item.nameString
            if item.isLink || (name == ".git" && FileSystem.parent(of: path) == root) { return false }
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
        try Parallel.forEach(entries.map(\.1)) { entry in
            try Self.examine(entry, engine: engine)
        } consume: { index, result in
            flush(upTo: entries[index].0)
            nextStep += 1
            findings += try settle(entries[index].1, result.get(), fix: fix)
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

    /// What the walk of ``check(fix:)`` met: a finding made at once, or an entry to decrypt.
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
        /// The plaintext, kept when the entry is encrypted to other keys than it should be.
        var misencrypted: (plaintext: SecureBytes, current: Set<String>, wanted: Set<String>)?
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
        if current != entry.wanted { examined.misencrypted = (plaintext, current, entry.wanted) }
        return examined
    }

    /// The findings of one examined entry, re-encrypting it first when it is mis-encrypted and `fix` is set.
    private func settle(_ entry: EntryCheck, _ examined: Examined, fix: Bool) throws -> [StoreFinding] {
        guard let misencrypted = examined.misencrypted, let recipients = entry.recipients else {
            return examined.findings
        }
        if fix {
            try verifyRecipientsFile(recipients.file)
            let encrypted = try engine.encrypt(misencrypted.plaintext, to: recipients.ids)
            try FileSystem.atomicWrite(entry.path, bytes: encrypted, mode: configuration.fileMode)
        }
        let message =
            "encrypted to \(misencrypted.current.sorted().joined(separator: " ")), .gpg-id wants "
            + misencrypted.wanted.sorted().joined(separator: " ")
        return examined.findings + [
            StoreFinding(kind: .recipients, path: entry.relative, message: message, fixed: fix)
        ]
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
                    path: lock.hasPrefix(root + "/") ? String(lock.dropFirst(root.count + 1)) : lock,
                    message: "left by a git that was killed; git refuses to work until it is removed",
                    fixed: fix))
        }
        for leftover in SyncIntegration.mergeLeftovers(in: repository) {
            if fix { unlink(leftover) }
            findings.append(
                StoreFinding(
                    kind: .strayFile, path: String(leftover.dropFirst(root.count + 1)),
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
