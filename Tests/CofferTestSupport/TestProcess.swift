import Coffer
import Dispatch

/// What a finished program printed, and how it ended.
package struct ProcessResult: Sendable {
    /// The exit status, or 128 + the signal number when it was killed.
    package var status: Int32
    /// Standard output.
    package var standardOutput: [UInt8]
    /// Standard error.
    package var standardError: [UInt8]
    /// Whether the program was killed because it ran longer than its time limit.
    package var timedOut: Bool
    /// The process group it ran in (helpers it left running are still in it).
    package var processGroup: pid_t = 0

    /// Standard output decoded as UTF-8.
    package var outputText: String { String(decoding: standardOutput, as: UTF8.self) }
    /// Standard error decoded as UTF-8.
    package var errorText: String { String(decoding: standardError, as: UTF8.self) }
}

/// Starts programs for the CLI tests on the library's spawner: a clean environment, a working folder, a
/// time limit, default signal dispositions, and a process group of its own so that everything it
/// started can be stopped.
package enum TestProcess {
    /// A failure to start a program.
    package struct Failure: Error, CustomStringConvertible {
        package let description: String

        /// A failure described by `description`.
        package init(description: String) { self.description = description }
    }

    /// `arguments` (the program found on the `PATH` of `environment`) as a ``ChildProcess`` in a process
    /// group of its own.
    private static func child(_ arguments: [String], environment: [String: String], directory: String?)
        -> ChildProcess
    {
        var child = ChildProcess(arguments, environment: environment.map { "\($0.key)=\($0.value)" }.sorted())
        child.workingDirectory = directory
        child.newProcessGroup = true
        return child
    }

    /// Runs `arguments` with `input` on a pipe as standard input, killing its process group after
    /// `timeout` seconds.
    package static func run(
        _ arguments: [String], environment: [String: String], directory: String? = nil,
        input: [UInt8] = [], timeout: Double = 60
    ) throws -> ProcessResult {
        let output = try child(arguments, environment: environment, directory: directory)
            .run(input: input, timeout: timeout)
        return ProcessResult(
            status: output.status, standardOutput: output.standardOutput, standardError: output.standardError,
            timedOut: output.timedOut, processGroup: output.processID)
    }

    /// Runs a program and throws, with what it printed, unless it exits 0.
    @discardableResult
    package static func check(
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
    package static func start(
        _ arguments: [String], environment: [String: String], directory: String? = nil,
        descriptors: [Int32]? = nil
    ) throws -> pid_t {
        let streams = descriptors.map { $0.map(ChildProcess.Stream.descriptor) } ?? [.null, .null, .null]
        return try child(arguments, environment: environment, directory: directory)
            .spawn(input: streams[0], output: streams[1], error: streams[2])
    }

    /// Starts a program in the background with its standard output on a pipe; returns its pid and the
    /// pipe's reading end (close it when done).
    package static func startWithOutputPipe(
        _ arguments: [String], environment: [String: String]
    ) throws -> (pid: pid_t, output: Int32) {
        let pipe = try ChildProcess.makePipe()
        defer { SystemCall.close(pipe.write) }
        do {
            let pid = try child(arguments, environment: environment, directory: nil)
                .spawn(input: .null, output: .descriptor(pipe.write), error: .null)
            return (pid, pipe.read)
        } catch {
            SystemCall.close(pipe.read)
            throw error
        }
    }

    /// Reads one line from a descriptor, waiting at most `timeout` seconds.
    package static func readLine(_ descriptor: Int32, timeout: Double) -> String? {
        var line: [UInt8] = []
        let deadline = monotonicSeconds() + timeout
        while monotonicSeconds() < deadline {
            var request = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)]
            guard poll(&request, 1, 100) >= 0 || errno == EINTR else { return nil }
            guard request[0].revents != 0 else { continue }
            var byte: UInt8 = 0
            guard (try? withUnsafeMutableBytes(of: &byte, { try SystemCall.read(descriptor, into: $0) })) == 1
            else { return nil }
            if byte == UInt8(ascii: "\n") { return String(decoding: line, as: UTF8.self) }
            line.append(byte)
        }
        return nil
    }

    /// Sends `signal` to the process group of a program started by ``start(_:environment:directory:descriptors:)``,
    /// then waits for the program.
    @discardableResult
    package static func stop(_ pid: pid_t, signal: Int32 = SIGTERM) -> Int32 {
        kill(-pid, signal)
        kill(pid, signal)
        return waitFor(pid)
    }

    /// The exit status of a started program if it has ended (reaping it), `nil` while it runs.
    package static func statusIfEnded(_ pid: pid_t) -> Int32? {
        ChildProcess.status(ifEnded: pid)?.code
    }

    /// Waits for `pid` and returns its exit status (128 + signal when killed).
    @discardableResult
    package static func waitFor(_ pid: pid_t) -> Int32 {
        ChildProcess.wait(pid).code
    }

    /// Seconds of a monotonic clock.
    package static func monotonicSeconds() -> Double {
        ChildProcess.monotonicSeconds()
    }
}

/// Runs blocking work (waiting for processes) off Swift's cooperative thread pool, at most `limit` at a
/// time, so that parallel tests neither starve other tests nor start too many gpg-agents at once.
package actor BlockingGate {
    /// The gate shared by the CLI tests; `COFFER_TEST_JOBS` overrides its width (default 4).
    package static let shared = BlockingGate(limit: Int(environmentVariable("COFFER_TEST_JOBS") ?? "") ?? 4)

    private let limit: Int
    private var running = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []

    package init(limit: Int) { self.limit = max(1, limit) }

    /// Runs `work` on a Dispatch thread once a slot is free.
    package func run<Result: Sendable>(_ work: @escaping @Sendable () throws -> Result) async throws -> Result
    {
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
package func environmentVariable(_ name: String) -> String? {
    getenv(name).map { String(cString: $0) }
}

/// Small file helpers for the tests (no Foundation).
package enum TestFiles {
    /// A git hook that kills the coffer that runs it (its parent's parent, git's caller) with SIGKILL.
    package static let killingHook =
        "#!/bin/sh\ncoffer=$(awk '{print $4}' /proc/$PPID/stat)\nkill -9 \"$coffer\"\nexit 1\n"

    /// `requests.py`, a stand-in for the module pass-audit asks haveibeenpwned's range API through: one
    /// breached password, `bank-password` (and `password`), and a few other hashes in every bucket; put
    /// its folder on `PYTHONPATH`.
    package static let pwnedRangeStub = #"""
        import hashlib
        BREACHED = {hashlib.sha1(p.encode()).hexdigest().upper(): 42 for p in ["bank-password", "password"]}
        class Response:
            def __init__(self, text):
                self.text = text
                self.status_code = 200
            def raise_for_status(self):
                pass
        def get(url, headers=None, verify=True):
            prefix = url.rsplit("/", 1)[1]
            lines = ["%s:%d" % (h[5:], n) for h, n in sorted(BREACHED.items()) if h.startswith(prefix)]
            lines.append("0000000000000000000000000000000000A:1")
            return Response("\r\n".join(lines))
        """#

    /// The package root, found from this file's path.
    package static let packageRoot: String = {
        var path = #filePath
        for _ in 0..<3 { path = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)]) }
        return path
    }()

    /// Writes bytes to a file, replacing it, with the given mode.
    package static func write(_ bytes: [UInt8], to path: String, mode: mode_t = 0o644) throws {
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
    package static func write(_ text: String, to path: String, mode: mode_t = 0o644) throws {
        try write(Array(text.utf8), to: path, mode: mode)
    }

    /// Reads a whole file, or `nil` when it cannot be opened.
    package static func read(_ path: String) -> [UInt8]? {
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
    package static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    /// Makes a fresh folder under /tmp and returns its path.
    package static func temporaryFolder(_ prefix: String) throws -> String {
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
