import CofferTestSupport
import Testing

@testable import Coffer

extension PasswordStoreTests {
    /// Makes the store a git repository with its `.gpg-id` committed, as `pass git init` does.
    func commitStore() throws {
        try sandbox.commitEverything(in: store.root, message: "Add current contents of password store.")
    }

    @Test func historyFollowsRenamesAndOldRevisionsDecrypt() throws {
        try commitStore()
        try store.write("old/name", SecureBytes(string: "first\n"))
        try store.write("old/name", SecureBytes(string: "second\n"), commitMessage: "Edit old/name.")
        try store.move("old/name", to: "new/name")
        try store.write("new/name", SecureBytes(string: "third\n"), commitMessage: "Edit new/name.")
        let history = try store.history("new/name")
        #expect(
            history.map(\.subject) == [
                "Edit new/name.", "Rename old/name to new/name.", "Edit old/name.",
                "Add given password for old/name to store.",
            ])
        #expect(history.allSatisfy { $0.author == "Coffer Test" && !$0.shortHash.isEmpty })
        #expect(history.last?.path == "old/name.gpg")
        #expect(try store.read("new/name", revision: "HEAD").string == "third\n")
        #expect(try store.read("new/name", revision: "HEAD~1").string == "second\n")
        #expect(try store.read("new/name", revision: history[3].shortHash).string == "first\n")
        #expect(throws: CofferError.self) { try store.read("new/name", revision: "no-such-revision") }

        try store.restore("new/name", revision: history[3].hash)
        #expect(try store.read("new/name").string == "first\n")
        let subject = try sandbox.check(["git", "-C", store.root, "log", "-1", "--format=%s"]).outputText
        #expect(subject == "Restore new/name from \(history[3].hash).")
    }

    @Test func restoreReencryptsForTodaysRecipients() throws {
        try commitStore()
        try store.write("team/db", SecureBytes(string: "v1\n"))
        try store.initialize(recipients: [sandbox.keys[1].email], subfolder: "team")
        try store.write("team/db", SecureBytes(string: "v2\n"))
        try store.restore("team/db", revision: "HEAD~3")
        let ids = OpenPGPPackets.recipientKeyIDs(try FileSystem.readFile(store.entryPath("team/db")))
        #expect(ids == (try store.engine.encryptionKeyIDs(for: [sandbox.keys[1].email])))
        #expect(try store.read("team/db").string == "v1\n")
    }

    @Test func storeWithoutGitSaysHowToStart() throws {
        try commitStore()
        let plain = sandbox.store(root: sandbox.directory + "/plain")
        try plain.initialize(recipients: [sandbox.keys[0].email])
        #expect {
            try plain.history("x")
        } throws: { error in
            (error as? CofferError)?.code == .notAGitRepository
        }
    }
}
