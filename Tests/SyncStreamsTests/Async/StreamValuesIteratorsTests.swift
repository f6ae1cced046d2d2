import TestSupport
import Testing

@testable import SyncStreams

/// Several iterators of one `values` sequence, waiting at the same time: each value goes to one of them
/// (in order), and the end — finished or a failure — reaches every one. None is left waiting for ever.
@Suite(.timeLimit(.minutes(5))) struct StreamValuesIteratorsTests {
    @Test func twoIteratorsWaitingAtOnceShareTheValuesAndBothEnd() async throws {
        let subject = PassthroughSubject<Int, Never>()
        let values = subject.values
        let received = LockedBox<[[Int]]>([[], []])
        let ended = AtomicCounter()
        for consumer in 0..<2 {
            Task {
                for await value in values { received.mutate { $0[consumer].append(value) } }
                ended.increment()
            }
        }
        try await waitUntil("both iterators to wait for a value") { values.subscription.buffer.waitingIterators == 2 }
        for value in 0..<100 {
            subject.send(value)
            if value % 10 == 0 { await Task.yield() }
        }
        subject.send(completion: .finished)
        try await waitUntil("both iterators to end") { ended.value == 2 }
        let all = received.mutate { $0 }
        #expect((all[0] + all[1]).sorted() == Array(0..<100), "a value was lost or delivered twice")
        #expect(all[0] == all[0].sorted() && all[1] == all[1].sorted(), "an iterator saw values out of order")
    }

    @Test func aFailureReachesEveryWaitingIterator() async throws {
        let subject = PassthroughSubject<Int, StreamTestError>()
        let values = subject.values
        let threw = AtomicCounter()
        for _ in 0..<2 {
            Task {
                do {
                    for try await _ in values {}
                } catch {
                    threw.increment()
                }
            }
        }
        try await waitUntil("both iterators to wait for a value") { values.subscription.buffer.waitingIterators == 2 }
        subject.send(completion: .failure(.boom))
        try await waitUntil("both iterators to throw") { threw.value == 2 }
    }

    @Test func eachIteratorThrowsTheFailureOnceThenEnds() async throws {
        let subject = PassthroughSubject<Int, StreamTestError>()
        let values = subject.values
        subject.send(1)
        subject.send(completion: .failure(.boom))
        var first = values.makeAsyncIterator()
        #expect(try await first.next() == 1)
        await #expect(throws: StreamTestError.boom) { try await first.next() }
        #expect(try await first.next() == nil)
        var second = values.makeAsyncIterator()
        await #expect(throws: StreamTestError.boom) { try await second.next() }
        #expect(try await second.next() == nil)
    }
}
