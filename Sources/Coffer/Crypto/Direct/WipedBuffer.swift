#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A fixed-capacity byte buffer for key material and plaintext on its way through the direct
/// decryption: it never grows (so no copy is left behind in freed memory) and is wiped when freed.
final class WipedBuffer {
    private let storage: UnsafeMutableRawBufferPointer
    /// The bytes written so far.
    private(set) var count = 0

    /// Allocates room for `capacity` bytes.
    init(capacity: Int) {
        storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(capacity, 1), alignment: 16)
    }

    deinit {
        wipeMemory(storage.baseAddress, count: storage.count)
        storage.deallocate()
    }

    /// The room left.
    var available: Int { storage.count - count }

    /// Appends `bytes`; returns `false` (and appends nothing) when they do not fit.
    @discardableResult
    func append(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard bytes.count <= available else { return false }
        if let source = bytes.baseAddress, !bytes.isEmpty {
            (storage.baseAddress! + count).copyMemory(from: source, byteCount: bytes.count)
        }
        count += bytes.count
        return true
    }

    /// Appends one byte; returns `false` when it does not fit.
    @discardableResult
    func append(_ byte: UInt8) -> Bool {
        guard available > 0 else { return false }
        storage[count] = byte
        count += 1
        return true
    }

    /// Marks `length` bytes after the current end as written (after a C function filled them through
    /// ``unusedSpace``).
    func extend(by length: Int) {
        precondition(length >= 0 && length <= available)
        count += length
    }

    /// The room after the written bytes, for C functions that write in place.
    var unusedSpace: UnsafeMutableRawBufferPointer {
        UnsafeMutableRawBufferPointer(rebasing: storage[count...])
    }

    /// Drops `length` bytes from the end.
    func removeLast(_ length: Int) {
        precondition(length >= 0 && length <= count)
        wipeMemory(storage.baseAddress! + count - length, count: length)
        count -= length
    }

    /// The written bytes; the pointer must not escape.
    func withBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(UnsafeRawBufferPointer(rebasing: storage[..<count]))
    }

    /// The written bytes, writable; the pointer must not escape.
    func withMutableBytes<Result>(_ body: (UnsafeMutableRawBufferPointer) throws -> Result) rethrows -> Result
    {
        try body(UnsafeMutableRawBufferPointer(rebasing: storage[..<count]))
    }
}
