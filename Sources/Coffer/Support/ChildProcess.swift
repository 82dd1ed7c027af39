import CSystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A program to run: coffer's one place for `posix_spawn`, pipes, waiting and exit statuses.
///
/// Shaped like swift-subprocess: a configuration (the executable, by name or path, its arguments, its
/// environment, its working folder, a session or process group of its own), then either ``run(input:timeout:)``,
/// which feeds standard input and collects standard output and error, ``runAttached()``, which lends it
/// this process's terminal, or ``spawn(input:output:error:)`` for the streams a caller sets up itself.
/// Children start with the default disposition of every signal coffer changes and with no signal
/// blocked. Secrets go on standard input, never in arguments or the environment.
///
/// Pipes are made close-on-exec atomically (`pipe2`), so a child started by another thread at the same
/// moment never inherits one and keeps it open. SIGPIPE is ignored in this process from the first use
/// of this type on (``prepareProcess()``; the command line does it at start-up): a reader that goes away
/// is then an `EPIPE` from `write`, not the end of coffer.
package struct ChildProcess: Sendable {
    /// Which program to run.
    package enum Executable: Sendable, Equatable {
        /// A name looked up on the child's `PATH` (this process's when the environment is inherited).
        case name(String)
        /// A path, used as it is.
        case path(String)
    }

    /// How a child's standard stream is set up by ``spawn(input:output:error:)``.
    package enum Stream: Sendable {
        /// This process's own descriptor.
        case inherit
        /// `/dev/null`.
        case null
        /// A descriptor of this process.
        case descriptor(Int32)
    }

    /// How a program ended.
    package enum TerminationStatus: Sendable, Equatable, CustomStringConvertible {
        /// It exited with this code.
        case exited(Int32)
        /// A signal ended it.
        case signaled(Int32)

        /// Decodes a `waitpid` status.
        package init(waitStatus status: Int32) {
            let signal = status & 0x7f
            self = signal == 0 ? .exited((status >> 8) & 0xff) : .signaled(signal)
        }

        /// The code as a shell reports it: the exit code, or 128 + the signal.
        package var code: Int32 {
            switch self {
            case .exited(let code): return code
            case .signaled(let signal): return 128 + signal
            }
        }

        /// Whether the program exited with 0.
        package var isSuccess: Bool { self == .exited(0) }

        /// `exit 3` or `signal 9`.
        package var description: String {
            switch self {
            case .exited(let code): return "exit \(code)"
            case .signaled(let signal): return "signal \(signal)"
            }
        }
    }

    /// What a finished program printed, and how it ended.
    package struct Output: Sendable {
        /// How it ended.
        package let termination: TerminationStatus
        /// What it wrote to standard output.
        package let standardOutput: [UInt8]
        /// What it wrote to standard error.
        package let standardError: [UInt8]
        /// Whether it was killed because it ran past its time limit.
        package let timedOut: Bool
        /// Its process id (the id of its process group too, when it had one of its own).
        package let processID: pid_t

        /// The exit code, or 128 + the signal number when it was killed.
        package var status: Int32 { termination.code }

        /// Standard output as text, without its final newlines.
        package var outputText: String { Self.text(standardOutput) }
        /// Standard error as text, without its final newlines.
        package var errorText: String { Self.text(standardError) }

        private static func text(_ bytes: [UInt8]) -> String {
            var text = String(decoding: bytes, as: UTF8.self)
            while text.hasSuffix("\n") { text.removeLast() }
            return text
        }
    }

    /// The program.
    package var executable: Executable
    /// Its arguments, after `argv[0]`.
    package var arguments: [String]
    /// `argv[0]`; by default the name or path of the executable.
    package var argument0: String?
    /// The child's whole environment as `NAME=value`; `nil` passes this process's.
    package var environment: [String]?
    /// The folder the child starts in; `nil` keeps this process's.
    package var workingDirectory: String?
    /// Starts the child in a session of its own (`setsid`), detached from the terminal.
    package var newSession = false
    /// Starts the child in a process group of its own, which ``kill(group:signal:)`` can end as a whole.
    package var newProcessGroup = false
    /// Signals the program starts with blocked (all others unblocked), for one that must install its
    /// handlers before such a signal may end it.
    package var blockedSignals: [Int32] = []

    /// A program and its arguments.
    package init(_ executable: Executable, arguments: [String] = [], environment: [String]? = nil) {
        self.executable = executable
        self.arguments = arguments
        self.environment = environment
    }

    /// `argv`: the first element names the program (on `PATH` unless it holds a `/`), the rest are its
    /// arguments.
    package init(_ argv: [String], environment: [String]? = nil) {
        let program = argv.first ?? ""
        self.init(
            program.utf8.contains(0x2F) ? .path(program) : .name(program), arguments: Array(argv.dropFirst()),
            environment: environment)
    }

    // MARK: - Running

    /// Runs the program with `input` on its standard input (closed at once when empty), collects what it
    /// writes to standard output and error, and waits for it. With a `timeout` (seconds), a program still
    /// running then is killed, with its process group when it has one.
    package func run(input: [UInt8] = [], timeout: Double? = nil) throws -> Output {
        try input.withUnsafeBytes { try run(inputBytes: $0, timeout: timeout) }
    }

    /// Runs the program with a secret on its standard input, never copying it out of `input`.
    package func run(input: SecureBytes, timeout: Double? = nil) throws -> Output {
        try input.withUnsafeBytes { try run(inputBytes: $0, timeout: timeout) }
    }

    /// Runs the program on this process's terminal and standard streams, and waits for it.
    package func runAttached() throws -> TerminationStatus {
        Self.wait(try spawn())
    }

    /// Starts the program with its standard streams set up as given and returns its pid; the caller
    /// waits for it (``wait(_:)``).
    package func spawn(input: Stream = .inherit, output: Stream = .inherit, error: Stream = .inherit) throws
        -> pid_t
    {
        Self.prepareProcess()
        let path = try resolvedPath()
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
        for (stream, target) in [(input, Int32(0)), (output, 1), (error, 2)] {
            switch stream {
            case .inherit: break
            case .null:
                posix_spawn_file_actions_addopen(
                    &actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
            case .descriptor(let descriptor):
                posix_spawn_file_actions_adddup2(&actions, descriptor, target)
            }
        }
        if let workingDirectory {
            let status = posix_spawn_file_actions_addchdir_np(&actions, workingDirectory)
            guard status == 0 else {
                throw CofferError(.io, "cannot run in \(workingDirectory)", errno: status)
            }
        }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signalNumber in [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGCHLD, SIGXFSZ] {
            sigaddset(&defaults, signalNumber)
        }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        for signalNumber in blockedSignals { sigaddset(&unblocked, signalNumber) }
        posix_spawnattr_setsigmask(&attributes, &unblocked)
        var flags = Int32(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK)
        if newProcessGroup {
            posix_spawnattr_setpgroup(&attributes, 0)
            flags |= Int32(POSIX_SPAWN_SETPGROUP)
        }
        if newSession { flags |= Self.setsidFlag }
        posix_spawnattr_setflags(&attributes, Int16(flags))
        let name: String
        switch executable {
        case .name(let value), .path(let value): name = value
        }
        let argv = ([argument0 ?? name] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let envp = (environment ?? Self.currentEnvironment()).map { strdup($0) } + [nil]
        defer { envp.forEach { free($0) } }
        var pid: pid_t = 0
        let status = Self.spawning { posix_spawn(&pid, path, &actions, &attributes, argv, envp) }
        guard status == 0 else {
            if status == ENOENT { throw CofferError(.notFound, "\(name): command not found", errno: status) }
            throw CofferError(.io, "cannot run \(name)", errno: status)
        }
        return pid
    }

    /// The file to execute: a path as given, a name found on the child's `PATH`.
    private func resolvedPath() throws -> String {
        switch executable {
        case .path(let path):
            return path
        case .name(let name):
            let variables = environment.map(Self.dictionary) ?? StoreConfiguration.processEnvironment()
            guard let found = Self.findOnPath(name, environment: variables) else {
                throw CofferError(.notFound, "\(name): command not found", errno: ENOENT)
            }
            return found
        }
    }

    /// posix_spawn's flag for a new session (`POSIX_SPAWN_SETSID`, not exported to Swift on Linux).
    private static var setsidFlag: Int32 {
        #if os(Linux)
            0x80
        #else
            Int32(POSIX_SPAWN_SETSID)
        #endif
    }

    private func run(inputBytes input: UnsafeRawBufferPointer, timeout: Double?) throws -> Output {
        let inputPipe = try Self.makePipe()
        let outputPipe: (read: Int32, write: Int32)
        let errorPipe: (read: Int32, write: Int32)
        do {
            outputPipe = try Self.makePipe()
            do {
                errorPipe = try Self.makePipe()
            } catch {
                Self.close([outputPipe.read, outputPipe.write])
                throw error
            }
        } catch {
            Self.close([inputPipe.read, inputPipe.write])
            throw error
        }
        let pid: pid_t
        do {
            pid = try spawn(
                input: .descriptor(inputPipe.read), output: .descriptor(outputPipe.write),
                error: .descriptor(errorPipe.write))
        } catch {
            Self.close([
                inputPipe.read, inputPipe.write, outputPipe.read, outputPipe.write, errorPipe.read,
                errorPipe.write,
            ])
            throw error
        }
        Self.close([inputPipe.read, outputPipe.write, errorPipe.write])
        var collected: [[UInt8]] = [[], []]
        var readable = [outputPipe.read, errorPipe.read]
        var writable = input.isEmpty ? -1 : inputPipe.write
        if input.isEmpty { Self.close([inputPipe.write]) }
        if writable >= 0 { _ = fcntl(writable, F_SETFL, fcntl(writable, F_GETFL) | O_NONBLOCK) }
        var written = 0
        let deadline = timeout.map { Self.monotonicSeconds() + $0 }
        var killedAt: Double?
        var chunk = [UInt8](repeating: 0, count: 65536)
        while readable.contains(where: { $0 >= 0 }) || writable >= 0 {
            let now = Self.monotonicSeconds()
            if let deadline, killedAt == nil, now >= deadline {
                killedAt = now
                if newProcessGroup { kill(-pid, SIGKILL) }
                kill(pid, SIGKILL)
            }
            // A killed program's helpers may keep the pipes open: give them three seconds.
            if let killedAt, now - killedAt > 3 { break }
            var descriptors = readable.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            if writable >= 0 { descriptors.append(pollfd(fd: writable, events: Int16(POLLOUT), revents: 0)) }
            let wait = deadline.map { Int32(max(1, min(1000, ($0 - now) * 1000))) } ?? -1
            let polled = SystemCall.retrying {
                poll(&descriptors, nfds_t(descriptors.count), killedAt == nil ? wait : 200)
            }
            if polled < 0 {
                throw CofferError(.io, "cannot wait for \(arguments.first ?? "a program")", errno: errno)
            }
            for index in 0..<2 where readable[index] >= 0 && descriptors[index].revents != 0 {
                let count = SystemCall.retrying {
                    chunk.withUnsafeMutableBytes { read(readable[index], $0.baseAddress, $0.count) }
                }
                if count > 0 {
                    collected[index].append(contentsOf: chunk[0..<count])
                } else if count == 0 || errno != EAGAIN {
                    Self.close([readable[index]])
                    readable[index] = -1
                }
            }
            if writable >= 0, let last = descriptors.last, last.revents != 0 {
                let count = SystemCall.retrying {
                    write(writable, input.baseAddress! + written, input.count - written)
                }
                if count > 0 { written += count }
                // Done, or the reader went away (EPIPE): either way its input is over.
                if written == input.count || (count < 0 && errno != EAGAIN) {
                    Self.close([writable])
                    writable = -1
                }
            }
        }
        Self.close(readable.filter { $0 >= 0 } + (writable >= 0 ? [writable] : []))
        // The output may end before the program does (it redirected it): the time limit still holds.
        var termination = Self.status(ifEnded: pid)
        while termination == nil, let deadline {
            if killedAt == nil, Self.monotonicSeconds() >= deadline {
                killedAt = Self.monotonicSeconds()
                if newProcessGroup { kill(-pid, SIGKILL) }
                kill(pid, SIGKILL)
            }
            usleep(10_000)
            termination = Self.status(ifEnded: pid)
        }
        return Output(
            termination: termination ?? Self.wait(pid), standardOutput: collected[0],
            standardError: collected[1],
            timedOut: killedAt != nil, processID: pid)
    }

    // MARK: - Processes

    /// Waits for `pid` and returns how it ended.
    @discardableResult
    package static func wait(_ pid: pid_t) -> TerminationStatus {
        var status: Int32 = 0
        guard SystemCall.retrying({ waitpid(pid, &status, 0) }) >= 0 else { return .exited(127) }
        return TerminationStatus(waitStatus: status)
    }

    /// How `pid` ended, reaping it, or `nil` while it runs; exit status 127 when it is no child of this
    /// process (any more).
    package static func status(ifEnded pid: pid_t) -> TerminationStatus? {
        var status: Int32 = 0
        let result = SystemCall.retrying { waitpid(pid, &status, WNOHANG) }
        if result == 0 { return nil }
        guard result == pid else { return .exited(127) }
        return TerminationStatus(waitStatus: status)
    }

    /// A pipe whose two ends are closed in children (each child gets only the end it is handed), made so
    /// atomically.
    package static func makePipe() throws -> (read: Int32, write: Int32) {
        var descriptors: [Int32] = [-1, -1]
        #if os(Linux)
            guard pipe2(&descriptors, O_CLOEXEC) == 0 else {
                throw CofferError(.io, "cannot create a pipe", errno: errno)
            }
        #else
            // No pipe2: the two steps happen while no child can be started.
            try spawning {
                guard pipe(&descriptors) == 0 else {
                    throw CofferError(.io, "cannot create a pipe", errno: errno)
                }
                for descriptor in descriptors { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
            }
        #endif
        return (descriptors[0], descriptors[1])
    }

    /// Writes all of `bytes` to `descriptor`, then closes it; a reader that went away ends the writing.
    package static func feed(_ descriptor: Int32, _ bytes: SecureBytes) {
        prepareProcess()
        bytes.withUnsafeBytes { _ = try? SystemCall.writeAll(descriptor, $0) }
        close([descriptor])
    }

    private static func close(_ descriptors: [Int32]) {
        for descriptor in descriptors { SystemCall.close(descriptor) }
    }

    /// Whether `name` is a program on `PATH` (`type NAME`).
    package static func isOnPath(_ name: String, environment: [String: String]) -> Bool {
        findOnPath(name, environment: environment) != nil
    }

    /// The executable file `name` resolves to on the `PATH` of `environment`, as a shell finds it; a name
    /// holding a `/` is taken as a path.
    package static func findOnPath(_ name: String, environment: [String: String]) -> String? {
        if name.utf8.contains(0x2F) { return access(name, X_OK) == 0 ? name : nil }
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

    /// This process's environment as `NAME=value` strings.
    package static func currentEnvironment() -> [String] {
        var result: [String] = []
        var pointer = environ
        while let entry = pointer.pointee {
            result.append(String(cString: entry))
            pointer += 1
        }
        return result
    }

    /// `NAME=value` strings as a dictionary (the last one of a name wins).
    package static func dictionary(_ environment: [String]) -> [String: String] {
        var result: [String: String] = [:]
        for entry in environment {
            guard let equals = entry.firstIndex(of: "=") else { continue }
            result[String(entry[..<equals])] = String(entry[entry.index(after: equals)...])
        }
        return result
    }

    /// Seconds of a monotonic clock.
    package static func monotonicSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// Ignores SIGPIPE in this process, once: writing to a pipe whose reader is gone then fails with
    /// `EPIPE` instead of ending the process. Children get the default back.
    package static func prepareProcess() {
        _ = ignoringSIGPIPE
    }

    private static let ignoringSIGPIPE: Bool = {
        signal(SIGPIPE, SIG_IGN)
        return true
    }()

    /// Where pipes cannot be made close-on-exec atomically, making one and starting a child exclude
    /// each other.
    private static let spawnLock = Locked(())

    private static func spawning<Result>(_ body: () throws -> Result) rethrows -> Result {
        #if os(Linux)
            try body()
        #else
            try spawnLock.withLock { _ in try body() }
        #endif
    }
}
