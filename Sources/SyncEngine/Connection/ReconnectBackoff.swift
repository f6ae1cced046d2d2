/// The delay before the next reconnect attempt, as a small value type.
///
/// 1 s at first, doubling with each consecutive failure (of any kind: a server that alternately refuses
/// connections and times them out is still backed off from), at most 5 minutes. "Full jitter": the actual
/// delay is uniformly random in `[0, nominal]`, so a fleet of clients that lost their connection together
/// (a server restart) comes back spread over the whole nominal delay, not in one burst (with Realm's
/// quarter, every client came back within 0.75–1 s of the restart). `reset()` (a connection healthy for
/// `resetAfter`, `SyncSession.reconnect()`) starts again from the initial delay.
///
/// ```
/// consecutive failures:  1st   2nd   3rd   4th  …  10th
/// nominal delay:         1 s   2 s   4 s   8 s  …  5 min (capped)
/// actual delay:          nominal − jitter, jitter ∈ [0, nominal × jitterFraction] (default: the whole)
/// ```
public struct ReconnectBackoff: Sendable, Hashable {
    /// The delay after the first failure.
    public var initialDelay: Duration
    /// Each further consecutive failure multiplies the delay by this.
    public var multiplier: Int
    /// The delay never exceeds this (before jitter).
    public var maximumDelay: Duration
    /// Jitter subtracts up to this fraction of the delay (1, the default: full jitter, uniform in
    /// `[0, nominal]`; 0.25: up to a quarter).
    public var jitterFraction: Double
    /// A connection (or a session's binding) that lasted at least this long before it failed counts as
    /// healthy: the next delay starts again from `initialDelay`.
    public var resetAfter: Duration

    /// 1 s, ×2, 5 min, full jitter, reset after 60 s of health.
    public init(
        initialDelay: Duration = .seconds(1),
        multiplier: Int = 2,
        maximumDelay: Duration = .seconds(300),
        jitterFraction: Double = 1,
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
///
/// Every consecutive failure grows the delay, whatever its kind: resetting on a change of kind let a
/// client whose attempts alternate between two kinds of failure (refused, then timed out, then refused…)
/// retry at the initial delay forever.
struct BackoffState: Sendable, Hashable {
    private(set) var lastFailureKind: Int?
    private(set) var nominalDelay: Duration?

    /// Records a failure of `kind` and returns the delay before the next attempt. `random` is uniform
    /// in `0..<1` and picks the jitter.
    mutating func delay(afterFailureOf kind: Int, policy: ReconnectBackoff, random: Double) -> Duration {
        let nominal: Duration
        if let previous = nominalDelay {
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
