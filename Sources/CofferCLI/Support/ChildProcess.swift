import Coffer

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Starting programs with exactly the descriptors a situation needs, for the cases the library's
/// `Subprocess` (collect everything, or inherit everything) does not cover: clipboard tools that leave a
/// server behind, the detached clipboard restorer, the editor and extensions.
enum ChildProcess {
    /// How a child's standard stream is set up.
    enum Stream {
        /// This process's own descriptor.
        case inherit
        /// `/dev/null`.
        case null
        /// A descriptor of this process.
        case descriptor(Int32)
    }

    /// Starts `arguments` (found on `PATH` unless `executable` names the file to run) and returns its pid.
    ///
    /// - Parameters:
    ///   - environment: `NAME=value` strings; `nil` passes this process's environment.
    ///   - newSession: start the child in a session of its own (`setsid`), detached from the terminal.
    static func spawn(
        _ arguments: [String], executable: String? = nil, environment: [String]? = nil,
        stdin: Stream = .inherit, stdout: Stream = .inherit, stderr: Stream = .inherit,
        newSession: Bool = false
    ) throws -> pid_t {
        guard let program = executable ?? arguments.first else {
            throw CofferError(.invalidArgument, "no program to run")
        }
        #if canImport(Glibc)
            var actions = posix_spawn_file_actions_t()
            var attributes = posix_spawnattr_t()
        #else
            var actions: posix_spawn_file_actions_t?
            var attributes: posix_spawnattr_t?
        #endif
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        for (stream, target) in [(stdin, Int32(0)), (stdout, 1), (stderr, 2)] {
            switch stream {
            case .inherit: break
            case .null:
                posix_spawn_file_actions_addopen(
                    &actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
            case .descriptor(let descriptor):
                posix_spawn_file_actions_adddup2(&actions, descriptor, target)
            }
        }
        // The child starts with default signal dispositions, whatever this process changed.
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signalNumber in [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE] { sigaddset(&defaults, signalNumber) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        // ... and with no signal held back, even while coffer holds some (see SecureTemporaryFolder).
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        posix_spawnattr_setsigmask(&attributes, &unblocked)
        var flags = Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK)
        if newSession { flags |= Int16(0x80) }  // POSIX_SPAWN_SETSID
        posix_spawnattr_setflags(&attributes, flags)

        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let envp = (environment ?? Subprocess.currentEnvironment()).map { strdup($0) } + [nil]
        defer { envp.forEach { free($0) } }
        var pid: pid_t = 0
        let status =
            executable == nil
            ? posix_spawnp(&pid, program, &actions, &attributes, argv, envp)
            : posix_spawn(&pid, program, &actions, &attributes, argv, envp)
        guard status == 0 else {
            if status == ENOENT { throw CofferError(.notFound, "\(program): command not found") }
            throw CofferError(.io, "\(program): \(String(cString: strerror(status)))")
        }
        return pid
    }

    /// Waits for `pid`; returns its exit status, or 128 + the signal that ended it.
    static func wait(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            if errno != EINTR { return 127 }
        }
        let signalNumber = status & 0x7f
        return signalNumber == 0 ? (status >> 8) & 0xff : 128 + signalNumber
    }

    /// Writes all of `bytes` to `descriptor` and closes it; a reader that went away ends the writing.
    static func feed(_ descriptor: Int32, _ bytes: SecureBytes) {
        let previous = signal(SIGPIPE, SIG_IGN)
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let count = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if count < 0 {
                    if errno == EINTR { continue }
                    break
                }
                offset += count
            }
        }
        close(descriptor)
        signal(SIGPIPE, previous)
    }

    /// Makes a pipe whose ends are closed in children (each child gets only the end it is handed), so a
    /// reader sees the end of its input when this process closes the writing end.
    static func makePipe(_ descriptors: inout [Int32]) -> Bool {
        guard pipe(&descriptors) == 0 else { return false }
        for descriptor in descriptors { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        return true
    }

    /// Whether `name` is a program on `PATH` (`type NAME`).
    static func isOnPath(_ name: String, environment: [String: String]) -> Bool {
        findOnPath(name, environment: environment) != nil
    }

    /// The executable file `name` resolves to on `PATH`, or `nil`.
    static func findOnPath(_ name: String, environment: [String: String]) -> String? {
        if name.contains("/") { return access(name, X_OK) == 0 ? name : nil }
        let path = environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for folder in path.split(separator: ":", omittingEmptySubsequences: false) {
            let candidate = (folder.isEmpty ? "." : String(folder)) + "/" + name
            var info = stat()
            if stat(candidate, &info) == 0, info.st_mode & S_IFMT == S_IFREG, access(candidate, X_OK) == 0 {
                return candidate
            }
        }
        return nil
    }

    /// This program's own executable, by its absolute path (whatever name or link it was started by),
    /// for starting it again from git or a shell with any `PATH`.
    static var ownExecutable: String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        #if os(Linux)
            let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
            if count > 0 {
                return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            }
        #elseif canImport(Darwin)
            var size = UInt32(buffer.count)
            if _NSGetExecutablePath(&buffer, &size) == 0, let resolved = realpath(buffer, nil) {
                defer { free(resolved) }
                return String(cString: resolved)
            }
        #endif
        let invoked = CommandLine.arguments.first ?? "coffer"
        if invoked.hasPrefix("/") { return invoked }
        if invoked.contains("/"), let resolved = realpath(invoked, nil) {
            defer { free(resolved) }
            return String(cString: resolved)
        }
        return findOnPath(invoked, environment: StoreConfiguration.processEnvironment()) ?? invoked
    }
}
