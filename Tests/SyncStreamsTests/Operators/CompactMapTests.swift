import SyncStreams
import Testing

@Suite struct CompactMapTests {
    @Test func emitsOnlyNonNilResults() {
        let subject = PassthroughSubject<String, Never>()
        let recorder = Recorder<Int, Never>()
        let token = recorder.subscribe(to: subject.compactMap { Int($0) })
        subject.send("1")
        subject.send("x")
        subject.send("3")
        subject.send("")
        subject.send(completion: .finished)
        #expect(recorder.events == [.value(1), .value(3), .finished])
        token.invalidate()
    }

    @Test func passesFailureThrough() {
        let subject = PassthroughSubject<String, StreamTestError>()
        let recorder = Recorder<Int, StreamTestError>()
        let token = recorder.subscribe(to: subject.compactMap { Int($0) })
        subject.send("x")
        subject.send("7")
        subject.send(completion: .failure(.other))
        subject.send("8")
        #expect(recorder.events == [.value(7), .failure(.other)])
        token.invalidate()
    }

    @Test func invalidateEndsTheUpstreamSubscription() {
        let subject = PassthroughSubject<String, Never>()
        let tracker = SubscriptionTracker()
        let recorder = Recorder<Int, Never>()
        let token = recorder.subscribe(to: subject.tracked(by: tracker).compactMap { Int($0) })
        subject.send("5")
        token.invalidate()
        #expect(tracker.active.value == 0)
        subject.send("6")
        #expect(recorder.events == [.value(5)])
    }

    @Test func reentrantInvalidateInsideTheValueCallbackStopsFurtherValues() {
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        recorder.subscribe(to: subject.compactMap { $0 % 2 == 0 ? $0 : nil }, invalidatingAfter: { _ in true })
        for value in 1...6 { subject.send(value) }
        subject.send(completion: .finished)
        #expect(recorder.events == [.value(2)])
    }

    @Test func invalidationReleasesTheTransform() {
        let subject = PassthroughSubject<Int, Never>()
        expectInvalidationReleasesCaptures { canary in
            subject.compactMap { value -> Int? in
                canary.touch()
                return value
            }.subscribe { _ in }
        }
    }
}
