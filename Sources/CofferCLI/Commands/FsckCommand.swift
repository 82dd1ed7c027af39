import Coffer

/// `fsck [--fix]`: checks the store; one line per finding; non-zero exit when something is wrong.
enum FsckCommand {
    static let fixFlag = Flag("f", "fix", "repair what can be repaired")

    /// `fsck`.
    static let command = Command(
        names: ["fsck"], options: Command.options(fixFlag), usage: "[--fix,-f]",
        origin: .coffer, operands: .none,
        help: { _ in ["Check permissions, recipients, decryption and git state; optionally repair."] },
        run: run)

    /// Runs the command.
    static func run(_ arguments: [String], _ invocation: Invocation) throws {
        let (parsed, failed) = invocation.parseOptions(arguments, Self.command.options)
        guard !failed, parsed.operands.isEmpty else { throw invocation.usage("[--fix,-f]") }
        let meter = ProgressMeter(label: "checking", environment: invocation.environment)
        defer { meter.clear() }
        let fix = parsed[fixFlag]
        // Letting more keys read an entry is the user's decision, asked on a terminal only.
        let findings = try invocation.storeShowingProgress(meter).check(fix: fix) { widening in
            guard Terminal.isTerminal(0) else { return false }
            meter.clear()
            let change = widening.lastChange.map { " (last changed by commit \(Quoting.quoted($0)))" } ?? ""
            if !widening.writtenIn.isEmpty {
                standardError.line(
                    "Warning: \(Quoting.quoted(widening.name)) was written in "
                        + widening.writtenIn.map { $0.isEmpty ? "the store's root" : Quoting.quoted($0) }
                        .joined(
                            separator: ", ") + " before it came here.")
            }
            if widening.notWrittenHere {
                standardError.line(
                    "Warning: \(Quoting.quoted(widening.name)) was not written for its folder: some of its accepted "
                        + "recipients cannot read it, so someone may have moved or copied it there.")
            }
            let answer = Terminal.bashRead(
                prompt:
                    "Let \(widening.keys.joined(separator: ", ")) read \(Quoting.quoted(widening.name))\(change)? "
                    + "[y/N] "
            ).value.bytes
            return answer == [UInt8(ascii: "y")] || answer == [UInt8(ascii: "Y")]
        }
        meter.clear()
        for finding in findings {
            standardOutput.line(
                "\(Quoting.quoted(finding.path)): \(finding.message)\(finding.fixed ? " (fixed)" : "")")
        }
        // Plaintext an edit killed with SIGKILL left in its private folder.
        var leftovers: [String] = []
        for parent in PlaintextFolder.parents(environment: invocation.environment) {
            leftovers +=
                fix
                ? PlaintextFolder.removeAbandoned(in: parent)
                : PlaintextFolder.abandoned(in: parent)
        }
        for path in leftovers {
            standardOutput.line("\(path): plaintext left by an interrupted edit\(fix ? " (fixed)" : "")")
        }
        if findings.contains(where: { !$0.fixed }) || (!fix && !leftovers.isEmpty) { throw Exit(1) }
    }
}
