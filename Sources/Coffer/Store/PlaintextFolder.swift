#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where plaintext may be on disk while a program reads or edits it: pass's `tmpdir`, a private (0700)
/// folder `PROGRAM.XXXXXXXXXXXXX` in `/dev/shm`, or (when that cannot be used) in `$TMPDIR` with its
/// files overwritten before they are removed.
///
/// The folder is `flock`ed while it is in use and holds a marker file, so that a folder a killed process
/// left behind (only SIGKILL or a power loss can) is told from one in use: ``abandoned(in:)`` finds them,
/// the next folder made in the same place removes them, and `fsck` reports or removes them. The caller
/// holds back the signals that would end the process while the folder exists (the CLI does).
package final class PlaintextFolder {
    /// The folder's path.
    package let path: String
    /// Whether the folder is outside `/dev/shm`, so files are overwritten before removal.
    package let needsShredding: Bool
    private var removed = false
    /// The folder, open and `flock`ed for as long as it is in use.
    private var lockDescriptor: Int32 = -1

    /// The file inside every folder coffer makes, by which the sweep knows its own folders.
    package static let marker = ".coffer-tmpdir"

    /// The prefix of folders made by coffer under its own name (older ones carry no marker).
    package static let prefix = "coffer."

    /// Whether `/dev/shm` can hold the folder; else it goes in `$TMPDIR` and is shredded.
    package static var sharedMemoryUsable: Bool {
        FileSystem.isDirectory("/dev/shm") && access("/dev/shm", W_OK | X_OK) == 0
    }

    /// The folder's parent: `/dev/shm` when usable, else `$TMPDIR` (or `/tmp`).
    package static func parent(environment: [String: String]) -> String {
        sharedMemoryUsable ? "/dev/shm" : temporaryFolder(environment)
    }

    /// `$TMPDIR`, or `/tmp` when it is not set or empty.
    private static func temporaryFolder(_ environment: [String: String]) -> String {
        environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
    }

    /// What went wrong making the folder: `mkdir`'s errno and the template it tried.
    package struct MakeError: Error {
        /// The template, as `mktemp -d` names it (`PARENT/PROGRAM.XXXXXXXXXXXXX`).
        package let template: String
        /// `mkdir`'s errno.
        package let errno: Int32
    }

    /// Makes the folder in `parent` (after removing folders there that killed processes left behind),
    /// locked and marked.
    package init(program: String, parent: String) throws(MakeError) {
        needsShredding = parent != "/dev/shm"
        Self.removeAbandoned(in: parent)
        var made: String?
        var failure: Int32 = 0
        for _ in 0..<100 {
            let candidate = "\(parent)/\(program).\(Self.randomName(13))"
            if mkdir(candidate, 0o700) == 0 {
                made = candidate
                break
            }
            failure = errno
            if failure != EEXIST { break }
        }
        guard let made else {
            throw MakeError(template: "\(parent)/\(program).XXXXXXXXXXXXX", errno: failure)
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

    deinit { remove() }

    /// Removes the folder and what it holds (overwritten first outside `/dev/shm`); once.
    package func remove() {
        guard !removed else { return }
        removed = true
        Self.removeTree(path, shred: needsShredding)
        if lockDescriptor >= 0 { close(lockDescriptor) }
    }

    /// The folders in `parent` that a killed process left behind: this user's private
    /// `PROGRAM.XXXXXXXXXXXXX` folders made by coffer (under any program name) that no process holds and
    /// that are more than two seconds old (a folder is locked right after it is made).
    package static func abandoned(in parent: String) -> [String] {
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
    package static func parents(environment: [String: String]) -> [String] {
        let tmpdir = temporaryFolder(environment)
        return tmpdir == "/dev/shm" ? [tmpdir] : ["/dev/shm", tmpdir]
    }

    /// Removes the abandoned folders in `parent` (overwriting their files first outside `/dev/shm`), and
    /// returns them.
    @discardableResult
    package static func removeAbandoned(in parent: String) -> [String] {
        let found = abandoned(in: parent)
        for path in found { removeTree(path, shred: parent != "/dev/shm") }
        return found
    }

    /// `mktemp`'s random letters and digits.
    package static func randomName(_ count: Int) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        var generator = SystemRandomNumberGenerator()
        return String(
            (0..<count).map { _ in alphabet[Int(generator.next(upperBound: UInt(alphabet.count)))] })
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
