/// Where and when stream work runs: now, or after a delay with a cancellable handle, on a clock it owns.
///
/// Operators that deliver on an executor (`observe(on:)`, `throttle`, `debounce`, `timeout`,
/// `subscribe(on:)`) take one. Provided: `ImmediateExecutor` (`.immediate`), `DispatchQueue` (`.main`
/// among them) and the virtual-time `TestExecutor`.
///
/// Requirements on a conformance: work submitted with `execute` from one thread runs in submission order
/// when the executor is serial; `schedule(after:)` returns a handle whose `cancel()` guarantees the work
/// does not start afterwards; `now` never goes backwards.
public protocol StreamExecutor: Sendable {
    /// Runs `work` as soon as possible on this executor.
    func execute(_ work: @escaping @Sendable () -> Void)

    /// Runs `work` on this executor once `delay` has passed on its clock.
    ///
    /// - Returns: A handle; `cancel()` on it before the work starts guarantees the work never runs.
    func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> ScheduledWork

    /// The executor's current time.
    var now: StreamInstant { get }
}

/// A point in time on a `StreamExecutor`'s clock: a duration since that clock's origin.
public struct StreamInstant: Comparable, Hashable, Sendable, CustomStringConvertible {
    /// Time since the clock's origin.
    public var sinceOrigin: Duration

    /// The instant `sinceOrigin` after the origin.
    public init(sinceOrigin: Duration) { self.sinceOrigin = sinceOrigin }

    /// A clock's origin.
    public static let zero = StreamInstant(sinceOrigin: .zero)

    /// The current time on the monotonic clock used by the real executors.
    public static var monotonicNow: StreamInstant {
        StreamInstant(sinceOrigin: ContinuousClock.now - monotonicOrigin)
    }

    private static let monotonicOrigin = ContinuousClock.now

    public static func < (lhs: StreamInstant, rhs: StreamInstant) -> Bool { lhs.sinceOrigin < rhs.sinceOrigin }

    public static func + (lhs: StreamInstant, rhs: Duration) -> StreamInstant {
        StreamInstant(sinceOrigin: lhs.sinceOrigin + rhs)
    }

    public static func - (lhs: StreamInstant, rhs: StreamInstant) -> Duration { lhs.sinceOrigin - rhs.sinceOrigin }

    public var description: String { "\(sinceOrigin)" }
}

/// A handle on work scheduled with `StreamExecutor.schedule(after:_:)`.
public struct ScheduledWork: Sendable {
    private let onCancel: @Sendable () -> Void

    /// A handle that runs `onCancel` when cancelled. `onCancel` must make sure the work does not start
    /// after it returns, and must be safe to call more than once.
    public init(onCancel: @escaping @Sendable () -> Void) { self.onCancel = onCancel }

    /// Cancels the work: if it has not started yet, it never will. Idempotent.
    public func cancel() { onCancel() }
}

extension Duration {
    /// This duration in whole nanoseconds, clamped to `Int`'s range and to zero from below.
    var clampedNanoseconds: Int {
        if self <= .zero { return 0 }
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return Int.max }
        let (total, overflow2) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000)
        return overflow2 ? Int.max : Int(total)
    }
}
