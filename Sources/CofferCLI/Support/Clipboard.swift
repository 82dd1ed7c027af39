import Coffer

/// pass's `clip`: puts a secret on the Wayland (`wl-copy`) or X11 (`xclip`) clipboard and, in a detached
/// process, puts back what was there before after `PASSWORD_STORE_CLIP_TIME` seconds, unless the clipboard
/// changed meanwhile.
///
/// The secret reaches the tools on standard input and the restorer through a pipe, never in arguments or
/// the environment. The restorer runs under pass's process title, `password store sleep on display D`,
/// so that a later copy by coffer or by pass ends it early (it then restores at once, as pass's does).
enum Clipboard {
    /// The copy and paste commands of the display in use.
    struct Tool {
        var copy: [String]
        var paste: [String]
        var display: String

        /// The restorer's process title.
        var sleeperTitle: String { "password store sleep on display \(display)" }
    }

    /// The tool pass would use, or pass's error when there is no display.
    static func tool(_ invocation: Invocation) throws -> Tool {
        let selection = invocation.xSelection
        if let wayland = invocation.environment["WAYLAND_DISPLAY"], !wayland.isEmpty {
            let primary = selection == "primary" ? ["--primary"] : []
            return Tool(copy: ["wl-copy"] + primary, paste: ["wl-paste", "-n"] + primary, display: wayland)
        }
        if let display = invocation.environment["DISPLAY"], !display.isEmpty {
            return Tool(
                copy: ["xclip", "-selection", selection], paste: ["xclip", "-o", "-selection", selection],
                display: display)
        }
        throw Exit.die("Error: No X11 or Wayland display detected")
    }

    /// Copies `secret`, starts the restorer and prints pass's message.
    static func copy(_ secret: SecureBytes, name: String, _ invocation: Invocation) throws {
        let tool = try tool(invocation)
        // A restorer still waiting puts its clipboard back at once when told; only then is the clipboard
        // the one to restore after this copy (pass waits half a second; a busy machine may need more).
        let stopped = stopSleepers(titled: tool.sleeperTitle)
        if !stopped.isEmpty {
            usleep(500_000)
            waitForExit(stopped, seconds: 5)
        }
        let before = (try? ChildProcess(tool.paste).run())?.standardOutput ?? []
        guard try put(secret, with: tool.copy, program: invocation.program) else {
            throw Exit.die("Error: Could not copy data to the clipboard")
        }
        try ClipboardRestorer.start(
            tool: tool, clipTime: invocation.clipTime, before: SecureBytes(before), copied: secret)
        standardOutput.line("Copied \(name) to clipboard. Will clear in \(invocation.clipTime) seconds.")
    }

    /// Runs a copy command with `contents` on standard input and returns whether it succeeded.
    ///
    /// The tools leave a server process behind that keeps the descriptors it was given, so standard
    /// output goes to `/dev/null` and standard error is read only until the command itself exits: a
    /// caller reading coffer's output through a pipe is never kept waiting for the clipboard owner.
    @discardableResult
    static func put(_ contents: SecureBytes, with command: [String], program: String, quiet: Bool = false)
        throws
        -> Bool
    {
        guard let input = try? ChildProcess.makePipe() else { return false }
        guard let errors = try? ChildProcess.makePipe() else {
            SystemCall.close(input.read)
            SystemCall.close(input.write)
            return false
        }
        let pid: pid_t
        do {
            pid = try ChildProcess(command).spawn(
                input: .descriptor(input.read), output: .null,
                error: quiet ? .null : .descriptor(errors.write))
        } catch let error as CofferError {
            for descriptor in [input.read, input.write, errors.read, errors.write] {
                SystemCall.close(descriptor)
            }
            if !quiet { standardError.line("\(program): \(error.message)") }
            return false
        }
        SystemCall.close(input.read)
        SystemCall.close(errors.write)
        ChildProcess.feed(input.write, contents)
        let status = ChildProcess.wait(pid)
        // The tool has exited; its server may hold the pipe open, so only what is there now is read.
        _ = fcntl(errors.read, F_SETFL, fcntl(errors.read, F_GETFL) | O_NONBLOCK)
        let message = (try? SystemCall.readAll(errors.read)) ?? []
        SystemCall.close(errors.read)
        standardError.write(bytes: message)
        return status.isSuccess
    }

    /// Waits until none of `processes` runs any more, at most `seconds`.
    static func waitForExit(_ processes: [pid_t], seconds: Double) {
        let deadline = ChildProcess.monotonicSeconds() + seconds
        while processes.contains(where: { kill($0, 0) == 0 || errno == EPERM }),
            ChildProcess.monotonicSeconds() < deadline
        {
            usleep(20_000)
        }
    }

    /// Ends processes whose command line starts with `title` (pass's `pkill -f "^TITLE"`); returns those
    /// it told to end.
    static func stopSleepers(titled title: String) -> [pid_t] {
        guard let names = try? FileSystem.contents(of: "/proc", sorted: false) else { return [] }
        let own = getpid()
        let wanted = Array(title.utf8)
        var found: [pid_t] = []
        for name in names {
            guard let pid = pid_t(name), pid != own else { continue }
            let descriptor = open("/proc/\(name)/cmdline", O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: wanted.count + 1)
            let count = read(descriptor, &buffer, buffer.count)
            close(descriptor)
            guard count >= wanted.count else { continue }
            let line = buffer[0..<wanted.count].map { $0 == 0 ? UInt8(ascii: " ") : $0 }
            if line == wanted && kill(pid, SIGTERM) == 0 { found.append(pid) }
        }
        return found
    }
}

/// The detached process that puts the previous clipboard back: coffer started again with pass's sleeper
/// title as its name, reading the tool, the delay, the previous contents and the copied secret from a pipe.
enum ClipboardRestorer {
    private static let marker = "--coffer-restore-clipboard"
    private static let titlePrefix = "password store sleep on display "

    /// Whether this process was started as the restorer.
    static func isRestoreInvocation(_ arguments: [String]) -> Bool {
        arguments.count == 2 && arguments[1] == marker && arguments[0].hasPrefix(titlePrefix)
    }

    /// Starts the restorer in a session of its own and hands it everything through its standard input.
    static func start(tool: Clipboard.Tool, clipTime: String, before: SecureBytes, copied: SecureBytes) throws
    {
        guard let input = try? ChildProcess.makePipe() else { return }
        var restorer = ChildProcess(.path(ownExecutable), arguments: [marker])
        restorer.argument0 = tool.sleeperTitle
        restorer.newSession = true
        // SIGTERM means "restore now": held until the restorer has its handler.
        restorer.blockedSignals = [SIGTERM]
        do {
            _ = try restorer.spawn(input: .descriptor(input.read), output: .null, error: .null)
        } catch {
            SystemCall.close(input.read)
            SystemCall.close(input.write)
            return
        }
        SystemCall.close(input.read)
        var payload: [UInt8] = []
        defer { wipeMemory(&payload, count: payload.count) }
        for field in [
            Array(clipTime.utf8), Array(tool.copy.joined(separator: "\0").utf8),
            Array(tool.paste.joined(separator: "\0").utf8), before.bytes, copied.bytes,
        ] {
            var length = UInt32(field.count).bigEndian
            withUnsafeBytes(of: &length) { payload += $0 }
            payload += field
        }
        ChildProcess.feed(input.write, SecureBytes(payload))
    }

    /// Set by SIGTERM: stop waiting and restore now.
    nonisolated(unsafe) private static var interrupted: sig_atomic_t = 0

    /// The restorer's life: wait, then restore unless the clipboard changed meanwhile.
    static func run() -> Int32 {
        // Started with SIGTERM blocked: a SIGTERM that came early is taken now, as "restore at once".
        signal(SIGTERM) { _ in ClipboardRestorer.interrupted = 1 }
        var terminate = sigset_t()
        sigemptyset(&terminate)
        sigaddset(&terminate, SIGTERM)
        sigprocmask(SIG_UNBLOCK, &terminate, nil)
        guard let secret = try? SystemCall.readAllSecret(0) else { return 1 }
        SystemCall.close(0)
        var payload = secret.bytes
        defer { wipeMemory(&payload, count: payload.count) }
        var fields: [[UInt8]] = []
        var offset = 0
        while offset + 4 <= payload.count {
            let length = payload[offset..<(offset + 4)].reduce(0) { $0 << 8 | Int($1) }
            offset += 4
            guard offset + length <= payload.count else { return 1 }
            fields.append(Array(payload[offset..<(offset + length)]))
            offset += length
        }
        guard fields.count == 5 else { return 1 }
        let copy = String(decoding: fields[1], as: UTF8.self).split(separator: "\0").map(String.init)
        let paste = String(decoding: fields[2], as: UTF8.self).split(separator: "\0").map(String.init)
        var before = SecureBytes(fields[3])
        let copied = SecureBytes(fields[4])
        // Read the delay before the fields are wiped.
        var remaining = seconds(String(decoding: fields[0], as: UTF8.self))
        for index in fields.indices { wipeMemory(&fields[index], count: fields[index].count) }

        while remaining > 0 && interrupted == 0 {
            let step = min(remaining, 0.25)
            usleep(useconds_t(step * 1_000_000))
            remaining -= step
        }
        signal(SIGTERM, SIG_DFL)
        let now = SecureBytes((try? ChildProcess(paste).run())?.standardOutput ?? [])
        if !now.constantTimeEquals(copied) { before = now }
        _ = try? ChildProcess([
            "qdbus", "org.kde.klipper", "/klipper", "org.kde.klipper.klipper.clearClipboardHistory",
        ])
        .run()
        _ = try? Clipboard.put(before, with: copy, program: "", quiet: true)
        return 0
    }

    /// The delay as GNU `sleep` reads it (a number with an optional `s`, `m`, `h` or `d`); 0 when invalid,
    /// as `sleep` then fails at once.
    static func seconds(_ text: String) -> Double {
        var number = Substring(text)
        var scale = 1.0
        switch number.last {
        case "s": number = number.dropLast()
        case "m": (number, scale) = (number.dropLast(), 60)
        case "h": (number, scale) = (number.dropLast(), 3600)
        case "d": (number, scale) = (number.dropLast(), 86400)
        default: break
        }
        guard let value = Double(number), value >= 0, value.isFinite else { return 0 }
        return value * scale
    }
}
