import Coffer

/// An unbuffered output stream over a file descriptor.
///
/// Writes go straight to the descriptor, so text printed before a child process runs (git, grep, an
/// editor) always lands before what the child prints, as it does in pass's shell script.
struct OutputStream: Sendable {
    /// The descriptor written to.
    let descriptor: Int32

    /// Standard output.
    static let standardOutput = OutputStream(descriptor: 1)
    /// Standard error.
    static let standardError = OutputStream(descriptor: 2)

    /// Writes `text` as UTF-8.
    func write(_ text: String) {
        var text = text
        text.withUTF8 { write(UnsafeRawBufferPointer($0)) }
    }

    /// Writes `bytes` exactly.
    func write(bytes: [UInt8]) {
        bytes.withUnsafeBytes { write($0) }
    }

    /// Writes `text` and a newline.
    func line(_ text: String) {
        write(text + "\n")
    }

    /// Writes raw memory. A reader that went away ends the output silently (SIGPIPE, as for pass); any
    /// other failure (a full disk, a closed descriptor) is kept, and the command then exits 1 saying so
    /// (see ``OutputStream/failure``).
    func write(_ buffer: UnsafeRawBufferPointer) {
        do {
            try SystemCall.writeAll(descriptor, buffer)
        } catch {
            let number = (error as? CofferError)?.errno?.rawValue ?? EIO
            if descriptor == 1 && number != EPIPE { Self.failures.withLock { $0 = $0 ?? number } }
        }
    }

    private static let failures = Locked<Int32?>(nil)

    /// Why writing to standard output failed, when it did: the `errno` of the first failure.
    static var failure: Int32? { failures.withLock { $0 } }
}

/// Standard output.
let standardOutput = OutputStream.standardOutput
/// Standard error.
let standardError = OutputStream.standardError
