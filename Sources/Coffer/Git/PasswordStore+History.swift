extension PasswordStore {
    /// The store's own repository (at its root), or an error saying how to make one.
    package func rootRepository() throws -> GitRepository {
        guard let repository = git(for: root + "/.gpg-id"), FileSystem.kind(root + "/.git") != .missing else {
            throw CofferError(
                .notAGitRepository, "the password store is not a git repository; make it one with git init")
        }
        return repository
    }

    /// The path of entry `name` relative to the top of its repository.
    private func repositoryPath(of name: String, in repository: GitRepository) -> String {
        repository.pathspec(entryPath(name))
    }

    /// The commits that touched entry `name`, newest first, following renames.
    public func history(_ name: String) throws -> [EntryCommit] {
        try EntryName.validate(name)
        let repository = try rootRepository()
        let commits = try repository.history(of: repositoryPath(of: name, in: repository))
        if commits.isEmpty { throw CofferError(.notFound, "\(name) has no history in the password store.") }
        return commits
    }

    /// Decrypts entry `name` as it was in `revision`, following renames; nothing is written to disk.
    public func read(_ name: String, revision: String) throws -> SecureBytes {
        try engine.decrypt(try ciphertext(of: name, at: revision))
    }

    /// The encrypted bytes of entry `name` at `revision`.
    func ciphertext(of name: String, at revision: String) throws -> [UInt8] {
        try EntryName.validate(name)
        let repository = try rootRepository()
        guard let commit = repository.resolve(revision) else {
            throw CofferError(.notFound, "\(revision) is not a revision of the password store.")
        }
        let path = repositoryPath(of: name, in: repository)
        var candidates = [path]
        if let history = try? repository.history(of: path) {
            // The entry's path as of `revision`: that of the newest commit touching it at or before it.
            if let match = history.first(where: {
                $0.hash == commit || repository.isAncestor($0.hash, of: commit)
            }) {
                candidates.insert(match.path, at: 0)
            }
        }
        for candidate in candidates {
            if let bytes = try repository.contents(of: candidate, at: commit) { return bytes }
        }
        throw CofferError(.notFound, "\(name) is not in the password store at \(revision).")
    }

    /// Writes entry `name` back as it was in `revision`, re-encrypted for today's recipients, as a new commit.
    public func restore(_ name: String, revision: String) throws {
        try withStoreLock {
            let plaintext = try read(name, revision: revision)
            try write(name, plaintext, commitMessage: "Restore \(name) from \(revision).")

        }
    }
}
