import SyncStreams
import Testing

private struct Failure: Error, Equatable { let code: Int }

@Suite struct SwitchToLatestTests {
    @Test func followsOnlyTheLatestInnerStream() {
        let outer = PassthroughSubject<PassthroughSubject<Int, Never>, Never>()
        let first = PassthroughSubject<Int, Never>()
        let second = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        let token = recorder.subscribe(to: outer.switchToLatest())
        outer.send(first)
        first.send(1)
        first.send(2)
        outer.send(second)
        first.send(3)
        second.send(4)
        #expect(recorder.values == [1, 2, 4])
        #expect(!first.hasSubscribers)
        token.invalidate()
        #expect(!second.hasSubscribers)
    }

    @Test func finishesWhenOuterAndCurrentInnerFinished() {
        let outer = PassthroughSubject<PassthroughSubject<Int, Never>, Never>()
        let inner = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        let token = recorder.subscribe(to: outer.switchToLatest())
        outer.send(inner)
        outer.send(completion: .finished)
        inner.send(1)
        #expect(!recorder.isCompleted)
        inner.send(completion: .finished)
        #expect(recorder.events == [.value(1), .finished])
        token.invalidate()
    }

    @Test func innerFinishingFirstWaitsForTheOuter() {
        let outer = PassthroughSubject<PassthroughSubject<Int, Never>, Never>()
        let inner = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        let token = recorder.subscribe(to: outer.switchToLatest())
        outer.send(inner)
        inner.send(completion: .finished)
        #expect(!recorder.isCompleted)
        outer.send(completion: .finished)
        #expect(recorder.events == [.finished])
        token.invalidate()
    }

    @Test func innerFailureIsForwardedAndEndsTheOuter() {
        let outer = PassthroughSubject<PassthroughSubject<Int, Failure>, Failure>()
        let inner = PassthroughSubject<Int, Failure>()
        let recorder = Recorder<Int, Failure>()
        let token = recorder.subscribe(to: outer.switchToLatest())
        outer.send(inner)
        inner.send(completion: .failure(Failure(code: 3)))
        #expect(recorder.events == [.failure(Failure(code: 3))])
        #expect(!outer.hasSubscribers)
        token.invalidate()
    }

    @Test func outerFailureIsForwardedAndEndsTheInner() {
        let outer = PassthroughSubject<PassthroughSubject<Int, Failure>, Failure>()
        let inner = PassthroughSubject<Int, Failure>()
        let recorder = Recorder<Int, Failure>()
        let token = recorder.subscribe(to: outer.switchToLatest())
        outer.send(inner)
        outer.send(completion: .failure(Failure(code: 4)))
        inner.send(1)
        #expect(recorder.events == [.failure(Failure(code: 4))])
        #expect(!inner.hasSubscribers)
        token.invalidate()
    }

    @Test func flatMapLatestTotalsTheCurrentSetOfSources() {
        // The use case: total progress over a user's changing set of sessions.
        let sessions = CurrentValueSubject<[CurrentValueSubject<Int, Never>], Never>([])
        let a = CurrentValueSubject<Int, Never>(10)
        let b = CurrentValueSubject<Int, Never>(20)
        let recorder = Recorder<Int, Never>()
        let token = recorder.subscribe(
            to: sessions.flatMapLatest { list in SyncStreams.combineLatest(list).map { $0.reduce(0, +) } }
        )
        sessions.send([a])
        a.send(15)
        sessions.send([a, b])
        b.send(25)
        #expect(recorder.values == [0, 10, 15, 35, 40])
        token.invalidate()
    }
}

@Suite struct SwitchToLatestReentrancyTests {
    @Test func switchingFromInsideAnInnerValueDropsTheRestOfTheOldInner() {
        let outer = PassthroughSubject<PassthroughSubject<Int, Never>, Never>()
        let first = PassthroughSubject<Int, Never>()
        let second = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        let token = outer.switchToLatest().subscribe { value in
            recorder.record(.value(value))
            if value == 1 {
                outer.send(second)  // switch while delivering the old inner's value
                first.send(99)  // the old inner is no longer followed
                second.send(2)
            }
        }
        outer.send(first)
        first.send(1)
        #expect(recorder.values == [1, 2])
        #expect(!first.hasSubscribers)
        token.invalidate()
        #expect(!second.hasSubscribers)
        #expect(!outer.hasSubscribers)
    }

    @Test func invalidatingFromInsideTheCallbackStopsEverything() {
        let outer = CurrentValueSubject<CurrentValueSubject<Int, Never>, Never>(CurrentValueSubject(0))
        let recorder = Recorder<Int, Never>()
        let holder = TokenHolder()
        holder.token = outer.switchToLatest().subscribe { value in
            recorder.record(.value(value))
            holder.token?.invalidate()
        }
        // 0 arrives during `subscribe`, before the token exists; 1 arrives after, and its callback
        // invalidates: nothing follows, neither from the current inner nor from a new one.
        let inner = outer.value
        inner.send(1)
        inner.send(2)
        outer.send(CurrentValueSubject(5))
        #expect(recorder.values == [0, 1])
        #expect(!outer.hasSubscribers)
        #expect(!inner.hasSubscribers)
    }
}
