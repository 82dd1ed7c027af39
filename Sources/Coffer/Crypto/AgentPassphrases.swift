#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Makes gpg-agent forget the passphrases it holds for the secret keys of some recipients (what the
/// Secret Service's `Lock` asks): `gpg --list-secret-keys --with-keygrip` names the keys' keygrips and
/// `gpg-connect-agent` sends `CLEAR_PASSPHRASE --mode=normal KEYGRIP` for each.
package enum AgentPassphrases {
    /// Starts telling gpg-agent to forget the cached passphrases of the secret keys (and subkeys)
    /// matching `recipients`, and returns without waiting: the agent may ask pinentry to clear its own
    /// external cache, and pinentry may ask the Secret Service, which is the caller. The caller reaps the
    /// returned process (``ChildProcess/status(ifEnded:)``) when it ends.
    ///
    /// - Returns: the process sending the commands, `nil` when no secret key matches.
    package static func startForgetting(recipients: [String], options: GPGOptions) throws -> pid_t? {
        guard !recipients.isEmpty else { return nil }
        let home = options.homeDirectory.map { ["--homedir", $0] } ?? []
        let listing = try ChildProcess(
            ["gpg", "--batch", "--with-colons", "--with-keygrip"] + home + ["--list-secret-keys", "--"]
                + recipients
        ).run(timeout: 60)
        var keygrips: [String] = []
        for line in listing.outputText.split(separator: "\n") where line.hasPrefix("grp:") {
            let fields = line.split(separator: ":", omittingEmptySubsequences: false)
            if fields.count > 9, !fields[9].isEmpty, !keygrips.contains(String(fields[9])) {
                keygrips.append(String(fields[9]))
            }
        }
        guard !keygrips.isEmpty else { return nil }
        let commands = keygrips.map { "CLEAR_PASSPHRASE --mode=normal \($0)" } + ["/bye"]
        return try ChildProcess(["gpg-connect-agent"] + home + commands).spawn(
            input: .null, output: .null, error: .null)
    }
}
