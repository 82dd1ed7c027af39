import Coffer

/// The terminal settings to put back if a signal arrives while echo is off; read by the signal handler.
nonisolated(unsafe) private var echoRestore = termios()
/// Whether ``echoRestore`` holds settings to put back.
nonisolated(unsafe) private var echoRestorePending: sig_atomic_t = 0

/// Reading answers and secrets from standard input the way pass's bash `read` builtin does.
enum Terminal {
    /// Whether `descriptor` is a terminal (`[[ -t 0 ]]`).
    static func isTerminal(_ descriptor: Int32 = 0) -> Bool { isatty(descriptor) == 1 }

    /// Reads one line from standard input one byte at a time, so nothing after the line is consumed.
    ///
    /// Returns the line without its newline (NUL bytes dropped, as bash does) and whether a newline ended
    /// it; `nil` when standard input is already at its end.
    static func readLine() throws -> (line: SecureBytes, terminated: Bool)? {
        // The line grows in wiped memory: a growing array would free unwiped copies as it moves.
        let line = SecureByteSink(capacity: 256)
        var byte: UInt8 = 0
        defer { byte = 0 }
        var sawAnything = false
        while true {
            // A read error (standard input a folder, or closed) is not the end of the input.
            let count = try withUnsafeMutableBytes(of: &byte) { try SystemCall.read(0, into: $0) }
            if count == 0 { break }
            sawAnything = true
            if byte == UInt8(ascii: "\n") { return (line.finish(), true) }
            if byte != 0 { withUnsafeBytes(of: &byte) { line.append($0.baseAddress!, length: 1) } }
        }
        return sawAnything ? (line.finish(), false) : nil
    }

    /// Reads `what` twice without echo, as pass does for a password (`Enter WHAT for NAME: `, then
    /// `Retype WHAT for NAME: `, a newline after each), and returns it when both are the same.
    ///
    /// - Throws: exit status 1 when a read fails; `Error: the entered PLURAL do not match.` when the two
    ///   differ.
    static func readConfirmed(_ what: String, _ plural: String, for name: String) throws -> SecureBytes {
        let first = bashRead(prompt: "Enter \(what) for \(name): ", hidden: true)
        guard first.succeeded else { throw Exit(1) }
        standardOutput.write("\n")
        let second = bashRead(prompt: "Retype \(what) for \(name): ", hidden: true)
        guard second.succeeded else { throw Exit(1) }
        standardOutput.write("\n")
        guard first.value.constantTimeEquals(second.value) else {
            throw Exit.die("Error: the entered \(plural) do not match.")
        }
        return first.value
    }

    /// bash's `read -r [-s] -p PROMPT var`: the prompt on standard error only when standard input is a
    /// terminal, the line with leading and trailing blanks removed, and `nil` when `read` fails (end of
    /// input before a newline; pass then often exits).
    ///
    /// With `hidden`, echo is off while reading (on a terminal) and is restored even on Ctrl-C.
    /// With `lineEditing` (`read -e`), the bracketed-paste switches readline writes around the line on a
    /// capable terminal are written too.
    static func bashRead(prompt: String, hidden: Bool = false, lineEditing: Bool = false) -> (
        value: SecureBytes, succeeded: Bool, failure: (any Error)?
    ) {
        let interactive = isTerminal(0)
        let term = getenv("TERM").map { String(cString: $0) } ?? ""
        let bracketedPaste = lineEditing && interactive && !term.isEmpty && term != "dumb"
        if bracketedPaste { standardError.write("\u{1b}[?2004h") }
        defer { if bracketedPaste { standardError.write("\u{1b}[?2004l\r") } }
        if interactive { standardError.write(prompt) }
        var saved = termios()
        let echoOff = hidden && interactive && tcgetattr(0, &saved) == 0
        if echoOff {
            var quiet = saved
            quiet.c_lflag &= ~tcflag_t(ECHO)
            echoRestore = saved
            echoRestorePending = 1
            installRestoreHandlers()
            tcsetattr(0, TCSAFLUSH, &quiet)
        }
        let result: (line: SecureBytes, terminated: Bool)?
        var failure: (any Error)?
        do {
            result = try readLine()
        } catch {
            result = nil
            failure = error
        }
        if echoOff {
            tcsetattr(0, TCSAFLUSH, &saved)
            echoRestorePending = 0
        }
        guard let result else { return (SecureBytes([]), false, failure) }
        return (trimBlanks(result.line), result.terminated, nil)
    }

    /// pass's `yesno`: yes without asking when standard input is not a terminal; otherwise asks
    /// `PROMPT [y/N] ` and exits 1 unless the answer is `y` or `Y`.
    static func confirm(_ prompt: String) throws {
        guard isTerminal(0) else { return }
        let answer = bashRead(prompt: prompt + " [y/N] ").value.bytes
        guard answer == [UInt8(ascii: "y")] || answer == [UInt8(ascii: "Y")] else { throw Exit(1) }
    }

    /// Removes leading and trailing spaces, tabs and newlines, as `read` does with the default `IFS`.
    static func trimBlanks(_ value: SecureBytes) -> SecureBytes {
        value.withUnsafeBytes { bytes in
            let isBlank = { (byte: UInt8) in
                byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\n")
            }
            var start = 0
            var end = bytes.count
            while start < end && isBlank(bytes[start]) { start += 1 }
            while end > start && isBlank(bytes[end - 1]) { end -= 1 }
            return SecureBytes(bytes[start..<end])
        }
    }

    private static func installRestoreHandlers() {
        for signalNumber in [SIGINT, SIGTERM, SIGHUP, SIGQUIT] {
            // A signal ignored by whoever started us stays ignored, as it does in a shell.
            let previous = signal(signalNumber, restoreEchoAndRaise)
            if let previous, unsafeBitCast(previous, to: Int.self) == 1 { signal(signalNumber, SIG_IGN) }
        }
    }
}

/// Puts the terminal back, then lets the signal do what it would have done.
private func restoreEchoAndRaise(_ signalNumber: Int32) {
    if echoRestorePending != 0 {
        tcsetattr(0, TCSAFLUSH, &echoRestore)
        echoRestorePending = 0
    }
    signal(signalNumber, SIG_DFL)
    raise(signalNumber)
}
