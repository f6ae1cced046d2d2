/// A virtual-time executor for deterministic tests: nothing runs until the test advances its clock.
///
/// - `execute` queues work at the current virtual time; `schedule(after:)` queues it at `now + delay`.
/// - `advance(by:)` runs, in time order (ties in submission order), every piece of work due up to
///   `now + duration`, including work scheduled by the work it runs, setting `now` to each one's due
///   time; then sets `now` to the target. `advance(by: .zero)` runs what is due now.
/// - `run()` runs everything queued, advancing time to each due time, until the queue is empty.
/// - Cancelled work is removed and never runs.
///
/// Work runs on the thread that calls `advance` or `run`. The executor is thread-safe; advance it from
/// one thread at a time.
///
/// ```swift
/// let executor = TestExecutor()
/// let work = executor.schedule(after: .seconds(1)) { print("fired") }
/// executor.advance(by: .milliseconds(999))   // nothing
/// executor.advance(by: .milliseconds(1))     // "fired", now == 1 s
/// ```
public final class TestExecutor: StreamExecutor, Sendable {
    private struct Job {
        let id: UInt64
        let due: StreamInstant
        let work: @Sendable () -> Void
    }

    private struct State {
        var now: StreamInstant
        var jobs: [Job] = []  // sorted by (due, id)
        var nextID: UInt64 = 0
        var scheduledDelays: [Duration] = []
    }

    private let state: Locked<State>

    /// A virtual clock starting at `now`.
    public init(now: StreamInstant = .zero) {
        state = Locked(State(now: now))
    }

    /// The current virtual time.
    public var now: StreamInstant { state.withLock { $0.now } }

    /// How many pieces of work are waiting.
    public var pendingCount: Int { state.withLock { $0.jobs.count } }

    /// The delays passed to `schedule(after:)`, in call order — the most recent `recordedDelayLimit` of
    /// them: lets a test assert the exact interaction, without an executor that runs a long (virtual) time
    /// growing without bound.
    public var scheduledDelays: [Duration] {
        state.withLock { Array($0.scheduledDelays.suffix(Self.recordedDelayLimit)) }
    }

    /// How many of the most recent delays `scheduledDelays` keeps.
    public static var recordedDelayLimit: Int { 1_024 }

    /// The due time of the earliest waiting work, if any.
    public var nextDueTime: StreamInstant? { state.withLock { $0.jobs.first?.due } }

    public func execute(_ work: @escaping @Sendable () -> Void) {
        _ = enqueue(after: .zero, work)
    }

    public func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> ScheduledWork {
        let id = enqueue(after: delay, work, recordDelay: true)
        return ScheduledWork { [weak self] in
            guard let self else { return }
            // Dropping the job releases what its closure captured.
            let removed = self.state.withLock { state -> Job? in
                guard let index = state.jobs.firstIndex(where: { $0.id == id }) else { return nil }
                return state.jobs.remove(at: index)
            }
            _ = removed
        }
    }

    private func enqueue(
        after delay: Duration, _ work: @escaping @Sendable () -> Void, recordDelay: Bool = false
    )
        -> UInt64
    {
        state.withLock { state in
            let id = state.nextID
            state.nextID += 1
            if recordDelay {
                state.scheduledDelays.append(delay)
                // Trimmed in batches (amortized O(1) per call); the getter returns the most recent ones.
                if state.scheduledDelays.count >= 2 * Self.recordedDelayLimit {
                    state.scheduledDelays.removeFirst(state.scheduledDelays.count - Self.recordedDelayLimit)
                }
            }
            let job = Job(id: id, due: state.now + max(delay, .zero), work: work)
            // Insert after every job due at or before it, keeping (due, id) order.
            var low = 0
            var high = state.jobs.count
            while low < high {
                let mid = (low + high) / 2
                if state.jobs[mid].due <= job.due { low = mid + 1 } else { high = mid }
            }
            state.jobs.insert(job, at: low)
            return id
        }
    }

    /// Advances the clock by `duration`, running all work due by then.
    public func advance(by duration: Duration) {
        let target = state.withLock { $0.now } + max(duration, .zero)
        advance(to: target)
    }

    /// Advances the clock to `instant` (never backwards), running all work due by then.
    public func advance(to instant: StreamInstant) {
        while let job = popJob(dueBy: instant) {
            job.work()
        }
        state.withLock { state in
            if state.now < instant { state.now = instant }
        }
    }

    /// Runs all queued work, advancing the clock to each one's due time, until nothing is queued.
    ///
    /// - Parameter limit: The most pieces of work to run, a guard against work that reschedules itself
    ///   forever (a repeating timer); returns when it is reached.
    public func run(limit: Int = 1_000_000) {
        var remaining = limit
        while remaining > 0, let job = popJob(dueBy: nil) {
            remaining -= 1
            job.work()
        }
    }

    private func popJob(dueBy limit: StreamInstant?) -> Job? {
        state.withLock { state in
            guard let first = state.jobs.first else { return nil }
            if let limit, first.due > limit { return nil }
            state.jobs.removeFirst()
            if state.now < first.due { state.now = first.due }
            return first
        }
    }
}
