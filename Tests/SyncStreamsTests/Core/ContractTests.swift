import Dispatch
import SyncStreams
import TestSupport
import Testing

/// The contract of DESIGN §2 that every stream keeps: serialized in-order delivery under concurrent senders,
/// no callback after `invalidate()` returns, safe re-entrancy, and release of everything on invalidation and
/// completion. Concurrency tests use real threads, joined with generous deadlines, and assert no timing.
@Suite(.offPool) struct ContractTests {
    // MARK: - Serialized, in-order delivery under concurrent senders

    /// A value tagged with its sender and its index in that sender's sequence.
    private struct Tagged: Sendable, Equatable {
        let sender: Int
        let index: Int
    }

    /// Checks one subscriber's view: callbacks never overlap, each sender's values arrive in order, none lost.
    private final class OrderChecker: Sendable {
        let overlap = OverlapDetector()
        private let state: LockedBox<(next: [Int], outOfOrder: Int, count: Int)>

        init(senders: Int) { state = LockedBox((Array(repeating: 0, count: senders), 0, 0)) }

        func receive(_ value: Tagged) {
            overlap.enter()
            state.mutate { state in
                if state.next[value.sender] != value.index { state.outOfOrder += 1 }
                state.next[value.sender] = value.index + 1
                state.count += 1
            }
            overlap.exit()
        }

        var next: [Int] { state.value.next }
        var outOfOrder: Int { state.value.outOfOrder }
        var count: Int { state.value.count }
    }

    @Test func concurrentSendersAreSerializedInOrderAndNothingIsLost() {
        let senders = 4
        let perSender = BuildFlavor.iterations(10_000, sanitized: 2_000)
        let subject = PassthroughSubject<Tagged, Never>()
        let checkers = (0..<3).map { _ in OrderChecker(senders: senders) }
        let tokens = checkers.map { checker in subject.subscribe { checker.receive($0) } }
        let finished = runOnThreads(senders) { sender in
            for index in 0..<perSender { subject.send(Tagged(sender: sender, index: index)) }
        }
        #expect(finished)
        for checker in checkers {
            // The last values may still be delivered by a drain handed on to a global queue.
            #expect(eventually { checker.count == senders * perSender }, "values were lost")
            #expect(checker.overlap.overlapCount == 0, "callbacks to one subscriber overlapped")
            #expect(checker.outOfOrder == 0, "a sender's values arrived out of order")
            #expect(checker.count == senders * perSender, "values were lost or duplicated")
            #expect(checker.next == Array(repeating: perSender, count: senders))
        }
        for token in tokens { token.invalidate() }
    }

    @Test func concurrentSendersThroughAnOperatorChainAreSerializedInOrder() {
        let senders = 4
        let perSender = 5_000
        let subject = PassthroughSubject<Tagged, Never>()
        let checker = OrderChecker(senders: senders)
        let counts = LockedBox<[Int]>([])
        let chain =
            subject
            .map { $0 }
            .filter { _ in true }
            .handleEvents(receiveOutput: { _ in })
            .scan(Tagged(sender: 0, index: -1)) { _, value in value }
            .removeDuplicates(by: { _, _ in false })
            .prefix(senders * perSender)
        let token = chain.subscribe(
            onValue: { checker.receive($0) },
            onCompletion: { _ in counts.mutate { $0.append(checker.count) } }
        )
        let finished = runOnThreads(senders) { sender in
            for index in 0..<perSender { subject.send(Tagged(sender: sender, index: index)) }
        }
        #expect(finished)
        #expect(eventually { counts.value.count == 1 }, "prefix did not complete")
        #expect(checker.overlap.overlapCount == 0)
        #expect(checker.outOfOrder == 0)
        #expect(checker.count == senders * perSender)
        #expect(counts.value == [senders * perSender], "prefix completes once, after its last value")
        token.invalidate()
    }

    @Test func concurrentSendersIntoACurrentValueSubjectAreSerializedInOrder() {
        let senders = 4
        let perSender = 5_000
        let subject = CurrentValueSubject<Tagged, Never>(Tagged(sender: 0, index: -1))
        let checker = OrderChecker(senders: senders)
        let token = subject.filter { $0.index >= 0 }.subscribe { checker.receive($0) }
        let finished = runOnThreads(senders) { sender in
            for index in 0..<perSender { subject.send(Tagged(sender: sender, index: index)) }
        }
        #expect(finished)
        #expect(eventually { checker.count == senders * perSender }, "values were lost")
        #expect(checker.overlap.overlapCount == 0)
        #expect(checker.outOfOrder == 0)
        token.invalidate()
    }

    @Test func subscribersComingAndGoingDuringConcurrentSendsReceiveAContiguousRun() {
        let subject = PassthroughSubject<Int, Never>()
        let total = BuildFlavor.iterations(20_000, sanitized: 5_000)
        let gaps = AtomicCounter()
        let overlaps = AtomicCounter()
        let sendsDone = AtomicFlag()
        let sender = startThread {
            for value in 0..<total { subject.send(value) }
            sendsDone.set()
        }
        let finished = runOnThreads(2) { _ in
            for _ in 0..<300 {
                let received = LockedBox<[Int]>([])
                let overlap = OverlapDetector()
                let token = subject.subscribe { value in
                    overlap.enter()
                    received.mutate { $0.append(value) }
                    overlap.exit()
                }
                if sendsDone.isSet {
                    token.invalidate()
                    break
                }
                for _ in 0..<50 where !sendsDone.isSet { _ = received.value.count }
                token.invalidate()
                let values = received.value
                if values != Array(values.first.map { $0..<($0 + values.count) } ?? 0..<0) { gaps.increment() }
                overlaps.mutateAdd(overlap.overlapCount)
            }
        }
        #expect(finished)
        #expect(sender.waitWithDeadline())
        #expect(gaps.value == 0, "a subscriber missed a value between its subscribe and its invalidate")
        #expect(overlaps.value == 0)
    }

    // MARK: - No callback starts after invalidate() returns

    /// Hammers `send` from another thread while the test thread invalidates. When `invalidate()` returns, no
    /// callback may be running (it waits for the one in flight), and a flag set right after it returned must
    /// never be seen inside a callback.
    private func checkNoCallbackAfterInvalidate<S: SyncStream>(
        rounds: Int,
        makeStream: (PassthroughSubject<Int, Never>) -> S
    ) -> (violations: Int, completed: Bool) where S.Output == Int, S.Failure == Never {
        let violations = AtomicCounter()
        var completed = true
        for _ in 0..<rounds {
            let subject = PassthroughSubject<Int, Never>()
            let invalidated = AtomicFlag()
            let stop = AtomicFlag()
            let started = DispatchSemaphore(value: 0)
            let received = AtomicCounter()
            let inside = AtomicCounter()
            let token = makeStream(subject).subscribe { _ in
                inside.increment()
                if invalidated.isSet { violations.increment() }
                if received.increment() == 20 { started.signal() }
                // Stay inside a while, so that invalidate() often lands while a callback runs.
                for _ in 0..<200 where !stop.isSet {}
                if invalidated.isSet { violations.increment() }
                inside.decrement()
            }
            let sender = startThread {
                for value in 0..<10_000_000 {
                    if stop.isSet { break }
                    subject.send(value)
                }
            }
            completed = started.waitWithDeadline() && completed
            token.invalidate()
            if inside.value != 0 { violations.increment() }
            invalidated.set()
            // Keep sending a little longer, so that a late callback would be observed.
            let seenAtInvalidate = received.value
            for _ in 0..<10_000 where received.value == seenAtInvalidate { _ = stop.isSet }
            stop.set()
            completed = sender.waitWithDeadline() && completed
        }
        return (violations.value, completed)
    }

    @Test func noCallbackStartsAfterInvalidateReturnsOnASubject() {
        let result = checkNoCallbackAfterInvalidate(rounds: 30) { $0 }
        #expect(result.completed)
        #expect(result.violations == 0)
    }

    @Test func noCallbackStartsAfterInvalidateReturnsThroughStatelessOperators() {
        let result = checkNoCallbackAfterInvalidate(rounds: 30) { subject in
            subject.map { $0 + 1 }.filter { _ in true }.compactMap { $0 }
        }
        #expect(result.completed)
        #expect(result.violations == 0)
    }

    @Test func noCallbackStartsAfterInvalidateReturnsThroughOperatorsThatOwnALink() {
        let result = checkNoCallbackAfterInvalidate(rounds: 30) { subject in
            subject.prefix(Int.max).handleEvents(receiveOutput: { _ in }).prefix(while: { _ in true })
                .prepend(-1).scan(0, +).removeDuplicates()
        }
        #expect(result.completed)
        #expect(result.violations == 0)
    }

    @Test func noCallbackStartsAfterInvalidateReturnsThroughAnErasedStream() {
        let result = checkNoCallbackAfterInvalidate(rounds: 30) { subject in
            AnySyncStream<Int, Never> { onValue, onCompletion in
                subject.subscribe(onValue: onValue, onCompletion: onCompletion)
            }.eraseToAnyStream()
        }
        #expect(result.completed)
        #expect(result.violations == 0)
    }

    // MARK: - Re-entrancy

    @Test func reentrantSendsAreDeliveredBreadthFirstInTheSameOrderToEverySubscriber() {
        let subject = PassthroughSubject<Int, Never>()
        let first = Recorder<Int, Never>()
        let second = Recorder<Int, Never>()
        let firstToken = subject.subscribe { value in
            first.receive(value)
            if value == 1 { subject.send(10) }
        }
        let secondToken = subject.subscribe { value in
            second.receive(value)
            if value == 1 { subject.send(20) }
        }
        subject.send(1)
        subject.send(2)
        #expect(first.values == [1, 10, 20, 2])
        #expect(second.values == [1, 10, 20, 2])
        firstToken.invalidate()
        secondToken.invalidate()
    }

    @Test func aLongChainOfReentrantSendsLosesNothing() {
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        let token = subject.subscribe { value in
            recorder.receive(value)
            if value < 10_000 { subject.send(value + 1) }
        }
        subject.send(0)
        #expect(recorder.values == Array(0...10_000))
        token.invalidate()
    }

    @Test func reentrantCompletionEndsDeliveryAfterTheCurrentValue() {
        let subject = PassthroughSubject<Int, Never>()
        let first = Recorder<Int, Never>()
        let second = Recorder<Int, Never>()
        let firstToken = subject.subscribe(
            onValue: { value in
                first.receive(value)
                subject.send(value + 100)
                subject.send(completion: .finished)
            },
            onCompletion: { first.receive(completion: $0) }
        )
        let secondToken = second.subscribe(to: subject)
        subject.send(1)
        subject.send(2)
        #expect(first.events == [.value(1), .value(101), .finished])
        #expect(second.events == [.value(1), .value(101), .finished])
        firstToken.invalidate()
        secondToken.invalidate()
    }

    @Test func reentrantSubscribeReceivesOnlyLaterValues() {
        let subject = PassthroughSubject<Int, Never>()
        let inner = Recorder<Int, Never>()
        let innerToken = TokenSlot()
        let outerToken = subject.subscribe { value in
            if value == 1 {
                innerToken.token = inner.subscribe(to: subject)
                subject.send(2)
            }
        }
        subject.send(1)
        subject.send(3)
        #expect(inner.values == [2, 3])
        outerToken.invalidate()
        innerToken.invalidate()
    }

    @Test func reentrantInvalidateOfItsOwnSubscriptionStopsAtOnce() {
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        let other = Recorder<Int, Never>()
        let slot = TokenSlot()
        slot.token = subject.subscribe(
            onValue: { value in
                recorder.receive(value)
                slot.invalidate()
                subject.send(value + 1)
            },
            onCompletion: { recorder.receive(completion: $0) }
        )
        let otherToken = other.subscribe(to: subject)
        subject.send(1)
        subject.send(completion: .finished)
        #expect(recorder.events == [.value(1)])
        #expect(other.events == [.value(1), .value(2), .finished])
        otherToken.invalidate()
    }

    @Test func reentrantInvalidateOfAnotherSubscriberStopsItBeforeTheCurrentValue() {
        let subject = PassthroughSubject<Int, Never>()
        let later = Recorder<Int, Never>()
        let laterToken = TokenSlot()
        let firstToken = subject.subscribe { value in
            if value == 2 { laterToken.invalidate() }
        }
        laterToken.token = later.subscribe(to: subject)
        subject.send(1)
        subject.send(2)
        subject.send(3)
        #expect(later.values == [1], "a callback must not start after invalidate() returned, even on the same thread")
        firstToken.invalidate()
    }

    @Test func reentrantSendIntoAnotherSubjectThatSendsBackDoesNotDeadlock() {
        let ping = PassthroughSubject<Int, Never>()
        let pong = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        let pingToken = ping.subscribe { value in
            recorder.receive(value)
            if value < 100 { pong.send(value + 1) }
        }
        let pongToken = pong.subscribe { value in
            recorder.receive(value)
            if value < 100 { ping.send(value + 1) }
        }
        ping.send(0)
        #expect(recorder.values == Array(0...100))
        pingToken.invalidate()
        pongToken.invalidate()
    }

    @Test func reentrantSendsFromConcurrentDeliveriesLoseNothing() {
        let subject = PassthroughSubject<Int, Never>()
        let perSender = 2_000
        let overlap = OverlapDetector()
        let received = AtomicCounter()
        let echoes = AtomicCounter()
        // Each positive value is echoed once as its negation, from inside the callback.
        let token = subject.subscribe { value in
            overlap.enter()
            received.increment()
            if value > 0 {
                subject.send(-value)
            } else {
                echoes.increment()
            }
            overlap.exit()
        }
        let finished = runOnThreads(3) { sender in
            for index in 1...perSender { subject.send(sender * perSender + index) }
        }
        #expect(finished)
        #expect(eventually { received.value == 2 * 3 * perSender }, "values were lost")
        #expect(overlap.overlapCount == 0)
        #expect(echoes.value == 3 * perSender)
        token.invalidate()
    }

    // MARK: - Completion ends delivery; release of captured objects

    @Test func completionIsDeliveredOnceAndEndsDelivery() {
        let subject = PassthroughSubject<Int, StreamTestError>()
        let recorder = Recorder<Int, StreamTestError>()
        let token = recorder.subscribe(to: subject.map { $0 })
        subject.send(1)
        subject.send(completion: .failure(.boom))
        subject.send(2)
        subject.send(completion: .finished)
        #expect(recorder.events == [.value(1), .failure(.boom)])
        #expect(recorder.completionCount == 1)
        token.invalidate()
    }

    @Test func concurrentCompletionAndSendsDeliverOneCompletionLast() {
        for _ in 0..<50 {
            let subject = PassthroughSubject<Int, StreamTestError>()
            let recorder = Recorder<Int, StreamTestError>()
            let token = recorder.subscribe(to: subject)
            let finished = runOnThreads(3) { index in
                if index == 0 {
                    subject.send(completion: .failure(.boom))
                } else {
                    for value in 0..<200 { subject.send(value) }
                }
            }
            #expect(finished)
            // A drain bounded by its time slice may hand the rest to a job (issue 22, item 6): the completion
            // can arrive just after the senders returned, so it is awaited, not read at once.
            #expect(eventually { recorder.completionCount >= 1 })
            #expect(recorder.completionCount == 1)
            #expect(recorder.events.last == .failure(.boom))
            token.invalidate()
        }
    }

    @Test func invalidationAndCompletionReleaseEveryCapturedObject() {
        let subject = PassthroughSubject<Int, Never>()
        weak var weakByInvalidation: LifetimeCanary?
        weak var weakByCompletion: LifetimeCanary?
        var invalidated: SubscriptionToken?
        var completed: SubscriptionToken?
        do {
            let first = LifetimeCanary()
            let second = LifetimeCanary()
            weakByInvalidation = first
            weakByCompletion = second
            invalidated = subject.map { value -> Int in
                first.touch()
                return value
            }.scan(0, +).removeDuplicates().subscribe(
                onValue: { _ in first.touch() }, onCompletion: { _ in first.touch() })
            completed = subject.filter { _ in
                second.touch()
                return true
            }.compactMap { $0 }.prepend(0).subscribe(
                onValue: { _ in second.touch() }, onCompletion: { _ in second.touch() })
        }
        subject.send(1)
        #expect(weakByInvalidation != nil)
        #expect(weakByCompletion != nil)
        invalidated?.invalidate()
        #expect(weakByInvalidation == nil)
        subject.send(completion: .finished)
        #expect(weakByCompletion == nil, "completion releases the closures even while the token is kept")
        invalidated = nil
        completed?.invalidate()
        completed = nil
    }

    @Test func concurrentInvalidationReleasesEverything() {
        let subject = PassthroughSubject<Int, Never>()
        weak var weakCanary: LifetimeCanary?
        let slot = TokenSlot()
        do {
            let canary = LifetimeCanary()
            weakCanary = canary
            slot.token = subject.map { $0 * 2 }.subscribe { _ in canary.touch() }
        }
        let finished = runOnThreads(2) { index in
            if index == 0 {
                for value in 0..<5_000 { subject.send(value) }
            } else {
                slot.invalidate()
            }
        }
        #expect(finished)
        slot.token = nil
        #expect(weakCanary == nil)
    }
}

extension AtomicCounter {
    /// Adds `amount`, one step at a time (the counter only increments).
    fileprivate func mutateAdd(_ amount: Int) {
        for _ in 0..<amount { increment() }
    }
}
