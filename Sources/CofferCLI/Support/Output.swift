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

    /// Writes raw memory; a closed reader ends the output silently.
    func write(_ buffer: UnsafeRawBufferPointer) {
        try? SystemCall.writeAll(descriptor, buffer)
    }
}

/// Standard output.
let standardOutput = OutputStream.standardOutput
/// Standard error.
let standardError = OutputStream.standardError
