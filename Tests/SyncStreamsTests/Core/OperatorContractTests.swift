import Dispatch
import Foundation
import TestSupport
import Testing

@testable import SyncStreams

/// The stream contract, checked for every relay-backed operator: no callback after `invalidate()`
/// returns, serialized delivery under concurrent sends (nothing lost where the operator keeps every
/// value), re-entrancy, and release of everything at cancellation.
@Suite(.offPool) struct OperatorContractTests {
    /// An operator applied to a subject of integers.
    struct OperatorCase: Sendable, CustomTestStringConvertible {
        let name: String
        /// Whether every upstream value comes out (as itself).
        let keepsEveryValue: Bool
        /// Whether the subscription is made asynchronously (values sent before it are not seen).
        let subscribesLater: Bool
        let make: @Sendable (PassthroughSubject<Int, Never>) -> AnySyncStream<Int, Never>

        init(
            _ name: String, keepsEveryValue: Bool = true, subscribesLater: Bool = false,
            _ make: @escaping @Sendable (PassthroughSubject<Int, Never>) -> AnySyncStream<Int, Never>
        ) {
            self.name = name
            self.keepsEveryValue = keepsEveryValue
            self.subscribesLater = subscribesLater
            self.make = make
        }

        var testDescription: String { name }
    }

    static let queue = DispatchQueue(label: "OperatorContractTests")
    /// One serial queue for every subscribe(on:) subscription: a probe subscribed after the subscription
    /// under test is attached after it, so a value the probe sees was sent to both.
    static let subscribeQueue = DispatchQueue(label: "OperatorContractTests.subscribeOn")

    static let cases: [OperatorCase] = [
        OperatorCase("combineLatest") {
            $0.combineLatest(CurrentValueSubject<Int, Never>(0)).map { $0.0 }.eraseToAnyStream()
        },
        OperatorCase("merge") { $0.merge(with: PassthroughSubject<Int, Never>()).eraseToAnyStream() },
        OperatorCase("switchToLatest") { subject in
            CurrentValueSubject<AnySyncStream<Int, Never>, Never>(subject.eraseToAnyStream()).switchToLatest()
                .eraseToAnyStream()
        },
        OperatorCase("share") { $0.share().eraseToAnyStream() },
        OperatorCase("share(replay:)") { $0.share(replay: 3).eraseToAnyStream() },
        OperatorCase("catch") { subject in
            AnySyncStream<Int, StreamTestError> { onValue, onCompletion in
                subject.subscribe(onValue: onValue, onCompletion: { _ in onCompletion(.finished) })
            }
            .catch { _ in PassthroughSubject<Int, Never>() }.eraseToAnyStream()
        },
        OperatorCase("zip") { $0.zip($0).map { $0.0 }.eraseToAnyStream() },
        OperatorCase("subscribe(on:)", subscribesLater: true) {
            $0.subscribe(on: subscribeQueue).eraseToAnyStream()
        },
        OperatorCase("observe(on:)") { $0.observe(on: queue).eraseToAnyStream() },
        OperatorCase("observe(on:, .latest)", keepsEveryValue: false) {
            $0.observe(on: queue, buffering: .latest).eraseToAnyStream()
        },
        OperatorCase("throttle", keepsEveryValue: false) {
            $0.throttle(for: .zero, on: queue, latest: true).eraseToAnyStream()
        },
        OperatorCase("debounce", keepsEveryValue: false) { $0.debounce(for: .zero, on: queue).eraseToAnyStream() },
        OperatorCase("timeout") { $0.timeout(.seconds(3_600), on: queue).eraseToAnyStream() },
        OperatorCase("delay") { $0.delay(for: .zero, on: queue).eraseToAnyStream() },
    ]

    /// Sends until the subscription sees a value, for operators that subscribe asynchronously.
    func waitUntilSubscribed(_ subject: PassthroughSubject<Int, Never>, received: AtomicCounter) -> Bool {
        eventually {
            subject.send(-1)
            return received.value > 0
        }
    }

    @Test(arguments: cases)
    func noCallbackStartsAfterInvalidateReturns(_ operatorCase: OperatorCase) {
        var violations = 0
        for _ in 0..<10 {
            let subject = PassthroughSubject<Int, Never>()
            let invalidated = AtomicFlag()
            let stop = AtomicFlag()
            let received = AtomicCounter()
            let inside = AtomicCounter()
            let late = AtomicCounter()
            let token = operatorCase.make(subject).subscribe { _ in
                inside.increment()
                if invalidated.isSet { late.increment() }
                received.increment()
                for _ in 0..<200 where !stop.isSet {}  // stay inside a while
                inside.decrement()
            }
            let sender = startThread {
                // A 50 µs pause every 64 sends: without any gap, debounce's timer is reset by each value and
                // may go seconds without firing on a loaded machine.
                var sent = 0
                while !stop.isSet {
                    subject.send(1)
                    sent += 1
                    if sent % 64 == 0 { usleep(50) }
                }
            }
            #expect(eventually { received.value >= 20 }, "no values arrived")
            token.invalidate()
            if inside.value != 0 { violations += 1 }
            invalidated.set()
            // Keep sending a little longer, so that a late callback would be observed.
            for _ in 0..<20_000 where late.value == 0 { _ = stop.isSet }
            stop.set()
            #expect(sender.waitWithDeadline())
            violations += late.value
        }
        #expect(violations == 0, "a callback ran after invalidate() returned")
    }

    @Test(arguments: cases)
    func concurrentSendsAreDeliveredSerializedAndNothingIsLost(_ operatorCase: OperatorCase) {
        let subject = PassthroughSubject<Int, Never>()
        let overlap = OverlapDetector()
        let received = AtomicCounter()
        let token = operatorCase.make(subject).subscribe { value in
            overlap.enter()
            if value >= 0 { received.increment() }
            overlap.exit()
        }
        if operatorCase.subscribesLater {
            let probes = AtomicCounter()
            let probe = operatorCase.make(subject).subscribe { _ in probes.increment() }
            #expect(waitUntilSubscribed(subject, received: probes))  // and so is the subscription under test
            probe.invalidate()
        }
        let senders = 4
        let perSender = 2_000
        let finished = runOnThreads(senders) { _ in
            for value in 0..<perSender { subject.send(value) }
        }
        #expect(finished)
        if operatorCase.keepsEveryValue && !operatorCase.subscribesLater {
            #expect(eventually { received.value == senders * perSender }, "\(received.value) delivered")
        } else {
            #expect(eventually { received.value > 0 })
        }
        Self.queue.sync {}
        #expect(overlap.overlapCount == 0, "callbacks overlapped")
        token.invalidate()
    }

    @Test(arguments: cases)
    func aCallbackMayInvalidateItsOwnSubscriptionAndNothingFollows(_ operatorCase: OperatorCase) {
        let subject = PassthroughSubject<Int, Never>()
        let slot = TokenSlot()
        let calls = AtomicCounter()
        slot.token = operatorCase.make(subject).subscribe { _ in
            calls.increment()
            slot.invalidate()
        }
        if operatorCase.subscribesLater {
            #expect(waitUntilSubscribed(subject, received: calls))
        } else {
            subject.send(1)
            #expect(eventually { calls.value > 0 })
        }
        for value in 2...50 { subject.send(value) }
        Self.queue.sync {}  // deliveries already queued on the executor have run
        #expect(calls.value == 1, "values arrived after the callback invalidated its subscription")
    }

    @Test(arguments: cases)
    func aCallbackMaySendIntoItsUpstreamWithoutDeadlock(_ operatorCase: OperatorCase) {
        let subject = PassthroughSubject<Int, Never>()
        let received = LockedBox<[Int]>([])
        let token = operatorCase.make(subject).subscribe { value in
            received.mutate { $0.append(value) }
            if value >= 0, value < 100 { subject.send(value + 100) }  // re-entrant send
        }
        if operatorCase.subscribesLater {
            let probes = AtomicCounter()
            let probe = operatorCase.make(subject).subscribe { _ in probes.increment() }
            #expect(waitUntilSubscribed(subject, received: probes))
            probe.invalidate()
            #expect(eventually { !received.value.isEmpty })
        }
        let done = startThread { subject.send(1) }
        #expect(done.waitWithDeadline(), "a re-entrant send deadlocked")
        if operatorCase.keepsEveryValue {
            #expect(eventually { received.value.contains(101) }, "the re-entrant value was lost: \(received.value)")
        }
        token.invalidate()
    }

    @Test(arguments: cases)
    func invalidationReleasesEverythingTheSubscriptionCaptured(_ operatorCase: OperatorCase) {
        let subject = PassthroughSubject<Int, Never>()
        let probe = LifetimeProbe()
        var token: SubscriptionToken? = probe.capture { canary in
            operatorCase.make(subject).subscribe(
                onValue: { _ in canary.touch() }, onCompletion: { _ in canary.touch() })
        }
        subject.send(1)
        #expect(probe.isAlive, "released while subscribed")
        token?.invalidate()
        token = nil
        // Work already queued on an executor may hold the subscription until it runs.
        Self.queue.sync {}
        #expect(eventually { !probe.isAlive }, "the subscription's captures were not released")
        #expect(eventually { !subject.hasSubscribers }, "the upstream subscription was not ended")
    }
}
