import SyncStreams
import Testing

@Suite struct StateStreamTests {
    private enum Connection: Equatable, Sendable {
        case disconnected
        case connecting
        case connected
    }

    @Test func deliversTheCurrentValueAtOnceThenChangesWithoutRepeats() {
        let source = CurrentValueSubject<Connection, Never>(.disconnected)
        let state = StateStream(source)
        let recorder = Recorder<Connection, Never>()
        let token = recorder.subscribe(to: state)
        #expect(recorder.values == [.disconnected])
        source.send(.disconnected)
        source.send(.connecting)
        source.send(.connecting)
        source.send(.connected)
        source.send(.connected)
        source.send(.disconnected)
        #expect(recorder.values == [.disconnected, .connecting, .connected, .disconnected])
        token.invalidate()
    }

    @Test func valueIsTheSourcesCurrentValue() {
        let source = CurrentValueSubject<Int, Never>(1)
        let state = StateStream(source)
        #expect(state.value == 1)
        source.value = 5
        #expect(state.value == 5)
    }

    @Test func lateSubscriberStartsFromTheCurrentValue() {
        let source = CurrentValueSubject<Int, Never>(1)
        let state = StateStream(source)
        source.send(2)
        let recorder = Recorder<Int, Never>()
        let token = recorder.subscribe(to: state)
        source.send(2)
        source.send(3)
        #expect(recorder.values == [2, 3])
        token.invalidate()
    }

    @Test func eachSubscriberHasItsOwnLastValue() {
        let source = CurrentValueSubject<Int, Never>(1)
        let state = StateStream(source)
        let first = Recorder<Int, Never>()
        let firstToken = first.subscribe(to: state)
        source.send(2)
        let second = Recorder<Int, Never>()
        let secondToken = second.subscribe(to: state)
        source.send(2)
        source.send(1)
        #expect(first.values == [1, 2, 1])
        #expect(second.values == [2, 1])
        firstToken.invalidate()
        secondToken.invalidate()
    }

    @Test func finishesWhenTheSourceFinishes() {
        let source = CurrentValueSubject<Int, Never>(1)
        let recorder = Recorder<Int, Never>()
        let token = recorder.subscribe(to: StateStream(source))
        source.send(completion: .finished)
        source.send(2)
        #expect(recorder.events == [.value(1), .finished])
        token.invalidate()
    }

    @Test func constantDeliversItsValueAndNeverChanges() {
        let state = StateStream(constant: "fixed")
        #expect(state.value == "fixed")
        let recorder = Recorder<String, Never>()
        let token = recorder.subscribe(to: state)
        #expect(recorder.events == [.value("fixed")])
        token.invalidate()
    }

    @Test func invalidateStopsDeliveryAndReleasesTheClosure() {
        let source = CurrentValueSubject<Int, Never>(0)
        let recorder = Recorder<Int, Never>()
        let probe = LifetimeProbe()
        var token: SubscriptionToken? = probe.capture { canary in
            StateStream(source).subscribe { value in
                canary.touch()
                recorder.receive(value)
            }
        }
        source.send(1)
        token?.invalidate()
        #expect(!probe.isAlive)
        source.send(2)
        #expect(recorder.values == [0, 1])
        token = nil
    }
}
