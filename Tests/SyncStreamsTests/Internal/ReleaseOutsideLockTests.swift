import Dispatch
import Foundation
import TestSupport
import Testing

@testable import SyncStreams

/// No user code runs under a relay's lock: releasing a value (whose deinit is user code) happens after
/// unlocking. Each test releases a value whose deinit touches the same stream; done under the lock, that
/// would deadlock (the lock is not recursive), so each runs on a thread with a deadline.
@Suite(.offPool) struct ReleaseOutsideLockTests {
    /// A value whose deinit runs `onDeinit`.
    final class Tripwire: Sendable {
        let onDeinit: @Sendable () -> Void
        init(_ onDeinit: @escaping @Sendable () -> Void) { self.onDeinit = onDeinit }
        deinit { onDeinit() }
    }

    @Test func aCurrentValueSubjectReleasesTheReplacedValueOutsideItsLock() {
        let subject = CurrentValueSubject<Tripwire?, Never>(nil)
        let deinitRan = AtomicFlag()
        let done = startThread {
            subject.send(
                Tripwire {
                    _ = subject.value; deinitRan.set()
                })
            subject.send(nil)  // releases the tripwire: its deinit reads the subject
        }
        #expect(done.waitWithDeadline(), "the replaced value was released under the lock")
        #expect(deinitRan.isSet)
    }

    @Test func shareReleasesAValueEvictedFromTheReplayBufferOutsideItsLock() {
        let upstream = PassthroughSubject<Tripwire, Never>()
        let shared = upstream.share(replay: 1)
        let deinitRan = AtomicFlag()
        let token = shared.subscribe { _ in }
        let done = startThread {
            upstream.send(
                Tripwire {
                    // Touches the connection's relay: a late subscriber joins (replay read under its lock).
                    shared.subscribe { _ in }.invalidate()
                    deinitRan.set()
                })
            upstream.send(Tripwire {})  // evicts the first one
        }
        #expect(done.waitWithDeadline(), "the evicted value was released under the lock")
        #expect(deinitRan.isSet)
        token.invalidate()
    }

    @Test func observeOnLatestReleasesAConflatedValueOutsideItsLock() {
        let executor = TestExecutor()
        let subject = PassthroughSubject<Tripwire, Never>()
        let slot = TokenSlot()
        slot.token = subject.observe(on: executor, buffering: .latest).subscribe { _ in }
        let deinitRan = AtomicFlag()
        let done = startThread {
            // The first value waits for the executor; the second replaces it (conflation), and the
            // replaced one's deinit reaches the same relay (invalidating its subscription takes its lock).
            subject.send(
                Tripwire {
                    slot.token?.invalidate(waiting: false)
                    deinitRan.set()
                })
            subject.send(Tripwire {})
        }
        let finished = done.waitWithDeadline()
        #expect(finished, "the conflated value was released under the lock")
        #expect(deinitRan.isSet)
        if finished { executor.run() }  // (a deadlocked relay would hang the executor too)
    }

    @Test func switchToLatestEndsTheReplacedInnerSubscriptionOutsideItsLock() {
        let outer = PassthroughSubject<AnySyncStream<Int, Never>, Never>()
        let first = PassthroughSubject<Int, Never>()
        let cancelRan = AtomicFlag()
        let token = outer.switchToLatest().subscribe { _ in }
        let done = startThread {
            // The first inner's cancellation sends a new inner stream into the outer subject, which goes
            // through the switchToLatest's lock: ending the replaced inner under that lock would deadlock.
            outer.send(
                AnySyncStream { onValue, onCompletion in
                    let inner = first.subscribe(onValue: onValue, onCompletion: onCompletion)
                    return SubscriptionToken {
                        inner.invalidate()
                        if !cancelRan.isSet {
                            cancelRan.set()
                            outer.send(PassthroughSubject<Int, Never>().eraseToAnyStream())
                        }
                    }
                })
            outer.send(PassthroughSubject<Int, Never>().eraseToAnyStream())
        }
        #expect(done.waitWithDeadline(), "the replaced inner was ended under the lock")
        #expect(cancelRan.isSet)
        token.invalidate()
    }
}
