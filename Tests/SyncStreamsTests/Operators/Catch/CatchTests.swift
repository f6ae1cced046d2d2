import Testing

@testable import SyncStreams

@Suite struct CatchTests {
    /// A stream that emits `values` then `completion` synchronously when subscribed to.
    static func sequence<Failure: Error>(
        _ values: [String],
        _ completion: StreamCompletion<Failure> = .finished
    ) -> AnySyncStream<String, Failure> {
        AnySyncStream { onValue, onCompletion in
            values.forEach(onValue)
            onCompletion(completion)
            return .empty
        }
    }

    @Test func switchesToTheHandlersStreamOnFailure() {
        let output = Marble.run("ab#") { subject, _ in
            subject.catch { _ in Self.sequence(["x", "y"], StreamCompletion<Never>.finished) }
        }
        #expect(output == Marble.parse("ab(xy|)"))
    }

    @Test func valuesAndFinishedOfTheUpstreamPassThrough() {
        let output = Marble.run("a-b|") { subject, _ in
            subject.catch { _ in Self.sequence(["x"], StreamCompletion<Never>.finished) }
        }
        #expect(output == Marble.parse("a-b|"))
    }

    @Test func theHandlerReceivesTheErrorAndTheReplacementsFailurePassesThrough() {
        let output = Marble.run("a#") { subject, _ in
            subject.catch { error in Self.sequence([error.name], .failure(MarbleError(name: "again"))) }
        }
        #expect(
            output == [
                TimedEvent(time: .zero, event: .value("a")),
                TimedEvent(time: Marble.tick, event: .value("#")),
                TimedEvent(time: Marble.tick, event: .failure(MarbleError(name: "again"))),
            ])
    }

    @Test func aFailureDuringSubscribeSwitchesAtOnce() {
        let recorder = Recorder<String, Never>()
        let token = recorder.subscribe(
            to: Self.sequence(["a"], .failure(MarbleError())).catch { _ in Self.sequence(["x"], .finished) }
        )
        #expect(recorder.events == [.value("a"), .value("x"), .finished])
        token.invalidate()
    }

    @Test func invalidateEndsTheReplacement() {
        let upstream = PassthroughSubject<String, MarbleError>()
        let replacement = PassthroughSubject<String, Never>()
        let cancelled = Locked(false)
        let recorder = Recorder<String, Never>()
        let token = recorder.subscribe(
            to: upstream.catch { _ in
                replacement.handleEvents(receiveCancel: { cancelled.withLock { $0 = true } })
            }
        )
        upstream.send("a")
        upstream.send(completion: .failure(MarbleError()))
        replacement.send("x")
        token.invalidate()
        #expect(cancelled.withLock { $0 })
        replacement.send("y")
        #expect(recorder.events == [.value("a"), .value("x")])
    }

    @Test func invalidateBeforeTheFailureNeverCallsTheHandler() {
        let upstream = PassthroughSubject<String, MarbleError>()
        let handled = Locked(false)
        let recorder = Recorder<String, Never>()
        let token = recorder.subscribe(
            to: upstream.catch { _ in
                handled.withLock { $0 = true }
                return Self.sequence(["x"], StreamCompletion<Never>.finished)
            }
        )
        token.invalidate()
        upstream.send(completion: .failure(MarbleError()))
        #expect(!handled.withLock { $0 })
        #expect(recorder.events.isEmpty)
    }

    @Test func invalidateInsideASynchronousReplacementStopsItsValues() {
        let upstream = PassthroughSubject<String, MarbleError>()
        let recorder = Recorder<String, Never>()
        let box = Marble.TokenBox()
        box.token = upstream.catch { _ in Self.sequence(["x", "y", "z"], StreamCompletion<Never>.finished) }
            .subscribe(
                onValue: { value in
                    recorder.record(.value(value))
                    if value == "x" { box.invalidate() }
                },
                onCompletion: { _ in recorder.record(.finished) }
            )
        upstream.send(completion: .failure(MarbleError()))
        #expect(recorder.events == [.value("x")])
    }
}
