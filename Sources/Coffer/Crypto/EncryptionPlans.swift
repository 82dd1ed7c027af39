#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// gpg's choice for a list of recipients, remembered between processes, so that writing one entry
/// starts no gpg: the subkeys and the cipher of gpg's last message to exactly those recipients, with
/// exactly these options, used for the next message only while nothing gpg based that choice on can
/// have changed.
///
/// gpg decides which subkeys a message goes to from the keyring, the trust database, its
/// configuration and the time (expiry). A plan records the identity (device, inode, size,
/// modification and change times) of every one of those files in GnuPG's home, and the earliest
/// expiry of the keys it names (at most an hour ahead, for validity that web-of-trust signatures
/// give and take); any difference, a clock gone back, a key the keyring no longer holds, or a plan
/// file that is not the user's own, and gpg encrypts again and makes a new plan. The plans live in
/// the user's private runtime folder (``StoreLock/privateFolder()``); they hold fingerprints and
/// file identities, no secret.
enum EncryptionPlans {
    /// How long a plan is used at most, in seconds.
    static let maximumAge = 3600

    /// The names in GnuPG's home whose change may change gpg's choice: keyrings, the trust database,
    /// the TOFU database and the configuration files (`gpg.conf-2.4` and such too).
    static func isWatched(_ name: String) -> Bool {
        [
            "pubring.kbx", "pubring.gpg", "trustdb.gpg", "tofu.db", "common.conf", "public-keys.d",
            "gpg.conf",
        ].contains(name) || name.hasPrefix("gpg.conf-") || name.hasPrefix("common.conf-")
    }

    /// The message for `plaintext` to `recipients`, encrypted in the process by the plan gpg's last
    /// message to them left, or `nil` when there is no plan that still holds.
    static func encrypt(_ plaintext: SecureBytes, to recipients: [String], options: GPGOptions) -> [UInt8]? {
        guard Gcrypt.isUsable, let home = GPGOptions.gnupgHome(options.homeDirectory),
            let file = try? planFile(for: recipients, options: options, home: home.path),
            let plan = read(file, for: subject(recipients, options, home.path)),
            plan.stamps == stamps(home: home.path)
        else { return nil }
        let now = Int(time(nil))
        guard now >= plan.since, now < plan.until else { return nil }
        var keys: [KeyringKey] = []
        for fingerprint in plan.fingerprints {
            guard fingerprint.count == 20 else { return nil }
            let keyID = fingerprint.suffix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            let found = KeyringIndex.shared.keys(withID: keyID, home: home.path)
            guard found.count == 1, let key = found.first, key.fingerprint == fingerprint, key.isSupported
            else { return nil }
            keys.append(key)
        }
        guard !keys.isEmpty else { return nil }
        return DirectEncryption.encrypt(plaintext, to: keys, cipher: plan.cipher)
    }

    /// The identities of the watched files of GnuPG's home, as one line; taken before gpg encrypts
    /// and handed to ``remember(_:choice:recipients:engine:before:)``.
    static func stamps(home: String) -> String {
        guard let names = try? FileSystem.contents(of: home, sorted: true) else { return "" }
        return names.filter(isWatched).map { name in
            var info = stat()
            guard stat(home + "/" + name, &info) == 0 else { return name + ":-" }
            #if canImport(Darwin)
                let (modified, changed) = (info.st_mtimespec, info.st_ctimespec)
            #else
                let (modified, changed) = (info.st_mtim, info.st_ctim)
            #endif
            let fields = [
                Int(info.st_dev), Int(info.st_ino), Int(info.st_size), Int(modified.tv_sec),
                Int(modified.tv_nsec),
                Int(changed.tv_sec), Int(changed.tv_nsec),
            ]
            return name + ":" + fields.map(String.init).joined(separator: ".")
        }.joined(separator: "/")
    }

    /// Keeps gpg's choice for `message` (just made by gpg for `recipients`) as the plan for the next
    /// message, when the process can encrypt the same way and GnuPG's home is as it was
    /// (`before`, from ``stamps(home:)``) once the keys' expiry is known.
    static func remember(
        _ message: [UInt8], choice: EncryptionChoice?, recipients: [String], engine: GPGMEEngine,
        before: String
    ) {
        guard let cipher = choice?.inProcessCipher, !before.isEmpty,
            let home = GPGOptions.gnupgHome(engine.options.homeDirectory),
            let keys = DirectEncryption.recipients(of: message, homeDirectory: engine.options.homeDirectory),
            !keys.isEmpty
        else { return }
        let now = Int(time(nil))
        var until = now + maximumAge
        let fingerprints = keys.map { Hex.upper($0.fingerprint) }
        guard let listed = try? engine.keys(matching: fingerprints, secretOnly: false) else { return }
        for fingerprint in fingerprints {
            // The key holding the subkey: its own expiry and the subkey's bound the plan.
            guard let key = listed.first(where: { $0.subkeys.contains { $0.fingerprint == fingerprint } }),
                !key.isExpired, !key.isRevoked,
                let subkey = key.subkeys.first(where: { $0.fingerprint == fingerprint }), !subkey.isUnusable,
                let primary = key.subkeys.first
            else { return }
            for expiry in [primary.expirationTime, subkey.expirationTime] where expiry > 0 {
                until = min(until, expiry)
            }
        }
        guard until > now, stamps(home: home.path) == before,
            let file = try? planFile(for: recipients, options: engine.options, home: home.path)
        else { return }
        let text =
            [
                header, "for " + subject(recipients, engine.options, home.path), "since \(now)",
                "until \(until)",
                "cipher \(cipher)", "stamps " + before,
            ] + fingerprints.map { "key " + $0 }
        try? FileSystem.atomicWrite(
            file, bytes: Array((text.joined(separator: "\n") + "\n").utf8), mode: 0o600)
    }

    // MARK: - The plan file

    /// A plan as read from its file.
    struct Plan: Equatable {
        let since: Int
        let until: Int
        let cipher: UInt8
        let stamps: String
        let fingerprints: [[UInt8]]
    }

    private static let header = "coffer encryption plan 1"

    /// What a plan is for, as one line: GnuPG's home, the options that change gpg's choice, and the
    /// recipients (hex, so that no name can break the line).
    static func subject(_ recipients: [String], _ options: GPGOptions, _ home: String) -> String {
        let optionWords = (options.alwaysTrust ? ["--always-trust"] : []) + options.ignored
        let parts = [
            ("h", home), ("o", optionWords.joined(separator: "\u{0}")),
            ("r", recipients.joined(separator: "\u{0}")),
        ]
        return parts.map { $0.0 + Hex.upper(Array($0.1.utf8)) }.joined(separator: " ")
    }

    /// The file of the plan for `recipients`: named by a hash of its subject, which the file repeats.
    static func planFile(for recipients: [String], options: GPGOptions, home: String) throws -> String {
        let name = Hex.upper(Gcrypt.sha1(Array(subject(recipients, options, home).utf8)))
        return try StoreLock.privateFolder() + "/plan-" + name
    }

    /// The plan in `file` when it is a regular file of this user that no one else may write, and is
    /// for `subject`.
    static func read(_ file: String, for subject: String) -> Plan? {
        let descriptor = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_uid == geteuid(),
            info.st_mode & 0o022 == 0, info.st_size < 65536,
            let bytes = try? SystemCall.readAll(descriptor)
        else { return nil }
        let lines = String(decoding: bytes, as: UTF8.self).split(
            separator: "\n", omittingEmptySubsequences: false)
        guard lines.first == Substring(header), lines.last == "" else { return nil }
        var fields: [String: String] = [:]
        var fingerprints: [[UInt8]] = []
        for line in lines.dropFirst().dropLast() {
            guard let space = line.firstIndex(of: " ") else { return nil }
            let (name, value) = (String(line[..<space]), String(line[line.index(after: space)...]))
            if name == "key" {
                guard let fingerprint = Hex.bytes(value) else { return nil }
                fingerprints.append(fingerprint)
            } else {
                guard fields[name] == nil else { return nil }
                fields[name] = value
            }
        }
        guard fields["for"] == subject, let since = fields["since"].flatMap({ Int($0) }),
            let until = fields["until"].flatMap({ Int($0) }),
            let cipher = fields["cipher"].flatMap({ UInt8($0) }),
            let stamps = fields["stamps"], !fingerprints.isEmpty
        else { return nil }
        return Plan(since: since, until: until, cipher: cipher, stamps: stamps, fingerprints: fingerprints)
    }
}
