#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A connection to a running gpg-agent that speaks just enough of the Assuan protocol for one
/// decryption: `SETKEY`, then `PKDECRYPT` with the ciphertext sent on the agent's `INQUIRE`.
///
/// The agent is never started here and never asks for a passphrase (`pinentry-mode=cancel`): when
/// either would be needed the connection fails and the caller lets gpg do the work instead. The
/// socket is used only when it is what the user's own agent would make: a socket (not a link)
/// owned by the user, in a folder of the user's that nobody else can write to, answered by a
/// process of the same user.
final class GPGAgentConnection {
    private let descriptor: Int32
    /// Bytes read from the socket and not yet consumed; replies can hold key material, so the
    /// buffer is wiped when the connection goes.
    private let pending = WipedBuffer(capacity: 8192)

    /// Connects to the agent of GnuPG home `home`, or returns `nil` when none answers or its socket
    /// cannot be trusted.
    convenience init?(home: String, isDefaultHome: Bool) {
        let folder = Self.socketDirectory(home: home, isDefaultHome: isDefaultHome)
        let path = folder + "/S.gpg-agent"
        guard Self.isTrustedSocket(path, in: folder) else { return nil }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard path.utf8.count < capacity else { return nil }
        withUnsafeMutableBytes(of: &address.sun_path) { target in
            target.copyBytes(from: path.utf8)
            target[path.utf8.count] = 0
        }
        #if canImport(Glibc)
            let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
            let descriptor = socket(AF_UNIX, SOCK_STREAM, 0)
            if descriptor >= 0 {
                // A closed agent must give an error, not SIGPIPE (Linux passes MSG_NOSIGNAL instead).
                var on: Int32 = 1
                _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
                _ = setsockopt(descriptor, SOL_SOCKET, SO_NOSIGPIPE, &on, socklen_t(MemoryLayout<Int32>.size))
            }
        #endif
        guard descriptor >= 0 else { return nil }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0, Self.peerIsThisUser(descriptor) else {
            close(descriptor)
            return nil
        }
        self.init(connected: descriptor)
    }

    /// Takes over `descriptor`, a stream connected to an agent (closed when the connection goes), and
    /// reads the greeting; `nil` when the agent does not greet or refuses the options.
    init?(connected descriptor: Int32) {
        self.descriptor = descriptor
        guard readReply(data: nil) == true, transact("OPTION pinentry-mode=cancel") == true else {
            return nil
        }
    }

    deinit { close(descriptor) }

    /// Asks the agent to decrypt `ciphertext` (a canonical `enc-val` S-expression) with the secret key
    /// `keygrip`; returns the agent's result S-expression, or `nil` on any error.
    func decrypt(keygrip: String, ciphertext: [UInt8]) -> WipedBuffer? {
        guard transact("SETKEY \(keygrip)") == true else { return nil }
        let result = WipedBuffer(capacity: 2048)
        guard send(Array("PKDECRYPT\n".utf8)) else { return nil }
        while true {
            switch nextLine(data: result) {
            case .ok: return result
            case .inquire(let keyword):
                guard keyword == "CIPHERTEXT", sendData(ciphertext) else {
                    _ = send(Array("CAN\n".utf8))
                    _ = readReply(data: nil)
                    return nil
                }
            case .error, .broken: return nil
            case .other: continue
            }
        }
    }

    // MARK: - Assuan

    private enum Line {
        case ok
        case error
        case broken
        case inquire(String)
        /// Status, comment and data lines (data goes to the caller's buffer).
        case other
    }

    /// Sends a command and reads to its final `OK` (`true`) or `ERR` (`false`); `nil` when the
    /// connection broke.
    private func transact(_ command: String) -> Bool? {
        guard send(Array((command + "\n").utf8)) else { return nil }
        return readReply(data: nil)
    }

    private func readReply(data: WipedBuffer?) -> Bool? {
        while true {
            switch nextLine(data: data) {
            case .ok: return true
            case .error, .inquire: return false
            case .broken: return nil
            case .other: continue
            }
        }
    }

    /// Reads one line; the unescaped payload of `D` lines is appended to `data`.
    private func nextLine(data: WipedBuffer?) -> Line {
        while true {
            let newline = pending.withBytes { $0.firstIndex(of: UInt8(ascii: "\n")) }
            if let newline {
                let line = pending.withBytes { bytes -> Line in
                    let text = UnsafeRawBufferPointer(rebasing: bytes[..<newline])
                    return Self.interpret(text, data: data)
                }
                consume(newline + 1)
                return line
            }
            guard pending.available > 0 else { return .broken }
            let space = pending.unusedSpace
            guard let count = try? SystemCall.read(descriptor, into: space), count > 0 else { return .broken }
            pending.extend(by: count)
        }
    }

    private static func interpret(_ line: UnsafeRawBufferPointer, data: WipedBuffer?) -> Line {
        func starts(_ word: String) -> Bool {
            let prefix = Array(word.utf8)
            return line.count >= prefix.count && line.prefix(prefix.count).elementsEqual(prefix)
                && (line.count == prefix.count || line[prefix.count] == UInt8(ascii: " "))
        }
        if starts("OK") { return .ok }
        if starts("ERR") { return .error }
        if starts("INQUIRE") {
            let words = String(decoding: line, as: UTF8.self).split(separator: " ")
            return .inquire(words.count > 1 ? String(words[1]) : "")
        }
        if starts("D") {
            let payload = UnsafeRawBufferPointer(rebasing: line[min(2, line.count)...])
            guard let data, unescape(payload, into: data) else {
                return .broken
            }
        }
        return .other
    }

    /// Appends Assuan data (`%XX` escapes) to `data`; `false` when it does not fit or is malformed.
    private static func unescape(_ text: UnsafeRawBufferPointer, into data: WipedBuffer) -> Bool {
        var index = 0
        while index < text.count {
            var byte = text[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < text.count, let high = Hex.value(text[index + 1]),
                    let low = Hex.value(text[index + 2])
                else { return false }
                byte = high << 4 | low
                index += 2
            }
            guard data.append(byte) else { return false }
            index += 1
        }
        return true
    }

    /// Drops the first `length` pending bytes (wiping what moves).
    private func consume(_ length: Int) {
        let remaining = pending.count - length
        pending.withMutableBytes { bytes in
            if remaining > 0, let base = bytes.baseAddress {
                memmove(base, base + length, remaining)
            }
        }
        pending.removeLast(length)
    }

    /// Sends `payload` as `D` lines (escaping `%`, CR and LF, at most 1,000 bytes a line), then `END`.
    private func sendData(_ payload: [UInt8]) -> Bool {
        var line: [UInt8] = Array("D ".utf8)
        for byte in payload {
            if byte == UInt8(ascii: "%") || byte == 10 || byte == 13 {
                line += Array(("%" + Hex.upper([byte])).utf8)
            } else {
                line.append(byte)
            }
            if line.count >= 990 {
                line.append(10)
                guard send(line) else { return false }
                line = Array("D ".utf8)
            }
        }
        if line.count > 2 {
            line.append(10)
            guard send(line) else { return false }
        }
        return send(Array("END\n".utf8))
    }

    private func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = SystemCall.retrying {
                bytes.withUnsafeBytes { buffer in
                    #if canImport(Glibc)
                        Glibc.send(
                            descriptor, buffer.baseAddress! + offset, buffer.count - offset,
                            Int32(MSG_NOSIGNAL))
                    #else
                        Darwin.send(descriptor, buffer.baseAddress! + offset, buffer.count - offset, 0)
                    #endif
                }
            }
            guard written > 0 else { return false }
            offset += written
        }
        return true
    }

    // MARK: - Where the socket is

    /// Whether `path` is a socket (not a symbolic link) owned by this user in `folder`, a folder of
    /// this user's that no one else can write to.
    static func isTrustedSocket(_ path: String, in folder: String) -> Bool {
        let uid = getuid()
        var socketStatus = stat()
        var folderStatus = stat()
        guard lstat(path, &socketStatus) == 0, socketStatus.st_mode & S_IFMT == S_IFSOCK,
            socketStatus.st_uid == uid, stat(folder, &folderStatus) == 0,
            folderStatus.st_mode & S_IFMT == S_IFDIR,
            folderStatus.st_uid == uid,
            folderStatus.st_mode & 0o022 == 0
        else { return false }
        return true
    }

    /// Whether the process at the other end of the connected socket runs as this user.
    static func peerIsThisUser(_ descriptor: Int32) -> Bool {
        #if canImport(Glibc)
            // `struct ucred` (pid, uid, gid), which Glibc's module leaves out without _GNU_SOURCE.
            var credentials: (pid: pid_t, uid: uid_t, gid: gid_t) = (0, 0, 0)
            var length = socklen_t(MemoryLayout.size(ofValue: credentials))
            guard getsockopt(descriptor, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0,
                length == MemoryLayout.size(ofValue: credentials)
            else { return false }
            return credentials.uid == getuid()
        #else
            var uid: uid_t = 0
            var gid: gid_t = 0
            return getpeereid(descriptor, &uid, &gid) == 0 && uid == getuid()
        #endif
    }

    /// The folder of the agent's sockets, chosen as GnuPG 2.2 chooses it: `/run/user/UID/gnupg` (a
    /// `d.HASH` folder below it for a home other than `~/.gnupg`) when that is private to the user,
    /// else the home itself.
    static func socketDirectory(home: String, isDefaultHome: Bool) -> String {
        let uid = getuid()
        func isPrivateFolder(_ path: String, strict: Bool) -> Bool {
            var status = stat()
            guard stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFDIR, status.st_uid == uid else {
                return false
            }
            return !strict || status.st_mode & 0o077 == 0
        }
        for base in ["/run", "/var/run"] {
            let prefix = "\(base)/user/\(uid)"
            var status = stat()
            guard stat(prefix, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else { continue }
            let folder = prefix + "/gnupg"
            guard status.st_uid == uid, isPrivateFolder(folder, strict: true) else { return home }
            if isDefaultHome { return folder }
            let hashed =
                folder + "/d."
                + Base32.encode(Array(Gcrypt.sha1(Array(home.utf8)).prefix(15)), alphabet: Base32.zBase32)
            return isPrivateFolder(hashed, strict: true) ? hashed : home
        }
        return home
    }
}
