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

    /// After a sync brought changes since `before`: an entry whose HOTP counter came back lower than this
    /// clone had it (the same secret, on a clone that may never have used it), by a push or a merge, keeps
    /// the counter it had, committed. Returns the entries so kept.
    package func keepHOTPCounters(_ repository: GitRepository, since before: String) throws -> [String] {
        var kept: [String] = []
        for change in try repository.changes(from: before, to: "HEAD")
        where change.status.hasPrefix("M") && change.path.hasSuffix(".gpg") {
            let path = repository.directory + "/" + change.path
            guard path.isPath(inside: root), FileSystem.isFile(path),
                let old = try repository.contents(of: change.path, at: before),
                let oldText = try engine.decryptUnlessUnreadable(old),
                let newText = try engine.decryptUnlessUnreadable(try FileSystem.readFile(path)),
                let oldURI = oldText.withUnsafeBytes({ OneTimePassword.uri(in: $0) }),
                let newURI = newText.withUnsafeBytes({ OneTimePassword.uri(in: $0) }),
                let oldKey = try? OneTimePassword(uri: oldURI),
                let newKey = try? OneTimePassword(uri: newURI),
                oldKey.kind == .hotp, newKey.kind == .hotp, oldKey.canAdvance,
                let oldCounter = oldKey.counterParameter.flatMap({ Int64($0) }),
                let newCounter = newKey.counterParameter.flatMap({ Int64($0) }), newCounter < oldCounter
            else { continue }
            let salt = [UInt8](repeating: 0, count: 32)
            guard try hotpLedgerID(oldKey, salt: salt) == hotpLedgerID(newKey, salt: salt) else { continue }
            let name = String(path.droppingPathPrefix(root).dropLast(4))
            let restored = try OneTimePassword(uri: newKey.replacingCounter(with: String(oldCounter)))
            try update(name, commitMessage: "Keep the HOTP counter of \(name) at \(oldCounter).") { current in
                var text = current.withUnsafeBytes { restored.replacingURIs(in: $0) }
                defer { text.withUnsafeMutableBytes { wipeMemory($0.baseAddress, count: $0.count) } }
                return SecureBytes(text)
            }
            kept.append(name)
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
        guard let file = hotpLedgerFile else { return }
        var ledger = try readHOTPLedger(file)
        let id = try hotpLedgerID(key, salt: ledger.salt)
        ledger.counters[id] = max(counter, ledger.counters[id] ?? counter)
        var text = "salt \(Hex.upper(ledger.salt))\n"
        for (name, value) in ledger.counters.sorted(by: { $0.key < $1.key }) { text += "\(name) \(value)\n" }
        try FileSystem.atomicWrite(file, bytes: Array(text.utf8), mode: 0o600)
    }
}
