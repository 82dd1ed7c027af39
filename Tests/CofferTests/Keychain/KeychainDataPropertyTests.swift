import CofferTestSupport
import Testing

@testable import Coffer

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Generated `Data` (``DataGenerator``) through every keychain call that writes or reads an item, on real
/// gpg stores: the bytes read back are always the bytes written. An item holding data (not UTF-8, a NUL,
/// or no final line break) takes no label or comment, lists none and moves no HOTP counter.
@Suite("Keychain: generated Data kept byte for byte")
struct KeychainDataPropertyTests {
    /// The first seed; sample `i` is generated from `firstSeed + i`, so the bytes of a seed a failure names
    /// are `DataGenerator.sample(seed:)`.
    static let firstSeed: UInt64 = 0xDA7A_0000_0000
    /// Samples through the stores; every fifth also through the `async` calls.
    static let count = 120

    @Test func generatedDataIsKeptThroughEveryCall() async throws {
        let samples = (0..<UInt64(Self.count)).map { DataGenerator.sample(seed: Self.firstSeed + $0) }
        DataGenerator.expectCoverage(samples)
        let sandbox = try GPGSandbox()
        // Stores with a writer lock each, so writes to different stores run at once; the first is a git
        // repository, so its items have commit dates and refused calls can be seen to commit nothing.
        let stores = (0..<8).map { sandbox.store(root: sandbox.directory + "/store-\($0)") }
        for store in stores { try store.initialize(recipients: [sandbox.keys[0].email]) }
        try sandbox.commitEverything(in: stores[0].root)
        let keychains = try stores.map { try Keychain(service: "generated", store: $0) }
        // Writes to the git store commit, which takes several times longer: one sample in 25 goes there.
        let places = samples.indices.map { index in
            (
                keychain: keychains[index % 25 == 0 ? 0 : 1 + index % (keychains.count - 1)],
                account: "item-\(index)"
            )
        }

        try Parallel.forEach(Array(samples.indices), workers: 16) { index in
            let other = samples[(index + 1) % samples.count].bytes
            return try DataItemCheck(place: places[index], sample: samples[index]).run(replacingWith: other)
        } consume: { index, result in
            for failure in try result.get() { Issue.record("seed \(samples[index].seed): \(failure)") }
        }

        // The async variants, on items of their own.
        try await withThrowingTaskGroup(of: (Int, [String]).self) { group in
            for index in samples.indices where index % 5 == 0 {
                let place = (keychain: places[index].keychain, account: "async-\(index)")
                let sample = samples[index]
                group.addTask { (index, try await DataItemCheck(place: place, sample: sample).runAsync()) }
            }
            for try await (index, failures) in group {
                for failure in failures { Issue.record("seed \(samples[index].seed) (async): \(failure)") }
            }
        }

        // Listing reads every item; what it reports of data is nothing, and reading changes no byte.
        for keychain in keychains {
            let items = try Self.allItems(keychain)
            #expect(items == (try await keychain.allItems()))
            #expect(items.map(\.account) == (try keychain.accounts()))
            for item in items {
                let index = try #require(Int(item.account.split(separator: "-")[1]))
                if !DataGenerator.isText(samples[index].bytes) {
                    #expect(
                        item.label == nil && item.comment == nil,
                        "seed \(samples[index].seed): data listed a label")
                }
                #expect(item.modified != nil)
                #expect((item.created != nil) == (keychain.store.root == stores[0].root))
            }
        }
        var wrong: [UInt64] = []
        for (index, place) in places.enumerated()
        where try DataItemCheck(place: place, sample: samples[index]).wrongReads() != [] {
            wrong.append(samples[index].seed)
        }
        #expect(wrong.isEmpty, "seeds whose bytes changed after listing: \(wrong)")

        // gpg itself decrypts every file to the bytes written, in one gpg process: copies of the files go
        // to a folder in /dev/shm, where `gpg --decrypt-files` writes each plaintext next to its file.
        var template = Array("/dev/shm/coffer-data-property-XXXXXX".utf8CString)
        let folder = String(cString: try #require(mkdtemp(&template)))
        defer { _ = try? ChildProcess(["rm", "-rf", folder]).run() }
        var files: [String] = []
        for (index, place) in places.enumerated() {
            let copy = folder + "/\(index).gpg"
            let path = place.keychain.store.entryPath(place.keychain.service + "/" + place.account)
            try FileSystem.atomicWrite(copy, bytes: FileSystem.readFile(path), mode: 0o600)
            files.append(copy)
        }
        try sandbox.check(["gpg", "--quiet", "--batch", "--yes", "--decrypt-files"] + files)
        wrong = []
        for index in places.indices
        where try FileSystem.readFile(folder + "/\(index)") != samples[index].bytes {
            wrong.append(samples[index].seed)
        }
        #expect(wrong.isEmpty, "seeds gpg -d decrypts to other bytes: \(wrong)")
    }

    /// `allItems()` itself, not its `async` variant.
    static func allItems(_ keychain: Keychain) throws -> [Keychain.Item] { try keychain.allItems() }

    @Test func generatedDataWithoutAStore() {
        // The rule that tells text from data, and the entry parser, on more seeds than the stores can afford.
        let samples = (0..<UInt64(20_000)).map { DataGenerator.sample(seed: Self.firstSeed + 1_000_000 + $0) }
        DataGenerator.expectCoverage(samples)
        for sample in samples {
            #expect(
                Keychain.holdsText(sample.bytes) == DataGenerator.isText(sample.bytes),
                "seed \(sample.seed): text and data told apart wrongly")
            #expect(Secret(parsing: sample.bytes).formatted() == sample.bytes, "seed \(sample.seed)")
        }
    }
}

/// Random bytes built from the pieces that have broken byte-exact storage: NULs, CR, CRLF, lines like
/// `#label:` and `#comment:`, trailing line breaks, bytes that are not UTF-8, an HOTP URI, and nothing.
enum DataGenerator {
    /// One generated item.
    struct Sample: Sendable {
        var seed: UInt64
        var bytes: [UInt8]
    }

    static let pieces: [[UInt8]] = [
        [0], [0x0D], [0x0D, 0x0A], [0x0A], [0x0A, 0x0A], [0x09], [0x20],
        Array("#label: Work\n".utf8), Array("#comment: IMAP\n".utf8), Array("#LABEL:x".utf8),
        Array("#label:".utf8), Array("#comment: |\n  a\n  b\n".utf8), Array("label: own\n".utf8),
        Array("login: alice\r\n".utf8), Array("pw".utf8), Array("  indented\n".utf8), Array("é€😀".utf8),
        Array("otpauth://hotp/Bank:me?secret=JBSWY3DPEHPK3PXP&counter=3\n".utf8),
        // Not UTF-8: a byte never used, a lone continuation byte, an overlong NUL, a cut sequence, a
        // surrogate and a scalar past U+10FFFF.
        [0xFF], [0x80], [0xC0, 0x80], [0xE2, 0x82], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80],
    ]

    static func sample(seed: UInt64) -> Sample {
        var random = SeededRandom(seed: seed)
        var bytes: [UInt8] = []
        if !random.chance(0.05) {
            for _ in 0..<random.below(10) {
                switch random.below(4) {
                case 0:
                    bytes += (0..<1 + random.below(8)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
                case 1: bytes += (0..<1 + random.below(8)).map { _ in UInt8(0x21 + random.below(0x5E)) }
                default: bytes += random.pick(pieces)
                }
            }
            if random.chance(0.5) { bytes += Array(repeating: 0x0A, count: 1 + random.below(3)) }
        }
        return Sample(seed: seed, bytes: bytes)
    }

    /// Whether `bytes` are text by the keychain's documented rule (UTF-8 without a NUL, ending with a line
    /// break), checked with the standard library's decoder.
    static func isText(_ bytes: [UInt8]) -> Bool {
        guard bytes.last == 0x0A, !bytes.contains(0) else { return false }
        var iterator = bytes.makeIterator()
        var decoder = Unicode.UTF8()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue: continue
            case .emptyInput: return true
            case .error: return false
            }
        }
    }

    /// Expects the samples to hold every kind of piece, so a change to the generator cannot drop one.
    static func expectCoverage(_ samples: [Sample]) {
        func some(_ what: String, _ test: ([UInt8]) -> Bool) {
            #expect(samples.contains { test($0.bytes) }, "no sample has \(what)")
        }
        func holds(_ text: String) -> ([UInt8]) -> Bool { { $0.firstRange(of: Array(text.utf8)) != nil } }
        some("no bytes") { $0.isEmpty }
        some("a NUL") { $0.contains(0) }
        some("a CR") { $0.contains(0x0D) }
        some("a CRLF", holds("\r\n"))
        some("a #label: line", holds("\n#label:"))
        some("a #comment: line", holds("\n#comment:"))
        some("a trailing line break") { $0.last == 0x0A }
        some("no trailing line break") { !$0.isEmpty && $0.last != 0x0A }
        some("bytes that are not UTF-8") { String(validating: $0, as: UTF8.self) == nil }
        some("text") { isText($0) }
        some("an HOTP line of data") { !isText($0) && holds("\notpauth://hotp/")($0) }
    }
}

/// The calls made on one item, each followed by a look at its bytes.
struct DataItemCheck: Sendable {
    let place: (keychain: Keychain, account: String)
    let sample: DataGenerator.Sample

    var keychain: Keychain { place.keychain }
    var account: String { place.account }
    var bytes: [UInt8] { sample.bytes }
    var name: String { keychain.service + "/" + account }
    var isText: Bool { DataGenerator.isText(bytes) }
    /// What refusing a label or comment says: the name, never the bytes.
    var refusal: String {
        "\(name) holds data, not text ending with a line break, so it cannot carry a label or comment: they "
            + "would change its bytes"
    }

    /// Every way to read the item's bytes that differs from the bytes written.
    func wrongReads() throws -> [String] {
        let reads: [(String, [UInt8]?)] = [
            ("data(account:)", try keychain.data(account: account).map { Array($0) }),
            ("value(Data.self)", try keychain.value(Data.self, account: account).map { Array($0) }),
            ("value([UInt8].self)", try keychain.value([UInt8].self, account: account)),
            ("subscript(data:)", keychain[data: account].map { Array($0) }),
            ("secret(account:)", try keychain.secret(account: account)?.formatted()),
            ("PasswordStore.read", try keychain.store.read(name).bytes),
        ]
        return reads.filter { $0.1 != bytes }.map { "\($0.0) read other bytes" }
    }

    /// Whether the item's bytes are still the sample's.
    func kept() throws -> Bool { try keychain.data(account: account).map { Array($0) } == bytes }

    /// The number of commits that changed the item, in a git store; `nil` in another.
    func commits() throws -> Int? {
        let root = keychain.store.root
        guard FileSystem.exists(root + "/.git") else { return nil }
        let counted = try ChildProcess([
            "git", "-C", root, "rev-list", "--count", "HEAD", "--", name + ".gpg",
        ]).run()
        return Int(counted.outputText)
    }

    func run(replacingWith other: [UInt8]) throws -> [String] {
        var failures: [String] = []
        func expect(_ condition: Bool, _ what: String) {
            if !condition { failures.append(what) }
        }
        func refused(_ what: String, _ call: () throws -> Void) {
            do {
                try call()
                failures.append("\(what) was not refused")
            } catch let error as CofferError {
                expect(error.code == .invalidArgument, "\(what) failed with \(error.code)")
            } catch {
                failures.append("\(what) failed with \(error)")
            }
        }

        try keychain.set(Data(bytes), account: account)
        failures += try wrongReads().map { "after set(Data): \($0)" }

        let item = try keychain.item(account: account)
        expect(item?.account == account, "item(account:) did not find it")
        if !isText { expect(item?.label == nil && item?.comment == nil, "data read as a label or comment") }
        expect(keychain[attributes: account] == item, "subscript(attributes:) read another item")
        expect(try kept(), "item(account:) changed the bytes")

        if isText {
            // Text takes a label and a comment as fields, and gives them back when they are cleared.
            let hadAttributes =
                Secret(parsing: bytes).field(Keychain.labelKey) != nil
                || Secret(parsing: bytes).field(Keychain.commentKey) != nil
            try keychain.setAttributes(label: "Work", comment: "IMAP", account: account)
            let labelled = try keychain.item(account: account)
            expect(labelled?.label == "Work" && labelled?.comment == "IMAP", "text took no label")
            try keychain.setAttributes(label: nil, comment: nil, account: account)
            if !hadAttributes { expect(try kept(), "clearing the label and comment left other bytes") }
            try keychain.set(Data(bytes), account: account)
        } else {
            let before = try commits()
            refused("setAttributes(label:comment:) of data") {
                do {
                    try keychain.setAttributes(label: "Work", comment: nil, account: account)
                } catch let error as CofferError {
                    expect(error.message == refusal, "the refusal said \(error.message.debugDescription)")
                    throw error
                }
            }
            refused("setAttributes(comment:) of data") {
                try keychain.setAttributes(label: nil, comment: "IMAP", account: account)
            }
            // Data has neither, so clearing both does nothing.
            try keychain.setAttributes(label: nil, comment: nil, account: account)
            expect(try kept(), "setAttributes changed the bytes of data")
            expect(try commits() == before, "setAttributes of data committed")
        }

        refused("set(Data, label:)") {
            try keychain.set(Data(bytes), account: account, label: "x", comment: nil)
        }
        refused("set([UInt8], comment:)") {
            try keychain.set(bytes, account: account, label: nil, comment: "x")
        }
        expect(try kept(), "a refused set changed the bytes")

        try keychain.set(Data(other), account: account)
        expect(try keychain.data(account: account).map { Array($0) } == other, "replacing kept old bytes")
        try keychain.set(Data(bytes), account: account, label: nil, comment: nil)
        expect(try kept(), "set(Data, label: nil, comment: nil) changed the bytes")
        try keychain.set(bytes, account: account)
        expect(try kept(), "set([UInt8]) changed the bytes")
        try keychain.set(Optional(Data(bytes)), account: account)
        expect(try kept(), "set(Data?) changed the bytes")
        try keychain.set(Secret(parsing: bytes), account: account)
        expect(try kept(), "set(Secret(parsing:)) changed the bytes")
        keychain[data: account] = Data(bytes)
        expect(keychain.subscriptError == nil, "subscript(data:) failed")
        expect(try kept(), "subscript(data:) changed the bytes")

        // Moving an HOTP counter rewrites the entry (as pass-otp does), which data never is.
        let uri = OneTimePassword.uri(in: bytes)
        let movesCounter = uri.map { (try? OneTimePassword(uri: $0))?.kind == .hotp } ?? false
        if !isText && movesCounter {
            refused("oneTimeCode(account:) of data with an HOTP URI") {
                _ = try keychain.oneTimeCode(account: account)
            }
        } else if !movesCounter {
            _ = try? keychain.oneTimeCode(account: account)
        }
        expect(try kept(), "oneTimeCode changed the bytes")

        failures += try wrongReads().map { "at the end: \($0)" }
        return failures
    }

    func runAsync() async throws -> [String] {
        var failures: [String] = []
        func read() async throws -> [UInt8]? { try await keychain.data(account: account).map { Array($0) } }
        try await keychain.set(Data(bytes), account: account)
        if try await read() != bytes { failures.append("set(Data) async changed the bytes") }
        if try await keychain.value(Data.self, account: account).map({ Array($0) }) != bytes {
            failures.append("value(Data.self) async read other bytes")
        }
        if try await keychain.secret(account: account)?.formatted() != bytes {
            failures.append("secret(account:) async read other bytes")
        }
        let item = try await keychain.item(account: account)
        if !isText && (item?.label != nil || item?.comment != nil) {
            failures.append("item(account:) async read data as a label or comment")
        }
        if !isText {
            do {
                try await keychain.setAttributes(label: "Work", comment: nil, account: account)
                failures.append("setAttributes async of data was not refused")
            } catch let error as CofferError where error.code == .invalidArgument {}
            do {
                try await keychain.set(Data(bytes), account: account, label: "x", comment: nil)
                failures.append("set(Data, label:) async was not refused")
            } catch let error as CofferError where error.code == .invalidArgument {}
        }
        try await keychain.set(bytes, account: account)
        if try await read() != bytes { failures.append("set([UInt8]) async changed the bytes") }
        if try await keychain.value([UInt8].self, account: account) != bytes {
            failures.append("value([UInt8].self) async read other bytes")
        }
        return failures
    }
}
