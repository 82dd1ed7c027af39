import CofferTestSupport
import Testing

@testable import Coffer

/// ``Audit`` as a library user sees it: findings as values, progress as events, passwords only when
/// asked for, and the age of a password followed through a move that re-encrypted it for other keys.
@Suite("Audit with real gpg")
struct AuditTests: StoreSuite {
    let fixture: SandboxAndStore

    init() throws {
        fixture = try GPGSandbox.withStore(committing: "Add current contents of password store.")
    }

    /// The store, committing with faked dates.
    func store(committingAt date: String) -> PasswordStore {
        sandbox.store(environment: ["GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date])
    }

    @Test func findingsEventsAndAReencryptingMove() throws {
        let strong = "Xq7#pL2!zR7@mK4$wX9&vB3"
        try store(committingAt: "2019-01-01T00:00:00Z").write(
            "team/shared", SecureBytes(string: strong + "\n"))
        try store.initialize(recipients: [sandbox.keys[1].email], subfolder: "other")
        // Other recipients: the move re-encrypts, so git sees a file removed and another added.
        try store.move("team/shared", to: "other/shared")
        try store.write("weak", SecureBytes(string: "password\nlogin: me\n"))
        try store.write("twin", SecureBytes(string: strong + "\n"))
        try store.write("note", SecureBytes(string: "\nonly a note\n"))

        var events: [Audit.Event] = []
        var settings = Audit.Settings()
        settings.now = 1_700_000_000
        let report = try Audit(store: store, settings: settings).run { events.append($0) }
        #expect(report.entries == ["note", "other/shared", "twin", "weak"])
        #expect(
            events == [.started(entries: 4), .readHistory] + (1...4).map { .decrypted(done: $0, total: 4) })
        #expect(report.weak.map(\.entry) == ["weak"])
        #expect(report.weak[0].strength.isCommon && report.weak[0].password == nil)
        #expect(report.reused.map(\.entries) == [["other/shared", "twin"]])
        #expect(report.reused[0].password == nil)
        #expect(report.old.map(\.entry) == ["other/shared"])
        #expect(report.old.first?.lastChanged == 1_546_300_800)
        #expect(report.old.first?.days == (1_700_000_000 - 1_546_300_800) / 86_400)
        #expect(report.withoutPassword == ["note"])
        #expect(report.failures.isEmpty && report.checkedAge && !report.checkedBreaches && report.hasFindings)

        // Asked for, the passwords come along; a subfolder limits the audit.
        settings.keepPasswords = true
        settings.maximumAgeDays = nil
        let kept = try Audit(store: store, settings: settings).run()
        #expect(kept.weak.first?.password?.string == "password")
        #expect(kept.reused.first?.password?.string == strong)
        #expect(kept.old.isEmpty && !kept.checkedAge)
        let folder = try Audit(store: store, subfolder: "other", settings: settings).run()
        #expect(folder.entries == ["other/shared"] && !folder.hasFindings)
        #expect(throws: CofferError.self) { try Audit(store: store, subfolder: "missing").run() }
    }

    @Test func theFirstLineEndsBeforeACarriageReturnAndALineFeed() {
        for (text, password) in [
            ("pw\r\nlogin: me\r\n", "pw"), ("pw\r\n", "pw"), ("pw\r", "pw"), ("pw\n", "pw"),
            ("p\rw\n", "p\rw"),
            ("\r\n", ""), ("pw", "pw"),
        ] {
            #expect(Audit.firstLine(SecureBytes(string: text)).string == password, "\(text.debugDescription)")
        }
    }
}
