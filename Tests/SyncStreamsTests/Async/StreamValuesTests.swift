import SyncStreams
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(5))) struct StreamValuesTests {
    @Test func forAwaitReceivesEveryValueThenEndsOnFinish() async {
        let subject = PassthroughSubject<Int, Never>()
        let values = subject.values
        subject.send(1)
        subject.send(2)
        subject.send(3)
        subject.send(completion: .finished)
        var received: [Int] = []
        for await value in values { received.append(value) }
        #expect(received == [1, 2, 3])
    }

    @Test func valuesSentBeforeIterationStartsAreBuffered() async {
        let subject = PassthroughSubject<Int, Never>()
        let values = subject.values
        for value in 0..<1_000 { subject.send(value) }
        subject.send(completion: .finished)
        subject.send(1_000)
        var received: [Int] = []
        for await value in values { received.append(value) }
        #expect(received == Array(0..<1_000))
    }

    @Test func valuesSentWhileTheConsumerWaitsArriveInOrder() async {
        let subject = PassthroughSubject<Int, Never>()
        let values = subject.values
        let consumer = Task {
            var received: [Int] = []
            for await value in values { received.append(value) }
            return received
        }
        for value in 0..<500 {
            subject.send(value)
            if value % 50 == 0 { await Task.yield() }
        }
        subject.send(completion: .finished)
        #expect(await consumer.value == Array(0..<500))
    }

    @Test func valuesFromOtherThreadsArriveInPerThreadOrder() async {
        let subject = PassthroughSubject<Int, Never>()
        let values = subject.values
        let senders = startThread {
            _ = runOnThreads(2) { sender in
                for index in 0..<2_000 { subject.send(sender * 10_000 + index) }
            }
            subject.send(completion: .finished)
        }
        var received: [Int] = []
        for await value in values { received.append(value) }
        #expect((try? await offPool("the sending threads") { senders.waitWithDeadline() }) == true)
        #expect(received.filter { $0 < 10_000 } == Array(0..<2_000))
        #expect(received.filter { $0 >= 10_000 } == Array(10_000..<12_000))
    }

    @Test func currentValueIsTheFirstElement() async {
        let subject = CurrentValueSubject<Int, Never>(7)
        let values = subject.values
        subject.send(8)
        subject.send(completion: .finished)
        var received: [Int] = []
        for await value in values { received.append(value) }
        #expect(received == [7, 8])
    }

    @Test func throwingVariantRethrowsTheFailureAfterTheValues() async {
        let subject = PassthroughSubject<Int, StreamTestError>()
        let values = subject.values
        subject.send(1)
        subject.send(2)
        subject.send(completion: .failure(.boom))
        var received: [Int] = []
        await #expect(throws: StreamTestError.boom) {
            for try await value in values { received.append(value) }
        }
        #expect(received == [1, 2])
    }

    @Test func throwingVariantRethrowsAFailureArrivingWhileWaiting() async {
        let subject = PassthroughSubject<Int, StreamTestError>()
        let values = subject.values
        let consumer = Task { () throws(StreamTestError) -> [Int] in
            var received: [Int] = []
            for try await value in values { received.append(value) }
            return received
        }
        await Task.yield()
        subject.send(1)
        subject.send(completion: .failure(.other))
        let result = await consumer.result
        #expect(throws: StreamTestError.other) { try result.get() }
    }

    @Test func throwingVariantEndsNormallyOnFinish() async throws {
        let subject = PassthroughSubject<Int, StreamTestError>()
        let values = subject.values
        subject.send(4)
        subject.send(completion: .finished)
        var received: [Int] = []
        for try await value in values { received.append(value) }
        #expect(received == [4])
    }

    @Test func taskCancellationEndsTheLoop() async {
        let subject = PassthroughSubject<Int, Never>()
        let values = subject.values
        let (firstReceived, signal) = AsyncStream<Void>.makeStream()
        let consumer = Task {
            var received: [Int] = []
            for await value in values {
                received.append(value)
                signal.yield()
            }
            return received
        }
        subject.send(1)
        var signals = firstReceived.makeAsyncIterator()
        _ = await signals.next()
        consumer.cancel()
        let received = await consumer.value
        #expect(received.first == 1)
        subject.send(2)
    }

    @Test func cancellationBeforeIterationEndsTheLoopAtOnce() async {
        let subject = PassthroughSubject<Int, Never>()
        let values = subject.values
        let consumer = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            var count = 0
            for await _ in values { count += 1 }
            return count
        }
        #expect(await consumer.value == 0)
        subject.send(1)
    }

    @Test func readingValuesSubscribesAtOnceAndDroppingTheSequenceInvalidates() {
        let subject = PassthroughSubject<Int, Never>()
        let tracker = SubscriptionTracker()
        do {
            let values = subject.tracked(by: tracker).values
            #expect(tracker.active.value == 1)
            subject.send(1)
            _ = values
        }
        #expect(tracker.active.value == 0)
    }

    @Test func droppingTheSequenceAfterIteratingInvalidatesAndReleasesTheSubscription() async {
        let subject = PassthroughSubject<Int, Never>()
        let tracker = SubscriptionTracker()
        let consumed = await Task {
            let values = subject.tracked(by: tracker).values
            subject.send(1)
            var iterator = values.makeAsyncIterator()
            return await iterator.next()
        }.value
        #expect(consumed == 1)
        #expect(tracker.active.value == 0)
        subject.send(2)
    }

    // MARK: - first()

    @Test func firstReturnsTheFirstValueAndEndsTheSubscription() async throws {
        let subject = CurrentValueSubject<Int, Never>(3)
        let tracker = SubscriptionTracker()
        let value = try await subject.tracked(by: tracker).first()
        #expect(value == 3)
        #expect(tracker.active.value == 0)
        #expect(tracker.total.value == 1)
    }

    @Test func firstWaitsForAValueSentLater() async throws {
        let subject = PassthroughSubject<Int, Never>()
        let (subscribed, signal) = AsyncStream<Void>.makeStream()
        let stream = AnySyncStream<Int, Never> { onValue, onCompletion in
            let token = subject.subscribe(onValue: onValue, onCompletion: onCompletion)
            signal.yield()
            return token
        }
        let waiter = Task { try await stream.first() }
        var signals = subscribed.makeAsyncIterator()
        _ = await signals.next()
        subject.send(9)
        subject.send(10)
        #expect(try await waiter.value == 9)
    }

    @Test func firstIsNilWhenTheStreamFinishesEmpty() async throws {
        let finished = PassthroughSubject<Int, StreamTestError>()
        finished.send(completion: .finished)
        #expect(try await finished.first() == nil)
        let empty = AnySyncStream<Int, Never> { _, onCompletion in
            onCompletion(.finished)
            return .empty
        }
        #expect(try await empty.first() == nil)
    }

    @Test func firstThrowsTheFailure() async {
        let subject = PassthroughSubject<Int, StreamTestError>()
        subject.send(completion: .failure(.boom))
        await #expect(throws: StreamTestError.boom) { try await subject.first() }
    }

    @Test func firstThrowsCancellationErrorWhenCancelled() async {
        let subject = PassthroughSubject<Int, Never>()
        let (subscribed, signal) = AsyncStream<Void>.makeStream()
        let stream = AnySyncStream<Int, Never> { onValue, onCompletion in
            let token = subject.subscribe(onValue: onValue, onCompletion: onCompletion)
            signal.yield()
            return token
        }
        let waiter = Task { try await stream.first() }
        var signals = subscribed.makeAsyncIterator()
        _ = await signals.next()
        waiter.cancel()
        let result = await waiter.result
        #expect(throws: CancellationError.self) { try result.get() }
    }

    @Test func firstThrowsCancellationErrorWhenAlreadyCancelled() async {
        let subject = PassthroughSubject<Int, Never>()
        let waiter = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await subject.first()
        }
        let result = await waiter.result
        #expect(throws: CancellationError.self) { try result.get() }
    }
}
