import Coffer

/// `generate [--no-symbols,-n] [--clip,-c] [--qrcode,-q] [--in-place,-i | --force,-f] pass-name
/// [pass-length]`: a new random password, stored as the whole entry or (in place) as its first line.
enum GenerateCommand {
    static let noSymbols = Flag("n", "no-symbols", "use letters and digits only")
    static let qrcodeFlag = Flag("q", "qrcode", "show the password as a QR code")
    static let clipFlag = Flag("c", "clip", "copy the password to the clipboard")
    static let inPlaceFlag = Flag("i", "in-place", "replace only the first line")
    static let forceFlag = Flag("f", "force", "overwrite without asking")

    /// `generate`.
    static let command = Command(
        names: ["generate"],
        options: Command.options(noSymbols, qrcodeFlag, clipFlag, inPlaceFlag, forceFlag), usage: synopsis,
        help: { invocation in
            [
                "Generate a new password of pass-length (or \(invocation.generatedLength) if unspecified) with "
                    + "optionally no symbols.",
                "Optionally put it on the clipboard and clear board after \(invocation.clipTime) seconds.",
                "Prompt before overwriting existing password unless forced.",
                "Optionally replace only the first line of an existing file with a new password.",
            ]
        },
        passHead:
            "generate [--no-symbols,-n] [--clip,-c] [--in-place,-i | --force,-f] pass-name [pass-length]",
        run: run)

    static let synopsis =
        "[--no-symbols,-n] [--clip,-c] [--qrcode,-q] [--in-place,-i | --force,-f] pass-name [pass-length]"

    /// Runs the command.
    static func run(_ arguments: [String], _ invocation: Invocation) throws {
        let (parsed, failed) = invocation.parseOptions(arguments, Self.command.options)
        let (force, inPlace) = (parsed[forceFlag], parsed[inPlaceFlag])
        let (clip, qrcode) = (parsed[clipFlag], parsed[qrcodeFlag])
        let operands = parsed.operands
        if failed || !(1...2).contains(operands.count) || (force && inPlace) || (qrcode && clip) {
            throw invocation.usage(synopsis)
        }
        let path = operands[0]
        let length = operands.count == 2 && !operands[1].isEmpty ? operands[1] : invocation.generatedLength
        try invocation.checkSneakyPaths(path)
        guard !length.isEmpty, length.utf8.allSatisfy({ (48...57).contains($0) }) else {
            throw Exit.die("Error: pass-length \"\(length)\" must be a number.")
        }
        guard let count = Int(length), count > 0 else {
            throw Exit.die("Error: pass-length must be greater than zero.")
        }
        // pass would read that many bytes from /dev/urandom into memory; a mebibyte is plenty.
        guard count <= 1 << 20 else { throw Exit.die("Error: pass-length must be at most \(1 << 20).") }
        try invocation.makeFolder(for: path)
        let store = invocation.store
        _ = try store.verifiedRecipients(forFolder: Invocation.dirname(path))
        if !inPlace && !force && FileSystem.exists(store.entryPath(path)) {
            try Terminal.confirm("An entry already exists for \(path). Overwrite it?")
        }

        let characters = parsed[noSymbols] ? invocation.characterSetNoSymbols : invocation.characterSet
        let password: SecureBytes
        do {
            password = try PasswordGenerator(characterSet: characters).generate(length: count)
        } catch let error as CofferError {
            standardError.line("tr: \(error.message)")
            throw Exit.die("Could not generate password from /dev/urandom.")
        }
        invocation.warnAboutUnappliedGPGOptions()
        if inPlace {
            // Read, replace line 1 and write under the store lock: a change another process makes in
            // between is never overwritten.
            do {
                try store.update(path, commitMessage: "Replace generated password for \(path).") { old in
                    // Replacing the first line of a kept merge conflict would keep both sides' old
                    // passwords and hide the conflict: it has to be resolved first.
                    if old.withUnsafeBytes({ EntryMerge.containsConflict($0) }) {
                        throw Exit.die(
                            "Error: \(path) holds a merge conflict; resolve it with \"\(invocation.program) edit "
                                + "\(path)\" before generating a password in place.")
                    }
                    return old.withUnsafeBytes { bytes in
                        let rest =
                            bytes.firstIndex(of: UInt8(ascii: "\n")).map { Array(bytes[($0 + 1)...]) } ?? []
                        return SecureBytes(password.bytes + [10] + rest)
                    }
                }
            } catch let error as CofferError where error.code == .notFound {
                // What pass shows: gpg's complaint about the missing file.
                standardError.line(GPGMessages.cannotOpen(store.entryPath(path)))
                throw Exit.die("Could not reencrypt new password.")
            } catch let error as GPGError {
                // gpg's words for what failed to decrypt, the library's for what failed to encrypt.
                standardError.line(GPGMessages.decryptionFailure(error))
                throw Exit.die("Could not reencrypt new password.")
            }
        } else {
            try InsertCommand.write(
                path, SecureBytes(password.bytes + [10]), invocation,
                message: "Add generated password for \(path).")
        }

        if clip {
            try Clipboard.copy(password, name: path, invocation)
        } else if qrcode {
            try QRCode.show(password, name: path, invocation)
        } else {
            standardOutput.write(
                "\u{1b}[1mThe generated password for \u{1b}[4m\(path)\u{1b}[24m is:\u{1b}[0m\n\u{1b}[1m\u{1b}[93m"
            )
            password.withUnsafeBytes { standardOutput.write($0) }
            standardOutput.write("\u{1b}[0m\n")
        }
    }
}
