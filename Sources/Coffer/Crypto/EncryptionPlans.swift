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
/// modification and change times) of every one of those files in GnuPG's home and in `/etc/gnupg`,
/// and ends at the first time gpg may judge the keys it names otherwise (a key or a signature of
/// their key blocks expiring, or one dated ahead starting to count; at most an hour ahead); any
/// difference, a clock gone back, a key the keyring no longer holds, or a plan file that is not the
/// user's own, and gpg encrypts again and makes a new plan. A plan is made only for keys whose validity the time cannot
/// change but by their own expiry: keys the user trusts ultimately (their own), or any key under
/// `--trust-model always`; a key valid through others' signatures, which expire, goes through gpg
/// every time. Nor is one made when gpg's configuration names other keyring or trust database files
/// (`keyring`, `primary-keyring`, `no-default-keyring`, `trustdb-name`) or keyboxd. The plans live
/// in the user's cache folder (`~/.cache/coffer`, private to the user); they hold fingerprints and
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

    /// What a plan says of the next message to a list of recipients.
    enum Outcome {
        /// The message, encrypted in the process.
        case message([UInt8])
        /// gpg encrypts, and no plan is to be made: gpg's last message showed that none can be (keys
        /// valid through others' signatures, another cipher, ...) and nothing has changed since, so
        /// asking gpg for the keys again would only cost a process.
        case gpgOnly
        /// gpg encrypts, and its message may leave a plan (``remember(_:choice:recipients:engine:before:)``).
        case unplanned

        /// Whether no plan holds for the recipients.
        var isUnplanned: Bool {
            if case .unplanned = self { return true }
            return false
        }
    }

    /// The message for `plaintext` to `recipients`, encrypted in the process by the plan gpg's last
    /// message to them left, when that plan still holds.
    static func encrypt(_ plaintext: SecureBytes, to recipients: [String], options: GPGOptions) -> Outcome {
        guard Gcrypt.isUsable, let home = plannedHome(options),
            let file = try? planFile(for: recipients, options: options, home: home.path),
            let plan = read(file, for: subject(recipients, options, home.path)),
            plan.stamps == stamps(home: home.path)
        else { return .unplanned }
        let now = Int(time(nil))
        guard now >= plan.since, now < plan.until else { return .unplanned }
        if plan.fingerprints.isEmpty { return .gpgOnly }
        var keys: [KeyringKey] = []
        for fingerprint in plan.fingerprints {
            guard fingerprint.count == 20 else { return .unplanned }
            let keyID = fingerprint.suffix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            let found = KeyringIndex.shared.keys(withID: keyID, home: home.path)
            guard found.count == 1, let key = found.first, key.fingerprint == fingerprint, key.isSupported
            else { return .unplanned }
            keys.append(key)
        }
        return DirectEncryption.encrypt(plaintext, to: keys, cipher: plan.cipher).map(Outcome.message)
            ?? .unplanned
    }

    /// The identities of the watched files of GnuPG's home and of `/etc/gnupg` (a missing one as
    /// missing), as one line; taken before gpg encrypts and handed to
    /// ``remember(_:choice:recipients:engine:before:)``.
    static func stamps(home: String) -> String {
        guard let names = try? FileSystem.contents(of: home, sorted: true) else { return "" }
        // The system-wide configuration gpg reads too, whether it is there or not.
        let system = ((try? FileSystem.contents(of: systemFolder, sorted: true)) ?? []).filter(isWatched)
        let paths =
            names.filter(isWatched).map { home + "/" + $0 } + [home + "/public-keys.d/pubring.db"]
            + system.map { systemFolder + "/" + $0 }
        return paths.map { path in
            var info = stat()
            guard stat(path, &info) == 0 else { return path + ":-" }
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
            return path + ":" + fields.map(String.init).joined(separator: ".")
        }.joined(separator: "|")
    }

    /// GnuPG's home as plans know it, when there is no doubt which folder gpg reads: none is named
    /// (GNUPGHOME or `~/.gnupg`), or an absolute one is; `nil` for a relative or `~user` one.
    static func plannedHome(_ options: GPGOptions) -> (path: String, isDefault: Bool)? {
        if let named = options.homeDirectory, !named.startsWithSlash { return nil }
        if options.homeDirectory == nil, let variable = environmentValue("GNUPGHOME"), !variable.isEmpty,
            !variable.startsWithSlash
        {
            return nil
        }
        return GPGOptions.gnupgHome(options.homeDirectory)
    }

    /// GnuPG's system-wide configuration folder.
    static let systemFolder = "/etc/gnupg"

    /// Whether gpg's configuration files (GnuPG's home's and the system's) may make gpg read keys or
    /// trust from files a plan does not watch: other keyrings, another trust database, keyboxd.
    static func configurationNamesOtherFiles(home: String) -> Bool {
        let folders = [home, systemFolder]
        return folders.contains { folder in
            let names = ((try? FileSystem.contents(of: folder, sorted: false)) ?? []).filter {
                $0.hasPrefix("gpg.conf") || $0.hasPrefix("common.conf")
            }
            return names.contains { name in
                guard let bytes = try? FileSystem.readFile(folder + "/" + name) else { return true }
                let text = String(decoding: bytes, as: UTF8.self).lowercased()
                return ["keyring", "trustdb", "keyboxd"].contains { text.contains($0) }
            }
        }
    }

    /// Keeps gpg's choice for `message` (just made by gpg for `recipients`) as the plan for the next
    /// message, when the process can encrypt the same way and GnuPG's home is as it was
    /// (`before`, from ``stamps(home:)``) once the keys' expiry is known; when it cannot, keeps that
    /// no plan can be made (an empty plan, ``Outcome/gpgOnly``), so that the next write does not ask
    /// gpg for the keys again.
    static func remember(
        _ message: [UInt8], choice: EncryptionChoice?, recipients: [String], engine: GPGMEEngine,
        before: String
    ) {
        guard !before.isEmpty, let home = plannedHome(engine.options),
            let file = try? planFile(for: recipients, options: engine.options, home: home.path)
        else { return }
        let now = Int(time(nil))
        func keep(until: Int, cipher: UInt8, fingerprints: [String]) {
            // Only what was decided on the home as it was when gpg encrypted.
            guard until > now, stamps(home: home.path) == before else { return }
            let text =
                [
                    header, "for " + subject(recipients, engine.options, home.path), "since \(now)",
                    "until \(until)", "cipher \(cipher)", "stamps " + before,
                ] + fingerprints.map { "key " + $0 }
            try? FileSystem.atomicWrite(
                file, bytes: Array((text.joined(separator: "\n") + "\n").utf8), mode: 0o600)
            prune(FileSystem.parent(of: file), now: now)
        }
        let noPlan = { keep(until: now + maximumAge, cipher: 0, fingerprints: []) }
        guard let cipher = choice?.inProcessCipher, !configurationNamesOtherFiles(home: home.path),
            let keys = DirectEncryption.recipients(of: message, homeDirectory: engine.options.homeDirectory),
            !keys.isEmpty
        else { return noPlan() }
        var until = now + maximumAge
        let fingerprints = keys.map { Hex.upper($0.fingerprint) }
        // A listing that fails keeps nothing either way: the next write asks gpg again.
        guard let listed = try? engine.keys(matching: fingerprints, secretOnly: false) else { return }
        for fingerprint in fingerprints {
            // The key holding the subkey: its own expiry and the subkey's bound the plan.
            guard let key = listed.first(where: { $0.subkeys.contains { $0.fingerprint == fingerprint } }),
                !key.isExpired, !key.isRevoked, key.isUltimatelyTrusted || engine.options.alwaysTrust,
                let subkey = key.subkeys.first(where: { $0.fingerprint == fingerprint }), !subkey.isUnusable,
                let primary = key.subkeys.first
            else { return noPlan() }
            for expiry in [primary.expirationTime, subkey.expirationTime] where expiry > 0 {
                until = min(until, expiry)
            }
        }
        // Signatures expire too (a subkey's binding, a user id's self-signature), and a key or
        // signature dated ahead starts to count later: the plan ends before the first of them.
        for key in keys {
            if let change = KeyringIndex.shared.nextChange(
                ofKeyWithID: key.keyID, home: home.path, after: now)
            {
                until = min(until, change)
            }
        }
        keep(until: until, cipher: cipher, fingerprints: fingerprints)
    }

    /// Removes the plans of the folder that are past any use (written more than ``maximumAge`` ago), so
    /// that plans for homes and recipient lists no longer used do not pile up.
    static func prune(_ folder: String, now: Int) {
        guard let names = try? FileSystem.contents(of: folder, sorted: false) else { return }
        for name in names where name.hasPrefix("plan-") {
            var info = stat()
            guard lstat(folder + "/" + name, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
            #if canImport(Darwin)
                let modified = Int(info.st_mtimespec.tv_sec)
            #else
                let modified = Int(info.st_mtim.tv_sec)
            #endif
            if modified < now - maximumAge { unlink(folder + "/" + name) }
        }
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

    private static let header = "coffer encryption plan 2"

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
        return try folder() + "/plan-" + name
    }

    /// `$XDG_CACHE_HOME/coffer` (else `~/.cache/coffer`): made 0700, and used only when it is a folder
    /// of this user that no one else may enter. Not the runtime folder in `/dev/shm`, which programs
    /// that share the user's id but not their home (a container sharing the host's IPC) can reach.
    ///
    /// The folders above it must be guarded too (``FileSystem/isGuardedFolder(_:)``): in a folder another user may write,
    /// they could move the cache folder away and put back an old one, or a link, between two commands.
    static func folder() throws -> String {
        guard let folder = folderPath() else { throw CofferError(.io, "no home folder for encryption plans") }
        let above = FileSystem.parent(of: folder)
        // The nearest folder above that is there already: the folders made below it are the user's.
        var existing = above
        while FileSystem.kind(existing) == .missing && existing != "/" {
            existing = FileSystem.parent(of: existing)
        }
        guard FileSystem.isGuardedFolder(existing) else {
            throw CofferError(
                .io,
                "\(Quoting.quoted(above)) (or a folder above it) may be changed by another user; set XDG_CACHE_HOME "
                    + "to a folder only you can write")
        }
        if FileSystem.kind(folder) == .missing { try FileSystem.makeDirectories(folder, mode: 0o700) }
        guard isPrivate(folder), FileSystem.isGuardedFolder(above) else {
            throw CofferError(.io, "\(folder) is not a private folder of this user")
        }
        return folder
    }

    /// ``folder()`` when it is there and guarded, without making it; `nil` otherwise.
    static func existingFolder() -> String? {
        guard let folder = folderPath(), isPrivate(folder),
            FileSystem.isGuardedFolder(FileSystem.parent(of: folder))
        else {
            return nil
        }
        return folder
    }

    /// Whether `folder` itself (not through a link) is a folder of this user that no one else may enter.
    private static func isPrivate(_ folder: String) -> Bool {
        var info = stat()
        return lstat(folder, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR && info.st_uid == geteuid()
            && info.st_mode & 0o077 == 0
    }

    /// Where ``folder()`` is, without making it; `nil` when neither variable names an absolute folder.
    static func folderPath() -> String? {
        let cache = environmentValue("XDG_CACHE_HOME").flatMap { $0.startsWithSlash ? $0 : nil }
        let base = cache ?? environmentValue("HOME").flatMap({ $0.startsWithSlash ? $0 + "/.cache" : nil })
        return base.map { $0 + "/coffer" }
    }

    /// The plan in `file` when it is a regular file of this user that no one else may write, and is
    /// for `subject`.
    static func read(_ file: String, for subject: String) -> Plan? {
        // Not blocking: a FIFO put in a plan's place must not hang the write (it is refused below).
        let descriptor = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
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
            let stamps = fields["stamps"]
        else { return nil }
        guard until - since <= maximumAge else { return nil }
        return Plan(since: since, until: until, cipher: cipher, stamps: stamps, fingerprints: fingerprints)
    }
}

/// The user's private cache folder, for what coffer keeps beside a store (the Secret Service's index).
package enum UserCache {
    /// `$XDG_CACHE_HOME/coffer` (else `~/.cache/coffer`), made 0700 when missing, and refused unless it
    /// is a folder of this user that no one else may enter.
    package static func folder() throws -> String { try EncryptionPlans.folder() }

    /// A file name that stands for `key` and tells nothing of it: the hex SHA-1 of its bytes.
    package static func fileName(for key: String) -> String { Hex.upper(Gcrypt.sha1(Array(key.utf8))) }
}
