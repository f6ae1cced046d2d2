import SyncStreams
import Testing

@Suite struct AnySyncStreamTests {
    @Test func wrapsAStreamWithoutChangingItsEvents() {
        let subject = PassthroughSubject<Int, StreamTestError>()
        let erased: AnySyncStream<Int, StreamTestError> = AnySyncStream(subject)
        let recorder = Recorder<Int, StreamTestError>()
        let token = recorder.subscribe(to: erased)
        subject.send(1)
        subject.send(2)
        subject.send(completion: .failure(.boom))
        #expect(recorder.events == [.value(1), .value(2), .failure(.boom)])
        token.invalidate()
    }

    @Test func eraseToAnyStreamHidesAnOperatorChain() {
        let subject = PassthroughSubject<Int, Never>()
        let erased: AnySyncStream<String, Never> = subject.map { $0 * 2 }.filter { $0 > 2 }.map { "\($0)" }
            .eraseToAnyStream()
        let recorder = Recorder<String, Never>()
        let token = recorder.subscribe(to: erased)
        for value in 1...3 { subject.send(value) }
        subject.send(completion: .finished)
        #expect(recorder.events == [.value("4"), .value("6"), .finished])
        token.invalidate()
    }

    @Test func invalidatingTheErasedTokenEndsTheWrappedSubscription() {
        let subject = PassthroughSubject<Int, Never>()
        let tracker = SubscriptionTracker()
        let recorder = Recorder<Int, Never>()
        let token = recorder.subscribe(to: subject.tracked(by: tracker).eraseToAnyStream())
        subject.send(1)
        token.invalidate()
        #expect(tracker.active.value == 0)
        subject.send(2)
        #expect(recorder.values == [1])
    }

    @Test func erasingAnErasedStreamDoesNotAddALayer() {
        let subscribeCalls = AtomicCounter()
        let base = AnySyncStream<Int, Never> { onValue, _ in
            subscribeCalls.increment()
            onValue(1)
            return .empty
        }
        let twice = base.eraseToAnyStream().eraseToAnyStream()
        let recorder = Recorder<Int, Never>()
        let token = recorder.subscribe(to: twice)
        #expect(subscribeCalls.value == 1)
        #expect(recorder.values == [1])
        token.invalidate()
    }

    @Test func closureInitializerRunsItsBodyPerSubscription() {
        let subscribeCalls = AtomicCounter()
        let stream = AnySyncStream<Int, Never> { onValue, onCompletion in
            subscribeCalls.increment()
            onValue(1)
            onValue(2)
            onCompletion(.finished)
            return .empty
        }
        #expect(subscribeCalls.value == 0, "nothing runs before a subscription")
        let first = Recorder<Int, Never>()
        let second = Recorder<Int, Never>()
        let firstToken = first.subscribe(to: stream)
        let secondToken = second.subscribe(to: stream)
        #expect(subscribeCalls.value == 2)
        #expect(first.events == [.value(1), .value(2), .finished])
        #expect(second.events == [.value(1), .value(2), .finished])
        firstToken.invalidate()
        secondToken.invalidate()
    }

    @Test func closureInitializerReturnsTheClosuresToken() {
        let stops = AtomicCounter()
        let stream = AnySyncStream<Int, StreamTestError> { _, onCompletion in
            onCompletion(.failure(.other))
            return SubscriptionToken { stops.increment() }
        }
        let recorder = Recorder<Int, StreamTestError>()
        let token = recorder.subscribe(to: stream)
        #expect(recorder.events == [.failure(.other)])
        #expect(stops.value == 0)
        token.invalidate()
        #expect(stops.value == 1)
    }

    @Test func closureStreamOverASubjectWorksWithOperators() {
        let subject = PassthroughSubject<Int, Never>()
        let stream = AnySyncStream<Int, Never> { onValue, onCompletion in
            subject.subscribe(onValue: onValue, onCompletion: onCompletion)
        }
        let recorder = Recorder<Int, Never>()
        let token = recorder.subscribe(to: stream.scan(0, +).prefix(2))
        subject.send(1)
        subject.send(2)
        subject.send(3)
        #expect(recorder.events == [.value(1), .value(3), .finished])
        token.invalidate()
    }
}
