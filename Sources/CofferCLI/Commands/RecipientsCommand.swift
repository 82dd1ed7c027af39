import Coffer

/// `recipients [-p SUBFOLDER]`, `recipients add|rm [-p SUBFOLDER] KEY...`: who can read the store (or a
/// folder), and changing it in one step: `.gpg-id` rewritten (and signed), the entries that need it
/// re-encrypted on every core, the added keys kept in `.public-keys`, one commit.
enum RecipientsCommand {
    static let synopsis = "[add|rm] [--path=subfolder,-p subfolder] [key...]"

    /// `recipients`.
    static let command = Command(
        names: ["recipients"],
        options: [.value("p", "path", "the subfolder whose recipients to list or change")],
        usage: synopsis, origin: .coffer, operands: .recipients,
        help: { _ in
            [
                "List the recipients of the store or subfolder: fingerprint, name, expiry, and whether",
                "they can be encrypted to. add and rm change them, re-encrypt what needs it and commit",
                "once; added keys are kept in .public-keys for the other clones.",
            ]
        }, run: run)

    /// Runs the command.
    static func run(_ arguments: [String], _ invocation: Invocation) throws {
        let (parsed, failed) = invocation.parseOptions(arguments, command.options)
        guard !failed else { throw invocation.usage(synopsis) }
        let subfolder = parsed.value("path") ?? ""
        try invocation.checkSneakyPaths(subfolder)
        var operands = parsed.operands
        let action = operands.first.flatMap { ["add", "rm", "remove"].contains($0) ? $0 : nil }
        if action != nil { operands.removeFirst() }
        let store = invocation.store
        let place = subfolder.isEmpty ? "the store" : subfolder
        do {
            guard let action else {
                guard operands.isEmpty else { throw invocation.usage(synopsis) }
                for recipient in try store.recipients(ofFolder: subfolder) {
                    standardOutput.line(line(for: recipient))
                }
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

    /// `FINGERPRINT  Name <email>  expires DATE  ok`, or why it cannot be encrypted to.
    static func line(for recipient: Recipient) -> String {
        let who = recipient.userID ?? "(no public key)"
        let expiry = recipient.expires == 0 ? "never expires" : "expires " + date(recipient.expires)
        let state = recipient.problem.map { "cannot encrypt: \($0)" } ?? "ok"
        return "\(recipient.fingerprint ?? recipient.id)  \(who)  \(expiry)  \(state)"
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
