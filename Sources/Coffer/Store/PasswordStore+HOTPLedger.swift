#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The highest HOTP counter this clone has used for each key, so that no code is handed out twice when
/// a sync (or a pusher) brings the entry back with a lower counter, or with another URI line first.
///
/// It lives in `<git folder>/coffer-hotp`, which git never pushes: a first line `salt HEX` (random, this
/// clone's own), then one line `ID COUNTER` per key, where ID is HMAC-SHA-256 keyed by the key's secret
/// over the salt. It holds no secret and no entry name. A store without git has no ledger: nothing
/// brings its entries back.
extension PasswordStore {
    /// The ledger's file, or `nil` for a store without git.
    private var hotpLedgerFile: String? {
        git(for: root + "/.gpg-id")?.gitDirectory().map { $0 + "/coffer-hotp" }
    }

    /// The ledger's salt and counters as the file holds them; a new salt when there is no file.
    ///
    /// - Throws: ``CofferError/Code/io`` when the file is there but cannot be read, and
    ///   ``CofferError/Code/format`` when it holds no salt: starting again would forget the counters.
    private func readHOTPLedger(_ file: String) throws -> (salt: [UInt8], counters: [String: Int64]) {
        var salt: [UInt8] = []
        var counters: [String: Int64] = [:]
        var bytes: [UInt8] = []
        do {
            bytes = try FileSystem.readFile(file)
        } catch let error as CofferError where error.errno?.rawValue == ENOENT {
            bytes = []
        }
        let text = String(decoding: bytes, as: UTF8.self)
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count == 2 else { continue }
            if fields[0] == "salt" {
                salt = Hex.bytes(String(fields[1])) ?? []
            } else if let counter = Int64(fields[1]) {
                counters[String(fields[0])] = max(counter, counters[String(fields[0])] ?? counter)
            }
        }
        if salt.count != 32 {
            guard bytes.isEmpty else {
                throw CofferError(
                    .format,
                    "the HOTP ledger \(Quoting.quoted(file)) has no salt line; move it away to start a new one "
                        + "(codes this clone handed out may then be handed out again)")
            }
            salt = [UInt8](repeating: 0, count: 32)
            salt.withUnsafeMutableBytes { Gcrypt.randomize($0) }
            counters = [:]
        }
        return (salt, counters)
    }

    /// The ledger's name for `key`: HMAC-SHA-256 keyed by its secret over the salt. A secret longer than
    /// SHA-1's block (64 bytes) is the key HMAC-SHA-1 uses, SHA-1 of it, so that two spellings that give
    /// the same codes have one name.
    private func hotpLedgerID(_ key: OneTimePassword, salt: [UInt8]) throws -> String {
        var secret = try key.key()
        if secret.count > 64 {
            var bytes = secret.withUnsafeBytes { Array($0) }
            defer { wipeMemory(&bytes, count: bytes.count) }
            var digest = Gcrypt.sha1(bytes)
            defer { wipeMemory(&digest, count: digest.count) }
            secret = SecureBytes(digest)
        }
        guard let mac = secret.withUnsafeBytes({ Gcrypt.hmac(.sha256, key: $0, message: salt) }) else {
            throw CofferError(.io, "libgcrypt could not make the HOTP ledger's name for a key")
        }
        return mac.withUnsafeBytes { Hex.upper(Array($0)) }
    }

    /// After a sync brought changes since `before`: an HOTP entry whose counter is now lower than the
    /// highest one for the same secret among the versions this clone had and those the sync brought (a
    /// push that put an old version back, under its name or another, even in the same sync as the
    /// counter's rise) gets that highest counter back, committed. Returns the entries so kept.
    package func keepHOTPCounters(_ repository: GitRepository, since before: String) throws -> [String] {
        let salt = [UInt8](repeating: 0, count: 32)
        func hotp(_ ciphertext: [UInt8]) throws -> (key: OneTimePassword, counter: Int64, id: String)? {
            guard let text = try engine.decryptUnlessUnreadable(ciphertext),
                let uri = text.withUnsafeBytes({ OneTimePassword.uri(in: $0) }),
                let key = try? OneTimePassword(uri: uri), key.kind == .hotp,
                let counter = key.counterParameter.flatMap({ Int64($0) })
            else { return nil }
            return (key, counter, try hotpLedgerID(key, salt: salt))
        }
        let versions = try repository.fileVersions(since: before, to: "HEAD")
        let changed = try repository.changes(from: before, to: "HEAD").map(\.path)
        let paths = Set(versions.map(\.path) + changed).filter {
            $0.hasSuffix(".gpg") && (repository.directory + "/" + $0).isPath(inside: root)
        }
        // The HOTP entries the sync touched, as they are now.
        var current: [(name: String, key: OneTimePassword, counter: Int64, id: String)] = []
        // What is read now is not read again among the versions below.
        var read: Set<String> = []
        for path in paths.sorted() {
            let file = repository.directory + "/" + path
            guard FileSystem.kind(file) == .file else { continue }
            let bytes = try FileSystem.readFile(file)
            read.insert(Self.blobID(of: bytes))
            guard let found = try hotp(bytes), found.key.canAdvance else { continue }
            current.append(
                (String(file.droppingPathPrefix(root).dropLast(4)), found.key, found.counter, found.id))
        }
        // The highest counter of each secret: in this clone's versions of every path the sync touched,
        // and in every version its commits wrote. Read also when no HOTP entry is left but this clone had
        // one among those paths (a push removed it, or replaced it with what this clone cannot read): a
        // version with the old counter that comes back later must find the one seen here (red team, a
        // code handed out twice). A sync that touched no HOTP entry reads no old version.
        let had = try repository.treeFiles(at: before).mapValues(\.object)
        if current.isEmpty {
            let hadHOTP = try paths.contains { path in
                guard let object = had[path] else { return false }
                return try hotp(try repository.blob(object)) != nil
            }
            guard hadHOTP else { return [] }
        }
        var objects = Set(versions.flatMap { $0.path.hasSuffix(".gpg") ? $0.objects : [] })
        for path in paths { if let object = had[path] { objects.insert(object) } }
        objects.subtract(read)
        var highest: [String: (key: OneTimePassword, counter: Int64)] = [:]
        for found in try objects.sorted().compactMap({ try hotp(try repository.blob($0)) })
            + current.map({
                (key: $0.key, counter: $0.counter, id: $0.id)
            }) where found.counter > highest[found.id]?.counter ?? -1
        {
            highest[found.id] = (found.key, found.counter)
        }
        // A secret this clone's ledger has not seen yet (its first sync after a clone, say) may be in the
        // tree under another name with a higher counter: a pusher's copy of an old version beside the
        // original (red team, a code handed out twice). The tree's entries are read for it, once; what
        // they hold goes in the ledger, where otp moves on from, and the copy is left as it came.
        var elsewhere: [(key: OneTimePassword, counter: Int64)] = []
        let unseen = try Set(current.filter { try hotpCounterUsed($0.key) == nil }.map(\.id))
        if !unseen.isEmpty {
            for file in try Self.entryFiles(at: root) {
                let bytes = try FileSystem.readFile(file)
                guard !read.contains(Self.blobID(of: bytes)), let found = try hotp(bytes),
                    unseen.contains(found.id)
                else { continue }
                elsewhere.append((found.key, found.counter))
            }
        }
        // Seen is as good as taken: a copy of the entry under another name that arrives later with a lower
        // counter moves on from this one too.
        try recordHOTPCounters(highest.values.map { ($0.key, $0.counter) } + elsewhere)
        var kept: [String] = []
        for entry in current {
            guard let counter = highest[entry.id]?.counter, counter > entry.counter else { continue }
            let restored = try OneTimePassword(uri: entry.key.replacingCounter(with: String(counter)))
            try update(entry.name, commitMessage: "Keep the HOTP counter of \(entry.name) at \(counter).") {
                current in
                var text = current.withUnsafeBytes { restored.replacingURIs(in: $0) }
                defer { text.withUnsafeMutableBytes { wipeMemory($0.baseAddress, count: $0.count) } }
                return SecureBytes(text)
            }
            kept.append(entry.name)
        }
        return kept
    }

    /// Takes the next counter of the HOTP `key`: one past its own, or past the highest this clone took for
    /// its secret when that is higher (`from` is then that one). The counter is recorded as taken before
    /// this returns; the caller writes the entry with `next` and only then shows its code.
    ///
    /// - Throws: ``CofferError/Code/invalidArgument`` when the counter is not read exactly or cannot
    ///   move on, or the ledger's errors.
    package func takeNextHOTPCounter(_ key: OneTimePassword) throws -> (next: OneTimePassword, from: Int64?) {
        guard key.canAdvance, var last = key.counter else {
            throw CofferError(
                .invalidArgument,
                "the HOTP counter is not a number from 0 to \(Int64.max - 1) that can move on")
        }
        var from: Int64?
        if let used = try hotpCounterUsed(key), used > last {
            guard used < Int64.max else {
                throw CofferError(.invalidArgument, "the HOTP counter cannot move on past \(Int64.max)")
            }
            last = used
            from = used
        }
        let next = try OneTimePassword(uri: key.replacingCounter(with: String(last + 1)))
        try recordHOTPCounter(key, last + 1)
        return (next, from)
    }

    /// The highest counter this clone has used for `key`'s secret, `nil` when none (or no git).
    private func hotpCounterUsed(_ key: OneTimePassword) throws -> Int64? {
        guard let file = hotpLedgerFile else { return nil }
        let ledger = try readHOTPLedger(file)
        return ledger.counters[try hotpLedgerID(key, salt: ledger.salt)]
    }

    /// Records that this clone used `counter` for `key`'s secret. Written before the code is shown, so
    /// that a failure shows none.
    private func recordHOTPCounter(_ key: OneTimePassword, _ counter: Int64) throws {
        try recordHOTPCounters([(key, counter)])
    }

    /// Records counters this clone used or saw, each for its key's secret, in one write; a lower one
    /// than the ledger holds changes nothing.
    private func recordHOTPCounters(_ counters: [(key: OneTimePassword, counter: Int64)]) throws {
        guard let file = hotpLedgerFile, !counters.isEmpty else { return }
        var ledger = try readHOTPLedger(file)
        var changed = !FileSystem.exists(file)
        for (key, counter) in counters {
            let id = try hotpLedgerID(key, salt: ledger.salt)
            guard counter > ledger.counters[id] ?? -1 else { continue }
            ledger.counters[id] = counter
            changed = true
        }
        guard changed else { return }
        var text = "salt \(Hex.upper(ledger.salt))\n"
        for (name, value) in ledger.counters.sorted(by: { $0.key < $1.key }) { text += "\(name) \(value)\n" }
        try FileSystem.atomicWrite(file, bytes: Array(text.utf8), mode: 0o600)
    }
}
