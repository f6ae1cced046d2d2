import Dispatch
import Foundation
import Testing

@testable import SyncStreams

/// Every path that calls a subscriber counts as "inside a stream callback", so `invalidate()` from it
/// never waits for another thread (issue 22, item 5), and a relay survives an executor that drops a job.
@Suite struct EveryDeliveryIsACallbackTests {
    /// Records, for each callback, whether the thread counted as inside a stream callback.
    final class ScopeRecorder: Sendable {
        let outside = LockedBox<[String]>([])
        let calls = AtomicCounter()

        func check(_ label: String) {
            calls.increment()
            if !CallbackScope.isInsideCallback { outside.mutate { $0.append(label) } }
        }

        func subscribe<S: SyncStream>(_ stream: S, _ name: String) -> SubscriptionToken {
            stream.subscribe(
                onValue: { _ in self.check("\(name) value") },
                onCompletion: { _ in self.check("\(name) completion") }
            )
        }
    }

    @Test func synchronousSourcesDeliverInsideACallbackScope() {
        let recorder = ScopeRecorder()
        var tokens: [SubscriptionToken] = []
        tokens.append(recorder.subscribe(Just(1), "Just"))
        tokens.append(recorder.subscribe(Empty<Int, Never>(), "Empty"))
        tokens.append(recorder.subscribe(Fail<Int, MarbleError>(error: MarbleError()), "Fail"))
        tokens.append(recorder.subscribe(Empty<Int, Never>().prepend(1, 2), "prepend"))
        tokens.append(recorder.subscribe(Just(1).prefix(0), "prefix(0)"))
        tokens.append(
            recorder.subscribe(combineLatest([] as [AnySyncStream<Int, Never>]), "combineLatest([])"))
        let custom = AnySyncStream<Int, Never> { onValue, onCompletion in
            onValue(1)
            onCompletion(.finished)
            return .empty
        }
        tokens.append(recorder.subscribe(custom, "custom AnySyncStream"))
        #expect(recorder.calls.value >= 12)
        #expect(recorder.outside.value == [], "delivered outside a callback scope")
        #expect(!CallbackScope.isInsideCallback, "the scope is left after each delivery")
        for token in tokens { token.invalidate() }
    }

    /// An executor that drops (releases without running) the first job it is given, then runs the
    /// others inline.
    final class DropFirstJobExecutor: StreamExecutor {
        let dropped = AtomicFlag()
        func execute(_ work: @escaping @Sendable () -> Void) {
            if dropped.isSet { work() } else { dropped.set() }
        }
        func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> ScheduledWork {
            execute(work)
            return ScheduledWork {}
        }
        var now: StreamInstant { .zero }
    }

    /// Before the fix the relay stayed "scheduled" forever once its job was dropped: nothing it received
    /// afterwards was delivered.
    @Test func aRelayWhoseJobWasDroppedDeliversAgainLater() {
        let executor = DropFirstJobExecutor()
        let subject = PassthroughSubject<Int, Never>()
        let values = LockedBox<[Int]>([])
        let token = subject.observe(on: executor).subscribe { value in values.mutate { $0.append(value) } }
        subject.send(1)
        #expect(executor.dropped.isSet)
        subject.send(2)
        #expect(values.value == [1, 2], "the relay recovered from the dropped job")
        token.invalidate()
    }
}
