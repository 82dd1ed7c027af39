#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs a program found on `PATH`, without a shell, and collects what it printed.
///
/// Secrets are never passed in arguments or the environment; give them on standard input.
public struct Subprocess: Sendable {
    /// The outcome of a finished program.
    public struct Output: Sendable {
        /// The exit status, or 128 + the signal number when it was killed.
        public let status: Int32
        /// What it wrote to standard output.
        public let standardOutput: [UInt8]
        /// What it wrote to standard error.
        public let standardError: [UInt8]

        /// Standard output as text, without a final newline.
        public var outputText: String {
            var text = String(decoding: standardOutput, as: UTF8.self)
            while text.hasSuffix("\n") { text.removeLast() }
            return text
        }
        /// Standard error as text, without a final newline.
        public var errorText: String {
            var text = String(decoding: standardError, as: UTF8.self)
            while text.hasSuffix("\n") { text.removeLast() }
            return text
        }
    }

    /// The program name or path, then its arguments.
    public var arguments: [String]
    /// The complete environment of the child, as `NAME=value`; `nil` inherits this process's.
    public var environment: [String]?

    /// Describes a program to run.
    public init(_ arguments: [String], environment: [String]? = nil) {
        self.arguments = arguments
        self.environment = environment
    }

    /// Runs the program with `input` on its standard input and collects its output.
    public func run(input: [UInt8] = []) throws -> Output {
        try input.withUnsafeBytes { try run(inputBytes: $0) }
    }

    /// Runs the program with a secret on its standard input, never copying it out of `input`.
    public func run(input: SecureBytes) throws -> Output {
        try input.withUnsafeBytes { try run(inputBytes: $0) }
    }

    private func run(inputBytes input: UnsafeRawBufferPointer) throws -> Output {
        var inputPipe: [Int32] = [-1, -1]
        var outputPipe: [Int32] = [-1, -1]
        var errorPipe: [Int32] = [-1, -1]
        guard pipe(&inputPipe) == 0, pipe(&outputPipe) == 0, pipe(&errorPipe) == 0 else {
            throw CofferError(.io, "cannot create a pipe: \(String(cString: strerror(errno)))")
        }
        // Close-on-exec, so that the child holds only the ends dup2'ed onto its 0, 1 and 2: otherwise it
        // would keep its own standard input's write end open and never see end-of-file.
        for descriptor in inputPipe + outputPipe + errorPipe { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        let pid: pid_t
        do {
            pid = try spawn(stdin: inputPipe[0], stdout: outputPipe[1], stderr: errorPipe[1])
        } catch {
            (inputPipe + outputPipe + errorPipe).forEach { close($0) }
            throw error
        }
        close(inputPipe[0])
        close(outputPipe[1])
        close(errorPipe[1])
        var collected: [[UInt8]] = [[], []]
        var pending = input.isEmpty ? 0 : input.count
        var written = 0
        if input.isEmpty { close(inputPipe[1]) }
        var readable: [Int32] = [outputPipe[0], errorPipe[0]]
        var chunk = [UInt8](repeating: 0, count: 65536)
        signal(SIGPIPE, SIG_IGN)
        while !readable.allSatisfy({ $0 < 0 }) || pending > 0 {
            var descriptors = readable.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            if pending > 0 {
                descriptors.append(pollfd(fd: inputPipe[1], events: Int16(POLLOUT), revents: 0))
            }
            if poll(&descriptors, nfds_t(descriptors.count), -1) < 0 {
                if errno == EINTR { continue }
                break
            }
            for index in 0..<2 where readable[index] >= 0 && descriptors[index].revents != 0 {
                let count = chunk.withUnsafeMutableBytes { read(readable[index], $0.baseAddress, $0.count) }
                if count > 0 {
                    collected[index].append(contentsOf: chunk[0..<count])
                } else if count == 0 || errno != EINTR {
                    close(readable[index])
                    readable[index] = -1
                }
            }
            if pending > 0, let last = descriptors.last, last.revents != 0 {
                let count = write(inputPipe[1], input.baseAddress! + written, pending)
                if count > 0 {
                    written += count
                    pending -= count
                } else if errno != EINTR && errno != EAGAIN {
                    pending = 0
                }
                if pending == 0 { close(inputPipe[1]) }
            }
        }
        return Output(status: Self.wait(pid), standardOutput: collected[0], standardError: collected[1])
    }

    /// Runs the program on this process's terminal and standard streams, and returns its exit status.
    public func runAttached() throws -> Int32 {
        Self.wait(try spawn(stdin: nil, stdout: nil, stderr: nil))
    }

    /// Starts the program with the given descriptors (`nil` inherits ours) and returns its pid.
    func spawn(stdin: Int32?, stdout: Int32?, stderr: Int32?) throws -> pid_t {
        guard let program = arguments.first else { throw CofferError(.invalidArgument, "no program to run") }
        #if canImport(Glibc)
            var actions = posix_spawn_file_actions_t()
        #else
            var actions: posix_spawn_file_actions_t?
        #endif
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (source, target) in [(stdin, Int32(0)), (stdout, 1), (stderr, 2)] {
            if let source { posix_spawn_file_actions_adddup2(&actions, source, target) }
        }
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let environmentList = environment ?? Self.currentEnvironment()
        let envp = environmentList.map { strdup($0) } + [nil]
        defer { envp.forEach { free($0) } }
        var pid: pid_t = 0
        let status = posix_spawnp(&pid, program, &actions, nil, argv, envp)
        guard status == 0 else {
            if status == ENOENT { throw CofferError(.notFound, "\(program): command not found") }
            throw CofferError(.io, "cannot run \(program): \(String(cString: strerror(status)))")
        }
        return pid
    }

    /// Waits for `pid` and returns its exit status (128 + signal when killed).
    static func wait(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            if errno != EINTR { return 127 }
        }
        let signal = status & 0x7f
        if signal == 0 { return (status >> 8) & 0xff }
        return 128 + signal
    }

    /// This process's environment as `NAME=value` strings.
    public static func currentEnvironment() -> [String] {
        var result: [String] = []
        var pointer = environ
        while let entry = pointer.pointee {
            result.append(String(cString: entry))
            pointer += 1
        }
        return result
    }
}
