import Dispatch
import SyncStreams
import TestSupport
import Testing

@Suite(.offPool) struct ImmediateExecutorTests {
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

    @Test("cancelled scheduled work does not run, and what it captured is released at once")
    func cancelledScheduledWorkDoesNotRun() {
        let executor = ImmediateExecutor()
        let ran = AtomicFlag()
        weak var released: Canary?
        // Due in an hour: nothing a paused thread does can let it run before the cancel.
        let work: ScheduledWork = {
            let canary = Canary()
            released = canary
            return executor.schedule(after: .seconds(3600)) { withExtendedLifetime(canary) { ran.set() } }
        }()
        #expect(released != nil)  // the pending work holds its captures…
        work.cancel()
        #expect(released == nil)  // …and cancelling lets go of them at once, long before the deadline
        #expect(!ran.isSet)
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

/// An object whose lifetime shows whether scheduled work still holds what it captured.
final class Canary: Sendable {}
