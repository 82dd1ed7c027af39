#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Overwrites `count` bytes at `pointer` with zeros in a way the optimiser cannot remove.
///
/// Used for every buffer that held plaintext before the memory is given back.
@inline(never)
package func wipeMemory(_ pointer: UnsafeMutableRawPointer?, count: Int) {
    guard let pointer, count > 0 else { return }
    #if canImport(Glibc)
        explicit_bzero(pointer, count)
    #else
        _ = memset_s(pointer, count, 0, count)
    #endif
}

/// An immutable byte buffer for secrets: its memory is locked where possible and wiped when freed.
///
/// Plaintext decrypted by the crypto engine lives in a `SecureBytes`. Copies made with
/// ``bytes`` or ``string`` are ordinary Swift values and are not wiped; keep them short-lived.
public final class SecureBytes: @unchecked Sendable {
    private let storage: UnsafeMutableRawBufferPointer

    /// The number of bytes held.
    public var count: Int { storage.count }

    /// Whether the buffer holds no bytes.
    public var isEmpty: Bool { storage.isEmpty }

    /// Takes ownership of memory allocated with `UnsafeMutableRawBufferPointer.allocate`.
    init(adopting storage: UnsafeMutableRawBufferPointer) {
        self.storage = storage
    }

    /// Copies `bytes` into a new secure buffer.
    public convenience init<Bytes: Collection>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 16)
        let used = UnsafeMutableRawBufferPointer(start: buffer.baseAddress, count: bytes.count)
        used.copyBytes(from: bytes)
        self.init(adopting: used)
    }

    /// Copies the UTF-8 encoding of `string` into a new secure buffer.
    public convenience init(string: String) {
        self.init(Array(string.utf8))
    }

    deinit {
        wipeMemory(storage.baseAddress, count: storage.count)
        storage.deallocate()
    }

    /// Calls `body` with the bytes; the pointer must not escape the closure.
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result
    {
        try body(UnsafeRawBufferPointer(storage))
    }

    /// Hands the memory over to a new owner, leaving this buffer empty.
    fileprivate func takeStorage() -> UnsafeMutableRawBufferPointer {
        let taken = UnsafeMutableRawBufferPointer.allocate(byteCount: max(storage.count, 1), alignment: 16)
        taken.baseAddress!.copyMemory(from: storage.baseAddress!, byteCount: storage.count)
        return UnsafeMutableRawBufferPointer(start: taken.baseAddress, count: storage.count)
    }

    /// A copy of the bytes as an array (not wiped when freed).
    public var bytes: [UInt8] { Array(storage) }

    /// The bytes decoded as UTF-8, repairing invalid sequences (not wiped when freed).
    public var string: String { String(decoding: storage, as: UTF8.self) }

    /// Whether two buffers hold the same bytes, compared in constant time for equal lengths.
    public func constantTimeEquals(_ other: SecureBytes) -> Bool {
        guard count == other.count else { return false }
        var difference: UInt8 = 0
        for index in 0..<count { difference |= storage[index] ^ other.storage[index] }
        return difference == 0
    }
}

/// A growable byte buffer that wipes every allocation it gives up; it becomes a ``SecureBytes``.
package final class SecureByteSink {
    private var buffer: UnsafeMutableRawBufferPointer
    private(set) var count = 0

    /// An empty sink with room for `capacity` bytes before it grows.
    package init(capacity: Int = 4096) {
        buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(capacity, 16), alignment: 16)
    }

    deinit {
        wipeMemory(buffer.baseAddress, count: buffer.count)
        buffer.deallocate()
    }

    /// Appends `length` bytes from `source`.
    package func append(_ source: UnsafeRawPointer, length: Int) {
        if count + length > buffer.count {
            var capacity = buffer.count
            while capacity < count + length { capacity *= 2 }
            let grown = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 16)
            grown.baseAddress!.copyMemory(from: buffer.baseAddress!, byteCount: count)
            wipeMemory(buffer.baseAddress, count: buffer.count)
            buffer.deallocate()
            buffer = grown
        }
        (buffer.baseAddress! + count).copyMemory(from: source, byteCount: length)
        count += length
    }

    /// Moves the collected bytes into a ``SecureBytes`` and empties the sink.
    package func finish() -> SecureBytes {
        SecureBytes(adopting: finishStorage())
    }

    /// Moves the collected bytes into a new exact-size allocation for a ``SecureBytes`` to adopt.
    func finishStorage() -> UnsafeMutableRawBufferPointer {
        let result = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 1), alignment: 16)
        result.baseAddress!.copyMemory(from: buffer.baseAddress!, byteCount: count)
        wipeMemory(buffer.baseAddress, count: count)
        defer { count = 0 }
        return UnsafeMutableRawBufferPointer(start: result.baseAddress, count: count)
    }
}

extension SecureBytes {
    /// Reads a whole file into wiped-on-free memory (every intermediate buffer is wiped too).
    ///
    /// - Throws: ``CofferError/Code/io`` naming the path when it cannot be opened or read.
    public convenience init(contentsOfFile path: String) throws {
        let descriptor = try SystemCall.open(path, O_RDONLY)
        defer { SystemCall.close(descriptor) }
        let read = try SystemCall.readAllSecret(descriptor, path: path)
        self.init(adopting: read.takeStorage())
    }
}
