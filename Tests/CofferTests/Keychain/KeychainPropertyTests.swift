import CofferTestSupport
import Testing

@testable import Coffer

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Generated values of every shape (``ArchiveGenerator``) stored through `Keychain` on real gpg stores:
/// each comes back equal, and each file decrypts with `gpg -d` to the text coffer-store(5) documents,
/// as rendered independently from a description of the value built next to it (``ArchiveDocument``).
@Suite("Keychain: generated Codable values")
struct KeychainPropertyTests {
    /// The first seed; value `i` is generated from `firstSeed + i`, so any one can be replayed alone.
    static let firstSeed: UInt64 = 0x16C0_FFEE_0000
    static let count = 1_000
    /// Seeds of generated values that once found a bug, replayed on their own:
    /// an array element `[] ` (a marker followed by a blank) was read as the empty-array marker and lost.
    static let regressionSeeds: [UInt64] = [25_018_184_319_667, 25_018_183_319_563, 25_018_183_319_862]

    @Test func generatedValuesRoundTripThroughGPGStores() throws {
        let samples = (0..<UInt64(Self.count)).map { ArchiveGenerator.sample(seed: Self.firstSeed + $0) }
        let shapes = Set(samples.map(\.shape))
        #expect(shapes == ["Record", "[Server]", "[String: Tree]", "Auth", "[Int: [String]]"])
        let sandbox = try GPGSandbox()
        // A few stores, each with its own writer lock, so that writes to different stores run at once.
        let stores = (0..<4).map { sandbox.store(root: sandbox.directory + "/store-\($0)") }
        for store in stores { try store.initialize(recipients: [sandbox.keys[0].email]) }
        let keychains = try stores.map { try Keychain(service: "generated", store: $0) }
        @Sendable func place(_ index: Int) -> (keychain: Keychain, account: String) {
            (keychains[index % keychains.count], "value-\(index)")
        }
        let indexes = Array(samples.indices)
        // gpg runs as a child process for each write: more workers than processors keep them busy.
        try Parallel.forEach(indexes, workers: 8) { index in
            let (keychain, account) = place(index)
            try samples[index].store(keychain, account)
            return try samples[index].roundTrips(keychain, account)
        } consume: { index, result in
            let roundTripped = try result.get()
            #expect(roundTripped, "seed \(samples[index].seed) (\(samples[index].shape)) did not round-trip")
        }
        // gpg -d of every file, in one gpg process: copies of the files go to a folder in /dev/shm, where
        // `gpg --decrypt-files` writes each plaintext next to its file.
        var template = Array("/dev/shm/coffer-property-XXXXXX".utf8CString)
        let folder = String(cString: try #require(mkdtemp(&template)))
        defer { _ = try? ChildProcess(["rm", "-rf", folder]).run() }
        var files: [String] = []
        for index in indexes {
            let (keychain, account) = place(index)
            let copy = folder + "/\(index).gpg"
            try FileSystem.atomicWrite(
                copy, bytes: FileSystem.readFile(keychain.store.entryPath(keychain.service + "/" + account)),
                mode: 0o600)
            files.append(copy)
        }
        try sandbox.check(["gpg", "--quiet", "--batch", "--yes", "--decrypt-files"] + files)
        var mismatches = 0
        for index in indexes {
            let text = String(decoding: try FileSystem.readFile(folder + "/\(index)"), as: UTF8.self)
            if text != samples[index].expectedText {
                mismatches += 1
                let expected = samples[index].expectedText
                Issue.record(
                    Comment(
                        rawValue:
                            "seed \(samples[index].seed): gpg -d printed \(text.debugDescription), the format "
                            + "says \(expected.debugDescription)"))
                if mismatches > 5 { break }
            }
        }
        #expect(mismatches == 0)
    }

    @Test(arguments: regressionSeeds)
    func regressionSeed(_ seed: UInt64) throws {
        let sample = ArchiveGenerator.sample(seed: seed)
        let passed = try sample.checkWithoutStore()
        #expect(passed, "\(passed ? "" : sample.debugText())")
        let (sandbox, store) = try GPGSandbox.withStore()
        let keychain = try Keychain(service: "regression", store: store)
        try sample.store(keychain, "value")
        #expect(try sample.roundTrips(keychain, "value"))
        let text = try sandbox.check(["gpg", "--quiet", "--batch", "-d", store.entryPath("regression/value")])
        #expect(String(decoding: text.standardOutput, as: UTF8.self) == sample.expectedText)
    }

    @Test func generatedValuesWithoutAStore() throws {
        // The encoder and decoder alone, on more seeds than the store test can afford.
        for offset in 0..<UInt64(1_000) {
            let sample = ArchiveGenerator.sample(seed: Self.firstSeed &+ 1_000_000 &+ offset)
            let passed = try sample.checkWithoutStore()
            #expect(passed, "seed \(sample.seed) (\(sample.shape)) \(passed ? "" : sample.debugText())")
        }
    }
}
