import Coffer

/// `audit [--json] [--show-passwords] [--age DAYS] [--breached FILE] [--min-bits BITS] [subfolder]`:
/// weak, reused, old and breached passwords, grouped by finding (``Audit`` does the work).
///
/// Exit status 0 when nothing is found, 1 when something is, 2 on an error (an entry that does not
/// decrypt, a bad breached list, a bad option). Entry names are printed; passwords only with
/// `--show-passwords`.
enum AuditCommand {
    static let usageText =
        "[--json] [--show-passwords] [--age DAYS] [--breached FILE] [--min-bits BITS] [subfolder]"

    static let asJSON = Flag(nil, "json", "print the findings as JSON").exact
    static let showPasswords = Flag(nil, "show-passwords", "print the passwords the findings are about").exact
    static let age = ValueOption.required(
        nil, "age", "days after which an unchanged password is old (0: do not check)"
    ).exact
    static let breached = ValueOption.required(
        nil, "breached", "Have I Been Pwned's SHA-1 list ordered by hash, to search offline"
    ).exact
    static let minBits = ValueOption.required(
        nil, "min-bits", "estimated strength below which a password is weak"
    )
    .exact

    /// `audit`.
    static let command = Command(
        names: ["audit"], options: Command.options(asJSON, showPasswords, age, breached, minBits),
        usage: usageText, origin: .coffer, operands: .folders,
        help: { _ in
            [
                "Report weak, reused, old (unchanged for --age days, 365 by default, from git history) and",
                "breached (--breached FILE) passwords; exit status 1 when something is found.",
            ]
        }, run: run)

    /// Runs the command; every failure exits 2, as 1 means that something was found.
    static func run(_ arguments: [String], _ invocation: Invocation) throws {
        do {
            try audit(arguments, invocation)
        } catch let exit as Exit where exit.status != 1 || exit.message == nil {
            throw exit
        } catch let exit as Exit {
            throw Exit(2, exit.message)
        } catch {
            _ = CofferCLI.report(error, invocation: invocation)
            throw Exit(2)
        }
    }

    private static func audit(_ arguments: [String], _ invocation: Invocation) throws {
        let (parsed, failed) = invocation.parseOptions(arguments, Self.command.options)
        guard !failed, parsed.operands.count <= 1 else { throw invocation.usage(usageText) }
        var settings = Audit.Settings()
        settings.keepPasswords = parsed[showPasswords]
        if let value = parsed[age] {
            guard let days = Int(value), days >= 0 else {
                throw Exit(2, "Error: --age takes a number of days, not \"\(value)\".")
            }
            settings.maximumAgeDays = days == 0 ? nil : days
        }
        if let value = parsed[minBits] {
            guard let bits = Double(value), bits >= 0, bits <= 1000 else {
                throw Exit(2, "Error: --min-bits takes a number of bits, not \"\(value)\".")
            }
            settings.minimumBits = bits
        }
        // `-`: the list on standard input (`xzcat pwned.txt.xz | coffer audit --breached -`), read once.
        settings.breachedList = parsed[breached].map { $0 == "-" ? "/dev/stdin" : $0 }
        let subfolder = parsed.operands.first ?? ""
        try invocation.checkSneakyPaths(subfolder)
        let meter = ProgressMeter(label: "auditing", environment: invocation.environment)
        defer { meter.clear() }
        let report = try Audit(store: invocation.store, subfolder: subfolder, settings: settings).run {
            event in
            if case .decrypted(let done, let total) = event { meter.update(done: done, total: total) }
            if case .searchingBreachedList = event { meter.clear() }
        }
        meter.clear()
        for failure in report.failures {
            standardError.line("Error: cannot audit \(shownName(failure.entry)): \(describe(failure.error))")
        }
        if parsed[asJSON] {
            var output = json(report, settings: settings)
            standardOutput.write(bytes: output)
            output.withUnsafeMutableBytes { wipeMemory($0.baseAddress, count: $0.count) }
        } else {
            printReport(report, settings: settings)
        }
        if !report.failures.isEmpty { throw Exit(2) }
        if report.hasFindings { throw Exit(1) }
    }

    /// A library error in one line.
    private static func describe(_ error: any Error) -> String {
        if let error = error as? CofferError { return error.message }
        if let error = error as? GPGError { return error.message }
        return "\(error)"
    }

    // MARK: Words

    /// An entry name as the text report prints it: quoted, as coffer's messages quote repository text,
    /// when it holds a control character, which could forge report lines or reach the terminal.
    static func shownName(_ name: String) -> String { Quoting.quoted(name) }

    private static func printReport(_ report: Audit.Report, settings: Audit.Settings) {
        var lines: [String] = []
        func section(_ title: String, _ count: Int, _ body: [String]) {
            guard count > 0 else { return }
            if !lines.isEmpty { lines.append("") }
            lines.append("\(title) (\(count)):")
            lines += body.map { "  " + $0 }
        }
        func shown(_ password: SecureBytes?) -> String {
            guard let password else { return "" }
            return "  password: " + password.string
        }
        section(
            "Weak passwords", report.weak.count,
            report.weak.map { weak in
                let detail =
                    weak.strength.isCommon
                    ? "one of the most common passwords"
                    : "about \(Int(weak.strength.bits.rounded(.down))) bits, fewer than \(formatted(settings.minimumBits))"
                let patterns =
                    weak.password == nil
                    ? "" : "; " + weak.strength.patterns.map(\.rawValue).joined(separator: " + ")
                return "\(shownName(weak.entry))  (\(detail)\(patterns))\(shown(weak.password))"
            })
        section(
            "Reused passwords", report.reused.count,
            report.reused.map { "\($0.entries.map(shownName).joined(separator: ", "))\(shown($0.password))" })
        section(
            "Old passwords, unchanged for more than \(settings.maximumAgeDays ?? 0) days", report.old.count,
            report.old.map {
                "\(shownName($0.entry))  (unchanged since \(date($0.lastChanged)), \($0.days) days)"
            })
        section(
            "Breached passwords", report.breached.count,
            report.breached.map { "\(shownName($0.entry))  (seen \($0.count) times)\(shown($0.password))" })
        section(
            "Without a password (first line empty), not judged", report.withoutPassword.count,
            report.withoutPassword.map(shownName))
        section(
            "Aliases (symbolic links), audited once under the name they lead to", report.aliases.count,
            report.aliases.map { "\(shownName($0.entry)) -> \(shownName($0.sameAs))" })
        if !lines.isEmpty { lines.append("") }
        // The same count as JSON's `entries`: every entry, those that could not be audited included.
        let total = report.entries.count
        let audited = total - report.failures.count
        let entries =
            report.failures.isEmpty
            ? "\(total) \(total == 1 ? "entry" : "entries")"
            : "\(audited) of \(total) \(total == 1 ? "entry" : "entries")"
        if report.hasFindings {
            let reusedEntries = report.reused.reduce(0) { $0 + $1.entries.count }
            lines.append(
                "\(entries) audited: \(report.weak.count) weak, \(reusedEntries) reused, \(report.old.count) old, "
                    + "\(report.breached.count) breached.")
        } else {
            lines.append("No weak, reused, old or breached passwords among \(entries).")
        }
        if settings.maximumAgeDays != nil && !report.checkedAge {
            lines.append("Ages not checked: the store is not a git repository.")
        }
        if !report.checkedBreaches {
            lines.append("Breaches not checked: give Have I Been Pwned's SHA-1 list with --breached FILE.")
        } else if report.breachedListBisected {
            lines.append(
                "Breached list searched by bisection: only the lines read were checked, so a list out of order "
                    + "elsewhere can hide a breach; --breached - (the list on standard input) checks every line."
            )
        }
        for line in lines { standardOutput.line(line) }
    }

    /// `40` or `40.5`.
    private static func formatted(_ number: Double) -> String {
        number == number.rounded() ? String(Int(number)) : String(number)
    }

    /// `YYYY-MM-DD` in UTC.
    static func date(_ seconds: Int) -> String {
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))"
    }

    // MARK: JSON

    /// The report as one JSON object and a newline.
    static func json(_ report: Audit.Report, settings: Audit.Settings) -> [UInt8] {
        func quoted(_ text: String) -> [UInt8] { EntryJSON.quoted(Array(text.utf8)) }
        func list(_ items: [[UInt8]]) -> [UInt8] {
            guard !items.isEmpty else { return Array("[]".utf8) }
            return Array("[\n    ".utf8) + items.joined(separator: Array(",\n    ".utf8))
                + Array("\n  ]".utf8)
        }
        func password(_ secret: SecureBytes?) -> [UInt8] {
            guard let secret else { return [] }
            return Array(", \"password\": ".utf8) + secret.withUnsafeBytes { EntryJSON.quoted(Array($0)) }
        }
        func number(_ value: Double) -> String {
            value == value.rounded() ? String(Int(value)) : String((value * 10).rounded() / 10)
        }
        let weak = report.weak.map { weak -> [UInt8] in
            var item = Array("{\"entry\": ".utf8) + quoted(weak.entry)
            item += Array(
                ", \"bits\": \(number(weak.strength.bits)), \"common\": \(weak.strength.isCommon)".utf8)
            if weak.password != nil {
                item += Array(", \"patterns\": [".utf8)
                item += weak.strength.patterns.map { quoted($0.rawValue) }.joined(separator: Array(", ".utf8))
                item += [UInt8(ascii: "]")]
            }
            return item + password(weak.password) + [UInt8(ascii: "}")]
        }
        let reused = report.reused.map { group -> [UInt8] in
            Array("{\"entries\": [".utf8) + group.entries.map(quoted).joined(separator: Array(", ".utf8))
                + [UInt8(ascii: "]")] + password(group.password) + [UInt8(ascii: "}")]
        }
        let old = report.old.map { old -> [UInt8] in
            Array("{\"entry\": ".utf8) + quoted(old.entry)
                + Array(", \"lastChanged\": \"\(date(old.lastChanged))\", \"days\": \(old.days)}".utf8)
        }
        let breached = report.breached.map { breach -> [UInt8] in
            Array("{\"entry\": ".utf8) + quoted(breach.entry) + Array(", \"count\": \(breach.count)".utf8)
                + password(breach.password) + [UInt8(ascii: "}")]
        }
        let errors = report.failures.map { failure -> [UInt8] in
            Array("{\"entry\": ".utf8) + quoted(failure.entry) + Array(", \"message\": ".utf8)
                + quoted(describe(failure.error)) + [UInt8(ascii: "}")]
        }
        var output = Array("{\n  \"entries\": \(report.entries.count),\n".utf8)
        output += Array("  \"minimumBits\": \(number(settings.minimumBits)),\n".utf8)
        output += Array("  \"maximumAgeDays\": \(settings.maximumAgeDays.map(String.init) ?? "null"),\n".utf8)
        output += Array(
            "  \"checkedAge\": \(report.checkedAge),\n  \"checkedBreaches\": \(report.checkedBreaches),\n"
                .utf8)
        output += Array("  \"breachedListBisected\": \(report.breachedListBisected),\n".utf8)
        output += Array("  \"weak\": ".utf8) + list(weak) + Array(",\n".utf8)
        output += Array("  \"reused\": ".utf8) + list(reused) + Array(",\n".utf8)
        output += Array("  \"old\": ".utf8) + list(old) + Array(",\n".utf8)
        output += Array("  \"breached\": ".utf8) + list(breached) + Array(",\n".utf8)
        output +=
            Array("  \"withoutPassword\": ".utf8) + list(report.withoutPassword.map(quoted))
            + Array(",\n".utf8)
        output +=
            Array("  \"aliases\": ".utf8)
            + list(
                report.aliases.map {
                    Array("{\"entry\": ".utf8) + quoted($0.entry) + Array(", \"sameAs\": ".utf8)
                        + quoted($0.sameAs)
                        + [UInt8(ascii: "}")]
                }) + Array(",\n".utf8)
        output += Array("  \"errors\": ".utf8) + list(errors) + Array("\n}\n".utf8)
        return output
    }
}
