#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The parts of `PASSWORD_STORE_GPG_OPTS` that the GPGME engine can express.
///
/// gpg options are words; `--homedir DIR`, `--trust-model always` (also `--always-trust`) and `--armor`
/// are applied.
/// Every other word is kept in ``ignored`` so that the CLI can say that it was not applied.
public struct GPGOptions: Sendable, Equatable {
    /// The keyring folder (`--homedir`); `nil` means `GNUPGHOME` or `~/.gnupg`.
    public var homeDirectory: String?
    /// Whether recipients are used whatever their trust (`--trust-model always`).
    public var alwaysTrust: Bool
    /// Whether ciphertext is written ASCII-armored (`--armor`, `-a`).
    public var armor = false
    /// Options that GPGME cannot express and that are therefore not applied.
    public var ignored: [String]
    /// Whether a message that gpg-agent can open is decrypted in this process (see ``GPGMEEngine``)
    /// rather than by a gpg process, and encryption after gpg's first message to the same recipients
    /// (within a re-encryption, or remembered between processes) is done here too. A store's
    /// configuration turns all of it off for `COFFER_DIRECT_DECRYPT=0`.
    public var directDecryption = true

    /// Options with everything at gpg's defaults.
    public init(homeDirectory: String? = nil, alwaysTrust: Bool = false, ignored: [String] = []) {
        self.homeDirectory = homeDirectory
        self.alwaysTrust = alwaysTrust
        self.ignored = ignored
    }

    /// Parses a `PASSWORD_STORE_GPG_OPTS` value (words separated by white space, as the shell splits it).
    public init(parsing value: String) {
        self.init()
        let words = value.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).map(String.init)
        var index = 0
        func operand(_ name: String, _ word: String) -> String? {
            if word.hasPrefix(name + "=") { return String(word.dropFirst(name.count + 1)) }
            guard word == name, index + 1 < words.count else { return nil }
            index += 1
            return words[index]
        }
        while index < words.count {
            let word = words[index]
            if let directory = operand("--homedir", word) {
                // An empty one (`--homedir=$UNSET`) is no home directory to gpg: GNUPGHOME stands.
                homeDirectory = directory.isEmpty ? nil : directory
            } else if let model = operand("--trust-model", word) {
                alwaysTrust = model == "always"
                if model != "always" { ignored.append("--trust-model \(model)") }
            } else if word == "--always-trust" {
                alwaysTrust = true
            } else if word == "--armor" || word == "-a" {
                armor = true
            } else if word == "--no-armor" {
                armor = false
            } else if ["--quiet", "--yes", "--batch", "--no-tty", "--compress-algo=none", "--no-encrypt-to"]
                .contains(word)
            {
                // Already what the engine does.
            } else {
                ignored.append(word)
            }
            index += 1
        }
    }
}

extension GPGOptions {
    /// GnuPG's home folder as gpg names it (absolute, no trailing slash), and whether it is the
    /// default `~/.gnupg`, which decides where the agent's socket is.
    static func gnupgHome(_ configured: String?) -> (path: String, isDefault: Bool)? {
        let user = environmentValue("HOME").flatMap { $0.startsWithSlash ? $0 : nil }
        func absolute(_ path: String) -> String? {
            var path = path
            if path == "~" || path.hasPrefix("~/") {
                guard let user else { return nil }
                path = user + path.dropFirst()
            }
            if !path.startsWithSlash {
                guard let directory = getcwd(nil, 0) else { return nil }
                defer { free(directory) }
                path = String(cString: directory) + "/" + path
            }
            while path.utf8.count > 1 && path.endsWithSlash { path = path.withoutLastSlash }
            return path
        }
        let standard = user.flatMap { absolute($0 + "/.gnupg") }
        let configured = configured ?? environmentValue("GNUPGHOME").flatMap { $0.isEmpty ? nil : $0 }
        guard let home = configured.flatMap(absolute) ?? standard else { return nil }
        return (home, home == standard)
    }
}
