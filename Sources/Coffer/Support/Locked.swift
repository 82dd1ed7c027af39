#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A value guarded by a mutex, with a condition variable to wait on: coffer's one lock.
///
/// The mutex and the condition live in memory allocated with the value (a `ManagedBuffer`), so their
/// addresses never move: a `pthread_mutex_t` stored as a property and passed as `&mutex` has no such
/// guarantee in Swift (the reason SwiftNIO's `NIOLock` is built this way).
///
/// It is `Sendable` only for a `Sendable` value: the lock orders access, but a value that is not safe to
/// hand to another thread stays unsafe behind it.
package final class Locked<Value> {
    private let storage: Storage

    /// A lock guarding `value`.
    package init(_ value: Value) {
        storage = Storage.create(minimumCapacity: 1) { _ in value } as! Storage
        storage.withUnsafeMutablePointers { _, primitives in
            primitives.initialize(to: Primitives())
            pthread_mutex_init(Self.mutex(primitives), nil)
            pthread_cond_init(Self.condition(primitives), nil)
        }
    }

    /// Runs `body` with the value while holding the lock.
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try storage.withUnsafeMutablePointers { value, primitives in
            pthread_mutex_lock(Self.mutex(primitives))
            defer { pthread_mutex_unlock(Self.mutex(primitives)) }
            return try body(&value.pointee)
        }
    }

    /// Waits, holding the lock between checks, until `ready` is true of the value, then runs `body` with
    /// it; other threads' ``withLock(_:)`` changes wake the waiters (they broadcast when done).
    package func withLock<Result>(
        waitingUntil ready: (Value) -> Bool, _ body: (inout Value) throws -> Result
    ) rethrows -> Result {
        try storage.withUnsafeMutablePointers { value, primitives in
            pthread_mutex_lock(Self.mutex(primitives))
            defer {
                pthread_cond_broadcast(Self.condition(primitives))
                pthread_mutex_unlock(Self.mutex(primitives))
            }
            while !ready(value.pointee) {
                pthread_cond_wait(Self.condition(primitives), Self.mutex(primitives))
            }
            return try body(&value.pointee)
        }
    }

    /// Runs `body` under the lock, then wakes every thread waiting in ``withLock(waitingUntil:_:)``.
    package func withLockAndSignal<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try storage.withUnsafeMutablePointers { value, primitives in
            pthread_mutex_lock(Self.mutex(primitives))
            defer {
                pthread_cond_broadcast(Self.condition(primitives))
                pthread_mutex_unlock(Self.mutex(primitives))
            }
            return try body(&value.pointee)
        }
    }

    /// The mutex and the condition, side by side in the buffer.
    private struct Primitives {
        var mutex = pthread_mutex_t()
        var condition = pthread_cond_t()
    }

    private final class Storage: ManagedBuffer<Value, Primitives> {
        deinit {
            withUnsafeMutablePointers { _, primitives in
                pthread_cond_destroy(Locked.condition(primitives))
                pthread_mutex_destroy(Locked.mutex(primitives))
                _ = primitives.deinitialize(count: 1)
            }
        }
    }

    private static func mutex(_ primitives: UnsafeMutablePointer<Primitives>) -> UnsafeMutablePointer<
        pthread_mutex_t
    > {
        UnsafeMutableRawPointer(primitives).advanced(by: MemoryLayout<Primitives>.offset(of: \.mutex)!)
            .assumingMemoryBound(to: pthread_mutex_t.self)
    }

    private static func condition(_ primitives: UnsafeMutablePointer<Primitives>)
        -> UnsafeMutablePointer<pthread_cond_t>
    {
        UnsafeMutableRawPointer(primitives).advanced(by: MemoryLayout<Primitives>.offset(of: \.condition)!)
            .assumingMemoryBound(to: pthread_cond_t.self)
    }
}

/// The mutex makes access to a `Sendable` value from many threads safe.
extension Locked: @unchecked Sendable where Value: Sendable {}
