import Dispatch

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs independent work on several threads and hands the results back in input order.
///
/// Work goes in windows of a few items per worker, so memory stays bounded whatever the number of
/// items, and `consume` sees results in the order of `items`, one at a time, on the calling thread.
public enum Parallel {
    /// The number of workers: the online processors (`COFFER_JOBS` overrides), at least 1.
    public static var workerCount: Int {
        if let value = environmentValue("COFFER_JOBS").flatMap(Int.init), value > 0 { return value }
        return max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
    }

    /// Transforms every item on `workers` threads; `consume` gets `(index, result)` in order.
    ///
    /// Errors thrown by `transform` are handed to `consume` as failed results; an error thrown by
    /// `consume` stops the run after the current window.
    public static func forEach<Item: Sendable, Output>(
        _ items: [Item], workers: Int = workerCount, window: Int? = nil,
        transform: @Sendable (Item) throws -> Output,
        consume: (Int, Result<Output, any Error>) throws -> Void
    ) throws {
        let windowSize = max(1, window ?? workers * 4)
        var start = 0
        while start < items.count {
            let end = min(start + windowSize, items.count)
            let slots = ResultSlots<Output>(count: end - start)
            let base = start
            if workers <= 1 || end - start == 1 {
                for index in base..<end { slots.set(index - base, Result { try transform(items[index]) }) }
            } else {
                DispatchQueue.concurrentPerform(iterations: end - start) { offset in
                    slots.set(offset, Result { try transform(items[base + offset]) })
                }
            }
            for offset in 0..<(end - start) { try consume(base + offset, slots.take(offset)) }
            start = end
        }
    }

    /// One result slot per item of a window; each slot is written by exactly one worker.
    private final class ResultSlots<Output>: @unchecked Sendable {
        private var slots: [Result<Output, any Error>?]
        private var mutex = pthread_mutex_t()

        init(count: Int) {
            slots = Array(repeating: nil, count: count)
            pthread_mutex_init(&mutex, nil)
        }

        deinit { pthread_mutex_destroy(&mutex) }

        func set(_ index: Int, _ result: Result<Output, any Error>) {
            pthread_mutex_lock(&mutex)
            slots[index] = result
            pthread_mutex_unlock(&mutex)
        }

        func take(_ index: Int) -> Result<Output, any Error> {
            pthread_mutex_lock(&mutex)
            defer {
                slots[index] = nil
                pthread_mutex_unlock(&mutex)
            }
            return slots[index]!
        }
    }
}

extension PasswordStore {
    /// Decrypts `names` on several threads and calls `body` with each, in the order of `names`.
    ///
    /// At most a few entries per worker are held in memory at once. A name that fails to decrypt is
    /// given to `body` as a failure; throw from `body` to stop.
    public func decryptEach(
        _ names: [String], body: (String, Result<SecureBytes, any Error>) throws -> Void
    ) throws {
        let store = self
        try Parallel.forEach(names, transform: { try store.read($0) }) { index, result in
            try body(names[index], result)
        }
    }
}
