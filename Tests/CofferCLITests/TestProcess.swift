import Dispatch

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What a finished program printed, and how it ended.
struct ProcessResult: Sendable {
    /// The exit status, or 128 + the signal number when it was killed.
    var status: Int32
    /// Standard output.
    var standardOutput: [UInt8]
    /// Standard error.
    var standardError: [UInt8]
    /// Whether the program was killed because it ran longer than its time limit.
    var timedOut: Bool
    /// The process group it ran in (helpers it left running are still in it).
    var processGroup: pid_t = 0

    /// Standard output decoded as UTF-8.
    var outputText: String { String(decoding: standardOutput, as: UTF8.self) }
    /// Standard error decoded as UTF-8.
    var errorText: String { String(decoding: standardError, as: UTF8.self) }
}

/// Starts programs for the CLI tests: a clean environment, a working folder, a time limit, default signal
/// dispositions, and its own process group so that everything it started can be stopped.
enum TestProcess {
    /// A failure to start a program.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Runs `arguments` (found on the `PATH` of `environment`) with `input` on a pipe as standard input.
    static func run(
        _ arguments: [String], environment: [String: String], directory: String? = nil,
        input: [UInt8] = [], timeout: Double = 60
    ) throws -> ProcessResult {
        var inputPipe: [Int32] = [-1, -1]
        var outputPipe: [Int32] = [-1, -1]
        var errorPipe: [Int32] = [-1, -1]
        let pid: pid_t
        spawnLock.lock()
        do {
            defer { spawnLock.unlock() }
            guard pipe(&inputPipe) == 0, pipe(&outputPipe) == 0, pipe(&errorPipe) == 0 else {
                throw Failure(description: "pipe: \(String(cString: strerror(errno)))")
            }
            for descriptor in inputPipe + outputPipe + errorPipe {
                _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
            }
            do {
                pid = try spawnLocked(
                    arguments, environment: environment, directory: directory,
                    descriptors: [inputPipe[0], outputPipe[1], errorPipe[1]])
            } catch {
                (inputPipe + outputPipe + errorPipe).forEach { close($0) }
                throw error
            }
        }
        close(inputPipe[0])
        close(outputPipe[1])
        close(errorPipe[1])
        _ = fcntl(inputPipe[1], F_SETFL, fcntl(inputPipe[1], F_GETFL) | O_NONBLOCK)
        var collected: [[UInt8]] = [[], []]
        var readable: [Int32] = [outputPipe[0], errorPipe[0]]
        var writable = inputPipe[1]
        var written = 0
        if input.isEmpty {
            close(writable)
            writable = -1
        }
        var chunk = [UInt8](repeating: 0, count: 65536)
        let deadline = monotonicSeconds() + timeout
        var timedOut = false
        var killedAt: Double?
        while readable.contains(where: { $0 >= 0 }) {
            let now = monotonicSeconds()
            if !timedOut && now >= deadline {
                timedOut = true
                killedAt = now
                kill(-pid, SIGKILL)
                kill(pid, SIGKILL)
            }
            if let killedAt, now - killedAt > 3 { break }
            var descriptors = readable.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            if writable >= 0 { descriptors.append(pollfd(fd: writable, events: Int16(POLLOUT), revents: 0)) }
            let wait = timedOut ? 200 : Int32(max(1, min(1000, (deadline - now) * 1000)))
            if poll(&descriptors, nfds_t(descriptors.count), wait) < 0 {
                if errno == EINTR { continue }
                break
            }
            for index in 0..<2 where readable[index] >= 0 && descriptors[index].revents != 0 {
                let count = chunk.withUnsafeMutableBytes { read(readable[index], $0.baseAddress, $0.count) }
                if count > 0 {
                    collected[index].append(contentsOf: chunk[0..<count])
                } else if count == 0 || (errno != EINTR && errno != EAGAIN) {
                    close(readable[index])
                    readable[index] = -1
                }
            }
            if writable >= 0, let last = descriptors.last, last.revents != 0 {
                let count = input.withUnsafeBytes {
                    write(writable, $0.baseAddress! + written, input.count - written)
                }
                if count > 0 { written += count }
                if written == input.count || (count < 0 && errno != EINTR && errno != EAGAIN) {
                    close(writable)
                    writable = -1
                }
            }
        }
        for descriptor in readable + [writable] where descriptor >= 0 { close(descriptor) }
        // The output may end before the program does (it redirected it): the time limit still holds.
        var status = statusIfEnded(pid)
        while status == nil && !timedOut {
            if monotonicSeconds() >= deadline {
                timedOut = true
                kill(-pid, SIGKILL)
                kill(pid, SIGKILL)
            } else {
                usleep(10_000)
                status = statusIfEnded(pid)
            }
        }
        return ProcessResult(
            status: status ?? waitFor(pid), standardOutput: collected[0], standardError: collected[1],
            timedOut: timedOut, processGroup: pid)
    }

    /// Runs a program and throws, with what it printed, unless it exits 0.
    @discardableResult
    static func check(
        _ arguments: [String], environment: [String: String], directory: String? = nil,
        input: [UInt8] = [], timeout: Double = 60
    ) throws -> ProcessResult {
        let result = try run(
            arguments, environment: environment, directory: directory, input: input, timeout: timeout)
        guard result.status == 0 else {
            throw Failure(
                description: "\(arguments.joined(separator: " ")) failed with status \(result.status)"
                    + (result.timedOut ? " (timed out)" : "") + ":\n" + result.outputText + result.errorText)
        }
        return result
    }

    /// Starts a program in the background with standard input, output and error on `/dev/null` (or
    /// the given descriptors) and returns its pid; stop it with ``stop(_:)``.
    static func start(
        _ arguments: [String], environment: [String: String], directory: String? = nil,
        descriptors: [Int32]? = nil
    ) throws -> pid_t {
        spawnLock.lock()
        defer { spawnLock.unlock() }
        let null = open("/dev/null", O_RDWR | O_CLOEXEC)
        defer { close(null) }
        return try spawnLocked(
            arguments, environment: environment, directory: directory,
            descriptors: descriptors ?? [null, null, null])
    }

    /// Starts a program in the background with its standard output on a pipe; returns its pid and the
    /// pipe's reading end (close it when done).
    static func startWithOutputPipe(
        _ arguments: [String], environment: [String: String]
    ) throws -> (pid: pid_t, output: Int32) {
        spawnLock.lock()
        defer { spawnLock.unlock() }
        var outputPipe: [Int32] = [-1, -1]
        guard pipe(&outputPipe) == 0 else { throw Failure(description: "pipe failed") }
        for descriptor in outputPipe { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        let null = open("/dev/null", O_RDWR | O_CLOEXEC)
        defer {
            close(null)
            close(outputPipe[1])
        }
        do {
            let pid = try spawnLocked(
                arguments, environment: environment, directory: nil, descriptors: [null, outputPipe[1], null])
            return (pid, outputPipe[0])
        } catch {
            close(outputPipe[0])
            throw error
        }
    }

    /// Reads one line from a descriptor, waiting at most `timeout` seconds.
    static func readLine(_ descriptor: Int32, timeout: Double) -> String? {
        var line: [UInt8] = []
        let deadline = monotonicSeconds() + timeout
        while monotonicSeconds() < deadline {
            var request = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)]
            guard poll(&request, 1, 100) >= 0 || errno == EINTR else { return nil }
            guard request[0].revents != 0 else { continue }
            var byte: UInt8 = 0
            guard readBytes(descriptor, &byte, 1) == 1 else { return nil }
            if byte == UInt8(ascii: "\n") { return String(decoding: line, as: UTF8.self) }
            line.append(byte)
        }
        return nil
    }

    /// Sends `signal` to the process group of a program started by ``start(_:environment:directory:descriptors:)``,
    /// then waits for the program.
    @discardableResult
    static func stop(_ pid: pid_t, signal: Int32 = SIGTERM) -> Int32 {
        kill(-pid, signal)
        kill(pid, signal)
        return waitFor(pid)
    }

    /// The exit status of a started program if it has ended (reaping it), `nil` while it runs.
    static func statusIfEnded(_ pid: pid_t) -> Int32? {
        var status: Int32 = 0
        guard waitpid(pid, &status, WNOHANG) == pid else { return nil }
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }

    /// Waits for `pid` and returns its exit status (128 + signal when killed).
    @discardableResult
    static func waitFor(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            if errno != EINTR { return 127 }
        }
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }

    /// Held while pipes are made and programs started, so that no child inherits another's pipe.
    private static let spawnLock = SpawnLock()

    private static func spawnLocked(
        _ givenArguments: [String], environment: [String: String], directory: String?, descriptors: [Int32]
    ) throws -> pid_t {
        // Glibc's posix_spawn_file_actions_addchdir_np is not visible to Swift: change folder with env.
        let arguments = directory.map { ["env", "-C", $0, "--"] + givenArguments } ?? givenArguments
        guard let program = arguments.first else { throw Failure(description: "no program to run") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (target, source) in descriptors.enumerated() {
            posix_spawn_file_actions_adddup2(&actions, source, Int32(target))
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD] { sigaddset(&defaults, signal) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP))
        let path = resolve(program, path: environment["PATH"] ?? "/usr/bin:/bin")
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let envp = environment.sorted { $0.key < $1.key }.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { envp.forEach { free($0) } }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
        guard status == 0 else {
            throw Failure(description: "cannot run \(program): \(String(cString: strerror(status)))")
        }
        return pid
    }

    /// Finds `program` on `path` the way a shell would.
    static func resolve(_ program: String, path: String) -> String {
        if program.contains("/") { return program }
        for folder in path.split(separator: ":") {
            let candidate = "\(folder)/\(program)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return program
    }

    /// Seconds of a monotonic clock.
    static func monotonicSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}

/// Runs blocking work (waiting for processes) off Swift's cooperative thread pool, at most `limit` at a
/// time, so that parallel tests neither starve other tests nor start too many gpg-agents at once.
actor BlockingGate {
    /// The gate shared by the CLI tests; `COFFER_TEST_JOBS` overrides its width (default 4).
    static let shared = BlockingGate(limit: Int(environmentVariable("COFFER_TEST_JOBS") ?? "") ?? 4)

    private let limit: Int
    private var running = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(limit: Int) { self.limit = max(1, limit) }

    /// Runs `work` on a Dispatch thread once a slot is free.
    func run<Result: Sendable>(_ work: @escaping @Sendable () throws -> Result) async throws -> Result {
        if running >= limit {
            await withCheckedContinuation { waiting.append($0) }
        } else {
            running += 1
        }
        defer {
            if waiting.isEmpty {
                running -= 1
            } else {
                waiting.removeFirst().resume()
            }
        }
        return try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(with: Swift.Result(catching: work)) }
        }
    }
}

/// One variable of this process's environment.
func environmentVariable(_ name: String) -> String? {
    getenv(name).map { String(cString: $0) }
}

/// Small file helpers for the tests (no Foundation).
enum TestFiles {
    /// Writes bytes to a file, replacing it, with the given mode.
    static func write(_ bytes: [UInt8], to path: String, mode: mode_t = 0o644) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard descriptor >= 0 else {
            throw TestProcess.Failure(
                description: "cannot write \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes {
                writeBytes(descriptor, $0.baseAddress! + offset, bytes.count - offset)
            }
            guard count > 0 else { throw TestProcess.Failure(description: "cannot write \(path)") }
            offset += count
        }
        fchmod(descriptor, mode)
    }

    /// Writes text to a file.
    static func write(_ text: String, to path: String, mode: mode_t = 0o644) throws {
        try write(Array(text.utf8), to: path, mode: mode)
    }

    /// Reads a whole file, or `nil` when it cannot be opened.
    static func read(_ path: String) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { readBytes(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            result.append(contentsOf: chunk[0..<count])
        }
        return result
    }

    /// Whether something exists at `path` (without following a final symbolic link).
    static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    /// Makes a fresh folder under /tmp and returns its path.
    static func temporaryFolder(_ prefix: String) throws -> String {
        var template = Array("/tmp/\(prefix)-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw TestProcess.Failure(description: "mkdtemp failed") }
        return String(cString: made)
    }
}

private func readBytes(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}

private func writeBytes(_ descriptor: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, buffer, count)
}

/// A pthread mutex.
final class SpawnLock: @unchecked Sendable {
    private var mutex = pthread_mutex_t()
    init() { pthread_mutex_init(&mutex, nil) }
    func lock() { pthread_mutex_lock(&mutex) }
    func unlock() { pthread_mutex_unlock(&mutex) }
}
