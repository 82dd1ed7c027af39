import CofferTestSupport
import Testing

@testable import Coffer

@Suite("Parallel: ordered results from several threads")
struct ParallelTests {
    /// Counts the transforms running at once and the most ever seen.
    final class Gauge: Sendable {
        private let state = Locked<(running: Int, most: Int, started: [Int])>((0, 0, []))

        func enter(_ index: Int) {
            state.withLock { state in
                state.running += 1
                state.most = max(state.most, state.running)
                state.started.append(index)
            }
        }

        func leave() { state.withLock { $0.running -= 1 } }

        var most: Int { state.withLock { $0.most } }
        var running: Int { state.withLock { $0.running } }
        var startedCount: Int { state.withLock { $0.started.count } }
    }

    @Test func resultsComeInOrderWhateverTheFinishingOrder() throws {
        let gauge = Gauge()
        var seen: [Int] = []
        // Early items take longest, so later ones finish first.
        try Parallel.forEach(Array(0..<40), workers: 4) { item in
            gauge.enter(item)
            usleep(UInt32((40 - item) * 200))
            gauge.leave()
            return item * item
        } consume: { index, result in
            let value = try result.get()
            #expect(value == index * index)
            seen.append(index)
        }
        #expect(seen == Array(0..<40))
        #expect(gauge.most > 1, "the work never ran on two threads at once")
        #expect(gauge.most <= 4)
    }

    @Test func workersStayWithinTheWindow() throws {
        let gauge = Gauge()
        try Parallel.forEach(Array(0..<30), workers: 3, window: 2) { item in
            gauge.enter(item)
            gauge.leave()
            return item
        } consume: { index, _ in
            // While item `index` is consumed, the next one and `window` more may have started, never more.
            usleep(2000)
            #expect(gauge.startedCount <= index + 2 + 2)
        }
        #expect(gauge.startedCount == 30)
    }

    @Test func transformErrorsArriveAsFailuresAndConsumeErrorsStopTheRun() throws {
        struct Odd: Error {}
        struct Enough: Error {}
        let gauge = Gauge()
        var failures = 0
        #expect(throws: Enough.self) {
            try Parallel.forEach(Array(0..<1000), workers: 2, window: 4) { item in
                gauge.enter(item)
                defer { gauge.leave() }
                if item % 2 == 1 { throw Odd() }
                return item
            } consume: { index, result in
                if case .failure(let error) = result {
                    #expect(error is Odd)
                    failures += 1
                }
                if index == 9 { throw Enough() }
            }
        }
        #expect(failures == 5)
        // The run stopped near where consume threw, and no worker is still running.
        #expect(gauge.startedCount <= 15)
        #expect(gauge.running == 0)
    }

    @Test func oneWorkerRunsOnTheCallingThread() throws {
        let caller = pthread_self()
        var count = 0
        try Parallel.forEach(Array(0..<5), workers: 1) { _ in
            pthread_equal(pthread_self(), caller) != 0
        } consume: {
            _, result in
            let onCaller = try result.get()
            #expect(onCaller)
            count += 1
        }
        #expect(count == 5)
    }
}
