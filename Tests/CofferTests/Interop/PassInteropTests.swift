import CofferTestSupport
import Testing

@testable import Coffer

@Suite("Interop with Debian's pass")
struct PassInteropTests {
    let sandbox: GPGSandbox

    init() throws { sandbox = try GPGSandbox() }

    @Test func storeMadeByPassIsUsableAndViceVersa() throws {
        try sandbox.check(["pass", "init", sandbox.keys[0].email])
        try sandbox.check(["pass", "init", "-p", "team", sandbox.keys[0].email, sandbox.keys[1].email])
        try sandbox.check(["pass", "insert", "-m", "team/db"], input: Array("dbpw\nuser: root\n".utf8))
        try sandbox.check(["pass", "insert", "-e", "top"], input: Array("toppw\n".utf8))
        let store = sandbox.store()
        #expect(try store.read("team/db").string == "dbpw\nuser: root\n")
        #expect(try store.read("top").string == "toppw\n")
        #expect(try store.allEntries() == ["team/db", "top"])

        try store.write("team/new", SecureBytes(string: "written by coffer\n"))
        #expect(try sandbox.check(["pass", "show", "team/new"]).outputText == "written by coffer")
        let wanted = try store.engine.encryptionKeyIDs(for: [sandbox.keys[0].email, sandbox.keys[1].email])
        #expect(
            OpenPGPPackets.recipientKeyIDs(try FileSystem.readFile(store.entryPath("team/new"))) == wanted)
    }

    @Test func reencryptionAgreesWithPass() throws {
        try sandbox.check(["pass", "init", sandbox.keys[0].email])
        let store = sandbox.store()
        try store.write("a", SecureBytes(string: "A\n"))
        try store.write("dir/b", SecureBytes(string: "B\n"))
        // pass re-encrypts coffer's entries for two keys; coffer then sees nothing left to do.
        try sandbox.check(["pass", "init", sandbox.keys[0].email, sandbox.keys[1].email])
        let snapshot = try ["a", "dir/b"].map { try FileSystem.readFile(store.entryPath($0)) }
        var events: [StoreEvent] = []
        try store.initialize(recipients: [sandbox.keys[0].email, sandbox.keys[1].email]) { events.append($0) }
        #expect(try ["a", "dir/b"].map { try FileSystem.readFile(store.entryPath($0)) } == snapshot)
        #expect(
            events == [
                .initialized(recipients: [sandbox.keys[0].email, sandbox.keys[1].email], subfolder: "")
            ])
        // coffer re-encrypts to one key; pass agrees nothing is left to do (prints no "reencrypting" line).
        try store.initialize(recipients: [sandbox.keys[1].email])
        let output = try sandbox.check(["pass", "init", sandbox.keys[1].email]).outputText
        #expect(!output.contains("reencrypting"))
        #expect(try sandbox.check(["pass", "show", "dir/b"]).outputText == "B")
    }
}
