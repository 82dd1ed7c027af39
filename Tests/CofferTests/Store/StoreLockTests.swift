import CofferTestSupport
import Dispatch
import Testing

@testable import Coffer

@Suite("Store lock: concurrent writers")
struct StoreLockTests {
    @Test func eightThreadsWriteIntoOneGitStoreWithoutLosingACommit() throws {
        let sandbox = try GPGSandbox()
        // Writers queue for the lock; on a loaded machine one may wait a long time.
        let store = sandbox.store(environment: ["COFFER_LOCK_TIMEOUT": "600"])
        try store.initialize(recipients: [sandbox.keys[0].email])
        try sandbox.commitEverything(in: store.root, message: "start")
        let failures = FailureList()
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            for item in 0..<25 {
                do {
                    try store.write("w\(worker)/e\(item)", SecureBytes(string: "\(worker)-\(item)\n"))
                } catch {
                    failures.append("\(error)")
                }
            }
        }
        #expect(failures.all.isEmpty)
        #expect(try store.allEntries().count == 200)
        let count = try sandbox.check(["git", "-C", store.root, "rev-list", "--count", "HEAD"]).outputText
        #expect(count == "201")
        #expect(try sandbox.check(["git", "-C", store.root, "status", "--porcelain"]).outputText.isEmpty)
        // Each holder removes the lock file as it lets go: none is left once the writers are done.
        #expect(FileSystem.kind(try StoreLock.lockPath(for: store.root)) == .missing)
    }

    @Test func aHeldLockTimesOutNamingTheHolder() throws {
        let sandbox = try GPGSandbox()
        let store = sandbox.store(environment: ["COFFER_LOCK_TIMEOUT": "0.5"])
        let path = try StoreLock.lockPath(for: store.root)
        // Another process holds the lock for a while.
        let holder = try sandbox.run(
            [
                "sh", "-c",
                "flock -n \"$0\" sh -c 'echo $$ > \"$0\"; sleep 3' \"$0\" >/dev/null 2>&1 & sleep 0.5; echo started",
                path,
            ])
        #expect(holder.outputText == "started")
        #expect {
            try store.write("x", SecureBytes(string: "x"))
        } throws: { error in
            (error as? CofferError)?.code == .locked
                && (error as? CofferError)?.message.contains("locked by process") == true
        }
        unlink(path)
    }
}

/// Errors collected from several threads.
final class FailureList: @unchecked Sendable {
    private let queue = DispatchQueue(label: "failures")
    private var items: [String] = []
    func append(_ item: String) { queue.sync { items.append(item) } }
    var all: [String] { queue.sync { items } }
}
