import Coffer

/// gpg's own words for the failures pass leaves gpg to report, where they are known; other failures are
/// described by the library's message.
enum GPGMessages {
    /// gpg-error's `GPG_ERR_NO_DATA`.
    private static let noData: UInt32 = 58

    /// What gpg prints when decrypting fails.
    static func decryptionFailure(_ error: GPGError) -> String {
        switch error.kind {
        case .noSecretKey:
            return "gpg: decryption failed: No secret key"
        case .corruptData where error.code == noData:
            return "gpg: no valid OpenPGP data found.\ngpg: decrypt_message failed: Unknown system error"
        default:
            return "Error: \(error.message)"
        }
    }

    /// gpg's complaint when it cannot open the file it is asked to decrypt.
    static func cannotOpen(_ path: String) -> String {
        "gpg: can't open '\(path)': No such file or directory\ngpg: decrypt_message failed: No such file or directory"
    }

    /// The `PASSWORD_STORE_GPG_OPTS` words that change nothing pass's output or files would show.
    private static let harmless: Set<String> = [
        "--no-greeting", "--no-permission-warning", "--no-secmem-warning", "--no-verbose", "-q", "--quiet",
        "--yes", "--batch", "--no-batch", "--no-tty", "--use-agent", "--no-use-agent",
        "--no-auto-check-trustdb",
        "--keyserver", "--keyserver-options", "--auto-key-locate", "--no-auto-key-locate",
        "--auto-key-retrieve",
        "--no-auto-key-retrieve", "--compress-algo", "-z", "--default-key", "--display-charset", "--charset",
        "--utf8-strings", "--no-utf8-strings", "--no-mdc-warning", "--ignore-time-conflict",
        "--ignore-valid-from", "--lock-multiple", "--lock-once", "--lock-never", "--logger-fd",
        "--logger-file",
        "--log-file", "--status-fd", "--no-symkey-cache",
    ]

    /// The words that matter only when encrypting.
    private static let encryptionOnly: Set<String> = [
        "-a", "--armor", "--armour", "--no-armor", "--no-armour", "--throw-keyids", "--no-throw-keyids",
        "--cipher-algo", "--digest-algo", "--personal-cipher-preferences", "--personal-digest-preferences",
        "--personal-compress-preferences", "--compress-level", "-r", "--recipient", "-R",
        "--hidden-recipient",
        "--encrypt-to", "--hidden-encrypt-to", "--no-encrypt-to", "--force-mdc", "--force-aead", "--rfc4880",
        "--openpgp", "--pgp6", "--pgp7", "--pgp8", "--compliance", "--s2k-cipher-algo", "--s2k-digest-algo",
    ]

    /// The options among `ignored` (as `GPGOptions` lists them, values as separate words) whose absence
    /// changes what pass would do, for an operation that decrypts only or also encrypts.
    static func unapplied(_ ignored: [String], encrypting: Bool) -> [String] {
        var options: [(name: String, words: [String])] = []
        for word in ignored {
            if word.hasPrefix("-") || options.isEmpty {
                let name = word.split(separator: "=", maxSplits: 1).first.map(String.init) ?? word
                options.append((name, [word]))
            } else {
                options[options.count - 1].words.append(word)
            }
        }
        return options.filter { option in
            !harmless.contains(option.name) && (encrypting || !encryptionOnly.contains(option.name))
        }.map { $0.words.joined(separator: " ") }
    }
}
