import CofferTestSupport
import Testing

@testable import Coffer

extension PasswordStoreTests {
    /// The entry every check starts with.
    func addGoodEntry() throws {
        try store.write("good", SecureBytes(string: "fine\n"))
    }

    @Test func cleanStoreHasNoFindings() throws {
        try addGoodEntry()
        #expect(try store.check().isEmpty)
    }

    @Test("fsck --fix waits for the store lock like every writer; a plain check does not")
    func repairsTakeTheStoreLock() throws {
        try addGoodEntry()
        let impatient = sandbox.store(environment: ["COFFER_LOCK_TIMEOUT": "0.5"])
        let holder = try sandbox.run([
            "sh", "-c", "flock -n \"$0\" sleep 4 >/dev/null 2>&1 & sleep 0.5; echo started", impatient.root,
        ])
        #expect(holder.outputText == "started")
        #expect {
            try impatient.check(fix: true)
        } throws: { error in
            (error as? CofferError)?.code == .locked
        }
        #expect(try impatient.check(fix: false).isEmpty)
    }

    @Test func findsAndFixesProblems() throws {
        try addGoodEntry()
        try store.write("loose", SecureBytes(string: "x\n"))
        chmod(store.entryPath("loose"), 0o644)
        try "".write(toFile: store.root + "/empty.gpg")
        chmod(store.root + "/empty.gpg", 0o600)
        let ciphertext = try FileSystem.readFile(store.entryPath("good"))
        try FileSystem.atomicWrite(
            store.entryPath("truncated"), bytes: Array(ciphertext.prefix(40)), mode: 0o600)
        let other = sandbox.store(environment: ["PASSWORD_STORE_KEY": sandbox.keys[1].email])
        try other.write("wrongkeys", SecureBytes(string: "for two\n"))

        try "junk".write(toFile: store.root + "/.good.gpg.coffer-tmp-1234")
        chmod(store.root + "/.good.gpg.coffer-tmp-1234", 0o600)

        let findings = try store.check()
        let kinds = Dictionary(grouping: findings, by: \.path).mapValues { $0.map(\.kind) }
        #expect(kinds["loose.gpg"] == [.permissions])
        #expect(kinds[".good.gpg.coffer-tmp-1234"] == [.strayFile])
        #expect(kinds["empty.gpg"] == [.undecryptable])
        #expect(kinds["truncated.gpg"] == [.undecryptable])
        #expect(kinds["wrongkeys.gpg"] == [.recipients])
        #expect(kinds["good.gpg"] == nil)

        let fixed = try store.check(fix: true)
        let repairable = fixed.filter { [.permissions, .strayFile, .recipients].contains($0.kind) }
        #expect(repairable.allSatisfy { $0.fixed })
        let after = try store.check()
        #expect(Set(after.map(\.path)) == ["empty.gpg", "truncated.gpg"])
        #expect(try store.read("wrongkeys").string == "for two\n")
    }

    @Test func findingsComeInWalkOrderAndProgressIsReported() throws {
        try addGoodEntry()
        // Every entry in three folders has a loose mode, so each gives one finding; decryption runs on
        // several workers, and the findings must still come in the order of the walk.
        let names = ["b", "a", "c"].flatMap { folder in (0..<6).map { "\(folder)/e\($0)" } }
        for name in names {
            try store.write(name, SecureBytes(string: name + "\n"))
            chmod(store.entryPath(name), 0o640)
        }
        let log = ProgressLog()
        var observed = store
        observed.progress = { log.record($0, $1) }
        let paths = try observed.check().map(\.path)
        #expect(paths == names.sorted().map { $0 + ".gpg" })
        #expect(log.values == (1...19).map { [$0, 19] })
    }

    @Test func theNextWriteRemovesStrayTemporaryFiles() throws {
        try addGoodEntry()
        try "junk".write(toFile: store.root + "/.x.gpg.coffer-tmp-99")
        try store.write("another", SecureBytes(string: "y\n"))
        #expect(FileSystem.kind(store.root + "/.x.gpg.coffer-tmp-99") == .missing)
    }

    @Test func initRemovesWhatAnInterruptedInitLeft() throws {
        try addGoodEntry()
        // An init killed while writing `.gpg-id` leaves its temporary file beside it; the folders with
        // entries are elsewhere, so only the rerun's own write can notice it.
        try FileSystem.makeDirectories(store.root + "/team", mode: 0o700)
        try store.write("team/deep/entry", SecureBytes(string: "z\n"))
        for folder in [store.root, store.root + "/team"] {
            try "1234\n".write(toFile: folder + "/..gpg-id.coffer-tmp-77")
        }
        try store.initialize(recipients: [sandbox.keys[1].email], subfolder: "team")
        #expect(FileSystem.kind(store.root + "/team/..gpg-id.coffer-tmp-77") == .missing)
        try store.initialize(recipients: [sandbox.keys[0].email])
        #expect(FileSystem.kind(store.root + "/..gpg-id.coffer-tmp-77") == .missing)
        #expect(try store.check().isEmpty)
    }

    @Test func reportsConflictsAndDirtyGit() throws {
        try addGoodEntry()
        try store.write(
            "merged", SecureBytes(string: "pw\n<<<<<<< ours\na: 1\n=======\na: 2\n>>>>>>> theirs\n"))
        try sandbox.check(["git", "-C", store.root, "init", "-q"])
        let findings = try store.check()
        #expect(findings.contains { $0.kind == .conflict && $0.path == "merged.gpg" })
        #expect(findings.contains { $0.kind == .git })
    }
}

/// The `(done, total)` pairs a store reported, in order.
final class ProgressLog: Sendable {
    private let recorded = Locked<[[Int]]>([])

    func record(_ done: Int, _ total: Int) { recorded.withLock { $0.append([done, total]) } }

    var values: [[Int]] { recorded.withLock { $0 } }
}
