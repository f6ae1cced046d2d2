/// The delay before the next reconnect attempt, as a small value type.
///
/// Defaults follow Realm's client: 1 s at first, doubling with each consecutive failure of the same kind,
/// at most 5 minutes; jitter subtracts a uniformly random amount in `[0, delay/4]` so clients that lost
/// their connection together do not all come back at the same instant. A failure of a different kind
/// starts again from the initial delay, and so does `reset()` (`SyncSession.reconnect()`).
///
/// ```
/// failures (same kind):  1st   2nd   3rd   4th  …  10th
/// nominal delay:         1 s   2 s   4 s   8 s  …  5 min (capped)
/// actual delay:          nominal − jitter, jitter ∈ [0, nominal/4]
/// ```
public struct ReconnectBackoff: Sendable, Hashable {
    /// The delay after the first failure.
    public var initialDelay: Duration
    /// Each further failure of the same kind multiplies the delay by this.
    public var multiplier: Int
    /// The delay never exceeds this (before jitter).
    public var maximumDelay: Duration
    /// Jitter subtracts up to this fraction of the delay (0.25: up to a quarter).
    public var jitterFraction: Double
    /// A connection (or a session's binding) that lasted at least this long before it failed counts as
    /// healthy: the next delay starts again from `initialDelay`.
    public var resetAfter: Duration

    /// Realm's defaults: 1 s, ×2, 5 min, up to a quarter off, reset after 60 s of health.
    public init(
        initialDelay: Duration = .seconds(1),
        multiplier: Int = 2,
        maximumDelay: Duration = .seconds(300),
        jitterFraction: Double = 0.25,
        resetAfter: Duration = .seconds(60)
    ) {
        self.initialDelay = initialDelay
        self.multiplier = multiplier
        self.maximumDelay = maximumDelay
        self.jitterFraction = jitterFraction
        self.resetAfter = resetAfter
    }
}

/// The progress of one backoff sequence: what failed last and the nominal delay it earned.
struct BackoffState: Sendable, Hashable {
    private(set) var lastFailureKind: Int?
    private(set) var nominalDelay: Duration?

    /// Records a failure of `kind` and returns the delay before the next attempt. `random` is uniform
    /// in `0..<1` and picks the jitter.
    mutating func delay(afterFailureOf kind: Int, policy: ReconnectBackoff, random: Double) -> Duration {
        let nominal: Duration
        if let previous = nominalDelay, lastFailureKind == kind {
            nominal = min(previous * policy.multiplier, policy.maximumDelay)
        } else {
            nominal = min(policy.initialDelay, policy.maximumDelay)
        }
        lastFailureKind = kind
        nominalDelay = nominal
        let fraction = min(max(policy.jitterFraction, 0), 1) * min(max(random, 0), 1)
        return nominal - nominal * fraction
    }

    /// Starts the next failure from the initial delay.
    mutating func reset() {
        lastFailureKind = nil
        nominalDelay = nil
    }
}
