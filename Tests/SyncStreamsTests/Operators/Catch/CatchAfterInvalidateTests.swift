import Dispatch
import Foundation
import Testing

@testable import SyncStreams

/// `catch` never subscribes to the replacement after `invalidate()` returned (issue 22, item 7).
@Suite struct CatchAfterInvalidateTests {
    /// The upstream fails on one thread; while its failure callback is in `catch`'s handler, another
    /// thread invalidates. Before the fix `invalidate()` returned at once and the replacement was
    /// subscribed to afterwards; now `invalidate()` waits for the upstream's failure callback (which
    /// subscribes and, seeing the invalidation, ends the replacement at once) before it returns.
    @Test func theReplacementIsNotSubscribedToAfterInvalidateReturned() async {
        let failures = await onDedicatedThread { () -> [String] in
            var failures: [String] = []
            let upstream = PassthroughSubject<Int, MarbleError>()
            let handlerEntered = DispatchSemaphore(value: 0)
            let handlerRelease = DispatchSemaphore(value: 0)
            let invalidateReturned = AtomicFlag()
            let subscribedLate = AtomicFlag()
            let replacement = AnySyncStream<Int, Never> { _, _ in
                if invalidateReturned.isSet { subscribedLate.set() }
                return SubscriptionToken(onInvalidate: {})
            }
            let token = upstream.catch { _ -> AnySyncStream<Int, Never> in
                handlerEntered.signal()
                _ = handlerRelease.waitWithDeadline()
                return replacement
            }
            .subscribe { _ in }
            let failing = startThread { upstream.send(completion: .failure(MarbleError())) }
            guard handlerEntered.waitWithDeadline() else { return ["the handler never ran"] }
            let invalidatorThread = LockedBox<ThreadID?>(nil)
            let invalidator = startThread {
                invalidatorThread.value = ThreadID.current
                token.invalidate()
                invalidateReturned.set()
            }
            if !eventually({
                invalidateReturned.isSet || (invalidatorThread.value.map(RelayWaitObserver.isWaiting) ?? false)
            }) {
                failures.append("invalidate() neither waited nor returned")
            }
            handlerRelease.signal()
            if !invalidator.waitWithDeadline() { failures.append("invalidate() did not return") }
            if !failing.waitWithDeadline() { failures.append("the failing send did not return") }
            if subscribedLate.isSet { failures.append("the replacement was subscribed to after invalidate() returned") }
            return failures
        }
        #expect(failures.isEmpty, "\(failures)")
    }
}
