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

    #if !canImport(Darwin)
        /// Locks and unlocks `count` times on the calling thread.
        static func take(_ lock: borrowing ParkingLock, times count: Int) {
            for _ in 0..<count {
                lock.lock()
                lock.unlock()
            }
        }

        @Test(.enabled(if: AsymmetricFence.isHeavyBarrierAvailable, "no membarrier here: locks are never biased"))
        func aLockTakenOverAndOverByOneThreadIsBiasedToIt() {
            let shared = Shared()
            let serial = LockedBox<UInt64>(0)
            let before = LockedBox<UInt64?>(nil)
            let done = startThread {
                serial.value = ParkingLock.currentThreadSerial
                Self.take(shared.lock, times: Int(BiasWatch.threshold) - 1)
                before.value = shared.lock.biasOwner
                Self.take(shared.lock, times: 1)
            }
            #expect(done.waitWithDeadline())
            #expect(before.value == nil, "biased before the threshold")
            #expect(shared.lock.biasOwner == serial.value, "not biased to the thread that took it every time")
            // Another thread's lock revokes it for good.
            Self.take(shared.lock, times: 1)
            #expect(shared.lock.biasOwner == 1)
            Self.take(shared.lock, times: Int(BiasWatch.threshold) * 2)
            #expect(shared.lock.biasOwner == 1, "biased again after a revocation")
        }

        @Test(.enabled(if: AsymmetricFence.isHeavyBarrierAvailable, "no membarrier here: locks are never biased"))
        func aRevokerWaitsUntilTheOwnerLeavesItsBiasedSection() throws {
            let shared = Shared()
            let owner = StepThread()
            owner.run { Self.take(shared.lock, times: Int(BiasWatch.threshold)) }
            let ownerSerial = shared.lock.biasOwner ?? 0
            try #require(ownerSerial > 1, "not biased to the owner thread")
            owner.run { shared.lock.lock() }  // held through the bias from here on
            let acquired = AtomicFlag()
            let insideBefore = BiasRevocationObserver.ownerInsideCount.load(ordering: .relaxed)
            let revoker = startThread {
                shared.lock.lock()
                acquired.set()
                shared.lock.unlock()
            }
            // The revoker saw the owner inside and waits for it: a broken lock would have let it in by now.
            #expect(
                eventually { BiasRevocationObserver.ownerInsideCount.load(ordering: .relaxed) > insideBefore },
                "timed out waiting for the revoker to find the owner inside")
            #expect(shared.lock.biasOwner == 1, "the bias was not revoked")
            #expect(!acquired.isSet, "the revoker took the lock while the owner held it through the bias")
            owner.run { shared.lock.unlock() }
            #expect(revoker.waitWithDeadline(), "the revoker never got the lock after the owner left")
            #expect(acquired.isSet)
            owner.stop()
        }

        @Test(.enabled(if: AsymmetricFence.isHeavyBarrierAvailable, "no membarrier here: locks are never biased"))
        func anOwnerAndARevokerRacingLoseNoIncrement() {
            let rounds = BuildFlavor.iterations(200, sanitized: 40)
            let perThread = BuildFlavor.iterations(20_000, sanitized: 2_000)
            for _ in 0..<rounds {
                let shared = Shared()
                let biased = DispatchSemaphore(value: 0)
                let finished = runOnThreads(2) { index in
                    if index == 0 {
                        Self.take(shared.lock, times: Int(BiasWatch.threshold))
                        biased.signal()
                    } else {
                        _ = biased.wait(timeout: .now() + threadDeadline)
                    }
                    for _ in 0..<perThread { shared.lock.withLock { shared.count += 1 } }
                }
                #expect(finished)
                #expect(shared.lock.biasOwner == 1, "two threads took the lock, and it is still biased")
                #expect(shared.count == 2 * perThread)
                if shared.count != 2 * perThread { return }
            }
        }

        @Test(.enabled(if: AsymmetricFence.isHeavyBarrierAvailable, "no membarrier here: locks are never biased"))
        func aLockWhoseTakerKeepsChangingIsNeverBiased() {
            let shared = Shared()
            let other = StepThread()
            var changes = 0
            while shared.lock.biasOwner == nil && changes < 100 {
                Self.take(shared.lock, times: 3)
                other.run { Self.take(shared.lock, times: 3) }
                changes += 2
            }
            other.stop()
            #expect(shared.lock.biasOwner == 1, "still watching after \(changes) changes of taker")
            #expect(changes <= Int(BiasWatch.maximumChanges) + 2, "gave up only after \(changes) changes")
        }
    #endif

    static func threadCPUTime() -> Duration {
        var spec = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
        return .seconds(spec.tv_sec) + .nanoseconds(spec.tv_nsec)
    }
}
