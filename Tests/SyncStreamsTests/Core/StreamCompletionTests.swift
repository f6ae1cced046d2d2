import SyncStreams
import Testing

@Suite struct StreamCompletionTests {
    @Test func equalityAndHashing() {
        let finished: StreamCompletion<StreamTestError> = .finished
        #expect(finished == .finished)
        #expect(finished != .failure(.boom))
        #expect(StreamCompletion<StreamTestError>.failure(.boom) == .failure(.boom))
        #expect(StreamCompletion<StreamTestError>.failure(.boom) != .failure(.other))
        let set: Set<StreamCompletion<StreamTestError>> = [.finished, .failure(.boom), .failure(.boom), .finished]
        #expect(set.count == 2)
    }

    @Test func mapFailureTransformsOnlyTheFailure() {
        struct Wrapped: Error, Equatable { let inner: StreamTestError }
        let failure: StreamCompletion<StreamTestError> = .failure(.boom)
        #expect(failure.mapFailure { Wrapped(inner: $0) } == .failure(Wrapped(inner: .boom)))
        let finished: StreamCompletion<StreamTestError> = .finished
        let calls = AtomicCounter()
        let mapped = finished.mapFailure { error -> Wrapped in
            calls.increment()
            return Wrapped(inner: error)
        }
        #expect(mapped == .finished)
        #expect(calls.value == 0)
    }

    @Test func promotedTurnsANeverCompletionIntoAnyFailureType() {
        let finished: StreamCompletion<Never> = .finished
        let promoted: StreamCompletion<StreamTestError> = finished.promoted()
        #expect(promoted == .finished)
        #expect(finished.promoted(to: StreamTestError.self) == .finished)
    }
}
