import Dispatch

/// Runs work at once, on the calling thread.
///
/// `execute` calls the work before returning. Delayed work (`schedule(after:)`) runs after the delay on a
/// shared background queue, because nothing can run "immediately later" on the caller's thread. `now` is
/// the monotonic clock.
public struct ImmediateExecutor: StreamExecutor {
    /// The immediate executor.
    public init() {}

    public func execute(_ work: @escaping @Sendable () -> Void) { work() }

    public func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> ScheduledWork {
        DispatchQueue.global().schedule(after: delay, work)
    }

    public var now: StreamInstant { .monotonicNow }
}

extension StreamExecutor where Self == ImmediateExecutor {
    /// Runs work at once on the calling thread.
    public static var immediate: ImmediateExecutor { ImmediateExecutor() }
}
