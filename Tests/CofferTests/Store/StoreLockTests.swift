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
        // Every holder has let go: the lock is free at once.
        #expect(throws: Never.self) { try StoreLock.withLock(root: store.root, timeout: 0) {} }
    }

    @Test func aHeldLockTimesOutNamingTheHolder() throws {
        let sandbox = try GPGSandbox()
        let store = sandbox.store(environment: ["COFFER_LOCK_TIMEOUT": "0.5"])
        try store.initialize(recipients: [sandbox.keys[0].email])
        // Another process holds the lock for a while: an flock on the store's folder.
        let holder = try sandbox.run([
            "sh", "-c", "flock -n \"$0\" sleep 3 >/dev/null 2>&1 & echo $!; sleep 0.5", store.root,
        ])
        let pid = holder.outputText
        #expect {
            try store.write("x", SecureBytes(string: "x"))
        } throws: { error in
            (error as? CofferError)?.code == .locked
                && (error as? CofferError)?.message
                    == "the password store is locked by process \(pid); try again later"
        }
    }

    @Test("a store not made yet is locked through the folder above it, which its maker holds")
    func aStoreBeingMadeIsLockedThroughItsParent() throws {
        let sandbox = try GPGSandbox()
        let parent = sandbox.directory + "/stores"
        mkdir(parent, 0o700)
        let store = sandbox.store(root: parent + "/new", environment: ["COFFER_LOCK_TIMEOUT": "0.5"])
        // Another process holds the folder above the store, as a writer making the store would.
        let holder = try sandbox.run([
            "sh", "-c", "flock -n \"$0\" sleep 4 >/dev/null 2>&1 & echo $!; sleep 0.5", parent,
        ])
        func isLockedByHolder(_ error: any Error) -> Bool {
            (error as? CofferError)?.message.contains("locked by process \(holder.outputText);") == true
        }
        // A writer that would make the store waits for it, and so does one that finds the store made.
        #expect(
            performing: { try store.initialize(recipients: [sandbox.keys[0].email]) },
            throws: isLockedByHolder)
        #expect(!FileSystem.exists(store.root))
        mkdir(store.root, 0o700)
        #expect(
            performing: { try store.initialize(recipients: [sandbox.keys[0].email]) },
            throws: isLockedByHolder)
        #expect(!FileSystem.exists(store.root + "/.gpg-id"))
    }
}

/// Errors collected from several threads.
final class FailureList: @unchecked Sendable {
    private let queue = DispatchQueue(label: "failures")
    private var items: [String] = []
    func append(_ item: String) { queue.sync { items.append(item) } }
    var all: [String] { queue.sync { items } }
}
