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
        /// An entry encrypted to other keys than its `.gpg-id` names.
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
    /// With `fix`, mis-encrypted entries are re-encrypted, permissions tightened and stray files removed.
    public func check(fix: Bool = false) throws -> [StoreFinding] {
        guard FileSystem.isDirectory(root) else {
            throw CofferError(.notFound, "password store is empty. Try \"pass init\".")
        }
        var findings: [StoreFinding] = []
        var wantedByRecipients: [[String]: Set<String>] = [:]
        var checkedSignatures = Set<String>()
        func relative(_ path: String) -> String { String(path.dropFirst(root.count + 1)) }

        func visit(_ folder: String) throws {
            for name in try FileSystem.contents(of: folder) {
                let path = folder + "/" + name
                if name == ".git" && folder == root { continue }
                let kind = FileSystem.kind(path)
                if kind == .symlink { continue }
                var info = stat()
                guard lstat(path, &info) == 0 else { continue }
                let expected = kind == .directory ? configuration.folderMode : configuration.fileMode
                if info.st_mode & 0o777 & ~expected != 0 {
                    if fix { chmod(path, info.st_mode & 0o777 & expected) }
                    findings.append(
                        StoreFinding(
                            kind: .permissions, path: relative(path),
                            message: "mode \(String(info.st_mode & 0o777, radix: 8)), expected at most "
                                + String(expected, radix: 8), fixed: fix))
                }
                if kind == .directory {
                    try visit(path)
                    continue
                }
                if Self.isStrayTemporaryFile(name) {
                    if fix { unlink(path) }
                    findings.append(
                        StoreFinding(
                            kind: .strayFile, path: relative(path),
                            message: "temporary file left by an interrupted write",
                            fixed: fix))
                    continue
                }
                if name == ".gpg-id" && !configuration.signingKeys.isEmpty
                    && checkedSignatures.insert(path).inserted
                {
                    do {
                        try verifyRecipientsFile(path)
                    } catch let error as CofferError {
                        findings.append(
                            StoreFinding(
                                kind: .signature, path: relative(path), message: error.message, fixed: false))
                    }
                }
                guard name.hasSuffix(".gpg") else { continue }
                try checkEntry(
                    path, relative: relative(path), fix: fix, wanted: &wantedByRecipients, into: &findings)
            }
        }
        try visit(root)
        if let repository = git(for: root + "/.gpg-id"), FileSystem.kind(root + "/.git") != .missing {
            findings += try gitFindings(repository)
        }
        return findings
    }

    private func checkEntry(
        _ path: String, relative: String, fix: Bool, wanted: inout [[String]: Set<String>],
        into findings: inout [StoreFinding]
    ) throws {
        let name = String(relative.dropLast(4))
        let ciphertext = try FileSystem.readFile(path)
        let plaintext: SecureBytes
        do {
            guard !ciphertext.isEmpty else { throw CofferError(.format, "the file is empty") }
            plaintext = try engine.decrypt(ciphertext)
        } catch {
            findings.append(
                StoreFinding(
                    kind: .undecryptable, path: relative, message: "does not decrypt: \(error)", fixed: false)
            )
            return
        }
        if plaintext.withUnsafeBytes({ EntryMerge.containsConflict($0) }) {
            findings.append(
                StoreFinding(
                    kind: .conflict, path: relative, message: "holds a merge conflict; resolve it with edit",
                    fixed: false))
        }
        guard let recipients = try? recipients(for: name) else {
            findings.append(
                StoreFinding(kind: .recipients, path: relative, message: "no .gpg-id applies", fixed: false))
            return
        }
        let keys: Set<String>
        if let known = wanted[recipients.ids] {
            keys = known
        } else {
            do {
                keys = try engine.encryptionKeyIDs(for: recipients.ids)
            } catch {
                findings.append(
                    StoreFinding(
                        kind: .recipients, path: relative, message: "cannot resolve its recipients: \(error)",
                        fixed: false))
                return
            }
            wanted[recipients.ids] = keys
        }
        let current = OpenPGPPackets.recipientKeyIDs(ciphertext) ?? []
        guard current != keys else { return }
        var fixed = false
        if fix {
            try verifyRecipientsFile(recipients.file)
            let encrypted = try engine.encrypt(plaintext, to: recipients.ids)
            try FileSystem.atomicWrite(path, bytes: encrypted, mode: configuration.fileMode)
            fixed = true
        }
        findings.append(
            StoreFinding(
                kind: .recipients, path: relative,
                message: "encrypted to \(current.sorted().joined(separator: " ")), .gpg-id wants "
                    + keys.sorted().joined(separator: " "), fixed: fixed))
    }

    private func gitFindings(_ repository: GitRepository) throws -> [StoreFinding] {
        var findings: [StoreFinding] = []
        let gitDirectory = root + "/.git"
        for (marker, what) in [
            ("rebase-merge", "a rebase is in progress"), ("rebase-apply", "a rebase is in progress"),
            ("MERGE_HEAD", "a merge is in progress"),
        ] where FileSystem.kind(gitDirectory + "/" + marker) != .missing {
            findings.append(StoreFinding(kind: .git, path: "git", message: what, fixed: false))
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
