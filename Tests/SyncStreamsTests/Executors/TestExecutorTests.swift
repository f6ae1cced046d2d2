import SyncStreams
import Testing

@Suite struct TestExecutorTests {
    /// Records the order in which work ran, with the virtual time at which it ran.
    private final class RunLog: Sendable {
        private let box = LockedBox<[String]>([])
        var entries: [String] { box.value }
        func append(_ entry: String) { box.mutate { $0.append(entry) } }
    }

    @Test func nothingRunsUntilTheClockIsAdvanced() {
        let executor = TestExecutor()
        let runs = AtomicCounter()
        executor.execute { runs.increment() }
        _ = executor.schedule(after: .seconds(1)) { runs.increment() }
        #expect(runs.value == 0)
        #expect(executor.pendingCount == 2)
        executor.advance(by: .zero)
        #expect(runs.value == 1, "advance(by: .zero) runs what is due now")
        #expect(executor.pendingCount == 1)
    }

    @Test func advanceRunsDueWorkInTimeOrderSettingNowToEachDueTime() {
        let executor = TestExecutor()
        let log = RunLog()
        _ = executor.schedule(after: .milliseconds(300)) { log.append("c@\(executor.now)") }
        _ = executor.schedule(after: .milliseconds(100)) { log.append("a@\(executor.now)") }
        _ = executor.schedule(after: .milliseconds(200)) { log.append("b@\(executor.now)") }
        executor.advance(by: .milliseconds(99))
        #expect(log.entries.isEmpty)
        #expect(executor.now == StreamInstant(sinceOrigin: .milliseconds(99)))
        executor.advance(by: .milliseconds(1))
        #expect(log.entries == ["a@\(StreamInstant(sinceOrigin: .milliseconds(100)))"])
        executor.advance(by: .milliseconds(250))
        #expect(
            log.entries == [
                "a@\(StreamInstant(sinceOrigin: .milliseconds(100)))",
                "b@\(StreamInstant(sinceOrigin: .milliseconds(200)))",
                "c@\(StreamInstant(sinceOrigin: .milliseconds(300)))",
            ])
        #expect(executor.now == StreamInstant(sinceOrigin: .milliseconds(350)))
    }

    @Test func tiesRunInSubmissionOrder() {
        let executor = TestExecutor()
        let log = RunLog()
        for name in ["1", "2", "3"] {
            _ = executor.schedule(after: .seconds(1)) { log.append(name) }
        }
        executor.execute { log.append("now-a") }
        executor.execute { log.append("now-b") }
        executor.advance(by: .seconds(1))
        #expect(log.entries == ["now-a", "now-b", "1", "2", "3"])
    }

    @Test func workScheduledByWorkRunsWhenDueWithinTheSameAdvance() {
        let executor = TestExecutor()
        let log = RunLog()
        _ = executor.schedule(after: .seconds(1)) {
            log.append("outer@\(executor.now)")
            executor.execute { log.append("immediate@\(executor.now)") }
            _ = executor.schedule(after: .seconds(1)) { log.append("inner@\(executor.now)") }
            _ = executor.schedule(after: .seconds(10)) { log.append("late") }
        }
        executor.advance(by: .seconds(3))
        #expect(
            log.entries == [
                "outer@\(StreamInstant(sinceOrigin: .seconds(1)))",
                "immediate@\(StreamInstant(sinceOrigin: .seconds(1)))",
                "inner@\(StreamInstant(sinceOrigin: .seconds(2)))",
            ])
        #expect(executor.now == StreamInstant(sinceOrigin: .seconds(3)))
        #expect(executor.pendingCount == 1)
        #expect(executor.nextDueTime == StreamInstant(sinceOrigin: .seconds(11)))
    }

    @Test func workScheduledLaterThanTheTargetWaits() {
        let executor = TestExecutor()
        let runs = AtomicCounter()
        _ = executor.schedule(after: .seconds(2)) { runs.increment() }
        executor.advance(by: .seconds(1))
        executor.advance(by: .milliseconds(999))
        #expect(runs.value == 0)
        executor.advance(by: .milliseconds(1))
        #expect(runs.value == 1)
    }

    @Test func runRunsEverythingAdvancingTimeToEachDueTime() {
        let executor = TestExecutor()
        let log = RunLog()
        _ = executor.schedule(after: .seconds(5)) {
            log.append("five@\(executor.now)")
            _ = executor.schedule(after: .seconds(5)) { log.append("ten@\(executor.now)") }
        }
        _ = executor.schedule(after: .seconds(1)) { log.append("one@\(executor.now)") }
        executor.run()
        #expect(
            log.entries == [
                "one@\(StreamInstant(sinceOrigin: .seconds(1)))",
                "five@\(StreamInstant(sinceOrigin: .seconds(5)))",
                "ten@\(StreamInstant(sinceOrigin: .seconds(10)))",
            ])
        #expect(executor.now == StreamInstant(sinceOrigin: .seconds(10)))
        #expect(executor.pendingCount == 0)
        #expect(executor.nextDueTime == nil)
    }

    @Test func runStopsAtItsLimitForSelfReschedulingWork() {
        let executor = TestExecutor()
        let runs = AtomicCounter()
        @Sendable func tick() {
            runs.increment()
            _ = executor.schedule(after: .seconds(1), tick)
        }
        _ = executor.schedule(after: .seconds(1), tick)
        executor.run(limit: 5)
        #expect(runs.value == 5)
        #expect(executor.pendingCount == 1)
        #expect(executor.now == StreamInstant(sinceOrigin: .seconds(5)))
    }

    @Test func cancelledWorkNeverRunsAndIsReleased() {
        let executor = TestExecutor()
        let runs = AtomicCounter()
        weak var weakCanary: LifetimeCanary?
        let work: ScheduledWork
        do {
            let canary = LifetimeCanary()
            weakCanary = canary
            work = executor.schedule(after: .seconds(1)) {
                canary.touch()
                runs.increment()
            }
        }
        let kept = executor.schedule(after: .seconds(1)) { runs.increment() }
        #expect(weakCanary != nil)
        work.cancel()
        #expect(weakCanary == nil, "cancelling releases the work's closure")
        #expect(executor.pendingCount == 1)
        work.cancel()
        executor.advance(by: .seconds(2))
        #expect(runs.value == 1)
        kept.cancel()
    }

    @Test func cancelFromEarlierWorkPreventsLaterWorkInTheSameAdvance() {
        let executor = TestExecutor()
        let runs = AtomicCounter()
        let later = executor.schedule(after: .seconds(2)) { runs.increment() }
        _ = executor.schedule(after: .seconds(1)) { later.cancel() }
        executor.advance(by: .seconds(5))
        #expect(runs.value == 0)
    }

    @Test func cancelAfterTheWorkRanIsHarmless() {
        let executor = TestExecutor()
        let runs = AtomicCounter()
        let work = executor.schedule(after: .seconds(1)) { runs.increment() }
        let other = executor.schedule(after: .seconds(3)) { runs.increment() }
        executor.advance(by: .seconds(1))
        work.cancel()
        executor.advance(by: .seconds(2))
        #expect(runs.value == 2)
        other.cancel()
    }

    @Test func nowStartsAtTheGivenInstantAndNeverGoesBackwards() {
        let start = StreamInstant(sinceOrigin: .seconds(100))
        let executor = TestExecutor(now: start)
        #expect(executor.now == start)
        #expect(TestExecutor().now == .zero)
        executor.advance(by: .seconds(-5))
        #expect(executor.now == start)
        executor.advance(to: StreamInstant(sinceOrigin: .seconds(50)))
        #expect(executor.now == start)
        executor.advance(to: StreamInstant(sinceOrigin: .seconds(101)))
        #expect(executor.now == StreamInstant(sinceOrigin: .seconds(101)))
    }

    @Test func advanceToRunsWorkDueByThatInstant() {
        let executor = TestExecutor()
        let runs = AtomicCounter()
        _ = executor.schedule(after: .seconds(2)) { runs.increment() }
        _ = executor.schedule(after: .seconds(4)) { runs.increment() }
        executor.advance(to: StreamInstant(sinceOrigin: .seconds(3)))
        #expect(runs.value == 1)
        #expect(executor.now == StreamInstant(sinceOrigin: .seconds(3)))
    }

    @Test func scheduledDelaysRecordsTheDelaysInCallOrder() {
        let executor = TestExecutor()
        _ = executor.schedule(after: .milliseconds(250)) {}
        executor.execute {}
        let cancelled = executor.schedule(after: .seconds(3)) {}
        cancelled.cancel()
        _ = executor.schedule(after: .zero) {}
        #expect(executor.scheduledDelays == [.milliseconds(250), .seconds(3), .zero])
    }

    @Test func negativeDelayRunsAtTheCurrentTime() {
        let executor = TestExecutor()
        let runs = AtomicCounter()
        _ = executor.schedule(after: .seconds(-1)) { runs.increment() }
        #expect(executor.nextDueTime == .zero)
        executor.advance(by: .zero)
        #expect(runs.value == 1)
    }

    @Test func drivesARelayThatSchedulesThroughIt() {
        let executor = TestExecutor()
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        let token = subject.subscribe { value in
            _ = executor.schedule(after: .seconds(1)) { recorder.receive(value) }
        }
        subject.send(1)
        subject.send(2)
        #expect(recorder.values.isEmpty)
        executor.advance(by: .seconds(1))
        #expect(recorder.values == [1, 2])
        token.invalidate()
    }

    @Test func scheduledDelaysKeepsOnlyTheMostRecentOnes() {
        let executor = TestExecutor()
        let limit = TestExecutor.recordedDelayLimit
        let count = 3 * limit + 5
        for index in 0..<count { executor.schedule(after: .nanoseconds(index)) {}.cancel() }
        let expected = (count - limit..<count).map { Duration.nanoseconds($0) }
        #expect(executor.scheduledDelays.count == limit, "the record grows with every schedule(after:)")
        #expect(executor.scheduledDelays == expected)
    }
}
