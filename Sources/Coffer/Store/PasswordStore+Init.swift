extension PasswordStore {
    /// Sets the recipients of the store (or of `subfolder`) and re-encrypts what needs it, as `pass init`.
    ///
    /// Writes `.gpg-id` (one id a line), signs it when `PASSWORD_STORE_SIGNING_KEY` is set, then
    /// re-encrypts every entry below whose encryption subkeys differ from the new ones; entries that
    /// already match stay byte-identical. `[""]` removes the folder's `.gpg-id` instead.
    public func initialize(
        recipients: [String], subfolder: String = "", onEvent: (StoreEvent) -> Void = { _ in }
    ) throws {
        try EntryName.validate(subfolder)
        let folder = root + "/" + subfolder
        let suffix = subfolder.isEmpty ? "" : " (\(subfolder))"
        if !subfolder.isEmpty && !FileSystem.isDirectory(folder) && FileSystem.kind(folder) != .missing {
            throw CofferError(.invalidArgument, "\(folder) exists but is not a directory.")
        }
        let gpgID = folder + "/.gpg-id"
        let listed = recipients.joined(separator: ", ")
        if recipients == [""] {
            guard FileSystem.isFile(gpgID) else {
                throw CofferError(.notFound, "\(gpgID) does not exist and so cannot be removed.")
            }
            try FileSystem.remove(gpgID)
            onEvent(.removedFile(gpgID))
            if let repository = git(for: gpgID) {
                try repository.remove(paths: [gpgID])
                try repository.commit(message: "Deinitialize \(gpgID)\(suffix).", output: gitOutput)
            }
            removeEmptyFolders(from: FileSystem.parent(of: gpgID))
        } else {
            try checkInsideStore(gpgID)
            try makeFolders(folder, onEvent: onEvent)
            let text = recipients.map { $0 + "\n" }.joined()
            try FileSystem.atomicWrite(gpgID, bytes: Array(text.utf8), mode: configuration.fileMode)
            onEvent(.initialized(recipients: recipients, subfolder: subfolder))
            try commit([gpgID], "Set GPG id to \(listed)\(suffix).")
            if !configuration.signingKeys.isEmpty {
                try signRecipientsFile(gpgID)
            }
        }
        if FileSystem.isDirectory(folder) { try reencrypt(folder, onEvent: onEvent) }
        try commit([folder], "Reencrypt password store using new GPG id \(recipients == [""] ? "" : listed)\(suffix).")
    }

    /// Signs `.gpg-id` with the signing keys and commits the signature.
    private func signRecipientsFile(_ gpgID: String) throws {
        let contents = try FileSystem.readFile(gpgID)
        var signature: [UInt8] = []
        for key in configuration.signingKeys {
            signature += try engine.signDetached(contents, signer: key)
        }
        try FileSystem.atomicWrite(gpgID + ".sig", bytes: signature, mode: configuration.fileMode)
        let signers = try engine.verifyDetached(signature: signature, of: contents)
            .filter(\.isValid).compactMap { $0.fingerprints.last }
        guard !signers.isEmpty else { throw CofferError(.badSignature, "Signing of .gpg_id unsuccessful.") }
        try commit([gpgID + ".sig"], "Signing new GPG id with \(signers.joined(separator: ",")).")
    }

    /// Re-encrypts every entry at or below `path` (a file or a folder) whose encryption subkeys differ
    /// from those of its recipients, as pass's `reencrypt_path`; `.git` and symlinks are skipped.
    public func reencrypt(_ path: String, onEvent: (StoreEvent) -> Void = { _ in }) throws {
        var wantedByRecipients: [[String]: Set<String>] = [:]
        for file in try Self.entryFiles(at: path) {
            let relative = String(file.dropFirst(root.count + 1))
            let name = String(relative.dropLast(4))
            let recipients = try recipients(forFolder: Self.folder(of: relative))
            try verifyRecipientsFile(recipients.file)
            let wanted: Set<String>
            if let known = wantedByRecipients[recipients.ids] {
                wanted = known
            } else {
                wanted = try engine.encryptionKeyIDs(for: recipients.ids)
                wantedByRecipients[recipients.ids] = wanted
            }
            let ciphertext = try FileSystem.readFile(file)
            if let current = OpenPGPPackets.recipientKeyIDs(ciphertext), current == wanted { continue }
            onEvent(.reencrypted(name: name, keyIDs: wanted.sorted()))
            let plaintext = try engine.decrypt(ciphertext)
            let encrypted = try engine.encrypt(plaintext, to: recipients.ids)
            try FileSystem.atomicWrite(file, bytes: encrypted, mode: configuration.fileMode)
        }
    }

    /// The `*.gpg` files (any case) at or below `path`, as `find PATH -path '*/.git' -prune -o -iname '*.gpg'`
    /// lists them, without symlinks.
    static func entryFiles(at path: String) throws -> [String] {
        let trimmed = path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
        var files: [String] = []
        func visit(_ current: String) throws {
            switch FileSystem.kind(current) {
            case .file:
                if current.lowercased().hasSuffix(".gpg") { files.append(current) }
            case .directory:
                if current.hasSuffix("/.git") { return }
                for name in try FileSystem.contents(of: current, sorted: false) { try visit(current + "/" + name) }
            default:
                return
            }
        }
        try visit(trimmed)
        return files
    }
}
