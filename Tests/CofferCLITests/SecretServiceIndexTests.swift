import Coffer
import CofferTestSupport
import Testing

@testable import CofferSecretService

#if canImport(Glibc)
    import Glibc
#endif

/// The index of the items kept encrypted in the cache folder: a start with it decrypts no entry whose
/// file is as the index saw it, and every entry that changed since.
@Suite("Secret Service: the kept index")
struct SecretServiceIndexTests {
    static let root = "/org/freedesktop/secrets"

    /// An engine that counts decryptions and hands everything to gpg.
    final class CountingEngine: CryptoEngine {
        let real: GPGMEEngine
        let count = Locked(0)

        init(_ real: GPGMEEngine) { self.real = real }

        var decryptions: Int { count.withLock { $0 } }

        func encrypt(_ plaintext: SecureBytes, to recipients: [String]) throws -> [UInt8] {
            try real.encrypt(plaintext, to: recipients)
        }
        func decrypt(_ ciphertext: [UInt8]) throws -> SecureBytes {
            count.withLock { $0 += 1 }
            return try real.decrypt(ciphertext)
        }
        func signDetached(_ data: [UInt8], signer: String) throws -> [UInt8] {
            try real.signDetached(data, signer: signer)
        }
        func verifyDetached(signature: [UInt8], of data: [UInt8]) throws -> [SignatureCheck] {
            try real.verifyDetached(signature: signature, of: data)
        }
        func keys(matching patterns: [String], secretOnly: Bool) throws -> [KeyInfo] {
            try real.keys(matching: patterns, secretOnly: secretOnly)
        }
        func encryptionKeyIDs(for recipients: [String]) throws -> Set<String> {
            try real.encryptionKeyIDs(for: recipients)
        }
    }

    /// A sandbox with a store of `count` items in `secret-service/login/`, written as the provider writes
    /// them.
    static func store(items count: Int) throws -> (GPGSandbox, PasswordStore) {
        let (sandbox, store) = try GPGSandbox.withStore(committing: "start")
        let items = ItemStore(store: store)
        for number in 0..<count {
            try items.write(
                collection: "login", id: "item\(number)", secret: SecureBytes(string: "Sekret-\(number)"),
                metadata: ItemMetadata(label: "Label \(number)", attributes: ["user": "u\(number)"]))
        }
        settle()
        return (sandbox, store)
    }

    /// Waits until files changed before now are settled (``ItemStore/Record/settling``).
    static func settle() { usleep(UInt32(ItemStore.Record.settling * 1_000_000) + 100_000) }

    /// The index file of `collection`.
    static func indexPath(_ sandbox: GPGSandbox, _ store: PasswordStore, collection: String = "login")
        -> String
    {
        sandbox.directory + "/index/" + UserCache.fileName(for: store.root) + "/"
            + UserCache.fileName(for: collection) + ".gpg"
    }

    /// The text of the index of `collection`.
    static func indexText(_ sandbox: GPGSandbox, _ store: PasswordStore, collection: String = "login") throws
        -> String
    {
        let bytes = try FileSystem.readFile(indexPath(sandbox, store, collection: collection))
        return String(
            decoding: try sandbox.engine.decrypt(bytes).withUnsafeBytes { Array($0) }, as: UTF8.self)
    }

    /// A provider over `store` counting its decryptions, its index under the sandbox.
    static func provider(_ sandbox: GPGSandbox, _ store: PasswordStore) throws -> (
        SecretServiceProvider, CountingEngine
    ) {
        let engine = CountingEngine(sandbox.engine)
        let counted = PasswordStore(configuration: store.configuration, engine: engine)
        let provider = try SecretServiceProvider(
            store: counted, connecting: false, indexFolder: sandbox.directory + "/index"
        ) { _ in }
        return (provider, engine)
    }

    /// The label of each item whose `user` attribute is `user`.
    static func labels(_ provider: SecretServiceProvider, user: String) throws -> [String] {
        let found = try provider.call(
            root, SecretServiceProvider.serviceInterface, "SearchItems", [.stringDictionary(["user": user])],
            from: ":1.4")
        return try (found.first?.arrayValue ?? []).compactMap(\.stringValue).map { path in
            try provider.call(
                path, SecretServiceProvider.propertiesInterface, "Get",
                [.string(SecretServiceProvider.itemInterface), .string("Label")], from: ":1.4"
            ).first?.stringValue ?? "?"
        }
    }

    @Test("A start after the index was kept decrypts only the index; a changed entry is read again")
    func startFromIndex() throws {
        let (sandbox, store) = try Self.store(items: 6)
        let (first, counted) = try Self.provider(sandbox, store)
        #expect(counted.decryptions >= 6)
        first.saveIndex()

        let (second, secondCount) = try Self.provider(sandbox, store)
        #expect(secondCount.decryptions == 1)
        #expect(try Self.labels(second, user: "u3") == ["Label 3"])

        // pass (or a sync) changes one entry: its file has another stamp, so it is decrypted again.
        try store.write(
            "secret-service/login/item3",
            SecureBytes(string: "New\nlabel: Changed by hand\nattribute.user: u3\n"))
        Self.settle()
        let (third, thirdCount) = try Self.provider(sandbox, store)
        #expect(thirdCount.decryptions == 2)
        #expect(try Self.labels(third, user: "u3") == ["Changed by hand"])
        // An entry removed since is not served from the index.
        try store.remove("secret-service/login/item4", recursive: false)
        let (fourth, _) = try Self.provider(sandbox, store)
        #expect(try Self.labels(fourth, user: "u4").isEmpty)
    }

    @Test("The index is private, encrypted, outside the store, and a damaged one is ignored")
    func indexIsPrivate() throws {
        let (sandbox, store) = try Self.store(items: 2)
        let (provider, _) = try Self.provider(sandbox, store)
        provider.saveIndex()
        let folder = sandbox.directory + "/index/" + UserCache.fileName(for: store.root)
        let files = try FileSystem.contents(of: folder)
        #expect(files.count == 1 && files.first?.hasSuffix(".gpg") == true, "\(files)")
        let path = folder + "/" + (files.first ?? "")
        var info = stat()
        #expect(stat(folder, &info) == 0 && info.st_mode & 0o777 == 0o700)
        #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == 0o600)
        let bytes = try FileSystem.readFile(path)
        #expect(!String(decoding: bytes, as: UTF8.self).contains("Label"))
        let text = String(
            decoding: try sandbox.engine.decrypt(bytes).withUnsafeBytes { Array($0) }, as: UTF8.self)
        #expect(text.contains("label: Label 1\n") && !text.contains("Sekret"), "\(text)")
        // Nothing of it in the store or its git.
        #expect(
            try sandbox.run(["git", "-C", store.root, "status", "--porcelain", "--ignored"]).outputText == "")

        // A damaged index (cut short) is no index: it fails to decrypt, and every entry is decrypted.
        try FileSystem.atomicWrite(path, bytes: Array(bytes.prefix(bytes.count / 2)), mode: 0o600)
        let (damaged, count) = try Self.provider(sandbox, store)
        #expect(count.decryptions == 1 + 2)
        #expect(try Self.labels(damaged, user: "u1") == ["Label 1"])
        // One another user could write is not read.
        provider.saveIndex()
        chmod(path, 0o622)
        let (open, openCount) = try Self.provider(sandbox, store)
        #expect(openCount.decryptions == 2)
        #expect(try Self.labels(open, user: "u0") == ["Label 0"])
    }

    @Test("A record of a file changed just before it was read is not kept: a change since may look the same")
    func unsettledRecordsNotKept() throws {
        let (sandbox, store) = try Self.store(items: 1)
        try ItemStore(store: store).write(
            collection: "login", id: "fresh", secret: SecureBytes(string: "Sekret-fresh"),
            metadata: ItemMetadata(label: "Fresh", attributes: ["user": "fresh"]))
        // Read at once: on a file system with coarse times, a file replaced now would keep its stamp.
        let (provider, _) = try Self.provider(sandbox, store)
        provider.saveIndex()
        let text = try Self.indexText(sandbox, store)
        #expect(text.contains("label: Label 0\n") && !text.contains("Fresh"), "\(text)")
        #expect(Array(text.utf8).withUnsafeBytes { ItemIndex.parse($0, collection: "login") }?.count == 1)
        // A record that says it was read as soon as its file changed is no record of an index.
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("item ") })
        let words = line.split(separator: " ").map(String.init)
        let racy = text.replacingFirst(
            String(line), with: (words[..<7] + ["\(words[5]).\(words[6])"]).joined(separator: " "))
        #expect(racy != text)
        #expect(Array(racy.utf8).withUnsafeBytes { ItemIndex.parse($0, collection: "login") } == nil)
    }

    @Test("The index is encrypted to the user's keys the folder names, not to its other recipients")
    func encryptedToOwnKeysOnly() throws {
        let (sandbox, store) = try GPGSandbox.withStore(committing: "start")
        // The third key stands for a teammate: its public key only.
        try sandbox.run(["gpg", "--batch", "--yes", "--delete-secret-keys", sandbox.keys[2].fingerprint])
        try store.initialize(
            recipients: [sandbox.keys[0].fingerprint, sandbox.keys[2].fingerprint],
            subfolder: "secret-service/login")
        try ItemStore(store: store).write(
            collection: "login", id: "shared", secret: SecureBytes(string: "Sekret-shared"),
            metadata: ItemMetadata(label: "Shared", attributes: ["user": "team"]))
        Self.settle()
        let (provider, _) = try Self.provider(sandbox, store)
        provider.saveIndex()
        func keyIDs(_ file: String) throws -> Set<String> {
            let listed = try sandbox.run(["gpg", "--batch", "--list-packets", file]).outputText
            return Set(
                listed.split(separator: "\n").filter { $0.contains("pubkey enc packet") }.compactMap {
                    $0.split(separator: " ").last.map(String.init)
                })
        }
        let entryReaders = try keyIDs(store.entryPath("secret-service/login/shared"))
        let indexReaders = try keyIDs(Self.indexPath(sandbox, store))
        #expect(entryReaders.count == 2, "\(entryReaders)")
        // Key 0 is the user's and the folder's; key 1 is the user's but not the folder's; key 2, the
        // teammate's, reads the entry but not the index.
        #expect(
            indexReaders.count == 1 && indexReaders.isSubset(of: entryReaders),
            "\(indexReaders) \(entryReaders)")
        #expect(try Self.indexText(sandbox, store).contains("label: Shared\n"))
    }

    @Test("A cache folder inside the store is refused: the index is never written there")
    func cacheInsideStoreRefused() throws {
        let (sandbox, store) = try Self.store(items: 1)
        let events = Locked<[ProviderEvent]>([])
        let provider = try SecretServiceProvider(
            store: store, connecting: false, indexFolder: store.root + "/cache"
        ) { event in events.withLock { $0.append(event) } }
        provider.saveIndex()
        #expect(!TestFiles.exists(store.root + "/cache"))
        #expect(events.withLock { $0.count } == 1)
        #expect(try sandbox.run(["git", "-C", store.root, "status", "--porcelain"]).outputText == "")
    }

    @Test("A record whose stamp is not the file's is not used, whatever metadata it claims")
    func forgedRecordIgnored() throws {
        let (sandbox, store) = try Self.store(items: 1)
        let (provider, _) = try Self.provider(sandbox, store)
        provider.saveIndex()
        let folder = sandbox.directory + "/index/" + UserCache.fileName(for: store.root)
        let path = folder + "/" + UserCache.fileName(for: "login") + ".gpg"
        var text = String(
            decoding: try sandbox.engine.decrypt(try FileSystem.readFile(path)).withUnsafeBytes { Array($0) },
            as: UTF8.self)
        // The same record, one nanosecond off, with another label.
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let record = try #require(lines.firstIndex { $0.hasPrefix("item item0 ") })
        var words = lines[record].split(separator: " ").map(String.init)
        words[6] = String((Int(words[6]) ?? 0) + 1)
        text = text.replacingFirst(lines[record], with: words.joined(separator: " "))
            .replacingFirst("label: Label 0", with: "label: Forged")
        try FileSystem.atomicWrite(
            path,
            bytes: try sandbox.engine.encrypt(SecureBytes(string: text), to: [sandbox.keys[0].fingerprint]),
            mode: 0o600)
        let (second, count) = try Self.provider(sandbox, store)
        #expect(count.decryptions == 2)
        #expect(try Self.labels(second, user: "u0") == ["Label 0"])
    }
}

extension SecretServiceIndexTests {
    @Test("A running provider keeps its index soon after a change and when it stops; the next start uses it")
    func keptByRunningProvider() throws {
        let bus = try SecretServiceSandbox()
        let result = try bus.check(
            #"""
            index="$HOME/.cache/coffer/secret-service"
            start_provider
            printf %s 'kept-Sekret' | secret-tool store --label='Kept 1' service kept-1
            # Kept within a few seconds of the change, while the provider runs.
            for i in $(seq 100); do [ -n "$(find "$index" -name '*.gpg' 2>/dev/null)" ] && break; sleep 0.1; done
            find "$index" -name '*.gpg' | wc -l
            printf %s 'later-Sekret' | secret-tool store --label='Kept 2' service kept-2
            stop_provider
            # Stopping kept the index, without the item written just before: a record is kept only
            # once its file's stamp would tell a later change.
            gpg --batch --quiet -d "$(find "$index" -name '*.gpg')" | grep '^label: Kept'
            start_provider
            secret-tool lookup service kept-2; echo
            find "$index" "$index"/* -maxdepth 0 -printf '%m\n'
            """#)
        #expect(
            result.outputText == "1\nlabel: Kept 1\nlater-Sekret\n700\n700\n",
            "\(result.outputText)\(result.errorText)")
        #expect(try bus.installed.uncommitted().isEmpty)
        #expect(!(try bus.clearBytes()).contains("Kept 2"))
    }
}

extension String {
    /// The string with the first `target` replaced by `replacement`.
    fileprivate func replacingFirst(_ target: String, with replacement: String) -> String {
        let bytes = Array(utf8)
        let wanted = Array(target.utf8)
        guard !wanted.isEmpty, bytes.count >= wanted.count else { return self }
        for start in 0...(bytes.count - wanted.count)
        where Array(bytes[start..<start + wanted.count]) == wanted {
            return String(decoding: bytes[..<start], as: UTF8.self) + replacement
                + String(decoding: bytes[(start + wanted.count)...], as: UTF8.self)
        }
        return self
    }
}
