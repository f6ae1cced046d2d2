import Testing

@testable import SyncStreams

/// `throttle` holds the completion until the window of a held value ends, so no two values go out
/// within one interval — as OpenCombine and RxSwift do (issue 22, item 7). Virtual time.
@Suite struct ThrottleHoldsCompletionTests {
    @Test(arguments: [true, false])
    func aCompletionWaitsForTheWindowOfTheHeldValue(latest: Bool) {
        let executor = TestExecutor()
        let upstream = PassthroughSubject<Int, Never>()
        let events = LockedBox<[String]>([])
        let token = upstream.throttle(for: .seconds(1), on: executor, latest: latest).subscribe(
            onValue: { value in events.mutate { $0.append("\(value)@\(executor.now)") } },
            onCompletion: { _ in events.mutate { $0.append("|@\(executor.now)") } }
        )
        upstream.send(1)
        executor.advance(by: .milliseconds(500))
        upstream.send(2)
        executor.advance(by: .milliseconds(100))
        upstream.send(completion: .finished)
        executor.advance(by: .zero)
        #expect(events.value == ["1@0.0 seconds"], "nothing more before the window of 1 ends")
        executor.advance(by: .milliseconds(400))
        #expect(events.value == ["1@0.0 seconds", "2@1.0 seconds", "|@1.0 seconds"])
        token.invalidate()
    }

    @Test func aCompletionWithNothingHeldIsDeliveredAtOnce() {
        let executor = TestExecutor()
        let upstream = PassthroughSubject<Int, Never>()
        let events = LockedBox<[String]>([])
        let token = upstream.throttle(for: .seconds(1), on: executor, latest: true).subscribe(
            onValue: { value in events.mutate { $0.append("\(value)") } },
            onCompletion: { _ in events.mutate { $0.append("|") } }
        )
        upstream.send(1)
        upstream.send(completion: .finished)
        executor.advance(by: .zero)
        #expect(events.value == ["1", "|"])
        token.invalidate()
    }
}
