import Testing

@testable import SyncStreams

@Suite struct StreamExecutorTests {
    @Test func streamInstantArithmeticAndOrder() {
        let start = StreamInstant(sinceOrigin: .seconds(1))
        let later = start + .milliseconds(500)
        #expect(later.sinceOrigin == .milliseconds(1_500))
        #expect(later - start == .milliseconds(500))
        #expect(start < later)
        #expect(StreamInstant.zero < start)
        #expect(StreamInstant.zero == StreamInstant(sinceOrigin: .zero))
        #expect(Set([start, start + .zero, later]).count == 2)
    }

    @Test func monotonicNowNeverGoesBackwards() {
        var previous = StreamInstant.monotonicNow
        for _ in 0..<1_000 {
            let current = StreamInstant.monotonicNow
            #expect(current >= previous)
            previous = current
        }
    }

    @Test func scheduledWorkCancelRunsTheCancelActionEachTime() {
        let cancels = AtomicCounter()
        let work = ScheduledWork { cancels.increment() }
        work.cancel()
        work.cancel()
        #expect(cancels.value == 2, "the handle forwards every cancel; the action itself must be idempotent")
    }

    @Test(arguments: [
        (Duration.zero, 0),
        (.nanoseconds(1), 1),
        (.milliseconds(1_500), 1_500_000_000),
        (.seconds(-1), 0),
        (.milliseconds(-500), 0),
        (.nanoseconds(-1), 0),
        (.seconds(Int64.max), Int.max),
    ])
    func clampedNanosecondsClampsToZeroAndIntMax(duration: Duration, expected: Int) {
        #expect(duration.clampedNanoseconds == expected)
    }
}
