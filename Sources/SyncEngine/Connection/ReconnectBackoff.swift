/// The delay before the next reconnect attempt, as a small value type.
///
/// The defaults are Realm's client's (DESIGN.md pins them): 1 s at first, doubling with each consecutive
/// failure of the same kind, at most 5 minutes; jitter subtracts a uniformly random amount in
/// `[0, delay/4]`; a failure of a different kind starts again from the initial delay, and so does
/// `reset()` (a connection healthy for `resetAfter`, `SyncSession.reconnect()`).
///
/// A fleet of clients that lose a server together comes back within the last quarter of each delay with
/// these defaults (0.75–1 s after a restart), and a client whose attempts alternate between two kinds of
/// failure (refused, timed out, refused…) retries every second. ``fleet`` changes both: full jitter
/// (uniform in `[0, delay]`) and a delay that grows across kinds.
///
/// ```
/// failures (same kind):  1st   2nd   3rd   4th  …  10th
/// nominal delay:         1 s   2 s   4 s   8 s  …  5 min (capped)
/// actual delay:          nominal − jitter, jitter ∈ [0, nominal × jitterFraction]
/// ```
public struct ReconnectBackoff: Sendable, Hashable {
    /// The delay after the first failure.
    public var initialDelay: Duration
    /// Each further failure (of the same kind, unless `growsAcrossFailureKinds`) multiplies the delay by
    /// this.
    public var multiplier: Int
    /// The delay never exceeds this (before jitter).
    public var maximumDelay: Duration
    /// Jitter subtracts up to this fraction of the delay (0.25, the default: up to a quarter; 1: full
    /// jitter, uniform in `[0, nominal]`).
    public var jitterFraction: Double
    /// A connection (or a session's binding) that lasted at least this long before it failed counts as
    /// healthy: the next delay starts again from `initialDelay`.
    public var resetAfter: Duration
    /// Whether a failure of a different kind keeps growing the delay (`true`) or starts again from
    /// `initialDelay` (`false`, the default, as Realm's client).
    public var growsAcrossFailureKinds: Bool

    /// Realm's defaults: 1 s, ×2, 5 min, up to a quarter off, a different kind of failure resets, reset
    /// after 60 s of health.
    public init(
        initialDelay: Duration = .seconds(1),
        multiplier: Int = 2,
        maximumDelay: Duration = .seconds(300),
        jitterFraction: Double = 0.25,
        resetAfter: Duration = .seconds(60),
        growsAcrossFailureKinds: Bool = false
    ) {
        self.initialDelay = initialDelay
        self.multiplier = multiplier
        self.maximumDelay = maximumDelay
        self.jitterFraction = jitterFraction
        self.resetAfter = resetAfter
        self.growsAcrossFailureKinds = growsAcrossFailureKinds
    }

    /// For many clients of one server: full jitter, so a fleet that lost the server together comes back
    /// spread over the whole delay, and a delay that grows whatever kind of failure follows, so
    /// alternating failures are backed off from too. Otherwise the defaults.
    public static let fleet = ReconnectBackoff(jitterFraction: 1, growsAcrossFailureKinds: true)
}

/// The progress of one backoff sequence: what failed last and the nominal delay it earned.
struct BackoffState: Sendable, Hashable {
    private(set) var lastFailureKind: Int?
    private(set) var nominalDelay: Duration?

    /// Records a failure of `kind` and returns the delay before the next attempt. `random` is uniform
    /// in `0..<1` and picks the jitter.
    mutating func delay(afterFailureOf kind: Int, policy: ReconnectBackoff, random: Double) -> Duration {
        let nominal: Duration
        if let previous = nominalDelay, policy.growsAcrossFailureKinds || lastFailureKind == kind {
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
