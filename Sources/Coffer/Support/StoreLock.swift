#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The store-wide write lock: one writer at a time across processes and threads.
///
/// The lock is an `flock` on a file in a private per-user folder (`/dev/shm/coffer-UID`, else
/// `$TMPDIR`), named after the store's path, so nothing is added to the store itself. The file holds
/// the holder's pid for the message a waiting writer gives up with. A thread that already holds the
/// lock may take it again (operations nest); reads never take it.
enum StoreLock {
    private static let registry = Registry()

    /// Runs `body` while holding the lock of the store at `root`, waiting at most `timeout` seconds.
    static func withLock<Result>(root: String, timeout: Double, _ body: () throws -> Result) throws -> Result
    {
        let path = try lockPath(for: root)
        if registry.enterIfHeldByCurrentThread(path) {
            defer { registry.leave(path) }
            return try body()
        }
        let deadline = monotonicSeconds() + timeout
        let descriptor = try acquire(path, deadline: deadline)
        defer {
            // Unlinked while still held: a writer waiting on this file finds it gone and makes a new one,
            // so lock files do not pile up, one per store ever used.
            unlink(path)
            flock(descriptor, LOCK_UN)
            close(descriptor)
        }
        ftruncate(descriptor, 0)
        let pid = Array("\(getpid())\n".utf8)
        _ = pid.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        registry.enter(path)
        defer { registry.leave(path) }
        return try body()
    }

    /// Opens and locks the lock file at `path`, waiting until `deadline`; returns the locked descriptor.
    ///
    /// A holder unlinks the file before it unlocks, so a lock won on a file that is no longer at `path`
    /// is worthless: then the file is opened again.
    private static func acquire(_ path: String, deadline: Double) throws -> Int32 {
        while true {
            let descriptor = try SystemCall.open(path, O_RDWR | O_CREAT | O_NOFOLLOW, mode: 0o600)
            while SystemCall.retrying({ flock(descriptor, LOCK_EX | LOCK_NB) }) != 0 {
                guard errno == EWOULDBLOCK else {
                    close(descriptor)
                    throw FileSystem.error("cannot lock", path)
                }
                if monotonicSeconds() > deadline {
                    let holder =
                        (try? FileSystem.readFile(path)).map { String(decoding: $0, as: UTF8.self) } ?? ""
                    close(descriptor)
                    let pid = holder.split(separator: "\n").first.map(String.init) ?? "?"
                    throw CofferError(
                        .locked,
                        "the password store is locked by process \(pid.isEmpty ? "?" : pid); try again later")
                }
                usleep(20_000)
            }
            var held = stat()
            var named = stat()
            if fstat(descriptor, &held) == 0, lstat(path, &named) == 0, held.st_dev == named.st_dev,
                held.st_ino == named.st_ino
            {
                return descriptor
            }
            close(descriptor)
        }
    }

    /// The lock file for `root`, in ``privateFolder()``.
    static func lockPath(for root: String) throws -> String {
        let canonical = FileSystem.realPath(root) ?? root
        return try privateFolder() + "/" + String(fnv1a(canonical), radix: 16) + ".lock"
    }

    /// The user's private runtime folder, `/dev/shm/coffer-UID` (else in `$TMPDIR`): created 0700, and
    /// used only when it is a folder of this user that no one else may enter. Locks live there; nothing
    /// secret does.
    static func privateFolder() throws -> String {
        let base = FileSystem.isDirectory("/dev/shm") ? "/dev/shm" : (environmentValue("TMPDIR") ?? "/tmp")
        let folder = base + "/coffer-\(getuid())"
        if mkdir(folder, 0o700) != 0 && errno != EEXIST { throw FileSystem.error("cannot create", folder) }
        var info = stat()
        guard lstat(folder, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR, info.st_uid == getuid(),
            info.st_mode & 0o077 == 0
        else {
            throw CofferError(
                .io, "\(folder) is not a private folder of this user; refusing to use it for locks")
        }
        return folder
    }

    private static func fnv1a(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return hash
    }

    private static func monotonicSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    /// Which thread holds which lock, and how deeply.
    private final class Registry: Sendable {
        private let holders = Locked<[String: (thread: pthread_t, depth: Int)]>([:])

        func enterIfHeldByCurrentThread(_ path: String) -> Bool {
            holders.withLock { holders in
                guard let holder = holders[path], pthread_equal(holder.thread, pthread_self()) != 0 else {
                    return false
                }
                holders[path] = (holder.thread, holder.depth + 1)
                return true
            }
        }

        func enter(_ path: String) {
            holders.withLock { $0[path] = (pthread_self(), 1) }
        }

        func leave(_ path: String) {
            holders.withLock { holders in
                if let holder = holders[path] {
                    holders[path] = holder.depth > 1 ? (holder.thread, holder.depth - 1) : nil
                }
            }
        }
    }
}
