import Dispatch
import Testing

/// A thread of its own that runs the closures handed to it, one at a time, each `run` returning once its
/// closure is done: the same thread across several steps of a test (a lock's owner, say, which must be one
/// thread throughout). Every wait has `threadDeadline`; a step that does not finish in time is a recorded
/// failure, not a hang.
final class StepThread: Sendable {
    private let work = LockedBox<(@Sendable () -> Void)?>(nil)
    private let ready = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let stopped = AtomicFlag()
    private let thread: DispatchSemaphore

    init() {
        let work = self.work
        let ready = self.ready
        let finished = self.finished
        let stopped = self.stopped
        thread = startThread {
            while true {
                _ = ready.wait(timeout: .now() + threadDeadline)
                if stopped.isSet { return }
                let step = work.mutate { work in
                    let step = work
                    work = nil
                    return step
                }
                if let step {
                    step()
                    finished.signal()
                }
            }
        }
    }

    /// Runs `step` on the thread; returns when it is done (or records a failure at the deadline).
    func run(_ step: @escaping @Sendable () -> Void) {
        work.value = step
        ready.signal()
        #expect(finished.wait(timeout: .now() + threadDeadline) == .success, "the thread's step never finished")
    }

    /// Ends the thread (after the step it runs, if any) and waits for it to end.
    func stop() {
        stopped.set()
        ready.signal()
        #expect(thread.waitWithDeadline(), "the step thread never ended")
    }
}
