import Dispatch
import Foundation
import Testing

@testable import SyncStreams

/// Operators never run user code while holding their relay's lock (issue 22, item 3): user code that
/// re-enters the operator would deadlock (Linux) or abort (Darwin). Each suspect call runs on a thread
/// of its own with a deadline, so a deadlock fails the test instead of hanging it.
@Suite struct NoUserCodeUnderRelayLockTests {
    /// The inner stream finishes; its subscription is released, which runs the custom source's
    /// `onInvalidate`, which ends the `switchToLatest` subscription (re-entering the operator). Before the
    /// fix the inner link was dropped under the operator's lock, so this deadlocked.
    @Test func switchToLatestReleasesAFinishedInnerSubscriptionOutsideItsLock() async {
        let failures = await onDedicatedThread { () -> [String] in
            var failures: [String] = []
            let outer = PassthroughSubject<AnySyncStream<Int, Never>, Never>()
            let innerSubject = PassthroughSubject<Int, Never>()
            let downstream = LockedBox<SubscriptionToken?>(nil)
            let onInvalidateRan = AtomicFlag()
            let inner = AnySyncStream<Int, Never> { onValue, onCompletion in
                let token = innerSubject.subscribe(onValue: onValue, onCompletion: onCompletion)
                return SubscriptionToken {
                    token.invalidate()
                    onInvalidateRan.set()
                    // User code that re-enters the operator.
                    downstream.value?.invalidate()
                }
            }
            let values = LockedBox<[Int]>([])
            downstream.value = outer.switchToLatest().subscribe { value in values.mutate { $0.append(value) } }
            outer.send(inner)
            innerSubject.send(1)
            if !returnsWithin(seconds: 10, { innerSubject.send(completion: .finished) }) {
                failures.append("finishing the inner stream deadlocked (user code ran under the relay's lock)")
                return failures
            }
            if !onInvalidateRan.isSet { failures.append("the finished inner subscription was not released") }
            if values.value != [1] { failures.append("values: \(values.value)") }
            return failures
        }
        #expect(failures.isEmpty, "\(failures)")
    }

    /// `timeout`'s `customError()` sends into the upstream (re-entering the operator). Before the fix it
    /// ran under the operator's lock, so the timer deadlocked; now it runs outside, the value sent after
    /// the timeout is dropped and the failure ends the stream.
    @Test func timeoutRunsCustomErrorOutsideItsLock() async {
        let failures = await onDedicatedThread { () -> [String] in
            var failures: [String] = []
            let executor = TestExecutor()
            let upstream = PassthroughSubject<Int, MarbleError>()
            let stream = upstream.timeout(.seconds(1), on: executor) {
                upstream.send(99)
                return MarbleError(name: "timeout")
            }
            let values = LockedBox<[Int]>([])
            let completion = LockedBox<StreamCompletion<MarbleError>?>(nil)
            let token = stream.subscribe(
                onValue: { value in values.mutate { $0.append(value) } },
                onCompletion: { end in completion.value = end }
            )
            upstream.send(1)
            if !returnsWithin(seconds: 10, { executor.advance(by: .seconds(2)) }) {
                failures.append("the timeout deadlocked (customError ran under the relay's lock)")
                keepAliveAfterDeadlock(token)
                return failures
            }
            if values.value != [1] { failures.append("values: \(values.value)") }
            if completion.value != .failure(MarbleError(name: "timeout")) {
                failures.append("completion: \(String(describing: completion.value))")
            }
            token.invalidate()
            return failures
        }
        #expect(failures.isEmpty, "\(failures)")
    }
}
