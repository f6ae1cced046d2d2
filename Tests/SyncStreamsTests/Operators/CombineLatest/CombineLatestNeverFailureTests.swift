import Testing

@testable import SyncStreams

/// `combineLatest` of a stream that cannot fail with streams that can (or the other way round), without
/// `setFailureType(to:)` at the call site: it compiles, takes the failing inputs' failure type, and behaves
/// as the plain operator.
@Suite struct CombineLatestNeverFailureTests {
    /// Subscribes to `make(n, f)` — `n` cannot fail and emits 1, `f` can and emits 2 — checks that it
    /// emits `expected` (the combined value, described), then fails `f` and checks the failure is forwarded.
    /// The result's `Failure == StreamTestError` is checked by the compiler.
    private func check<S: SyncStream>(
        _ expected: String,
        sourceLocation: SourceLocation = #_sourceLocation,
        _ make: (Just<Int>, CurrentValueSubject<Int, StreamTestError>) -> S
    ) where S.Failure == StreamTestError {
        let failing = CurrentValueSubject<Int, StreamTestError>(2)
        let recorder = Recorder<String, StreamTestError>()
        let token = recorder.subscribe(to: make(Just(1), failing).map { String(describing: $0) })
        failing.send(completion: .failure(.boom))
        #expect(recorder.events == [.value(expected), .failure(.boom)], sourceLocation: sourceLocation)
        token.invalidate()
    }

    @Test func aStreamThatCannotFailCombinesWithOneThatCanEitherWayRound() {
        let never = PassthroughSubject<Int, Never>()
        let failing = PassthroughSubject<String, StreamTestError>()
        let neverFirst:
            Streams.CombineLatest<
                Streams.SetFailureType<PassthroughSubject<Int, Never>, StreamTestError>,
                PassthroughSubject<String, StreamTestError>
            > = never.combineLatest(failing)
        let failingFirst:
            Streams.CombineLatest<
                PassthroughSubject<String, StreamTestError>,
                Streams.SetFailureType<PassthroughSubject<Int, Never>, StreamTestError>
            > = failing.combineLatest(never)
        let first = Recorder<String, StreamTestError>()
        let second = Recorder<String, StreamTestError>()
        let tokens = [
            first.subscribe(to: neverFirst.map { "\($0)\($1)" }),
            second.subscribe(to: failingFirst.map { "\($0)\($1)" }),
        ]
        never.send(1)
        failing.send("a")
        never.send(2)
        never.send(completion: .finished)
        failing.send("b")
        failing.send(completion: .failure(.boom))
        #expect(first.events == [.value("1a"), .value("2a"), .value("2b"), .failure(.boom)])
        #expect(second.events == [.value("a1"), .value("a2"), .value("b2"), .failure(.boom)])
        for token in tokens { token.invalidate() }
    }

    @Test func twoInputsWithATransformEitherWayRound() {
        check("1+2") { n, f in n.combineLatest(f) { "\($0)+\($1)" } }
        check("2+1") { n, f in f.combineLatest(n) { "\($0)+\($1)" } }
    }

    @Test func threeAndFourInputsWhereThisStreamCannotFailAndTheOthersCan() {
        check("(1, 2, 2)") { n, f in n.combineLatest(f, f) }
        check("1+2+2") { n, f in n.combineLatest(f, f) { "\($0)+\($1)+\($2)" } }
        check("(1, 2, 2, 2)") { n, f in n.combineLatest(f, f, f) }
        check("1+2+2+2") { n, f in n.combineLatest(f, f, f) { "\($0)+\($1)+\($2)+\($3)" } }
    }

    @Test func threeAndFourInputsWhereThisStreamCanFailAndTheOthersCannot() {
        check("(2, 1, 1)") { n, f in f.combineLatest(n, n) }
        check("2+1+1") { n, f in f.combineLatest(n, n) { "\($0)+\($1)+\($2)" } }
        check("(2, 1, 1, 1)") { n, f in f.combineLatest(n, n, n) }
        check("2+1+1+1") { n, f in f.combineLatest(n, n, n) { "\($0)+\($1)+\($2)+\($3)" } }
    }

    @Test func inputsThatAllCannotFailStillGetThePlainOverload() {
        // Inferred, not annotated (an annotation would pick the plain overload by itself): without
        // `@_disfavoredOverload`, a mixing overload in the `Failure == Never` extension ranks as more specific
        // and silently wraps an input in `SetFailureType<_, Never>`.
        typealias P = PassthroughSubject<Int, Never>
        let a = P()
        let two = a.combineLatest(a)
        let twoWithTransform = a.combineLatest(a) { $0 + $1 }
        let three = a.combineLatest(a, a)
        let threeWithTransform = a.combineLatest(a, a) { $0 + $1 + $2 }
        let four = a.combineLatest(a, a, a)
        let fourWithTransform = a.combineLatest(a, a, a) { $0 + $1 + $2 + $3 }
        #expect(type(of: two) == Streams.CombineLatest<P, P>.self)
        #expect(type(of: twoWithTransform) == Streams.Map<Streams.CombineLatest<P, P>, Int>.self)
        #expect(type(of: three) == Streams.CombineLatest3<P, P, P>.self)
        #expect(type(of: threeWithTransform) == Streams.Map<Streams.CombineLatest3<P, P, P>, Int>.self)
        #expect(type(of: four) == Streams.CombineLatest4<P, P, P, P>.self)
        #expect(type(of: fourWithTransform) == Streams.Map<Streams.CombineLatest4<P, P, P, P>, Int>.self)
        let recorder = Recorder<Int, Never>()
        _ = recorder.subscribe(to: Just(1).combineLatest(Just(2), Just(3)) { $0 + $1 + $2 })
        #expect(recorder.events == [.value(6), .finished])
    }

    @Test func inputsThatAllCanFailStillGetThePlainOverload() {
        typealias P = PassthroughSubject<Int, StreamTestError>
        let a = P()
        let two = a.combineLatest(a)
        let four = a.combineLatest(a, a, a) { $0 + $1 + $2 + $3 }
        #expect(type(of: two) == Streams.CombineLatest<P, P>.self)
        #expect(type(of: four) == Streams.Map<Streams.CombineLatest4<P, P, P, P>, Int>.self)
    }

    @Test func invalidateEndsEveryInputSubscriptionAndReleasesTheCallbacks() {
        let never = PassthroughSubject<Int, Never>()
        let failing = PassthroughSubject<Int, StreamTestError>()
        let tracker = SubscriptionTracker()
        expectInvalidationReleasesCaptures { canary in
            never.tracked(by: tracker).combineLatest(failing.tracked(by: tracker)).subscribe(
                onValue: { _ in canary.touch() },
                onCompletion: { _ in canary.touch() }
            )
        }
        #expect(tracker.total.value == 2)
        #expect(tracker.active.value == 0)
    }

    @Test func reentrantInvalidateInsideTheValueCallbackStopsFurtherEvents() {
        let never = PassthroughSubject<Int, Never>()
        let failing = PassthroughSubject<Int, StreamTestError>()
        let recorder = Recorder<Int, StreamTestError>()
        recorder.subscribe(to: never.combineLatest(failing) { $0 + $1 }, invalidatingAfter: { $0 == 11 })
        never.send(1)
        failing.send(10)
        never.send(2)
        failing.send(completion: .failure(.boom))
        #expect(recorder.events == [.value(11)])
    }
}
