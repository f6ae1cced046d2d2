import Dispatch
import Foundation
import Testing

@testable import SyncStreams

/// `invalidate()` keeps its promise — no callback of the subscription runs after it returns — however
/// many events the relay has delivered (issue 22, item 1).
@Suite struct InvalidateAtAnyAgeTests {
    /// A relay that has delivered 2^31 events since the last announced end of an event (here: since it
    /// was created; the test starts the serial there instead of delivering them) still makes a waiting
    /// `invalidate()` wait for its callback in flight. Before the fix the stale 32-bit announcement
    /// compared as "later" than the event in flight and the wait was skipped.
    @Test func invalidateWaitsForItsCallbackAfter2To31EventsWithoutAnAnnouncement() async {
        let failures = await onDedicatedThread { () -> [String] in
            var failures: [String] = []
            let subject = PassthroughSubject<Int, Never>()
            let held = BlockingCallback()
            let token = subject.subscribe { value in if value == 1 { held.run() } }
            subject.relay.update { _, delivery in delivery.serial = 0x8000_0010 }
            let sender = startThread { subject.send(1) }
            guard held.entered.waitWithDeadline() else { return ["the callback never started"] }
            let returnedWhileRunning = AtomicFlag()
            let invalidatorDone = AtomicFlag()
            let invalidatorThread = LockedBox<ThreadID?>(nil)
            let invalidator = startThread {
                invalidatorThread.value = ThreadID.current
                token.invalidate()
                if !held.returned.isSet { returnedWhileRunning.set() }
                invalidatorDone.set()
            }
            // Either the invalidator waits (correct) or it has already returned (the bug).
            if !eventually({
                invalidatorDone.isSet || (invalidatorThread.value.map(RelayWaitObserver.isWaiting) ?? false)
            }) {
                failures.append("invalidate() neither waited nor returned")
            }
            held.release.signal()
            if !invalidator.waitWithDeadline() { failures.append("invalidate() did not return") }
            if !sender.waitWithDeadline() { failures.append("send did not return") }
            if returnedWhileRunning.isSet { failures.append("invalidate() returned while its callback was running") }
            return failures
        }
        #expect(failures.isEmpty, "\(failures)")
    }
}
