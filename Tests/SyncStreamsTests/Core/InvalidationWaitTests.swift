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

/// When `invalidate()` waits, for what, and how: only for its own subscription's callback running on
/// another thread, never from inside a callback, never when asked not to, and asleep (no CPU) while it
/// waits.
@Suite(.offPool) struct InvalidationWaitTests {
    /// A callback that blocks until released, recording that it entered and that it returned.
    final class HeldCallback: Sendable {
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let returned = AtomicFlag()
        let calls = AtomicCounter()

        func run() {
            calls.increment()
            entered.signal()
            _ = release.waitWithDeadline()
            returned.set()
        }
    }

    @Test func invalidateFromAnotherThreadReallyWaitsForItsCallbackInFlightAndNoCallbackFollows() {
        let subject = PassthroughSubject<Int, Never>()
        let held = HeldCallback()
        let token = subject.subscribe { value in if value == 1 { held.run() } else { held.calls.increment() } }
        let sender = startThread {
            subject.send(1)
            subject.send(2)
        }
        #expect(held.entered.waitWithDeadline())
        let returnedEarly = AtomicFlag()
        let invalidator = startIdentifiedThread {
            token.invalidate()
            if !held.returned.isSet { returnedEarly.set() }
        }
        #expect(waitUntilWaiting(invalidator.thread), "invalidate() never started waiting")
        held.release.signal()
        #expect(invalidator.done.waitWithDeadline())
        #expect(sender.waitWithDeadline())
        #expect(!returnedEarly.isSet, "invalidate() returned while its callback was running")
        #expect(held.calls.value == 1, "a callback started after invalidate() returned")
    }

    @Test func invalidatingOneSubscriberDoesNotWaitBehindAnotherSubscribersCallback() {
        // X's callback blocks until the invalidating thread has finished invalidating Y: if invalidating Y
        // waited for X's callback (the whole event), the two would wait for each other.
        let subject = PassthroughSubject<Int, Never>()
        let yInvalidated = DispatchSemaphore(value: 0)
        let xEntered = DispatchSemaphore(value: 0)
        let xSawRelease = AtomicFlag()
        let yCalls = AtomicCounter()
        let tokenX = subject.subscribe { _ in
            xEntered.signal()
            if yInvalidated.waitWithDeadline() { xSawRelease.set() }
        }
        let tokenY = subject.subscribe { _ in yCalls.increment() }
        let sender = startThread { subject.send(1) }
        #expect(xEntered.waitWithDeadline())
        tokenY.invalidate()  // must return while X's callback still runs
        yInvalidated.signal()
        #expect(sender.waitWithDeadline())
        #expect(xSawRelease.isSet)
        #expect(yCalls.value == 0, "Y was called after its invalidate() returned")
        tokenX.invalidate()
    }

    @Test func twoCallbacksInvalidatingEachOthersSubscriptionsFromTwoThreadsDoNotDeadlock() {
        let subjectA = PassthroughSubject<Int, Never>()
        let subjectB = PassthroughSubject<Int, Never>()
        let tokenA = TokenSlot()
        let tokenB = TokenSlot()
        let aRunning = DispatchSemaphore(value: 0)
        let bRunning = DispatchSemaphore(value: 0)
        tokenA.token = subjectA.subscribe { _ in
            aRunning.signal()
            _ = bRunning.waitWithDeadline()  // both callbacks are running now
            tokenB.invalidate()  // from inside a callback: must not wait for B's callback
        }
        tokenB.token = subjectB.subscribe { _ in
            bRunning.signal()
            _ = aRunning.waitWithDeadline()
            tokenA.invalidate()
        }
        let first = startThread { subjectA.send(1) }
        let second = startThread { subjectB.send(1) }
        #expect(first.waitWithDeadline(), "the two invalidations waited for each other")
        #expect(second.waitWithDeadline(), "the two invalidations waited for each other")
        #expect(tokenA.token?.isInvalidated == true && tokenB.token?.isInvalidated == true)
    }

    @Test func invalidateWithoutWaitingReturnsWhileTheCallbackRunsAndStopsLaterDeliveries() {
        let subject = PassthroughSubject<Int, Never>()
        let held = HeldCallback()
        let token = subject.subscribe { value in if value == 1 { held.run() } else { held.calls.increment() } }
        let sender = startThread {
            subject.send(1)
            subject.send(2)
        }
        #expect(held.entered.waitWithDeadline())
        token.invalidate(waiting: false)
        #expect(!held.returned.isSet, "invalidate(waiting: false) waited for the callback")
        held.release.signal()
        #expect(sender.waitWithDeadline())
        #expect(held.calls.value == 1, "a delivery after invalidate(waiting: false) reached the subscriber")
    }

    @Test func invalidateFromInsideAnotherCallbackDoesNotWaitForACallbackOnAnotherThread() {
        let watched = PassthroughSubject<Int, Never>()
        let trigger = PassthroughSubject<Int, Never>()
        let held = HeldCallback()
        let token = watched.subscribe { _ in held.run() }
        let sender = startThread { watched.send(1) }
        #expect(held.entered.waitWithDeadline())
        let returnedWhileHeld = AtomicFlag()
        let triggerToken = trigger.subscribe { _ in
            token.invalidate()  // inside a callback of `trigger`: returns without waiting
            if !held.returned.isSet { returnedWhileHeld.set() }
        }
        trigger.send(1)
        #expect(returnedWhileHeld.isSet)
        held.release.signal()
        #expect(sender.waitWithDeadline())
        triggerToken.invalidate()
    }

    @Test func aWaitingInvalidateSleepsInsteadOfSpinning() throws {
        let subject = PassthroughSubject<Int, Never>()
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        // A slow callback: it runs until the test releases it, at least 50 ms after the invalidating thread
        // was seen waiting (a fixed 50 ms callback could end before a thread of a loaded machine started).
        let token = subject.subscribe { _ in
            entered.signal()
            _ = release.wait(timeout: .now() + threadDeadline)
        }
        let sender = startThread { subject.send(1) }
        #expect(entered.waitWithDeadline())
        let cpu = LockedBox<Duration>(.zero)
        let wakeups = LockedBox<Int>(0)
        let invalidator = startIdentifiedThread {
            let before = (threadCPUTime(), voluntaryContextSwitches())
            token.invalidate()
            cpu.value = threadCPUTime() - before.0
            wakeups.value = voluntaryContextSwitches() - before.1
        }
        #expect(waitUntilWaiting(invalidator.thread), "invalidate() never started waiting")
        Thread.sleep(forTimeInterval: 0.05)  // the callback goes on for 50 ms while invalidate() waits
        release.signal()
        #expect(invalidator.done.waitWithDeadline())
        #expect(sender.waitWithDeadline())
        // A spinning waiter burns most of those 50 ms of CPU; a polling one (sleep, yield) wakes up
        // hundreds of times; a parked one sleeps once or twice.
        #expect(cpu.value < .milliseconds(10), "the waiting thread used \(cpu.value) of CPU")
        #if os(Linux)
            #expect(wakeups.value < 20, "the waiting thread went to sleep \(wakeups.value) times")
        #endif
    }

    /// How many times the calling thread gave up the processor voluntarily (Linux; 0 elsewhere).
    func voluntaryContextSwitches() -> Int {
        #if os(Linux)
            var usage = rusage()
            getrusage(__rusage_who_t(1), &usage)  // RUSAGE_THREAD
            return usage.ru_nvcsw
        #else
            return 0
        #endif
    }

    /// The calling thread's CPU time.
    func threadCPUTime() -> Duration {
        var spec = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
        return .seconds(spec.tv_sec) + .nanoseconds(spec.tv_nsec)
    }

    @Test func releasingTheLastTokenReferenceWaitsLikeInvalidate() {
        let subject = PassthroughSubject<Int, Never>()
        let held = HeldCallback()
        let slot = TokenSlot()
        slot.token = subject.subscribe { value in if value == 1 { held.run() } else { held.calls.increment() } }
        let sender = startThread {
            subject.send(1)
            subject.send(2)
        }
        #expect(held.entered.waitWithDeadline())
        let returnedEarly = AtomicFlag()
        let releaser = startIdentifiedThread {
            slot.token = nil  // the last reference: deinit invalidates, waiting
            if !held.returned.isSet { returnedEarly.set() }
        }
        #expect(waitUntilWaiting(releaser.thread), "the token's deinit never started waiting")
        held.release.signal()
        #expect(releaser.done.waitWithDeadline())
        #expect(sender.waitWithDeadline())
        #expect(!returnedEarly.isSet)
        #expect(held.calls.value == 1)
    }
}
