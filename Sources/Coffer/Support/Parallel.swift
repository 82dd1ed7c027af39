#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs independent work on several threads and hands the results back in input order.
///
/// Workers take items in order and run ahead of the consumer by at most a window of items, so memory
/// stays bounded whatever the number of items, and no worker waits for a slow neighbour: `consume` sees
/// results in the order of `items`, one at a time, on the calling thread, while the workers go on.
package enum Parallel {
    /// The number of workers: the online processors (`COFFER_JOBS` overrides), at least 1.
    package static var workerCount: Int {
        if let value = configuredJobs { return value }
        return max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
    }

    /// `COFFER_JOBS`, when it is a positive number.
    private static var configuredJobs: Int? {
        environmentValue("COFFER_JOBS").flatMap(Int.init).flatMap { $0 > 0 ? $0 : nil }
    }

    /// Transforms every item on `workers` threads; `consume` gets `(index, result)` in order.
    ///
    /// At most `window` (by default four per worker) results are finished or in progress beyond the one
    /// `consume` waits for. Errors thrown by `transform` are handed to `consume` as failed results; an
    /// error thrown by `consume` stops the workers (items already started finish) and is rethrown.
    package static func forEach<Item: Sendable, Output>(
        _ items: [Item], workers: Int = workerCount, window: Int? = nil,
        transform: @escaping @Sendable (Item) throws -> Output,
        consume: (Int, Result<Output, any Error>) throws -> Void
    ) throws {
        if workers <= 1 || items.count <= 1 {
            for index in items.indices { try consume(index, Result { try transform(items[index]) }) }
            return
        }
        let state = Pipeline<Output>(count: items.count, window: max(1, window ?? workers * 4))
        // Threads of their own, not Dispatch's pool: a caller already on a pool thread must not wait for
        // workers that the pool never starts.
        var threads: [WorkerThread] = []
        defer {
            state.stop()
            for thread in threads { thread.join() }
        }
        for _ in 0..<min(workers, items.count) {
            threads.append(
                try WorkerThread {
                    while let index = state.nextIndex() {
                        state.finish(index, Result { try transform(items[index]) })
                    }
                })
        }
        for index in items.indices { try consume(index, state.take(index)) }
    }

    /// Runs `work` on a thread of its own and returns its result, without blocking the caller's thread or
    /// any thread of Swift's cooperative pool while it waits (gpg and git run as child processes).
    package static func offload<Output: Sendable>(
        _ work: @escaping @Sendable () throws -> Output
    ) async throws -> Output {
        try await withCheckedThrowingContinuation { continuation in
            do {
                try WorkerThread { continuation.resume(with: Result { try work() }) }.detach()
            } catch {
                continuation.resume(throwing: error)
            }
        }
    }

    /// A POSIX thread running one closure, joined by ``join()`` or left to finish by ``detach()``.
    private final class WorkerThread {
        #if canImport(Darwin)
            private var thread: pthread_t?
        #else
            private var thread = pthread_t()
        #endif
        private var joined = false

        init(_ body: @escaping @Sendable () -> Void) throws {
            let context = Unmanaged.passRetained(Box(body)).toOpaque()
            #if canImport(Darwin)
                let start: @convention(c) (UnsafeMutableRawPointer) -> UnsafeMutableRawPointer? = { context in
                    Unmanaged<Box>.fromOpaque(context).takeRetainedValue().body()
                    return nil
                }
            #else
                let start: @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? = {
                    context in
                    Unmanaged<Box>.fromOpaque(context!).takeRetainedValue().body()
                    return nil
                }
            #endif
            let status = pthread_create(&thread, nil, start, context)
            guard status == 0 else {
                Unmanaged<Box>.fromOpaque(context).release()
                throw CofferError(.io, "cannot start a worker thread: \(String(cString: strerror(status)))")
            }
        }

        /// Lets the thread finish on its own; its resources are freed when it ends.
        func detach() {
            guard !joined else { return }
            joined = true
            #if canImport(Darwin)
                if let thread { pthread_detach(thread) }
            #else
                pthread_detach(thread)
            #endif
        }

        func join() {
            guard !joined else { return }
            joined = true
            #if canImport(Darwin)
                if let thread { pthread_join(thread, nil) }
            #else
                pthread_join(thread, nil)
            #endif
        }

        private final class Box {
            let body: @Sendable () -> Void
            init(_ body: @escaping @Sendable () -> Void) { self.body = body }
        }
    }

    /// The shared state of one run: the next item to start, the finished results, and how far the
    /// consumer has got.
    ///
    /// Unchecked: an `Output` need not be `Sendable`. Each result is made by one worker, stored under
    /// the lock, and taken once by the consumer under the lock; no two threads use one at the same time.
    private final class Pipeline<Output>: @unchecked Sendable {
        private struct State {
            var results: [Result<Output, any Error>?]
            var next = 0
            var consumed = 0
            var stopped = false
        }

        private let state: Locked<State>
        private let window: Int

        init(count: Int, window: Int) {
            state = Locked(State(results: Array(repeating: nil, count: count)))
            self.window = window
        }

        /// The next item for a worker, once it is within the window; `nil` when there is none left.
        func nextIndex() -> Int? {
            let window = self.window
            return state.withLock(waitingUntil: {
                $0.stopped || $0.next >= $0.results.count || $0.next <= $0.consumed + window
            }) { state in
                guard !state.stopped && state.next < state.results.count else { return nil }
                state.next += 1
                return state.next - 1
            }
        }

        func finish(_ index: Int, _ result: Result<Output, any Error>) {
            state.withLockAndSignal { $0.results[index] = result }
        }

        /// Waits for item `index`'s result and hands it over, letting the workers move on.
        func take(_ index: Int) -> Result<Output, any Error> {
            state.withLock(waitingUntil: { $0.results[index] != nil }) { state in
                let result = state.results[index]!
                state.results[index] = nil
                state.consumed = index + 1
                return result
            }
        }

        /// Tells the workers to start nothing more.
        func stop() {
            state.withLockAndSignal { $0.stopped = true }
        }
    }
}
