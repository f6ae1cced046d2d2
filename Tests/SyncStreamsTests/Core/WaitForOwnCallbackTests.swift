import Dispatch
import Foundation
import Testing

@testable import SyncStreams

/// A waiting `invalidate()` waits for its own subscriber's callback only — also when the subscriber list
/// was compacted meanwhile, so that the index it waited at is another subscriber's in the next event
/// (issue 22, item 2).
@Suite struct WaitForOwnCallbackTests {
    /// A is subscriber 0 of event 1 (of three). Its invalidator registers, checks that A's callback runs,
    /// and is held (test hook) just before it sleeps. A's callback ends, A leaves the list, and event 2
    /// starts with B at index 0; B's callback waits for the invalidator to return. Released, the
    /// invalidator must see that the drain moved past A and return — before the fix it slept on the
    /// index word, which held 0 again, until B's callback ended: a waiter behind another subscriber's
    /// callback, which waits for it (a deadlock, broken here only by B's deadline).
    @Test func aWaiterDoesNotSleepBehindTheSubscriberThatTookItsIndex() async {
        let failures = await onDedicatedThread { () -> [String] in
            var failures: [String] = []
            let subject = PassthroughSubject<Int, Never>()
            let heldA = BlockingCallback()
            let bEntered = DispatchSemaphore(value: 0)
            let invalidateReturned = AtomicFlag()
            let bSawInvalidateReturn = AtomicFlag()
            let tokenA = subject.subscribe { value in if value == 1 { heldA.run() } }
            let tokenB = subject.subscribe { value in
                guard value == 2 else { return }
                bEntered.signal()
                let deadline = Date(timeIntervalSinceNow: 10)
                while !invalidateReturned.isSet && Date() < deadline { Thread.sleep(forTimeInterval: 0.001) }
                if invalidateReturned.isSet { bSawInvalidateReturn.set() }
            }
            let tokenC = subject.subscribe { _ in }

            let waiterThread = LockedBox<ThreadID?>(nil)
            let hookEntered = DispatchSemaphore(value: 0)
            let hookRelease = DispatchSemaphore(value: 0)
            let hookFired = AtomicFlag()
            RelayWaitObserver.sleepHook.withLock { hook in
                hook = { thread in
                    guard thread == waiterThread.value, !hookFired.isSet else { return }
                    hookFired.set()
                    hookEntered.signal()
                    _ = hookRelease.waitWithDeadline()
                }
            }
            defer { RelayWaitObserver.sleepHook.withLock { $0 = nil } }

            let sendSecond = DispatchSemaphore(value: 0)
            let sender = startThread {
                subject.send(1)
                _ = sendSecond.waitWithDeadline()
                subject.send(2)
            }
            guard heldA.entered.waitWithDeadline() else { return ["A's callback never started"] }
            let waiter = startThread {
                waiterThread.value = ThreadID.current
                tokenA.invalidate()
                invalidateReturned.set()
            }
            guard hookEntered.waitWithDeadline() else {
                heldA.release.signal()
                return ["the invalidator never got ready to sleep on A's position"]
            }
            heldA.release.signal()
            sendSecond.signal()
            if !bEntered.waitWithDeadline() { failures.append("B's callback never started") }
            hookRelease.signal()
            if !waiter.waitWithDeadline() { failures.append("invalidate() did not return") }
            if !sender.waitWithDeadline() { failures.append("the sender did not finish") }
            if !bSawInvalidateReturn.isSet {
                failures.append("invalidate() of A waited behind B's callback (B's deadline passed first)")
            }
            tokenB.invalidate()
            tokenC.invalidate()
            return failures
        }
        #expect(failures.isEmpty, "\(failures)")
    }
}
