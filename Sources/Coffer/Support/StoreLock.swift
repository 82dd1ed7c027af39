#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The store-wide write lock: one writer at a time across processes and threads.
///
/// The lock is an `flock` on the store's root folder itself, opened read-only. It is keyed on the store,
/// not on the environment: two processes with different `HOME`s, `XDG_RUNTIME_DIR`s or `TMPDIR`s (a
/// shell and a cron job) lock the same folder however they spell its path, and there is no name in a
/// shared folder such as `/dev/shm` that another user could take first to make every write fail.
/// Nothing is added to the store, so git and pass see nothing, and no lock file is left behind. Only
/// those who may read the root folder can open it to hold the lock: no other user when the store is
/// 0700, as pass's umask makes it; the members of a group that shares a store wait for each other.
///
/// A store whose root does not exist yet is locked through the nearest folder above it that can be
/// opened (its parent, usually), for the whole run of the writer that may make it. A writer that finds
/// the root takes its parent's lock shared for a moment once it holds the root's, so that it waits for a
/// writer still making the store. Both only when that folder is private (the user's own, readable by no
/// one else): anyone who can open a folder can hold its lock, and a home folder readable by all would
/// let another user stop every write. Writers that make a store under a folder others can read are not
/// kept apart.
///
/// A writer that waits longer than its timeout gives up naming the process that holds the lock, as
/// `/proc/locks` lists it (on Linux; `?` elsewhere). A lock won on a folder that is no longer the one at
/// its path (the root removed or made meanwhile) is worthless: then the path is opened again. A thread
/// that already holds the lock may take it again (operations nest); reads never take it.
enum StoreLock {
    private static let registry = Registry()

    /// Runs `body` while holding the lock of the store at `root`, waiting at most `timeout` seconds.
    static func withLock<Result>(root: String, timeout: Double, _ body: () throws -> Result) throws -> Result
    {
        let store = FileSystem.canonicalPath(root)
        if registry.enterIfHeldByCurrentThread(store) {
            defer { registry.leave(store) }
            return try body()
        }
        let descriptor = try acquire(store, deadline: monotonicSeconds() + timeout)
        defer {
            flock(descriptor, LOCK_UN)
            close(descriptor)
        }
        registry.enter(store)
        defer { registry.leave(store) }
        return try body()
    }

    /// Locks the folder that stands for the store at `root` (a canonical path), waiting until
    /// `deadline`; returns the locked descriptor.
    private static func acquire(_ root: String, deadline: Double) throws -> Int32 {
        while true {
            let (folder, descriptor) = try openFolder(atOrAbove: root)
            // Not the store, and open to others: no lock rather than one another user may hold.
            if folder != root && !isPrivate(descriptor) { return descriptor }
            do {
                try lock(descriptor, LOCK_EX, folder, deadline: deadline)
            } catch {
                close(descriptor)
                throw error
            }
            // The folder locked must still be the one that stands for the store.
            let (current, check) = try openFolder(atOrAbove: root)
            let isSame = current == folder && isSameFolder(descriptor, check)
            close(check)
            guard isSame else {
                close(descriptor)
                continue
            }
            if folder == root, root != "/" {
                let parent = FileSystem.parent(of: root)
                let above = SystemCall.retrying { open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
                if above >= 0 {
                    defer { close(above) }
                    guard isPrivate(above) else { return descriptor }
                    do {
                        try lock(above, LOCK_SH, parent, deadline: deadline)
                    } catch {
                        close(descriptor)
                        throw error
                    }
                }
            }
            return descriptor
        }
    }

    /// The nearest folder at or above `path` that this process can open, and its descriptor.
    private static func openFolder(atOrAbove path: String) throws -> (String, Int32) {
        var folder = path
        while true {
            let descriptor = SystemCall.retrying { open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
            if descriptor >= 0 { return (folder, descriptor) }
            let number = errno
            // Not there, not a folder, or not ours to read: the store is locked through what is above.
            let above = FileSystem.parent(of: folder)
            guard [ENOENT, ENOTDIR, EACCES].contains(number), above != folder else {
                throw FileSystem.error("cannot open the folder to lock", folder, number)
            }
            folder = above
        }
    }

    /// Takes the `flock` `operation` on `descriptor` (the folder `path`), trying until `deadline`.
    private static func lock(_ descriptor: Int32, _ operation: Int32, _ path: String, deadline: Double)
        throws
    {
        while SystemCall.retrying({ flock(descriptor, operation | LOCK_NB) }) != 0 {
            guard errno == EWOULDBLOCK else { throw FileSystem.error("cannot lock", path) }
            if monotonicSeconds() > deadline {
                throw CofferError(
                    .locked,
                    "the password store is locked by process \(holder(of: descriptor) ?? "?"); try again later"
                )
            }
            usleep(20_000)
        }
    }

    /// Whether the folder open as `descriptor` is this user's and no one else may read it, so that no
    /// one else can open it to hold its lock.
    private static func isPrivate(_ descriptor: Int32) -> Bool {
        var info = stat()
        return fstat(descriptor, &info) == 0 && info.st_uid == geteuid() && info.st_mode & 0o044 == 0
    }

    /// Whether two descriptors are open on the same folder.
    private static func isSameFolder(_ one: Int32, _ other: Int32) -> Bool {
        var first = stat()
        var second = stat()
        return fstat(one, &first) == 0 && fstat(other, &second) == 0 && first.st_dev == second.st_dev
            && first.st_ino == second.st_ino
    }

    /// The process that holds a write `flock` on the file open as `descriptor`, as `/proc/locks` lists it:
    /// the line for its device and inode, else the only one for its inode (some file systems number
    /// devices otherwise there).
    private static func holder(of descriptor: Int32) -> String? {
        #if os(Linux)
            var info = stat()
            guard fstat(descriptor, &info) == 0, let bytes = try? FileSystem.readFile("/proc/locks") else {
                return nil
            }
            let device = UInt64(info.st_dev)
            let wanted = [
                (device >> 8) & 0xfff | (device >> 32) & 0xffff_f000,
                device & 0xff | (device >> 12) & 0xffff_ff00, UInt64(info.st_ino),
            ]
            // `1: FLOCK  ADVISORY  WRITE 4242 fe:01:1234 0 EOF`; a waiter's line has `->` after the number.
            let holders = String(decoding: bytes, as: UTF8.self).split(separator: "\n").compactMap {
                line -> (pid: String, file: [UInt64])? in
                let fields = line.split(separator: " ")
                guard fields.count > 5, fields[1] == "FLOCK", fields[3] == "WRITE" else { return nil }
                let parts = fields[5].split(separator: ":")
                guard parts.count == 3, let major = UInt64(parts[0], radix: 16),
                    let minor = UInt64(parts[1], radix: 16), let inode = UInt64(parts[2])
                else { return nil }
                return (String(fields[4]), [major, minor, inode])
            }
            let sameInode = holders.filter { $0.file[2] == wanted[2] }
            return (holders.first { $0.file == wanted } ?? (sameInode.count == 1 ? sameInode[0] : nil))?.pid
        #else
            return nil
        #endif
    }

    private static func monotonicSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    /// Which thread holds the lock of which store, and how deeply.
    private final class Registry: Sendable {
        private let holders = Locked<[String: (thread: pthread_t, depth: Int)]>([:])

        func enterIfHeldByCurrentThread(_ store: String) -> Bool {
            holders.withLock { holders in
                guard let holder = holders[store], pthread_equal(holder.thread, pthread_self()) != 0 else {
                    return false
                }
                holders[store] = (holder.thread, holder.depth + 1)
                return true
            }
        }

        func enter(_ store: String) {
            holders.withLock { $0[store] = (pthread_self(), 1) }
        }

        func leave(_ store: String) {
            holders.withLock { holders in
                if let holder = holders[store] {
                    holders[store] = holder.depth > 1 ? (holder.thread, holder.depth - 1) : nil
                }
            }
        }
    }
}
