import Coffer

/// `show`, `ls`, `list` (and a bare name): an entry's text, one line of it on the clipboard or as a QR
/// code, or the tree of a folder.
enum ShowCommand {
    static let synopsis =
        "[--clip[=line-number],-c[line-number]] [--qrcode[=line-number],-q[line-number]] [pass-name]"

    static let qrcode = ValueOption.optional("q", "qrcode", "show line N (1) as a QR code")
    static let clip = ValueOption.optional("c", "clip", "copy line N (1) to the clipboard")
    static let revision = ValueOption.required("r", "revision", "show the entry as it was at a git revision")
    static let field = ValueOption.required(nil, "field", "show (or copy) one field; password is line 1")
        .exact
    static let asJSON = Flag(nil, "json", "print the entry as JSON").exact
    static let flat = Flag(nil, "flat", "list entry names one a line").exact

    /// The options of `show` and `ls`, in pass's order (`--revision` is coffer's).
    static let options = Command.options(qrcode, clip, revision, field, asJSON, flat)

    /// `show`.
    static let command = Command(
        names: ["show"], options: options, usage: synopsis,
        help: { invocation in
            [
                "Show existing password and optionally put it on the clipboard.",
                "If put on the clipboard, it will be cleared in \(invocation.clipTime) seconds.",
                "With --revision,-r rev, show pass-name as it was in the git revision rev.",
            ]
        }, passHead: "[show] [--clip[=line-number],-c[line-number]] pass-name",
        passLines: { invocation in
            [
                "        Show existing password and optionally put it on the clipboard.",
                "        If put on the clipboard, it will be cleared in \(invocation.clipTime) seconds.",
            ]
        }, run: run)

    /// Runs the command.
    static func run(_ arguments: [String], _ invocation: Invocation) throws {
        let (parsed, failed) = invocation.parseOptions(arguments, options)
        let clip = parsed.given(Self.clip)
        let qrcode = parsed.given(Self.qrcode)
        // The line of the last of the two given (pass reads them in order).
        let selectedLine =
            parsed.last(of: Self.qrcode, Self.clip).map { $0.flatMap { $0.isEmpty ? nil : $0 } ?? "1" } ?? ""
        let field = parsed[Self.field]
        let json = parsed[asJSON]
        let flat = parsed[Self.flat]
        if failed || (qrcode && clip) || (json && (clip || qrcode || field != nil)) {
            throw invocation.usage(synopsis)
        }

        let path = parsed.operands.first ?? ""
        try invocation.checkSneakyPaths(path)
        let store = invocation.store
        if let revision = parsed[Self.revision] {
            // Beyond pass: the entry as it was in a git revision, decrypted in memory.
            if clip || qrcode || path.isEmpty { throw invocation.usage("--revision,-r rev pass-name") }
            let contents = try store.read(path, revision: revision)
            if try showPart(of: contents, field: field, json: json, name: path, invocation) { return }
            contents.withUnsafeBytes { standardOutput.write($0) }
            return
        }
        if flat && !store.contains(path) {
            guard path.isEmpty || store.isFolder(path) else {
                throw Exit.die("Error: \(path) is not in the password store.")
            }
            for name in try store.allEntries(in: path) { standardOutput.line(name) }
            return
        }
        if store.contains(path) {
            invocation.warnAboutUnappliedGPGOptions(encrypting: false)
            let contents = try decrypt(path, store)
            if let field, clip || qrcode {
                let value = try fieldValue(of: contents, field, name: path)
                if clip {
                    try Clipboard.copy(value, name: path, invocation)
                } else {
                    try QRCode.show(value, name: path, invocation)
                }
                return
            }
            if try showPart(of: contents, field: field, json: json, name: path, invocation) { return }
            if flat {
                standardOutput.line(path)
                return
            }
            if !clip && !qrcode {
                contents.withUnsafeBytes { standardOutput.write($0) }
                warnAboutConflict(path, contents, invocation)
                return
            }
            guard selectedLine.utf8.allSatisfy({ (48...57).contains($0) }) else {
                throw Exit.die("Clip location '\(selectedLine)' is not a number.")
            }
            let secret = line(Int(selectedLine) ?? Int.max, of: contents)
            guard !secret.isEmpty else {
                throw Exit.die("There is no password to put on the clipboard at line \(selectedLine).")
            }
            if clip {
                try Clipboard.copy(secret, name: path, invocation)
            } else {
                try QRCode.show(secret, name: path, invocation)
            }
        } else if store.isFolder(path) {
            standardOutput.line(
                path.isEmpty ? "Password Store" : path.withoutLastSlash)
            var listing = TreeListing(environment: invocation.environment)
            standardOutput.write(bytes: listing.render(invocation.prefix + "/" + path))
        } else if path.isEmpty {
            throw Exit.die("Error: password store is empty. Try \"\(invocation.program) init\".")
        } else {
            throw Exit.die("Error: \(path) is not in the password store.")
        }
    }

    /// `--field KEY` (the value and a newline) or `--json`; `false` when neither was asked for.
    private static func showPart(
        of contents: SecureBytes, field: String?, json: Bool, name: String, _ invocation: Invocation
    ) throws -> Bool {
        if let field {
            let value = try fieldValue(of: contents, field, name: name)
            value.withUnsafeBytes { standardOutput.write($0) }
            standardOutput.write(bytes: [UInt8(ascii: "\n")])
            return true
        }
        guard json else { return false }
        var text = EntryJSON.render(name: name, contents: contents)
        text.withUnsafeMutableBytes {
            standardOutput.write(UnsafeRawBufferPointer($0))
            wipeMemory($0.baseAddress, count: $0.count)
        }
        return true
    }

    /// The exact bytes of `field` in an entry (`password` is line 1), UTF-8 or not; a missing field is an
    /// error (status 1).
    static func fieldValue(of contents: SecureBytes, _ field: String, name: String) throws -> SecureBytes {
        let secret = Secret(parsing: contents.withUnsafeBytes { Array($0) })
        if field.lowercased() == "password" { return SecureBytes(secret.passwordBytes) }
        guard var value = secret.fieldBytes(field) else {
            throw Exit.die("Error: \(name) has no field \(field).")
        }
        defer { value.withUnsafeMutableBytes { wipeMemory($0.baseAddress, count: $0.count) } }
        return SecureBytes(value)
    }

    /// Warns on standard error when the entry holds conflict markers left by a merge.
    static func warnAboutConflict(_ name: String, _ contents: SecureBytes, _ invocation: Invocation) {
        guard contents.withUnsafeBytes({ EntryMerge.containsConflict($0) }) else { return }
        standardError.line(
            "Warning: \(name) holds a merge conflict; resolve it with \"\(invocation.program) edit \(name)\"."
        )
    }

    /// Decrypts an entry; a gpg failure exits with gpg's status 2 as pass's `|| exit $?` does.
    static func decrypt(_ name: String, _ store: PasswordStore) throws -> SecureBytes {
        do {
            return try store.read(name)
        } catch let error as GPGError {
            throw Exit(2, GPGMessages.decryptionFailure(error))
        }
    }

    /// `tail -n +N | head -n 1` in a command substitution: line `number` (0 and 1 both mean the first)
    /// without its line ending's final newlines.
    static func line(_ number: Int, of contents: SecureBytes) -> SecureBytes {
        contents.withUnsafeBytes { bytes in
            var start = 0
            var current = 1
            while current < number {
                guard let newline = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) else {
                    return SecureBytes([])
                }
                start = newline + 1
                current += 1
            }
            let end = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count
            return SecureBytes(bytes[start..<end].filter { $0 != 0 })
        }
    }
}

/// `ls`, `list`: the tree of the store or of a folder (``ShowCommand`` does the work).
enum ListCommand {
    /// `ls`, `list`.
    static let command = Command(
        names: ["ls", "list"], options: ShowCommand.options, usage: "[subfolder]", operands: .folders,
        help: { _ in ["List passwords."] }, passHead: "[ls] [subfolder]", run: ShowCommand.run)
}
