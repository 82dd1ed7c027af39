#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The system calls coffer makes on descriptors, in one place: interrupted calls (`EINTR`) are retried
/// here, whole buffers are read and written here, and what holds secrets is read into wiped memory.
///
/// Failures throw ``CofferError`` with the `errno` (``Errno``) and, when given, the path.
package enum SystemCall {
    /// Calls `call` again for as long as it fails with `EINTR`, and returns its last result.
    @inline(__always)
    package static func retrying<Result: BinaryInteger>(_ call: () -> Result) -> Result {
        while true {
            let result = call()
            if result >= 0 || errno != EINTR { return result }
        }
    }

    /// `open(2)`, retried on `EINTR`; the descriptor is close-on-exec.
    package static func open(_ path: String, _ flags: Int32, mode: mode_t = 0) throws -> Int32 {
        let descriptor = retrying { posixOpen(path, flags | O_CLOEXEC, mode) }
        guard descriptor >= 0 else { throw CofferError(.io, "cannot open", path: path, errno: errno) }
        return descriptor
    }

    /// Reads up to `buffer.count` bytes; 0 at the end.
    package static func read(
        _ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, path: String? = nil
    )
        throws -> Int
    {
        let count = retrying { posixRead(descriptor, buffer.baseAddress, buffer.count) }
        guard count >= 0 else { throw CofferError(.io, "cannot read", path: path, errno: errno) }
        return count
    }

    /// Reads up to `buffer.count` bytes at `offset` without moving the file position (`pread(2)`),
    /// going on after short reads; fewer bytes only at the end of the file.
    package static func read(
        _ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int, path: String? = nil
    ) throws -> Int {
        var total = 0
        while total < buffer.count {
            let count = retrying {
                pread(descriptor, buffer.baseAddress! + total, buffer.count - total, off_t(offset + total))
            }
            guard count >= 0 else { throw CofferError(.io, "cannot read", path: path, errno: errno) }
            if count == 0 { break }
            total += count
        }
        return total
    }

    /// Writes all of `bytes` (a reader that went away is an `EPIPE` error).
    package static func writeAll(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, path: String? = nil)
        throws
    {
        var offset = 0
        while offset < bytes.count {
            let count = retrying { posixWrite(descriptor, bytes.baseAddress! + offset, bytes.count - offset) }
            guard count > 0 else {
                throw CofferError(.io, "cannot write", path: path, errno: count < 0 ? errno : EIO)
            }
            offset += count
        }
    }

    /// Reads everything left on `descriptor`.
    package static func readAll(_ descriptor: Int32, path: String? = nil) throws -> [UInt8] {
        var result: [UInt8] = []
        var info = stat()
        if fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_size > 0 {
            result.reserveCapacity(Int(info.st_size))
        }
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = try chunk.withUnsafeMutableBytes { try read(descriptor, into: $0, path: path) }
            if count == 0 { return result }
            result.append(contentsOf: chunk[0..<count])
        }
    }

    /// Reads everything left on `descriptor` into wiped memory: every buffer the bytes pass through is
    /// overwritten before it is freed.
    package static func readAllSecret(_ descriptor: Int32, path: String? = nil) throws -> SecureBytes {
        let sink = SecureByteSink()
        var chunk = [UInt8](repeating: 0, count: 65536)
        defer { wipeMemory(&chunk, count: chunk.count) }
        while true {
            let count = try chunk.withUnsafeMutableBytes { try read(descriptor, into: $0, path: path) }
            if count == 0 { return sink.finish() }
            chunk.withUnsafeBytes { sink.append($0.baseAddress!, length: count) }
        }
    }

    /// `close(2)`; an `EINTR` is not retried (the descriptor is gone either way on Linux).
    package static func close(_ descriptor: Int32) {
        _ = posixClose(descriptor)
    }
}

// The C library's own functions, under names the enum's methods do not shadow.
@inline(__always) private func posixOpen(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 {
    open(path, flags, mode)
}
@inline(__always) private func posixRead(
    _ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int
) -> Int {
    read(descriptor, buffer, count)
}
@inline(__always) private func posixWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer?, _ count: Int)
    -> Int
{
    write(descriptor, buffer, count)
}
@inline(__always) private func posixClose(_ descriptor: Int32) -> Int32 {
    close(descriptor)
}
