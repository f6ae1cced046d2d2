import SyncStreams
import Testing

@Suite struct PassthroughSubjectTests {
    @Test func deliversValuesSentAfterSubscribingThenCompletion() {
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        subject.send(0)
        let token = recorder.subscribe(to: subject.map { $0 * 10 }.filter { $0 != 20 })
        subject.send(1)
        subject.send(2)
        subject.send(3)
        subject.send(completion: .finished)
        subject.send(4)
        #expect(recorder.events == [.value(10), .value(30), .finished])
        token.invalidate()
    }
}
