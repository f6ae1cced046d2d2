import Dispatch
import SyncStreams
import Testing

@Suite struct ImmediateExecutorTests {
    @Test func executeRunsTheWorkBeforeReturning() {
        let executor: ImmediateExecutor = .immediate
        let runs = AtomicCounter()
        executor.execute { runs.increment() }
        #expect(runs.value == 1)
        executor.execute { runs.increment() }
        #expect(runs.value == 2)
    }

    @Test func executeRunsOnTheCallingThread() {
        let thread = LockedBox<String?>(nil)
        let done = startThread {
            ImmediateExecutor().execute { thread.value = "ran" }
            if thread.value == "ran" { thread.value = "ran inline" }
        }
        #expect(done.waitWithDeadline())
        #expect(thread.value == "ran inline")
    }

    @Test func scheduledWorkRunsLater() {
        let executor = ImmediateExecutor()
        let ran = DispatchSemaphore(value: 0)
        let work = executor.schedule(after: .milliseconds(1)) { ran.signal() }
        #expect(ran.waitWithDeadline())
        work.cancel()
    }

    @Test func cancelledScheduledWorkDoesNotRun() {
        let executor = ImmediateExecutor()
        let cancelledRan = AtomicFlag()
        // Due well after the cancel below, so a thread paused between the two lines (TSan, a busy machine)
        // cannot let it run before it is cancelled.
        let cancelled = executor.schedule(after: .milliseconds(300)) { cancelledRan.set() }
        cancelled.cancel()
        // Work due later than the cancelled work; once it has run, the cancelled work would have run too.
        let ran = DispatchSemaphore(value: 0)
        _ = executor.schedule(after: .milliseconds(600)) { ran.signal() }
        #expect(ran.waitWithDeadline())
        #expect(!cancelledRan.isSet)
    }

    @Test func nowNeverGoesBackwards() {
        let executor = ImmediateExecutor()
        var previous = executor.now
        for _ in 0..<1_000 {
            let current = executor.now
            #expect(current >= previous)
            previous = current
        }
    }
}
