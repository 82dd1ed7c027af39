import Coffer

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `otp`: one-time passwords, built in and compatible with pass-otp 1.2 (Debian's `pass-extension-otp`):
/// the same subcommands and options, the same `otpauth://` line in the entry, the same outputs, messages,
/// exit statuses and commits. Codes are made in process (HMAC from libgcrypt), so oathtool is not needed;
/// where pass-otp passes oathtool's complaint on, coffer prints the same words.
///
/// Being built in, it answers before an `otp.bash` extension, as pass's own commands do.
///
/// Beyond pass-otp 1.2: `otp uri --clip` copies the URI (pass-otp 1.2 documents `-c` there but refuses it);
/// codes of 9 and 10 digits (oathtool makes 6 to 8); an entry's last line without a final newline is
/// kept by `append`; a failed commit fails the command; an entry that cannot be decrypted is never
/// rewritten.
enum OTPCommand {
    /// pass-otp's version (Debian's 1.2.0 calls itself 1.1.1).
    static let passOTPVersion = "1.1.1"

    private static let codeClip = Flag("c", "clip", "copy the code to the clipboard")
    private static let codeOptions = Command.options(codeClip)
    private static let force = Flag("f", "force", "overwrite without asking")
    private static let echo = Flag("e", "echo", "echo the input")
    private static let secret = Flag("s", "secret", "read the secret instead of a URI (SHA1, 30 s, 6 digits)")
    private static let issuer = ValueOption.required("i", "issuer", "the issuer, with --secret")
    private static let account = ValueOption.required("a", "account", "the account, with --secret")
    private static let insertOptions = Command.options(force, echo, secret, issuer, account)
    private static let uriClip = Flag("c", "clip", "copy the URI to the clipboard")
    private static let uriQRCode = Flag("q", "qrcode", "show the URI as a QR code")
    private static let uriOptions = Command.options(uriClip, uriQRCode)

    /// `otp`.
    static let command = Command(
        names: ["otp"],
        options: Command.options(
            Flag("c", "clip", "copy the code (or URI) to the clipboard"),
            Flag("q", "qrcode", "show the URI as a QR code (otp uri)")) + insertOptions,
        usage: "[code] [--clip,-c] pass-name | insert|append [options] [pass-name] | uri | validate uri",
        origin: .coffer,
        help: { invocation in
            [
                "Generate a one-time code from the entry's otpauth:// URI (TOTP or HOTP)",
                "and optionally put it on the clipboard; insert or append a URI, show or",
                "validate one. As pass-otp 1.2: see \(invocation.program) otp --help.",
            ]
        }, handlesHelp: true, reimplementsPassExtension: true, run: run)

    /// Runs the command: the first argument picks the subcommand, as pass-otp's final `case` does.
    static func run(_ arguments: [String], _ invocation: Invocation) throws {
        let rest = Array(arguments.dropFirst())
        switch arguments.first {
        case "help", "--help", "-h":
            standardOutput.write(usageText(invocation))
        case "version", "--version":
            standardOutput.line(passOTPVersion)
        case "insert", "add":
            try insert(rest, invocation)
        case "append":
            try append(rest, invocation)
        case "uri":
            try uri(rest, invocation)
        case "validate":
            _ = try parse(rest.first ?? "")
        case "code", "show":
            try code(rest, invocation)
        default:
            try code(arguments, invocation)
        }
    }

    // MARK: - code

    private static func code(_ arguments: [String], _ invocation: Invocation) throws {
        let (parsed, failed) = invocation.parseOptions(arguments, codeOptions)
        guard !failed, parsed.operands.count == 1 else { throw invocation.usage("[--clip,-c] pass-name") }
        var path = parsed.operands[0]
        if path.endsWithSlash { path = path.withoutLastSlash }
        try invocation.checkSneakyPaths(path)
        let store = invocation.store
        guard FileSystem.isFile(store.entryPath(path)) else { throw Exit.die("\(path): passfile not found.") }
        invocation.warnAboutUnappliedGPGOptions(encrypting: false)
        let contents = decryptOrReport(path, store)
        try refuseConflict(path, contents, invocation)
        guard let text = contents.withUnsafeBytes({ OneTimePassword.uri(in: $0) }) else {
            throw Exit.die("\(path): OTP secret not found.")
        }
        let key = try parse(text)
        let code: String
        switch key.kind {
        case .totp:
            code = try generate(path, invocation) { try key.code(at: Date()) }
        case .hotp:
            code = try advance(path, key, invocation)
        }
        if parsed[codeClip] {
            try Clipboard.copy(SecureBytes(string: code), name: "OTP code for \(path)", invocation)
        } else {
            standardOutput.line(code)
        }
    }

    /// Moves an HOTP counter on and saves the entry (re-encrypted, committed with pass-otp's message),
    /// under the store's lock; returns the new counter's code, made with SHA-1 as pass-otp makes it.
    ///
    /// The entry is read again under the lock, so that runs at the same time each use a counter of their
    /// own and none is lost.
    private static func advance(_ path: String, _ key: OneTimePassword, _ invocation: Invocation) throws
        -> String
    {
        // What cannot make a code is reported first, as pass-otp reports it before writing anything.
        _ = try generate(path, invocation) { try key.code(counter: 0, algorithm: .sha1) }
        try invocation.makeFolder(for: path)
        _ = try invocation.store.verifiedRecipients(forFolder: Invocation.dirname(path))
        var code = ""
        try encrypt(path, invocation) {
            try invocation.store.update(path, commitMessage: "Increment HOTP counter for \(path).") {
                current in
                try refuseConflict(path, current, invocation)
                guard let text = current.withUnsafeBytes({ OneTimePassword.uri(in: $0) }) else {
                    throw Exit.die("\(path): OTP secret not found.")
                }
                let key = try parse(text)
                guard key.kind == .hotp else {
                    throw Exit.die("\(path): the entry changed while its code was made; try again.")
                }
                // A counter below one this clone took (brought back by a sync, or by another URI line put
                // first) moves on from the one taken: no code is handed out twice. It is recorded before
                // the entry is written: a failure from here on shows no code and leaves it skipped.
                let (advanced, from): (OneTimePassword, Int64?)
                do {
                    (advanced, from) = try invocation.store.takeNextHOTPCounter(key)
                } catch let error as CofferError where error.code == .invalidArgument {
                    throw Exit.die("\(path): \(error.message).")
                }
                if let from {
                    standardError.line(
                        "\(Quoting.quoted(path)): the HOTP counter \(key.counter ?? 0) is below \(from), which this "
                            + "clone already took or saw; moving on from \(from).")
                }
                code = try generate(path, invocation) {
                    try key.code(counter: UInt64(bitPattern: advanced.counter ?? 0), algorithm: .sha1)
                }
                var rewritten = current.withUnsafeBytes { advanced.replacingURIs(in: $0) }
                defer { rewritten.withUnsafeMutableBytes { wipeMemory($0.baseAddress, count: $0.count) } }
                return SecureBytes(rewritten)
            }
        }
        return code
    }

    /// Refuses to make a code from an entry holding a merge conflict: its keys (two HOTP counters, say)
    /// are both there, and the first may hand out a code already used.
    private static func refuseConflict(_ path: String, _ contents: SecureBytes, _ invocation: Invocation)
        throws
    {
        guard contents.withUnsafeBytes({ EntryMerge.containsConflict($0) }) else { return }
        throw Exit.die(
            "Error: \(Quoting.quoted(path)) holds a merge conflict; resolve it with "
                + "\"\(invocation.program) edit \(path)\" first.")
    }

    /// Runs `make`, turning a key that cannot give a code into oathtool's complaint and pass-otp's line.
    private static func generate(_ path: String, _ invocation: Invocation, _ make: () throws -> String) throws
        -> String
    {
        do {
            return try make()
        } catch let error as OneTimePassword.CodeError {
            // oathtool names itself as pass-otp runs it: by the path `which` found.
            let oathtool =
                ChildProcess.findOnPath("oathtool", environment: invocation.environment) ?? "oathtool"
            switch error {
            case .invalidSecret:
                standardError.line("\(oathtool): base32 decoding failed: Base32 string is invalid")
            case .invalidDigits(let text):
                standardError.line("\(oathtool): invalid numeric value: \(text)")
            case .unsupportedDigits:
                standardError.line("\(oathtool): only digits 6 to 10 are supported")
            case .invalidPeriod(let text):
                standardError.line("\(oathtool): cannot parse time `\(text)s'")
            }
            throw Exit.die("\(path): failed to generate OTP code.")
        }
    }

    // MARK: - insert, append

    private static func insert(_ arguments: [String], _ invocation: Invocation) throws {
        let (parsed, failed) = invocation.parseOptions(arguments, insertOptions)
        if failed {
            throw invocation.usage(
                "insert [--force,-f] [--echo,-e] [--secret, -s] [--issuer,-i issuer] [--account,-a account] [pass-name]"
            )
        }
        var path = ""
        var prompt = "this token"
        if parsed.operands.count == 1 {
            path = parsed.operands[0]
            if path.endsWithSlash { path = path.withoutLastSlash }
            prompt = path
        }
        let key = try read(parsed, prompt: prompt, invocation)
        if path.isEmpty {
            if let issuer = key.issuer, !issuer.isEmpty { path = issuer + "/" }
            path += key.account
            // pass-otp would name a file with the bytes `%E9` decodes to; coffer's names are UTF-8 text.
            if path.contains("\u{FFFD}") {
                throw Exit.die("Error: the URI's label is not UTF-8 text once decoded; give a pass-name.")
            }
            try Terminal.confirm("Insert into \(path)?")
        }
        if !parsed[force] && FileSystem.exists(invocation.store.entryPath(path)) {
            try Terminal.confirm("An entry already exists for \(path). Overwrite it?")
        }
        try save(path, Array(key.uri.utf8), message: "Add OTP secret for \(path) to store.", invocation)
    }

    private static func append(_ arguments: [String], _ invocation: Invocation) throws {
        let (parsed, failed) = invocation.parseOptions(arguments, insertOptions)
        guard !failed, parsed.operands.count == 1 else {
            throw invocation.usage(
                "append [--force,-f] [--echo,-e] [--secret, -s] [--issuer,-i issuer] [--account,-a account] pass-name"
            )
        }
        var path = parsed.operands[0]
        if path.endsWithSlash { path = path.withoutLastSlash }
        let store = invocation.store
        guard FileSystem.isFile(store.entryPath(path)) else { throw Exit.die("Passfile not found") }
        // pass-otp would decrypt a file outside the store here and refuse only when writing.
        try invocation.checkSneakyPaths(path)
        invocation.warnAboutUnappliedGPGOptions()
        let contents = try ShowCommand.decrypt(path, store)
        if OneTimePassword.hasURILine(contents) {
            try Terminal.confirm("An OTP secret already exists for \(path). Overwrite it?")
        }
        let key = try read(parsed, prompt: path, invocation)
        // The entry is read again under the store's lock: what changed while the prompt waited is kept.
        try invocation.checkSneakyPaths(path)
        _ = try store.verifiedRecipients(forFolder: Invocation.dirname(path))
        try encrypt(path, invocation) {
            try store.update(path) { current in
                let set = OneTimePassword.settingURI(key.uri, in: current)
                let message =
                    set.replaced ? "Replace OTP secret for \(path)." : "Append OTP secret for \(path)."
                return (set.text, message)
            }
        }
    }

    /// Reads the URI, or with `--secret` the secret, from standard input as pass-otp does, and parses it.
    private static func read(_ parsed: OptionParser.Result, prompt: String, _ invocation: Invocation) throws
        -> OneTimePassword
    {
        let echo = parsed[Self.echo]
        guard parsed[secret] else {
            let uri = try readTwice("otpauth:// URI", "URIs", prompt: prompt, echo: echo)
            return try parse(uri.string)
        }
        // `false` and an empty value both mean the option was not given.
        let issuer = parsed[Self.issuer].flatMap { $0.isEmpty || $0 == "false" ? nil : $0 }
        let account = parsed[Self.account].flatMap { $0.isEmpty || $0 == "false" ? nil : $0 }
        guard issuer != nil || account != nil else {
            throw Exit.die("Missing one of either '--issuer' or '--account'")
        }
        let typed = try readTwice("secret", "secrets", prompt: prompt, echo: echo)
        return try parse(
            OneTimePassword.totpURI(
                issuer: issuer, account: account, secret: typed, utf8Locale: CoreutilsMessages.isUTF8Locale))
    }

    /// pass-otp's prompts: on a terminal twice, hidden (or once, echoed); otherwise one line, unprompted.
    private static func readTwice(_ what: String, _ plural: String, prompt: String, echo: Bool) throws
        -> SecureBytes
    {
        let question = "Enter \(what) for \(prompt): "
        guard Terminal.isTerminal(0) else { return Terminal.bashRead(prompt: question).value }
        if echo { return Terminal.bashRead(prompt: question, lineEditing: true).value }
        return try Terminal.readConfirmed(what, plural, for: prompt)
    }

    /// pass-otp's `otp_insert`: the sneaky-path check, the folder, the recipients, then `text` and a
    /// newline encrypted and committed.
    private static func save(_ path: String, _ text: [UInt8], message: String, _ invocation: Invocation)
        throws
    {
        try invocation.checkSneakyPaths(path)
        try invocation.makeFolder(for: path)
        _ = try invocation.store.verifiedRecipients(forFolder: Invocation.dirname(path))
        invocation.warnAboutUnappliedGPGOptions()
        try encrypt(path, invocation) {
            try invocation.store.write(path, SecureBytes(text + [UInt8(ascii: "\n")]), commitMessage: message)
        }
    }

    /// Runs a write, with pass-otp's `OTP secret encryption aborted.` when gpg fails.
    private static func encrypt(_ path: String, _ invocation: Invocation, _ write: () throws -> Void) throws {
        try InsertCommand.reportingEncryptionFailure(
            path, invocation, aborted: "OTP secret encryption aborted.", write)
    }

    // MARK: - uri

    private static func uri(_ arguments: [String], _ invocation: Invocation) throws {
        let (parsed, failed) = invocation.parseOptions(arguments, uriOptions)
        guard !failed, parsed.operands.count == 1 else {
            throw invocation.usage("uri [--clip,-c | --qrcode,-q] pass-name")
        }
        let path = parsed.operands[0]
        try invocation.checkSneakyPaths(path)
        let store = invocation.store
        guard FileSystem.isFile(store.entryPath(path)) else { throw Exit.die("Passfile not found") }
        invocation.warnAboutUnappliedGPGOptions(encrypting: false)
        let contents = decryptOrReport(path, store)
        let text =
            try contents.withUnsafeBytes({ OneTimePassword.uri(in: $0) }).map { try parse($0).uri } ?? ""
        if parsed[uriClip] {
            try Clipboard.copy(SecureBytes(string: text), name: "OTP key URI for \(path)", invocation)
        } else if parsed[uriQRCode] {
            try QRCode.show(SecureBytes(string: text), name: "OTP key URI for \(path)", invocation)
        } else {
            standardOutput.line(text)
        }
    }

    // MARK: - Shared

    /// Parses a URI, with pass-otp's words for what is wrong (the secret hidden by the parser).
    static func parse(_ uri: String) throws -> OneTimePassword {
        do {
            return try OneTimePassword(uri: uri)
        } catch let error as OneTimePassword.ParseError {
            switch error {
            case .unparsable(let uri): throw Exit.die("Cannot parse OTP key URI: \(uri)")
            case .missingAccount(let uri): throw Exit.die("Invalid key URI (missing accountname): \(uri)")
            case .missingSecret(let uri): throw Exit.die("Invalid key URI (missing secret): \(uri)")
            case .missingCounter(let uri): throw Exit.die("Invalid key URI (missing counter): \(uri)")
            }
        }
    }

    /// Decrypts an entry; when gpg fails, says so in its words and goes on with nothing, as pass-otp's
    /// `$(gpg -d ...)` does (the caller then finds no URI).
    private static func decryptOrReport(_ path: String, _ store: PasswordStore) -> SecureBytes {
        do {
            return try store.read(path)
        } catch let error as GPGError {
            standardError.line(GPGMessages.decryptionFailure(error))
        } catch let error as CofferError {
            standardError.line("Error: \(error.message)")
        } catch {
            standardError.line("Error: \(error)")
        }
        return SecureBytes([])
    }

    /// pass-otp's usage text.
    static func usageText(_ invocation: Invocation) -> String {
        let program = invocation.program
        return """
            Usage:

                \(program) otp [code] [--clip,-c] pass-name
                    Generate an OTP code and optionally put it on the clipboard.
                    If put on the clipboard, it will be cleared in \(invocation.clipTime) seconds.

                \(program) otp insert [--force,-f] [--echo,-e]
                        [[--secret, -s] [--issuer,-i issuer] [--account,-a account]]
                        [pass-name]
                    Prompt for and insert a new OTP key.

                    If 'secret' is specified, prompt for the OTP secret, assuming SHA1
                    algorithm, 30-second period, and 6 OTP digits; one of 'issuer' or
                    'account' is also required. Otherwise, prompt for a key URI; if
                    'pass-name' is not supplied, use the URI label.

                    Optionally, echo the input. Prompt before overwriting existing URI
                    unless forced. This command accepts input from stdin.

                \(program) otp append [--force,-f] [--echo,-e]
                        [[--secret, -s] [--issuer,-i issuer] [--account,-a account]]
                        pass-name
                    Appends an OTP key URI to an existing password file.

                    If 'secret' is specified, prompt for the OTP secret, assuming SHA1
                    algorithm, 30-second period, and 6 OTP digits; one of 'issuer' or
                    'account' is also required. Otherwise, prompt for a key URI.

                    Optionally, echo the input. Prompt before overwriting an existing URI
                    unless forced. This command accepts input from stdin.

                \(program) otp uri [--clip,-c] [--qrcode,-q] pass-name
                    Display the key URI stored in pass-name. Optionally, put it on the
                    clipboard, or display a QR code.

                \(program) otp validate uri
                    Test if the given URI is a valid OTP key URI.

            More information may be found in the pass-otp(1) man page.

            """
    }
}
