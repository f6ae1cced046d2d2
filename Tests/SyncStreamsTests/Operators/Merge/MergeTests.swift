import Dispatch
import Foundation
import SyncStreams
import Testing

private struct Failure: Error, Equatable { let code: Int }

@Suite struct MergeTests {
    @Test func emitsValuesOfAllInputsInArrivalOrderAndFinishesWhenAllFinished() {
        let a = PassthroughSubject<Int, Never>()
        let b = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        let token = recorder.subscribe(to: a.merge(with: b))
        a.send(1)
        b.send(2)
        a.send(3)
        a.send(completion: .finished)
        #expect(!recorder.isCompleted)
        b.send(4)
        b.send(completion: .finished)
        #expect(recorder.events == [.value(1), .value(2), .value(3), .value(4), .finished])
        token.invalidate()
    }

    @Test func variadicAndCollectionForms() {
        let subjects = (0..<3).map { _ in PassthroughSubject<Int, Never>() }
        let variadic = Recorder<Int, Never>()
        let collection = Recorder<Int, Never>()
        let tokens = [
            variadic.subscribe(to: subjects[0].merge(with: subjects[1], subjects[2])),
            collection.subscribe(to: SyncStreams.merge(subjects)),
        ]
        subjects[2].send(2)
        subjects[0].send(0)
        subjects[1].send(1)
        subjects.forEach { $0.send(completion: .finished) }
        #expect(variadic.events == [.value(2), .value(0), .value(1), .finished])
        #expect(collection.events == variadic.events)
        tokens.forEach { $0.invalidate() }
    }

    @Test func emptyCollectionFinishesAtOnce() {
        let recorder = Recorder<Int, Never>()
        let token = recorder.subscribe(to: SyncStreams.merge([PassthroughSubject<Int, Never>]()))
        #expect(recorder.events == [.finished])
        token.invalidate()
    }

    @Test func failureIsForwardedAtOnceAndEndsTheOthers() {
        let a = PassthroughSubject<Int, Failure>()
        let b = PassthroughSubject<Int, Failure>()
        let recorder = Recorder<Int, Failure>()
        let token = recorder.subscribe(to: a.merge(with: b))
        a.send(1)
        b.send(completion: .failure(Failure(code: 1)))
        a.send(2)
        #expect(recorder.events == [.value(1), .failure(Failure(code: 1))])
        #expect(!a.hasSubscribers)
        token.invalidate()
    }

    @Test func reentrantSendIsDeliveredAfterTheCurrentValue() {
        let a = PassthroughSubject<Int, Never>()
        let b = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        let token = a.merge(with: b).subscribe { value in
            recorder.record(.value(value))
            if value == 1 { b.send(10) }
            if value == 10 { a.send(2) }
        }
        a.send(1)
        #expect(recorder.values == [1, 10, 2])
        token.invalidate()
    }

    @Test func fourThreadsLoseNothingAndNeverInterleave() async {
        let senders = 4
        let perSender = 10_000
        let subjects = (0..<senders).map { _ in PassthroughSubject<Int, Never>() }
        let checker = SerialChecker()
        let received = Recorder<Int, Never>()
        let done = DispatchSemaphore(value: 0)
        let token = SyncStreams.merge(subjects).subscribe(
            onValue: { value in
                checker.enter()
                received.record(.value(value))
                checker.leave()
            },
            onCompletion: { _ in done.signal() }
        )
        // Four real threads (the cooperative pool may be only 2 wide, which would run at most two senders
        // at once), started and joined on a thread of their own so no pool thread blocks.
        let finished = await onThreadOfItsOwn {
            runOnThreads(senders) { sender in
                for sequence in 0..<perSender { subjects[sender].send(sender * 1_000_000 + sequence) }
                subjects[sender].send(completion: .finished)
            } && done.waitWithDeadline()
        }
        #expect(finished)
        #expect(checker.overlaps == 0)
        let values = received.values
        #expect(values.count == senders * perSender)
        for sender in 0..<senders {
            let mine = values.filter { $0 / 1_000_000 == sender }.map { $0 % 1_000_000 }
            #expect(mine == Array(0..<perSender))
        }
        token.invalidate()
    }
}

/// Runs blocking `body` on a new thread and returns its result without blocking a cooperative-pool thread.
private func onThreadOfItsOwn<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: body()) }.start()
    }
}
