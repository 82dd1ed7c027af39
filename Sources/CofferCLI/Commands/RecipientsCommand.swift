import Coffer

/// `recipients [-p SUBFOLDER]`, `recipients add|rm [-p SUBFOLDER] KEY...`: who can read the store (or a
/// folder), and changing it in one step: `.gpg-id` rewritten (and signed), the entries that need it
/// re-encrypted on every core, the added keys kept in `.public-keys`, one commit.
/// `recipients accept [-p SUBFOLDER] FINGERPRINT` accepts, on this clone, a key that someone else's
/// change named (see SECURITY.md): it shows where the key came from and asks on a terminal.
enum RecipientsCommand {
    static let synopsis = "[add|rm|accept] [--path=subfolder,-p subfolder] [key...]"

    static let pathOption = ValueOption.required(
        "p", "path", "the subfolder whose recipients to list or change")

    /// `recipients`.
    static let command = Command(
        names: ["recipients"],
        options: Command.options(pathOption),
        usage: synopsis, origin: .coffer, operands: .recipients,
        help: { _ in
            [
                "List the recipients of the store or subfolder: fingerprint, name, expiry, and whether",
                "they can be encrypted to. add and rm change them, re-encrypt what needs it and commit",
                "once; added keys are kept in .public-keys for the other clones. accept takes a key",
                "someone else named in a .gpg-id as a recipient this clone may encrypt to.",
            ]
        }, run: run)

    /// Runs the command.
    static func run(_ arguments: [String], _ invocation: Invocation) throws {
        let (parsed, failed) = invocation.parseOptions(arguments, command.options)
        guard !failed else { throw invocation.usage(synopsis) }
        let subfolder = parsed[pathOption] ?? ""
        try invocation.checkSneakyPaths(subfolder)
        var operands = parsed.operands
        let action = operands.first.flatMap { ["add", "rm", "remove", "accept"].contains($0) ? $0 : nil }
        if action != nil { operands.removeFirst() }
        let store = invocation.store
        let place = subfolder.isEmpty ? "the store" : Quoting.quoted(subfolder)
        do {
            guard let action else {
                guard operands.isEmpty else { throw invocation.usage(synopsis) }
                let recipients = try store.recipients(ofFolder: subfolder)
                for recipient in recipients {
                    standardOutput.line(line(for: recipient, subfolder: subfolder, invocation))
                }
                if let ambiguous = recipients.first(where: \.isAmbiguous) {
                    throw Exit.die(
                        "Error: the .gpg-id line \(Quoting.quoted(ambiguous.id)) \(ambiguous.problem ?? "is ambiguous")"
                    )
                }
                return
            }
            if action == "accept" {
                guard operands.count == 1 else { throw invocation.usage(synopsis) }
                try accept(operands[0], subfolder: subfolder, invocation)
                return
            }
            guard !operands.isEmpty else { throw invocation.usage(synopsis) }
            let meter = ProgressMeter(label: "re-encrypting", environment: invocation.environment)
            defer { meter.clear() }
            var reencrypted = 0
            let adding = action == "add"
            try HeldSignals.during {
                try invocation.storeShowingProgress(meter).changeRecipients(
                    adding: adding ? operands : [], removing: adding ? [] : operands, subfolder: subfolder
                ) { event in
                    meter.clear()
                    if case .reencrypted = event { reencrypted += 1 }
                    CoreutilsMessages.print(event)
                }
            }
            standardOutput.line(
                "\(adding ? "Added" : "Removed") \(operands.joined(separator: ", ")) \(adding ? "to" : "from") the "
                    + "recipients of \(place); \(reencrypted) \(reencrypted == 1 ? "entry" : "entries") re-encrypted."
            )
        } catch let error as CofferError {
            throw Exit.die("Error: \(error.message)")
        }
    }

    /// `recipients accept`: shows the key, the folder and where the key came from; asks on a terminal;
    /// accepts it and re-encrypts what was left without it.
    static func accept(_ fingerprint: String, subfolder: String, _ invocation: Invocation) throws {
        let store = invocation.store
        let request = try store.acceptanceRequest(fingerprint, subfolder: subfolder)
        let place = request.folder.isEmpty ? "the store" : Quoting.quoted(request.folder)
        standardOutput.line("\(request.key): \(request.provenance).")
        try Terminal.confirm("Accept it as a recipient of \(place) on this clone?")
        var reencrypted = 0
        _ = try HeldSignals.during {
            try store.acceptRecipient(fingerprint, subfolder: subfolder) { event in
                if case .reencrypted = event { reencrypted += 1 }
                CoreutilsMessages.print(event)
            }
        }
        standardOutput.line(
            "Accepted \(request.key) for \(place); \(reencrypted) \(reencrypted == 1 ? "entry" : "entries") "
                + "re-encrypted.")
    }

    /// `FINGERPRINT  Name <email>  expires DATE  ok`, or why it cannot be encrypted to, or that this
    /// clone has not accepted it.
    static func line(for recipient: Recipient, subfolder: String, _ invocation: Invocation) -> String {
        let who = recipient.userID.map(Quoting.quoted) ?? "(no public key)"
        let expiry = recipient.expires == 0 ? "never expires" : "expires " + date(recipient.expires)
        var state = recipient.problem.map { "cannot encrypt: \($0)" } ?? "ok"
        if !recipient.isAccepted {
            let option = subfolder.isEmpty ? "" : "-p \(Quoting.quoted(subfolder)) "
            state =
                "not accepted on this clone: \(invocation.program) recipients accept \(option)"
                + (recipient.fingerprint ?? recipient.id)
        }
        return "\(Quoting.quoted(recipient.fingerprint ?? recipient.id))  \(who)  \(expiry)  \(state)"
    }

    /// `YYYY-MM-DD` in UTC.
    static func date(_ seconds: Int) -> String {
        var value = time_t(seconds)
        var parts = tm()
        gmtime_r(&value, &parts)
        var buffer = [CChar](repeating: 0, count: 16)
        let count = strftime(&buffer, buffer.count, "%Y-%m-%d", &parts)
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
