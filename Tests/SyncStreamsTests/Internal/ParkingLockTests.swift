import Dispatch
import Foundation
import TestSupport
import Testing

@testable import SyncStreams

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The relays' lock: mutual exclusion, and a contended waiter that sleeps.
@Suite(.offPool) struct ParkingLockTests {
    final class Shared: @unchecked Sendable {
        // @unchecked Sendable: `count` is only touched under `lock`.
        let lock = ParkingLock()
        var count = 0
    }

    @Test func fourThreadsIncrementingUnderTheLockLoseNothing() {
        let shared = Shared()
        let perThread = BuildFlavor.iterations(200_000, sanitized: 20_000)
        let finished = runOnThreads(4) { _ in
            for _ in 0..<perThread { shared.lock.withLock { shared.count += 1 } }
        }
        #expect(finished)
        #expect(shared.count == 4 * perThread)
    }

    @Test func aThreadWaitingForTheLockSleepsUntilItIsUnlocked() {
        let shared = Shared()
        shared.lock.lock()
        let cpu = LockedBox<Duration>(.zero)
        let acquired = AtomicFlag()
        let started = DispatchSemaphore(value: 0)
        let waiter = startThread {
            started.signal()
            let before = Self.threadCPUTime()
            shared.lock.lock()
            acquired.set()
            shared.lock.unlock()
            cpu.value = Self.threadCPUTime() - before
        }
        #expect(started.waitWithDeadline())
        // The waiter must be waiting before the hold counts: on Linux, wait until it registered as a
        // sleeper on the lock word (it spins and yields first), so the 50 ms below are spent asleep.
        #if !canImport(Darwin)
            let registered = Date().addingTimeInterval(20)
            while shared.lock.words[1].load(ordering: .relaxed) == 0 && Date() < registered {
                Thread.sleep(forTimeInterval: 0.001)
            }
            #expect(shared.lock.words[1].load(ordering: .relaxed) == 1, "the waiter never went to sleep")
        #endif
        Thread.sleep(forTimeInterval: 0.05)  // hold the lock 50 ms while the waiter waits for it
        #expect(!acquired.isSet, "the lock was taken while held")
        shared.lock.unlock()
        #expect(waiter.waitWithDeadline())
        #expect(acquired.isSet)
        // A spinning waiter burns the 50 ms; a sleeping one a brief spin and a few system calls.
        #expect(cpu.value < .milliseconds(10), "the waiter used \(cpu.value) of CPU")
    }

    static func threadCPUTime() -> Duration {
        var spec = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
        return .seconds(spec.tv_sec) + .nanoseconds(spec.tv_nsec)
    }
}
