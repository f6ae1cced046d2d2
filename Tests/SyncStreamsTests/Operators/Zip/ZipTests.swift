import Testing

@testable import SyncStreams

@Suite struct ZipTests {
    @Test func pairsValuesInOrderAndFinishesWhenAFinishedInputIsUsedUp() {
        let a = PassthroughSubject<Int, MarbleError>()
        let b = PassthroughSubject<String, MarbleError>()
        let recorder = Recorder<String, MarbleError>()
        let token = recorder.subscribe(to: a.zip(b) { "\($0)\($1)" })
        a.send(1)
        a.send(2)
        #expect(recorder.values.isEmpty, "emitted before every input had a value")
        b.send("a")
        #expect(recorder.values == ["1a"])
        b.send("b")
        b.send("c")
        b.send(completion: .finished)  // "c" is still buffered: not finished yet
        #expect(!recorder.isCompleted)
        a.send(3)  // uses up "c": finished
        #expect(recorder.events == [.value("1a"), .value("2b"), .value("3c"), .finished])
        token.invalidate()
    }

    @Test func finishesAtOnceWhenAnInputFinishesWithNothingBuffered() {
        let a = PassthroughSubject<Int, MarbleError>()
        let b = PassthroughSubject<Int, MarbleError>()
        let recorder = Recorder<Int, MarbleError>()
        let token = recorder.subscribe(to: a.zip(b).map { $0 + $1 })
        a.send(1)
        b.send(10)
        b.send(completion: .finished)
        #expect(recorder.events == [.value(11), .finished])
        token.invalidate()
    }

    @Test func aFailureIsForwardedAtOnceAndEndsTheOtherInputs() {
        let a = PassthroughSubject<Int, MarbleError>()
        let b = PassthroughSubject<Int, MarbleError>()
        let tracker = SubscriptionTracker()
        let recorder = Recorder<Int, MarbleError>()
        let token = recorder.subscribe(to: a.tracked(by: tracker).zip(b).map { $0 + $1 })
        a.send(1)
        b.send(completion: .failure(MarbleError()))
        #expect(recorder.events == [.failure(MarbleError())])
        #expect(tracker.active.value == 0, "the other input was not ended")
        token.invalidate()
    }

    @Test func threeAndFourInputsZipInOrder() {
        let subjects = (0..<4).map { _ in PassthroughSubject<Int, Never>() }
        let three = Recorder<Int, Never>()
        let four = Recorder<Int, Never>()
        let tokens = [
            three.subscribe(to: subjects[0].zip(subjects[1], subjects[2]) { $0 + $1 + $2 }),
            four.subscribe(to: subjects[0].zip(subjects[1], subjects[2], subjects[3]) { $0 + $1 + $2 + $3 }),
        ]
        for (index, subject) in subjects.enumerated() { subject.send(index) }
        for (index, subject) in subjects.enumerated() { subject.send(10 * index) }
        #expect(three.values == [0 + 1 + 2, 0 + 10 + 20])
        #expect(four.values == [0 + 1 + 2 + 3, 0 + 10 + 20 + 30])
        tokens.forEach { $0.invalidate() }
    }

    @Test func theCollectionFormZipsArraysAndAnEmptyCollectionEmitsAnEmptyArrayAndFinishes() {
        let subjects = (0..<3).map { _ in PassthroughSubject<Int, Never>() }
        let recorder = Recorder<[Int], Never>()
        let token = recorder.subscribe(to: SyncStreams.zip(subjects))
        subjects[2].send(2)
        subjects[0].send(0)
        subjects[1].send(1)
        #expect(recorder.values == [[0, 1, 2]])
        token.invalidate()
        let empty = Recorder<[Int], Never>()
        _ = empty.subscribe(to: SyncStreams.zip([PassthroughSubject<Int, Never>]()))
        #expect(empty.events == [.value([]), .finished], "as combineLatest([]) (issue 22)")
    }

    @Test func invalidationEndsTheInputsAndReleasesTheCaptures() {
        let a = PassthroughSubject<Int, Never>()
        let b = PassthroughSubject<Int, Never>()
        let tracker = SubscriptionTracker()
        expectInvalidationReleasesCaptures { canary in
            a.tracked(by: tracker).zip(b.tracked(by: tracker)).subscribe { _ in canary.touch() }
        }
        #expect(tracker.active.value == 0)
    }

    @Test func aReentrantSendFromTheCallbackIsQueuedNotLost() {
        let a = PassthroughSubject<Int, Never>()
        let b = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        let token = a.zip(b).map { $0 + $1 }.subscribe { value in
            recorder.record(.value(value))
            if value == 2 {
                a.send(10)
                b.send(20)
            }
        }
        a.send(1)
        b.send(1)
        #expect(recorder.values == [2, 30])
        token.invalidate()
    }

    /// Zip's state machine for two inputs buffered in FIFOs, combining into `[first, second]`.
    static func twoInputMachine() -> ZipStateMachine<[FIFO<Int>], [Int], MarbleError> {
        ZipStateMachine(
            buffers: [FIFO(), FIFO()],
            inputCount: 2,
            isReady: { $0.allSatisfy { !$0.isEmpty } },
            take: { buffers in buffers.indices.map { buffers[$0].popFirst()! } },
            isBufferEmpty: { $0[$1].isEmpty }
        )
    }

    @Test func stateMachineTakesOneValueOfEachBufferPerCombination() {
        var machine = Self.twoInputMachine()
        let first = machine.valueReceived(0) { $0[0].append(1) }
        let second = machine.valueReceived(0) { $0[0].append(2) }
        let third = machine.valueReceived(1) { $0[1].append(10) }
        #expect(first.value == nil && second.value == nil && third.value == [1, 10])
        let finishWithBuffered = machine.completed(0, .finished)
        #expect(finishWithBuffered.completion == nil, "finished with a value still buffered")
        let last = machine.valueReceived(1) { $0[1].append(20) }
        #expect(last.value == [2, 20] && last.completion == .finished)
        if case .cancelInputs? = last.effect {} else { Issue.record("inputs not cancelled") }
    }

    @Test func stateMachineTrapsOnAValueOfAnInputAfterItsCompletion() async {
        // An event no state can receive breaks the stream contract: it traps with a message instead of
        // being dropped silently.
        await #expect(processExitsWith: .failure) {
            var machine = Self.twoInputMachine()
            _ = machine.valueReceived(0) { $0[0].append(1) }
            _ = machine.completed(0, .finished)
            _ = machine.valueReceived(0) { $0[0].append(2) }
        }
    }
}
