import Testing

@testable import SyncStreams

@Suite struct ReplaceNilTests {
    @Test func replacesEachNilAndPassesOtherValuesThrough() {
        let subject = PassthroughSubject<Int?, Never>()
        let recorder = Recorder<Int, Never>()
        let token = recorder.subscribe(to: subject.replaceNil(with: 0))
        subject.send(1)
        subject.send(nil)
        subject.send(3)
        subject.send(nil)
        subject.send(completion: .finished)
        #expect(recorder.events == [.value(1), .value(0), .value(3), .value(0), .finished])
        token.invalidate()
    }

    @Test func marbles() {
        let output = Marble.run("a-n-b|") { subject, _ in
            subject.map { $0 == "n" ? nil : $0 }.replaceNil(with: "x")
        }
        #expect(output == Marble.parse("a-x-b|"))
    }

    @Test func passesTheFailureThrough() {
        let output = Marble.run("an#") { subject, _ in
            subject.map { $0 == "n" ? nil : $0 }.replaceNil(with: "x")
        }
        #expect(output == Marble.parse("ax#"))
    }

    @Test func reentrantInvalidateInsideTheValueCallbackStopsFurtherValues() {
        let subject = PassthroughSubject<Int?, Never>()
        let recorder = Recorder<Int, Never>()
        recorder.subscribe(to: subject.replaceNil(with: 0), invalidatingAfter: { $0 == 0 })
        subject.send(1)
        subject.send(nil)
        subject.send(3)
        subject.send(completion: .finished)
        #expect(recorder.events == [.value(1), .value(0)])
    }

    @Test func invalidateEndsTheUpstreamSubscriptionAndReleasesTheReplacementAndCallbacks() {
        let subject = PassthroughSubject<LifetimeCanary?, Never>()
        let tracker = SubscriptionTracker()
        let probe = LifetimeProbe()
        let token = probe.capture { canary in
            subject.tracked(by: tracker).replaceNil(with: canary).subscribe { _ in }
        }
        #expect(probe.isAlive)
        token.invalidate()
        #expect(!probe.isAlive)
        #expect(tracker.active.value == 0)
    }
}
