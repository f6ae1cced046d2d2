import Dispatch
import Foundation
import SyncStreams

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// P9 (two threads sending into one subject) and P10 (what an `invalidate()` that waits costs its thread),
/// for SyncStreams; OpenCombine's P9 is in OpenCombineScenarios.swift.
public enum ContentionScenarios {
    public static let all: [Scenario] = [
        Scenario(
            id: "P9", title: "two threads sending into one subject, one subscriber, until all arrived",
            library: "SyncStreams", unit: "value", count: Sizes.p9Values, run: { twoSenders($0) }),
        Scenario(
            id: "P10", title: "invalidate() while a 1 ms callback runs on another thread: the waiter's CPU time",
            library: "SyncStreams", unit: "invalidate (CPU ns)", count: Sizes.p10Invalidations,
            metric: .reportedByRun, run: { invalidateWhileCallbackRuns($0) }),
    ]

    /// Runs `body` on two new threads (`body(0)`, `body(1)`) and waits for both.
    public static func onTwoThreads(_ body: @escaping @Sendable (Int) -> Void) {
        let group = DispatchGroup()
        for index in 0..<2 {
            group.enter()
            Thread {
                body(index)
                group.leave()
            }.start()
        }
        group.wait()
    }

    @inline(never)
    public static func twoSenders(_ count: Int) -> Int {
        let subject = PassthroughSubject<Int, Never>()
        let accumulator = Accumulator()
        let done = DispatchSemaphore(value: 0)
        let token = subject.subscribe { value in
            accumulator.add(value)
            if accumulator.count == count { done.signal() }
        }
        onTwoThreads { index in
            for value in stride(from: index, to: count, by: 2) { subject.send(value) }
        }
        done.wait()  // deliveries handed on to a global queue may still be running
        token.invalidate()
        return accumulator.total
    }

    /// The calling thread's CPU time in nanoseconds.
    static func threadCPUNanoseconds() -> Int {
        var spec = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
        return spec.tv_sec * 1_000_000_000 + spec.tv_nsec
    }

    /// Returns the CPU nanoseconds the invalidating thread spent in `count` invalidations, each made while
    /// the subscription's 1 ms callback runs on another thread (so each one waits about 1 ms).
    @inline(never)
    public static func invalidateWhileCallbackRuns(_ count: Int) -> Int {
        var cpu = 0
        for _ in 0..<count {
            let subject = PassthroughSubject<Int, Never>()
            let entered = DispatchSemaphore(value: 0)
            let token = subject.subscribe { _ in
                entered.signal()
                usleep(1_000)
            }
            let sender = DispatchSemaphore(value: 0)
            Thread {
                subject.send(1)
                sender.signal()
            }.start()
            entered.wait()
            let before = threadCPUNanoseconds()
            token.invalidate()
            cpu += threadCPUNanoseconds() - before
            sender.wait()
        }
        return cpu
    }
}
