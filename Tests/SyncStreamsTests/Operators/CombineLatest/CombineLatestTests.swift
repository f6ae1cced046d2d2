import Dispatch
import Foundation
import SyncStreams
import Testing

private struct Failure: Error, Equatable { let code: Int }

private struct Pair: Equatable, Sendable {
    let a: Int
    let b: String
    init(_ a: Int, _ b: String) {
        self.a = a
        self.b = b
    }
}

@Suite struct CombineLatestTests {
    @Test func emitsOnceEveryInputHasAValueThenOnEveryValue() {
        let a = PassthroughSubject<Int, Never>()
        let b = PassthroughSubject<String, Never>()
        let recorder = Recorder<Pair, Never>()
        let token = recorder.subscribe(to: a.combineLatest(b) { Pair($0, $1) })
        a.send(1)
        a.send(2)
        #expect(recorder.events.isEmpty)
        b.send("x")
        a.send(3)
        b.send("y")
        #expect(recorder.values == [Pair(2, "x"), Pair(3, "x"), Pair(3, "y")])
        token.invalidate()
    }

    @Test func finishesWhenAllInputsFinishedAndDeliversTheLastValueFirst() {
        let a = PassthroughSubject<Int, Never>()
        let b = PassthroughSubject<String, Never>()
        let recorder = Recorder<Pair, Never>()
        let token = recorder.subscribe(to: a.combineLatest(b).map { Pair($0.0, $0.1) })
        a.send(1)
        b.send("x")
        a.send(completion: .finished)
        #expect(!recorder.isCompleted)
        b.send("y")
        b.send(completion: .finished)
        #expect(recorder.events == [.value(Pair(1, "x")), .value(Pair(1, "y")), .finished])
        token.invalidate()
    }

    @Test func finishesAtOnceWhenAnInputFinishesWithoutEverEmitting() {
        let a = PassthroughSubject<Int, Never>()
        let b = PassthroughSubject<String, Never>()
        let recorder = Recorder<Pair, Never>()
        let token = recorder.subscribe(to: a.combineLatest(b) { Pair($0, $1) })
        a.send(1)
        b.send(completion: .finished)
        #expect(recorder.events == [.finished])
        a.send(2)
        #expect(recorder.events == [.finished])
        token.invalidate()
    }

    @Test func forwardsAFailureAtOnceAndEndsTheOtherInputs() {
        let a = PassthroughSubject<Int, Failure>()
        let b = PassthroughSubject<Int, Failure>()
        let ended = Recorder<Int, Never>()
        let observedB = b.handleEvents(receiveCancel: { ended.record(.value(1)) })
        let recorder = Recorder<[Int], Failure>()
        let token = recorder.subscribe(to: a.combineLatest(observedB) { [$0, $1] })
        a.send(1)
        b.send(2)
        a.send(completion: .failure(Failure(code: 7)))
        b.send(3)
        #expect(recorder.events == [.value([1, 2]), .failure(Failure(code: 7))])
        #expect(ended.values == [1])
        token.invalidate()
    }

    @Test func threeAndFourInputs() {
        let a = CurrentValueSubject<Int, Never>(1)
        let b = CurrentValueSubject<Int, Never>(2)
        let c = CurrentValueSubject<Int, Never>(3)
        let d = CurrentValueSubject<Int, Never>(4)
        let three = Recorder<[Int], Never>()
        let four = Recorder<[Int], Never>()
        let tuples = Recorder<[Int], Never>()
        let tokens = [
            three.subscribe(to: a.combineLatest(b, c) { [$0, $1, $2] }),
            four.subscribe(to: a.combineLatest(b, c, d) { [$0, $1, $2, $3] }),
            tuples.subscribe(to: a.combineLatest(b, c, d).map { [$0.0, $0.1, $0.2, $0.3] }),
        ]
        c.send(30)
        #expect(three.values == [[1, 2, 3], [1, 2, 30]])
        #expect(four.values == [[1, 2, 3, 4], [1, 2, 30, 4]])
        #expect(tuples.values == four.values)
        let triples = Recorder<[Int], Never>()
        let triplesToken = triples.subscribe(to: a.combineLatest(b, c).map { [$0.0, $0.1, $0.2] })
        #expect(triples.values == [[1, 2, 30]])
        tokens.forEach { $0.invalidate() }
        triplesToken.invalidate()
    }

    @Test func collectionFormCombinesInOrder() {
        let subjects = (0..<5).map { _ in PassthroughSubject<Int, Never>() }
        let recorder = Recorder<[Int], Never>()
        let token = recorder.subscribe(to: SyncStreams.combineLatest(subjects))
        for (index, subject) in subjects.enumerated().reversed() { subject.send(index) }
        subjects[2].send(20)
        #expect(recorder.values == [[0, 1, 2, 3, 4], [0, 1, 20, 3, 4]])
        subjects.forEach { $0.send(completion: .finished) }
        #expect(recorder.isCompleted)
        token.invalidate()
    }

    @Test func emptyCollectionEmitsAnEmptyArrayOnceAndFinishes() {
        let recorder = Recorder<[Int], Never>()
        let token = recorder.subscribe(to: SyncStreams.combineLatest([PassthroughSubject<Int, Never>]()))
        #expect(recorder.events == [.value([]), .finished])
        token.invalidate()
    }

    @Test func valueSentFromInsideTheCallbackIsNotLost() {
        let a = PassthroughSubject<Int, Never>()
        let b = CurrentValueSubject<Int, Never>(0)
        let recorder = Recorder<[Int], Never>()
        let token = a.combineLatest(b) { [$0, $1] }.subscribe { pair in
            recorder.record(.value(pair))
            if pair == [1, 0] {
                b.send(1)
                a.send(2)
            }
        }
        a.send(1)
        #expect(recorder.values == [[1, 0], [1, 1], [2, 1]])
        token.invalidate()
    }

    @Test func invalidateFromInsideTheCallbackStopsDelivery() {
        let a = PassthroughSubject<Int, Never>()
        let b = CurrentValueSubject<Int, Never>(0)
        let recorder = Recorder<[Int], Never>()
        let holder = TokenHolder()
        holder.token = a.combineLatest(b) { [$0, $1] }.subscribe { pair in
            recorder.record(.value(pair))
            b.send(5)  // queued behind this callback
            holder.token?.invalidate()
        }
        a.send(1)
        a.send(2)
        #expect(recorder.values == [[1, 0]])
    }

    @Test func invalidationReleasesCapturedObjectsAndInputSubscriptions() {
        let a = PassthroughSubject<Int, Never>()
        let b = PassthroughSubject<Int, Never>()
        weak var weakCaptured: Captured?
        var token: SubscriptionToken?
        do {
            let captured = Captured()
            weakCaptured = captured
            token = a.combineLatest(b).subscribe { _ in captured.touch() }
        }
        a.send(1)
        b.send(1)
        #expect(weakCaptured != nil)
        token?.invalidate()
        token = nil
        #expect(weakCaptured == nil)
    }

    @Test func concurrentSendersLoseNothingAndNeverOverlap() async {
        let senders = 4
        let perSender = 5_000
        let subjects = (0..<senders).map { _ in PassthroughSubject<Int, Never>() }
        let checker = SerialChecker()
        let lastSeen = LastSeen(count: senders)
        let done = DispatchSemaphore(value: 0)
        let token = SyncStreams.combineLatest(subjects).subscribe(
            onValue: { values in
                checker.enter()
                lastSeen.observe(values)
                checker.leave()
            },
            onCompletion: { _ in done.signal() }
        )
        // Four real threads (the cooperative pool may be only 2 wide, which would run at most two senders
        // at once), started and joined on a thread of their own so no pool thread blocks.
        let finished = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            Thread {
                let sent = runOnThreads(senders) { index in
                    for value in 1...perSender { subjects[index].send(value) }
                    subjects[index].send(completion: .finished)
                }
                continuation.resume(returning: sent && done.waitWithDeadline())
            }.start()
        }
        #expect(finished)
        #expect(checker.overlaps == 0)
        #expect(lastSeen.isMonotonic)
        #expect(lastSeen.final == Array(repeating: perSender, count: senders))
        token.invalidate()
    }
}

/// Holds a token a callback can reach.
final class TokenHolder: @unchecked Sendable {
    // @unchecked Sendable: written before the first send, read only inside serialized callbacks.
    var token: SubscriptionToken?
}

/// An object whose lifetime tests watch with a weak reference.
final class Captured: Sendable {
    func touch() {}
}
