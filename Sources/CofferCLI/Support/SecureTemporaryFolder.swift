import Coffer

/// pass's `tmpdir`: a private (0700) folder in `/dev/shm` for plaintext, or, after a warning, in `$TMPDIR`
/// with its files overwritten before removal.
///
/// While the folder exists, SIGINT, SIGTERM and SIGHUP are held back (children start with them unblocked
/// and at their defaults) and handled by ``wait(for:)`` and ``finish()``, which remove the folder before
/// a signal ends the process, so the folder is removed on every way out. Only SIGKILL (or a power loss)
/// can leave it behind: the folder is `flock`ed while in use, and folders of this user that nobody holds
/// are found by ``abandoned(program:)``, removed by the next `edit` and reported (or removed) by `fsck`.
final class SecureTemporaryFolder {
    /// The folder's path.
    let path: String
    /// Whether the folder is outside `/dev/shm`, so files are overwritten before removal.
    let needsShredding: Bool
    private var oldMask = sigset_t()
    private var removed = false
    private var deferredSignal: Int32 = 0
    /// The folder, open and `flock`ed for as long as it is in use.
    private var lockDescriptor: Int32 = -1

    /// The signals held back while plaintext is on disk.
    static var heldSignals: sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        // Every signal whose default ends the process, so that none leaves the plaintext behind.
        for signalNumber in [SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGPOLL]
        {
            sigaddset(&set, signalNumber)
        }
        return set
    }

    /// Makes the folder; with `warn`, asks before falling back to `$TMPDIR` as pass does.
    init(program: String, environment: [String: String], warn: Bool) throws {
        var held = Self.heldSignals
        sigprocmask(SIG_BLOCK, &held, &oldMask)
        let parent: String
        if FileSystem.isDirectory("/dev/shm") && access("/dev/shm", W_OK | X_OK) == 0 {
            parent = "/dev/shm"
            needsShredding = false
        } else {
            if warn {
                do {
                    try Terminal.confirm(
                        """
                        Your system does not have /dev/shm, which means that it may
                        be difficult to entirely erase the temporary non-encrypted
                        password file after editing.

                        Are you sure you would like to continue?
                        """)
                } catch {
                    sigprocmask(SIG_SETMASK, &oldMask, nil)
                    throw error
                }
            }
            let tmpdir = environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
            parent = tmpdir
            needsShredding = true
        }
        Self.removeAbandoned(in: parent)
        var made: String?
        for _ in 0..<100 {
            let candidate = "\(parent)/\(program).\(Self.randomName(13))"
            if mkdir(candidate, 0o700) == 0 {
                made = candidate
                break
            }
            if errno != EEXIST { break }
        }
        guard let made else {
            let reason = String(cString: strerror(errno))
            sigprocmask(SIG_SETMASK, &oldMask, nil)
            throw Exit.die(
                "mktemp: failed to create directory via template '\(parent)/\(program).XXXXXXXXXXXXX': \(reason)"
            )
        }
        path = made
        lockDescriptor = open(made, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        if lockDescriptor >= 0 { flock(lockDescriptor, LOCK_EX) }
        // Marks the folder as coffer's whatever the program is called (as `pass` it is a `pass.` folder,
        // like the ones pass itself makes without a lock, which must never be swept).
        let marker = open(
            made + "/" + Self.marker, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        if marker >= 0 { close(marker) }
    }

    /// The file inside every folder coffer makes, by which the sweep knows its own folders.
    static let marker = ".coffer-tmpdir"

    /// The prefix of folders made by coffer under its own name (older ones carry no marker).
    static let prefix = "coffer."

    /// The folders in `parent` that an edit killed with SIGKILL left behind: this user's private
    /// `PROGRAM.XXXXXXXXXXXXX` folders made by coffer (under any program name) that no process holds and
    /// that are more than two seconds old (a folder is locked right after it is made).
    static func abandoned(in parent: String) -> [String] {
        let names = (try? FileSystem.contents(of: parent)) ?? []
        let now = time(nil)
        return names.filter(isFolderName).map { parent + "/" + $0 }.filter { path in
            var info = stat()
            var markerInfo = stat()
            guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR, info.st_uid == getuid(),
                info.st_mode & 0o777 == 0o700, now - modificationTime(info) >= 2
            else { return false }
            let marked =
                lstat(path + "/" + marker, &markerInfo) == 0 && markerInfo.st_mode & S_IFMT == S_IFREG
                && markerInfo.st_uid == getuid()
            guard marked || path.hasSuffix("/" + prefix + path.suffix(13)) else { return false }
            let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard descriptor >= 0 else { return false }
            defer { close(descriptor) }
            return flock(descriptor, LOCK_EX | LOCK_NB) == 0
        }
    }

    /// Whether `name` has the shape of the folders `mktemp -d PROGRAM.XXXXXXXXXXXXX` makes.
    private static func isFolderName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard bytes.count > 14, bytes[bytes.count - 14] == UInt8(ascii: ".") else { return false }
        return bytes.suffix(13).allSatisfy { byte in
            (48...57).contains(byte) || (65...90).contains(byte) || (97...122).contains(byte)
        }
    }

    private static func modificationTime(_ info: stat) -> time_t {
        #if canImport(Darwin)
            info.st_mtimespec.tv_sec
        #else
            info.st_mtim.tv_sec
        #endif
    }

    /// The parents coffer makes folders in: `/dev/shm`, and `$TMPDIR` (where files are overwritten first).
    static func parents(environment: [String: String]) -> [String] {
        let tmpdir = environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        return tmpdir == "/dev/shm" ? [tmpdir] : ["/dev/shm", tmpdir]
    }

    /// Removes the abandoned folders in `parent` (overwriting their files first outside `/dev/shm`), and
    /// returns them.
    @discardableResult
    static func removeAbandoned(in parent: String) -> [String] {
        let found = abandoned(in: parent)
        for path in found { removeTree(path, shred: parent != "/dev/shm") }
        return found
    }

    deinit { finish() }

    /// `mktemp`'s random letters and digits.
    static func randomName(_ count: Int) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        var generator = SystemRandomNumberGenerator()
        return String(
            (0..<count).map { _ in alphabet[Int(generator.next(upperBound: UInt(alphabet.count)))] })
    }

    /// Waits for a child (the editor, git) while holding the folder.
    ///
    /// SIGTERM, SIGHUP and the other signals that would end the process are passed on to the child, then
    /// the folder is removed and this process ends by the same signal at once. A SIGINT is taken as the user's Ctrl-C, which reached the child too: it
    /// ends this process (after the folder is removed) only if it ended the child.
    ///
    /// - Returns: the child's exit status, or 128 + the signal that ended it.
    @discardableResult
    func wait(for pid: pid_t) -> Int32 {
        var waitSet = Self.heldSignals
        sigaddset(&waitSet, SIGCHLD)
        var previous = sigset_t()
        sigprocmask(SIG_BLOCK, &waitSet, &previous)
        defer { sigprocmask(SIG_SETMASK, &previous, nil) }
        var sawInterrupt = false
        while true {
            if let ended = ChildProcess.status(ifEnded: pid) {
                let code = ended.code
                if sawInterrupt && code == 128 + SIGINT { deferredSignal = SIGINT }
                return code
            }
            var timeout = timespec(tv_sec: 1, tv_nsec: 0)
            let received = sigtimedwait(&waitSet, nil, &timeout)
            if received > 0 && received != SIGINT && received != SIGCHLD {
                kill(pid, received)
                deferredSignal = received
                finish()
            } else if received == SIGINT {
                sawInterrupt = true
            }
        }
    }

    /// Whether a signal has ended the child and must end this process once the folder is gone.
    var mustStop: Bool { deferredSignal != 0 }

    /// Removes the folder, then restores the signal mask, so that a signal held meanwhile takes effect;
    /// a signal that ended the child ends this process too.
    func finish() {
        guard !removed else { return }
        removed = true
        Self.removeTree(path, shred: needsShredding)
        if lockDescriptor >= 0 { close(lockDescriptor) }
        sigprocmask(SIG_SETMASK, &oldMask, nil)
        if deferredSignal != 0 {
            signal(deferredSignal, SIG_DFL)
            raise(deferredSignal)
        }
    }

    private static func removeTree(_ path: String, shred: Bool) {
        try? FileTree.walk(path) { file, item in
            guard !item.isFolder else { return true }
            if shred && item.isFile { overwrite(file) }
            unlink(file)
            return false
        } leave: { folder, _ in
            rmdir(folder)
        }
        rmdir(path)
    }

    /// `shred -f -z`, simplified: overwrites the file's bytes with zeros and syncs before unlinking.
    private static func overwrite(_ path: String) {
        chmod(path, 0o600)
        let descriptor = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return }
        let size = Int(info.st_size)
        let zeros = [UInt8](repeating: 0, count: 65536)
        var remaining = size
        while remaining > 0 {
            let count = write(descriptor, zeros, min(remaining, zeros.count))
            if count <= 0 { break }
            remaining -= count
        }
        fsync(descriptor)
    }
}
