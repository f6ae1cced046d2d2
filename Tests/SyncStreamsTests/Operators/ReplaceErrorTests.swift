import Testing

@testable import SyncStreams

@Suite struct ReplaceErrorTests {
    @Test func aFailureBecomesTheValueThenFinished() {
        #expect(Marble.run("ab#") { subject, _ in subject.replaceError(with: "x") } == Marble.parse("ab(x|)"))
    }

    @Test func valuesAndFinishedPassThrough() {
        #expect(Marble.run("a-b|") { subject, _ in subject.replaceError(with: "x") } == Marble.parse("a-b|"))
    }

    @Test func theResultCannotFail() {
        let subject = PassthroughSubject<Int, MarbleError>()
        let stream: Streams.ReplaceError<PassthroughSubject<Int, MarbleError>> = subject.replaceError(with: 0)
        let recorder = Recorder<Int, Never>()
        let token = recorder.subscribe(to: stream)
        subject.send(completion: .failure(MarbleError()))
        #expect(recorder.events == [.value(0), .finished])
        token.invalidate()
    }

    @Test func invalidateInsideTheReplacementValueSuppressesFinished() {
        let subject = PassthroughSubject<Int, MarbleError>()
        let recorder = Recorder<Int, Never>()
        let box = Marble.TokenBox()
        box.token = subject.replaceError(with: 0).subscribe(
            onValue: { value in
                recorder.record(.value(value))
                box.invalidate()
            },
            onCompletion: { _ in recorder.record(.finished) }
        )
        subject.send(completion: .failure(MarbleError()))
        #expect(recorder.events == [.value(0)])
    }

    @Test func invalidateEndsTheUpstream() {
        let subject = PassthroughSubject<Int, MarbleError>()
        let recorder = Recorder<Int, Never>()
        let token = recorder.subscribe(to: subject.replaceError(with: 0))
        subject.send(1)
        token.invalidate()
        subject.send(2)
        subject.send(completion: .failure(MarbleError()))
        #expect(recorder.events == [.value(1)])
    }
}
