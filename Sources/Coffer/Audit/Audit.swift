#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A health check of the passwords of a store (or of one of its folders): weak passwords, passwords
/// used by more than one entry, passwords not changed for a long time, and passwords found in an offline
/// copy of Have I Been Pwned's list.
///
/// Every entry is decrypted, on every core; its password is its first line. Nothing is written, and the
/// findings name entries only: the passwords themselves are kept (in wiped memory) only when
/// ``Settings/keepPasswords`` asks for them. An entry that cannot be decrypted is a
/// ``Report/failures`` item, never skipped silently.
///
/// ```swift
/// let report = try Audit(store: store).run { event in
///     if case .decrypted(let done, let total) = event { print("\(done)/\(total)") }
/// }
/// for weak in report.weak { print(weak.entry, weak.strength.bits) }
/// ```
public struct Audit: Sendable {
    /// What the audit looks for.
    public struct Settings: Sendable {
        /// Passwords estimated below this many bits (``PasswordStrength``) are weak; 40 by default.
        public var minimumBits: Double = 40
        /// Passwords unchanged for more than this many days are old (from the store's git history);
        /// 365 by default, `nil` to leave age out.
        public var maximumAgeDays: Int? = 365
        /// An offline copy of Have I Been Pwned's SHA-1 list ordered by hash, or `nil` to leave breaches
        /// out.
        public var breachedList: String?
        /// Whether the findings carry the passwords they are about (to show them); `false` by default.
        public var keepPasswords = false
        /// The time the age is measured at, in seconds since 1970; the current time by default.
        public var now: Int?

        /// The default settings.
        public init() {}
    }

    /// Progress of a run, reported on the calling thread.
    public enum Event: Sendable, Equatable {
        /// The entries to audit are known.
        case started(entries: Int)
        /// The git history of the store was read (to date passwords).
        case readHistory
        /// `done` of `total` entries were decrypted and examined.
        case decrypted(done: Int, total: Int)
        /// The breached password list is being searched.
        case searchingBreachedList
    }

    /// A password estimated too easy to guess, or a common one.
    public struct WeakPassword: Sendable {
        /// The entry.
        public let entry: String
        /// The estimate.
        public let strength: PasswordStrength
        /// The password, when ``Settings/keepPasswords`` is set.
        public let password: SecureBytes?
    }

    /// One password used by several entries.
    public struct ReusedPassword: Sendable {
        /// The entries that share it, in listing order.
        public let entries: [String]
        /// The password, when ``Settings/keepPasswords`` is set.
        public let password: SecureBytes?
    }

    /// A password not changed for longer than ``Settings/maximumAgeDays``.
    public struct OldPassword: Sendable {
        /// The entry.
        public let entry: String
        /// When the password was last set (the author date of the commit that set it), in seconds since
        /// 1970.
        public let lastChanged: Int
        /// Whole days since then.
        public let days: Int
    }

    /// A password found in the breached password list.
    public struct BreachedPassword: Sendable {
        /// The entry.
        public let entry: String
        /// How often the list says it was seen in breaches.
        public let count: Int
        /// The password, when ``Settings/keepPasswords`` is set.
        public let password: SecureBytes?
    }

    /// An entry that could not be audited.
    public struct Failure: Sendable {
        /// The entry.
        public let entry: String
        /// Why (gpg's or the file system's error).
        public let error: any Error
    }

    /// An entry name that leads to the same file as another one (a symbolic link to the entry or to a
    /// folder holding it): the file is audited once, under ``sameAs``.
    public struct Alias: Sendable, Equatable {
        /// The other name.
        public let entry: String
        /// The name the file is audited under (the one without a symbolic link on the way, when there is
        /// one).
        public let sameAs: String
    }

    /// What a run found.
    public struct Report: Sendable {
        /// The entries audited, in listing order (failures included; aliases left out).
        public var entries: [String] = []
        /// Names that lead to a file audited under another name, in listing order.
        public var aliases: [Alias] = []
        /// Entries whose password is empty (a note without one): not judged.
        public var withoutPassword: [String] = []
        /// Weak passwords, in listing order.
        public var weak: [WeakPassword] = []
        /// Passwords shared by several entries, ordered by their first entry.
        public var reused: [ReusedPassword] = []
        /// Old passwords, in listing order.
        public var old: [OldPassword] = []
        /// Breached passwords, in listing order.
        public var breached: [BreachedPassword] = []
        /// Entries that could not be audited.
        public var failures: [Failure] = []
        /// Whether ages were checked (the store is a git repository and age was asked for).
        public var checkedAge = false
        /// Whether a breached password list was searched.
        public var checkedBreaches = false
        /// Whether the breached list was too big to read whole and was searched by bisection: its lines
        /// were then checked only where the search read them (see ``Settings/breachedList``).
        public var breachedListBisected = false

        /// Whether anything was found.
        public var hasFindings: Bool { !weak.isEmpty || !reused.isEmpty || !old.isEmpty || !breached.isEmpty }
    }

    /// The store.
    public let store: PasswordStore
    /// The folder audited (empty for the whole store).
    public let subfolder: String
    /// What to look for.
    public let settings: Settings

    /// An audit of `subfolder` (by default the whole store) of `store`.
    public init(store: PasswordStore, subfolder: String = "", settings: Settings = Settings()) {
        self.store = store
        self.subfolder = subfolder
        self.settings = settings
    }

    /// Runs the audit, telling `onEvent` how far it got.
    ///
    /// - Throws: ``CofferError`` when the folder is not in the store; when ages are asked for and git
    ///   cannot read the history (git missing, a repository git refuses, any failure) or the clone is
    ///   shallow (no age can be known); or when the breached list cannot be read or is found not to be a
    ///   sorted list of `HASH:COUNT` lines (a list searched by bisection is checked only where it is read:
    ///   ``Report/breachedListBisected``). An entry that
    ///   does not decrypt is reported in ``Report/failures`` instead, and the others are still audited.
    public func run(onEvent: (Event) -> Void = { _ in }) throws -> Report {
        let trimmed = EntryName.trimmed(subfolder)
        if !trimmed.isEmpty {
            try EntryName.validate(trimmed)
            guard store.isFolder(trimmed) else {
                throw CofferError(.notFound, "\(trimmed) is not in the password store.")
            }
        } else if !store.exists {
            throw CofferError(.notFound, "the password store is empty.")
        }
        // A breached list that cannot be read fails before anything is decrypted.
        if let list = settings.breachedList {
            switch FileSystem.resolvedKind(list) {
            case .missing: throw CofferError(.io, "cannot open", path: list, errno: ENOENT)
            case .directory: throw CofferError(.io, "cannot read", path: list, errno: EISDIR)
            default:
                guard access(list, R_OK) == 0 else {
                    throw CofferError(.io, "cannot open", path: list, errno: errno)
                }
            }
        }
        var report = Report()
        let names = Self.withoutAliases(
            try store.allEntries(in: trimmed), store: store, aliases: &report.aliases)
        onEvent(.started(entries: names.count))
        report.entries = names

        // Each entry's committed versions, from one `git log` per repository.
        var histories: [String: (GitRepository, [EntryVersion])] = [:]
        if settings.maximumAgeDays != nil {
            var byRepository: [String: (GitRepository, [(name: String, path: String)])] = [:]
            for name in names {
                guard let repository = store.git(for: store.entryPath(name)) else { continue }
                byRepository[repository.directory, default: (repository, [])].1.append(
                    (name, repository.pathspec(store.entryPath(name))))
            }
            for (repository, entries) in byRepository.values {
                let versions = try repository.versions(of: entries.map(\.path))
                for entry in entries { histories[entry.name] = (repository, versions[entry.path] ?? []) }
            }
            report.checkedAge =
                !byRepository.isEmpty || names.isEmpty && store.git(for: store.root + "/.gpg-id") != nil
            onEvent(.readHistory)
        }

        let now = settings.now ?? Int(time(nil))
        let store = self.store
        let wantsHashes = settings.breachedList != nil
        var examined: [Examined] = []
        try Parallel.forEach(names.map { ($0, histories[$0]) }) { name, history in
            try Self.examine(name, store: store, history: history, hashing: wantsHashes)
        } consume: { index, result in
            switch result {
            case .success(let entry): examined.append(entry)
            case .failure(let error): report.failures.append(Failure(entry: names[index], error: error))
            }
            onEvent(.decrypted(done: index + 1, total: names.count))
        }
        defer { for entry in examined { entry.wipe() } }

        let keep = settings.keepPasswords
        let judged = examined.filter { entry in
            if entry.password.isEmpty { report.withoutPassword.append(entry.name) }
            return !entry.password.isEmpty
        }
        for entry in judged where entry.strength.isCommon || entry.strength.bits < settings.minimumBits {
            report.weak.append(
                WeakPassword(
                    entry: entry.name, strength: entry.strength, password: keep ? entry.password : nil))
        }
        // Equal passwords end up next to each other; groups keep the listing order.
        let sorted = judged.indices.sorted {
            Self.precedes(judged[$0].password, judged[$1].password)
                || (judged[$0].password.constantTimeEquals(judged[$1].password) && $0 < $1)
        }
        var groups: [[Int]] = []
        for index in sorted {
            if let last = groups.last?.last, judged[last].password.constantTimeEquals(judged[index].password)
            {
                groups[groups.count - 1].append(index)
            } else {
                groups.append([index])
            }
        }
        for group in groups.filter({ $0.count > 1 }).sorted(by: { $0[0] < $1[0] }) {
            report.reused.append(
                ReusedPassword(
                    entries: group.map { judged[$0].name }, password: keep ? judged[group[0]].password : nil))
        }
        if let days = settings.maximumAgeDays {
            for entry in judged {
                guard let changed = entry.lastChanged else { continue }
                let age = (now - changed) / 86_400
                // In floating point: a huge number of days must not overflow.
                if Double(now - changed) > Double(days) * 86_400 {
                    report.old.append(OldPassword(entry: entry.name, lastChanged: changed, days: age))
                }
            }
        }
        if let path = settings.breachedList {
            onEvent(.searchingBreachedList)
            var hashes = judged.map { $0.hash ?? [] }
            defer {
                for index in hashes.indices {
                    hashes[index].withUnsafeMutableBytes { wipeMemory($0.baseAddress, count: $0.count) }
                }
            }
            let list = BreachedPasswordList(path: path)
            let counts = try list.counts(of: hashes)
            report.breachedListBisected = list.isSearchedByBisection
            for (entry, count) in zip(judged, counts) {
                guard let count else { continue }
                report.breached.append(
                    BreachedPassword(entry: entry.name, count: count, password: keep ? entry.password : nil))
            }
            report.checkedBreaches = true
        }
        return report
    }

    /// What one entry showed.
    private final class Examined: @unchecked Sendable {
        let name: String
        let password: SecureBytes
        let strength: PasswordStrength
        /// The password's SHA-1, upper-case hexadecimal, when a breached list is searched.
        var hash: [UInt8]?
        /// When the password was last set, when the history says.
        let lastChanged: Int?

        init(
            name: String, password: SecureBytes, strength: PasswordStrength, hash: [UInt8]?, lastChanged: Int?
        ) {
            self.name = name
            self.password = password
            self.strength = strength
            self.hash = hash
            self.lastChanged = lastChanged
        }

        func wipe() {
            hash?.withUnsafeMutableBytes { wipeMemory($0.baseAddress, count: $0.count) }
        }
    }

    /// Decrypts one entry and judges its password (any thread).
    private static func examine(
        _ name: String, store: PasswordStore, history: (GitRepository, [EntryVersion])?, hashing: Bool
    ) throws -> Examined {
        let path = store.entryPath(name)
        if name.unicodeScalars.contains("\u{FFFD}") && FileSystem.resolvedKind(path) == .missing {
            // The listing decoded a name that is not UTF-8, so no file has the name it gave.
            throw CofferError(
                .format,
                "its file name is not valid UTF-8 and cannot be opened by name; rename it to UTF-8 text",
                paths: [path])
        }
        let ciphertext = try FileSystem.readFile(path)
        guard !ciphertext.isEmpty else { throw CofferError(.format, "the file is empty", paths: [path]) }
        let plaintext = try store.engine.decrypt(ciphertext)
        let password = firstLine(plaintext)
        let strength = PasswordStrength.estimate(password, userWords: userWords(name, plaintext))
        var hash: [UInt8]?
        if hashing {
            hash = password.withUnsafeBytes { bytes in
                Gcrypt.digest(openPGPHash: 2, [bytes])?.withBytes { digest in
                    var hex: [UInt8] = []
                    hex.reserveCapacity(40)
                    for byte in digest {
                        hex.append(hexDigits[Int(byte >> 4)])
                        hex.append(hexDigits[Int(byte & 15)])
                    }
                    return hex
                }
            }
            guard hash != nil else { throw CofferError(.io, "libgcrypt cannot compute SHA-1") }
        }
        var lastChanged: Int?
        if let (repository, versions) = history, !versions.isEmpty {
            lastChanged = try passwordSetAt(
                versions, current: ciphertext, password: password, repository: repository,
                engine: store.engine)
        }
        return Examined(
            name: name, password: password, strength: strength, hash: hash, lastChanged: lastChanged)
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    /// When the current password was set: the author date of the oldest commit of the unbroken run of
    /// versions, from the newest back, that hold the same password (`nil` when the file as it is now
    /// holds a password no commit has). Versions whose bytes are the file's own need no decryption; the
    /// run also ends at a version that does not decrypt.
    private static func passwordSetAt(
        _ versions: [EntryVersion], current: [UInt8], password: SecureBytes, repository: GitRepository,
        engine: any CryptoEngine
    ) throws -> Int? {
        let currentBlob = gitBlobID(current)
        var setAt: Int?
        var known: [String: Bool] = [currentBlob: true]
        for version in versions {
            let same: Bool
            if let answer = known[version.blob] {
                same = answer
            } else {
                // A version this keyring cannot read (encrypted for a key given up since, or not an entry
                // at all) ends what the history can tell: the password is as old as the versions after it.
                let ciphertext = try repository.blob(version.blob)
                guard let plaintext = try engine.decryptUnlessUnreadable(ciphertext) else { break }
                same = firstLine(plaintext).constantTimeEquals(password)
                known[version.blob] = same
            }
            guard same else { break }
            setAt = version.time
        }
        return setAt
    }

    /// git's id of a blob holding `bytes` (SHA-1 of `blob LENGTH\0` and the bytes).
    private static func gitBlobID(_ bytes: [UInt8]) -> String {
        let digest = Gcrypt.sha1(Array("blob \(bytes.count)\0".utf8) + bytes)
        return digest.map { String(hexDigits[Int($0 >> 4)]) + String(hexDigits[Int($0 & 15)]) }.joined()
            .lowercased()
    }

    /// The first line of an entry, without its line end: a `\r` before the `\n` (or ending an entry of
    /// one line) belongs to the line end, as ``Secret`` and pass-audit read it.
    static func firstLine(_ plaintext: SecureBytes) -> SecureBytes {
        plaintext.withUnsafeBytes { bytes in
            var end = bytes.firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count
            if end > 0 && bytes[end - 1] == UInt8(ascii: "\r") { end -= 1 }
            return SecureBytes(UnsafeRawBufferPointer(rebasing: bytes[0..<end]))
        }
    }

    /// `names` without those that lead to the same file (device and inode, links followed) as another
    /// one, which go to `aliases`. Of the names of one file, the one reached without a symbolic link is
    /// kept (the first in listing order when none or several are).
    static func withoutAliases(_ names: [String], store: PasswordStore, aliases: inout [Alias]) -> [String] {
        struct Identity: Hashable {
            var device: UInt64
            var inode: UInt64
        }
        var groups: [Identity: [String]] = [:]
        var identities: [Identity?] = []
        for name in names {
            var info = stat()
            guard stat(store.entryPath(name), &info) == 0 else {
                identities.append(nil)
                continue
            }
            let identity = Identity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
            identities.append(identity)
            groups[identity, default: []].append(name)
        }
        guard groups.values.contains(where: { $0.count > 1 }) else { return names }
        let root = FileSystem.realPath(store.root)
        var kept: [Identity: String] = [:]
        for (identity, group) in groups where group.count > 1 {
            let direct = group.first { name in
                root.map { FileSystem.realPath(store.entryPath(name)) == $0 + "/" + name + ".gpg" } ?? false
            }
            kept[identity] = direct ?? group[0]
        }
        var result: [String] = []
        for (name, identity) in zip(names, identities) {
            if let identity, let keeper = kept[identity], keeper != name {
                aliases.append(Alias(entry: name, sameAs: keeper))
            } else {
                result.append(name)
            }
        }
        return result
    }

    /// Words an attacker who knows the entry tries first: the parts of its name and of its login and
    /// address fields (read from the plaintext without copying the rest of it).
    private static func userWords(_ name: String, _ plaintext: SecureBytes) -> [String] {
        let separators: Set<Character> = ["/", "-", "_", ".", " ", "@", ":", "+"]
        func parts(_ text: String) -> [String] {
            [text] + text.split(whereSeparator: { separators.contains($0) }).map(String.init)
        }
        var words = parts(name)
        let keys = ["login", "user", "username", "email", "e-mail", "url", "site", "website"].map {
            Array($0.utf8)
        }
        func isKey(_ bytes: Slice<UnsafeRawBufferPointer>) -> Bool {
            keys.contains { key in
                key.count == bytes.count
                    && zip(key, bytes).allSatisfy { $0 == (($1 >= 65 && $1 <= 90) ? $1 + 32 : $1) }
            }
        }
        let blanks: Set<UInt8> = [UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r")]
        plaintext.withUnsafeBytes { bytes in
            var lineStart = bytes.firstIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? bytes.count
            while lineStart < bytes.count {
                let lineEnd = bytes[lineStart...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count
                defer { lineStart = lineEnd + 1 }
                guard let colon = bytes[lineStart..<lineEnd].firstIndex(of: UInt8(ascii: ":")),
                    isKey(bytes[lineStart..<colon])
                else { continue }
                var value = bytes[(colon + 1)..<lineEnd]
                while let first = value.first, blanks.contains(first) { value = value.dropFirst() }
                while let last = value.last, blanks.contains(last) { value = value.dropLast() }
                if !value.isEmpty && value.count <= 256 {
                    words += parts(String(decoding: value, as: UTF8.self))
                }
            }
        }
        return words.filter { !$0.isEmpty }
    }

    /// Byte order of two passwords.
    private static func precedes(_ first: SecureBytes, _ second: SecureBytes) -> Bool {
        first.withUnsafeBytes { a in second.withUnsafeBytes { b in a.lexicographicallyPrecedes(b) } }
    }
}
