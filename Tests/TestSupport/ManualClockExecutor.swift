import SyncStreams

/// A serial executor for tests whose clock moves only when told to, and whose jobs run only when asked.
///
/// Unlike `TestExecutor`, `advance(by:)` moves the clock without running anything, so a callback can
/// stand for work that takes time (each call "takes" what it advances) while the job it runs in goes on:
/// what the code under test decides by the clock is then exact. `schedule(after:)` is not supported (a
/// test that needs timers uses `TestExecutor`).
package final class ManualClockExecutor: StreamExecutor, Sendable {
    private let state = Locked<(now: StreamInstant, jobs: [@Sendable () -> Void])>((.zero, []))

    package init() {}

    package var now: StreamInstant { state.withLock { $0.now } }

    /// Moves the clock forward; runs nothing.
    package func advance(by duration: Duration) { state.withLock { $0.now = $0.now + duration } }

    package func execute(_ work: @escaping @Sendable () -> Void) { state.withLock { $0.jobs.append(work) } }

    package func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> ScheduledWork {
        preconditionFailure("ManualClockExecutor runs no timers; use TestExecutor")
    }

    /// Runs jobs in order, including those they add, until none is left (true) or `limit` jobs ran.
    package func runAll(limit: Int) -> Bool {
        for _ in 0..<limit {
            let next = state.withLock { state -> (@Sendable () -> Void)? in
                state.jobs.isEmpty ? nil : state.jobs.removeFirst()
            }
            guard let next else { return true }
            next()
        }
        return false
    }
}
