import CofferTestSupport
import Testing

@testable import Coffer

/// ``AcceptedRecipients``: which record rules a folder, how records follow a moved folder, and the
/// file they are kept in.
@Suite("Accepted recipients: records and their file")
struct AcceptedRecipientsTests {
    static let alice = String(repeating: "A", count: 40)
    static let bob = String(repeating: "B", count: 40)
    static let eve = String(repeating: "E", count: 40)

    @Test func aFolderTakesTheNearestRecordAtOrAboveIt() {
        let accepted = AcceptedRecipients(records: [
            "": [Self.alice, Self.bob], "private": [Self.alice], "shared/team": [Self.alice, Self.eve],
        ])
        #expect(accepted.record(forFolder: "")?.folder == "")
        #expect(accepted.keys(forFolder: "web/sub") == [Self.alice, Self.bob])
        #expect(accepted.keys(forFolder: "private") == [Self.alice])
        #expect(accepted.keys(forFolder: "private/deep/er") == [Self.alice])
        #expect(accepted.record(forFolder: "shared/team/x/")?.folder == "shared/team")
        // A name that only starts like a folder is not inside it.
        #expect(accepted.keys(forFolder: "privateer") == [Self.alice, Self.bob])
        #expect(AcceptedRecipients().record(forFolder: "web") == nil)
    }

    @Test func recordsFollowAMovedOrCopiedFolder() {
        var accepted = AcceptedRecipients(records: [
            "": [Self.alice], "private": [Self.alice], "private/inner": [Self.bob], "privateer": [Self.eve],
        ])
        var copied = accepted
        accepted.transfer(from: "private", to: "archive/private", copy: false)
        #expect(accepted.records["private"] == nil && accepted.records["private/inner"] == nil)
        #expect(accepted.records["archive/private"] == [Self.alice])
        #expect(accepted.records["archive/private/inner"] == [Self.bob])
        #expect(accepted.records["privateer"] == [Self.eve])
        copied.transfer(from: "private", to: "copy", copy: true)
        #expect(copied.records["private"] == [Self.alice] && copied.records["copy"] == [Self.alice])
        #expect(copied.records["copy/inner"] == [Self.bob])
    }

    @Test func theFileRoundTripsAnyFolderName() throws {
        let sandbox = try GPGSandbox()
        let file = sandbox.directory + "/accepted"
        #expect(try AcceptedRecipients.read(file) == nil)
        let accepted = AcceptedRecipients(records: [
            "": [Self.alice], "with\nnewline": [Self.bob], "tab\tand space": [],
            "ünï": [Self.alice, Self.eve],
        ])
        try accepted.write(file)
        #expect(try AcceptedRecipients.read(file) == accepted)
        var info = stat()
        #expect(stat(file, &info) == 0 && info.st_mode & 0o777 == 0o600)
    }

    @Test(arguments: [
        "", "coffer accepted recipients 1", "coffer accepted recipients 2\n",
        "coffer accepted recipients 1\nkey \(String(repeating: "A", count: 40))\n",
        "coffer accepted recipients 1\nfolder 7A\nkey abc\n", "coffer accepted recipients 1\nfolder ZZ\n",
        "coffer accepted recipients 1\nsomething else\n",
    ])
    func aFileCofferDidNotWriteIsRefused(_ text: String) throws {
        let sandbox = try GPGSandbox()
        let file = sandbox.directory + "/accepted"
        try FileSystem.atomicWrite(file, bytes: Array(text.utf8), mode: 0o600)
        #expect(throws: CofferError.self) { try AcceptedRecipients.read(file) }
    }
}
