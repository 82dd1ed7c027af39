import Coffer

/// `setup [--name NAME] [--email EMAIL] [--no-passphrase] [--remote URL | --clone URL]`: a first run in
/// one command. Makes a key when the user has no secret key (ed25519 with a cv25519 encryption subkey,
/// its passphrase asked by pinentry unless `--no-passphrase`), initialises the store for it (or clones
/// one with `--clone` and says who must add the user), keeps the user's public key in `.public-keys`,
/// and with `--remote` makes the store a git repository and pushes it. Run again, it changes nothing
/// and says what is there.
enum SetupCommand {
    static let synopsis = "[--name NAME] [--email EMAIL] [--no-passphrase] [--remote URL | --clone URL]"

    static let name = ValueOption.required(nil, "name", "the name for a new key")
    static let email = ValueOption.required(nil, "email", "the e-mail address for a new key")
    static let noPassphrase = Flag(nil, "no-passphrase", "make the new key without a passphrase")
    static let remote = ValueOption.required(
        nil, "remote", "make the store a git repository and push it there")
    static let clone = ValueOption.required(nil, "clone", "clone an existing store from this URL")

    /// `setup`.
    static let command = Command(
        names: ["setup"], options: Command.options(name, email, noPassphrase, remote, clone), usage: synopsis,
        origin: .coffer, operands: .none,
        help: { _ in
            [
                "First run: make a key if you have none, set up the store for it (or clone one),",
                "and push it to a git remote. Running it again changes nothing.",
            ]
        }, run: run)

    /// Runs the command.
    static func run(_ arguments: [String], _ invocation: Invocation) throws {
        let (parsed, failed) = invocation.parseOptions(arguments, command.options)
        let remote = parsed[Self.remote]
        let cloneURL = parsed[clone]
        guard !failed, parsed.operands.isEmpty, remote == nil || cloneURL == nil else {
            throw invocation.usage(synopsis)
        }
        let store = invocation.store
        guard let keys = store.keyring else { throw Exit.die("Error: setup needs gpg.") }
        do {
            let key = try ownKey(keys, parsed, invocation)
            standardOutput.line("Your key: \(key.fingerprint) (\(key.userIDs.first ?? "no user id"))")
            if let cloneURL {
                try cloneStore(cloneURL, key: key, invocation)
                return
            }
            if store.gpgIDFile(forFolder: "") == nil {
                try store.initialize(recipients: [key.fingerprint]) { CoreutilsMessages.print($0) }
                try store.keepPublicKey(of: key.fingerprint)
            } else {
                let recipients = try store.recipients(ofFolder: "").map { $0.fingerprint ?? $0.id }
                standardOutput.line(
                    "The store at \(store.root) is set up for \(recipients.joined(separator: ", ")).")
                if !recipients.contains(key.fingerprint) {
                    standardOutput.line(
                        "Your key is not one of them: you cannot read its entries until one of them runs "
                            + "\(invocation.program) recipients add \(key.fingerprint)")
                }
            }
            if let remote { try pushToRemote(remote, invocation) } else { describeRemote(invocation) }
        } catch let error as CofferError {
            throw Exit.die("Error: \(error.message)")
        }
    }

    /// The user's secret key: the one matching `--email`, else the first that can encrypt; made when
    /// there is none.
    private static func ownKey(_ keys: any Keyring, _ parsed: OptionParser.Result, _ invocation: Invocation)
        throws
        -> KeyInfo
    {
        let email = parsed[Self.email]
        let now = Int(time(nil))
        let usable = try keys.keys(matching: email.map { [$0] } ?? [], secretOnly: true).filter {
            $0.encryptionSubkey(now: now) != nil
        }
        if let found = usable.first { return found }
        if email == nil || parsed[Self.name] == nil,
            let unusable = try keys.keys(matching: email.map { [$0] } ?? [], secretOnly: true).first
        {
            throw CofferError(
                .invalidArgument,
                "your key \(unusable.fingerprint) (\(unusable.userIDs.first ?? "no user id")) cannot encrypt: "
                    + "it or its encryption subkey expired or was revoked; extend it (gpg --quick-set-expire "
                    + "\(unusable.fingerprint) 2y '*') or make a new key with --name NAME --email ANOTHER-EMAIL"
            )
        }
        var name = parsed[Self.name]
        var address = email
        if Terminal.isTerminal(0) {
            if name == nil { name = Terminal.bashRead(prompt: "Your name: ", lineEditing: true).value.string }
            if address == nil {
                address = Terminal.bashRead(prompt: "Your e-mail address: ", lineEditing: true).value.string
            }
        }
        guard let name, let address, !name.isEmpty, !address.isEmpty else {
            throw CofferError(
                .invalidArgument,
                "you have no secret key yet; run \(invocation.program) setup --name NAME --email EMAIL "
                    + "(--no-passphrase for a key without one) to make it")
        }
        standardOutput.line("Making a key for \(name) <\(address)>...")
        let fingerprint = try keys.generateKey(
            userID: "\(name) <\(address)>", passphrase: !parsed[noPassphrase])
        guard let made = try keys.keys(matching: [fingerprint], secretOnly: true).first else {
            throw CofferError(.notFound, "the new key \(fingerprint) is not in the keyring")
        }
        return made
    }

    /// `--clone URL`: clones (unless the store is that clone already), offers the user's public key to
    /// the others through the remote, and says who must add the user when they are no recipient yet.
    private static func cloneStore(_ url: String, key: KeyInfo, _ invocation: Invocation) throws {
        let store = invocation.store
        if FileSystem.isDirectory(store.root + "/.git") {
            let origin = try? store.git(for: store.root + "/.git")?.run(["remote", "get-url", "origin"])
                .outputText
            guard origin == url else {
                throw CofferError(
                    .git,
                    "the store at \(store.root) is a git repository "
                        + (origin.map { "cloned from \($0)" } ?? "without a remote origin")
                        + ", not a clone of \(url); nothing was changed")
            }
            standardOutput.line("The store at \(store.root) is a clone of \(url) already.")
        } else {
            _ = try store.clone(from: url, mergeDriver: ownExecutable)
            standardOutput.line("Cloned \(url) into \(store.root).")
        }
        try store.keepPublicKey(of: key.fingerprint)
        // Every time: the key must reach the remote, also when an earlier run could not push it.
        _ = try store.sync(mergeDriver: ownExecutable)
        let readable = try store.recipients(ofFolder: "").contains { $0.fingerprint == key.fingerprint }
        if readable {
            standardOutput.line("You are a recipient of the store.")
        } else {
            standardOutput.line("You are not a recipient of the store yet. Ask one of its recipients to run:")
            standardOutput.line(
                "    \(invocation.program) sync && \(invocation.program) recipients add \(key.fingerprint) && \(invocation.program) sync"
            )
            standardOutput.line("then run \(invocation.program) sync here.")
        }
    }

    /// `--remote URL`: the store becomes a git repository (as `git init` makes it) with `origin` at URL,
    /// and is pushed.
    private static func pushToRemote(_ url: String, _ invocation: Invocation) throws {
        let store = invocation.store
        if !FileSystem.isDirectory(store.root + "/.git") {
            try GitCommand.initialize(["init", "--quiet"], invocation)
        }
        guard let repository = store.git(for: store.root + "/.gpg-id") else {
            throw CofferError(.git, "the store is not a git repository")
        }
        var added = false
        if let existing = try? repository.run(["remote", "get-url", "origin"]).outputText {
            guard existing == url else {
                throw CofferError(
                    .git, "the store's remote origin is \(existing), not \(url); nothing was changed")
            }
        } else {
            try repository.run(["remote", "add", "origin", url])
            added = true
        }
        let report: SyncReport
        do {
            report = try store.sync(mergeDriver: ownExecutable)
        } catch {
            // A remote that does not work is not kept: the next run may name the right one.
            if added { _ = try? repository.run(["remote", "remove", "origin"]) }
            throw error
        }
        standardOutput.line(report.pushed ? "Pushed the store to \(url)." : "The store is at \(url) already.")
    }

    private static func describeRemote(_ invocation: Invocation) {
        let store = invocation.store
        guard let repository = store.git(for: store.root + "/.gpg-id"),
            let url = try? repository.run(["remote", "get-url", "origin"]).outputText
        else { return }
        standardOutput.line("Its git remote is \(url).")
    }
}
