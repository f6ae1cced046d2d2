/// A cumulative count of bytes moved and of bytes to move, as a progress stream reports it: what
/// `rate(window:on:)` measures. (`SyncEngine`'s `SyncProgress` conforms.)
public protocol TransferProgress {
    /// Bytes moved so far, counted from the start of the transfer (cumulative).
    var transferredBytes: Int { get }
    /// Bytes moved so far plus bytes still to move.
    var transferrableBytes: Int { get }
}

/// How fast a transfer moves and when it will be done, as `rate(window:on:)` measures it.
public struct TransferRate: Sendable, Hashable, CustomStringConvertible {
    /// Bytes per second over the operator's window; 0 when nothing moved in it (or not measured yet).
    public var bytesPerSecond: Double
    /// The bytes still to move divided by `bytesPerSecond`, rounded to the millisecond; `.zero` when
    /// nothing remains; `nil` when something remains and the rate is 0 (unknown: stalled, or not
    /// measured yet).
    public var estimatedTimeRemaining: Duration?

    public init(bytesPerSecond: Double, estimatedTimeRemaining: Duration?) {
        self.bytesPerSecond = bytesPerSecond
        self.estimatedTimeRemaining = estimatedTimeRemaining
    }

    /// No rate measured and nothing known about the time remaining.
    public static let unknown = TransferRate(bytesPerSecond: 0, estimatedTimeRemaining: nil)

    /// `"100.0 B/s, 3 seconds remaining"`, or `"0.0 B/s, time remaining unknown"`.
    public var description: String {
        "\(bytesPerSecond) B/s, "
            + (estimatedTimeRemaining.map { "\($0) remaining" } ?? "time remaining unknown")
    }
}

extension SyncStream where Output: TransferProgress {
    /// Turns a progress stream into its transfer rate (bytes per second) and estimated time remaining,
    /// measured over a sliding `window` of time on `executor`'s clock (so in virtual time under
    /// `TestExecutor`).
    ///
    /// - **Samples.** Each upstream value is a sample: its `transferredBytes` and `transferrableBytes` at
    ///   the executor's `now` when it arrives.
    /// - **Window.** At time `now` the rate is the bytes moved from a *baseline* sample to the newest
    ///   sample, divided by `now − baseline.time`. The baseline is the latest sample at least `window`
    ///   old (`time <= now − window`), or the oldest sample while none is that old; older samples are
    ///   dropped. So the rate covers at least the last `window` once that much history exists, even when
    ///   progress is reported less often than once per window.
    /// - **When it emits.** Once per upstream value (the rate at its arrival), and once `window` after
    ///   the newest value if none followed (a stall: nothing moved in the last window, so the rate is 0).
    ///   A value equal to the previous one is not emitted again.
    /// - **Fewer than two samples** (the first value, or the first after a reset): nothing moved yet, so
    ///   it emits a rate of 0 (`TransferRate.unknown` unless nothing remains).
    /// - **Re-based progress.** A value whose `transferredBytes` is below the newest sample's (a stream
    ///   that restarted its counts) drops every sample and starts again from that value.
    /// - **Time remaining** is `transferrableBytes − transferredBytes` of the newest sample divided by
    ///   the rate, rounded to the millisecond; `.zero` when nothing remains; `nil` when something remains
    ///   and the rate is 0.
    /// - **Completion** (finished or failure) is passed on at once; the stall timer is cancelled.
    /// - Every event is delivered on `executor`, serialized and in order. `invalidate()` cancels the
    ///   stall timer (it never fires afterwards, and releases what it captured) and ends the upstream
    ///   subscription.
    /// - Memory: the samples of one window (plus the baseline). The operator emits per upstream value;
    ///   for a display, `throttle` its output (or its input).
    ///
    /// ```
    /// window: 2 s; one column per second; values are transferred/transferrable bytes
    /// time:      0        1         2         3         4   5         6         7
    /// upstream:  0/400    100/400   200/400   300/400   -   -         400/400   |
    /// rate:      0 B/s    100 B/s   100 B/s   100 B/s       0 B/s     33.3 B/s  |
    /// remaining: nil      3 s       2 s       1 s           nil       0 s
    /// ```
    ///
    /// - Parameters:
    ///   - window: How much recent history the rate covers; longer than the interval between the
    ///     upstream's reports, or the rate drops to 0 between them. Must be positive.
    ///   - executor: The clock, and where values are delivered.
    public func rate<Executor: StreamExecutor>(window: Duration, on executor: Executor) -> Streams.Rate<Self, Executor>
    {
        Streams.Rate(upstream: self, window: window, executor: executor)
    }
}

extension Streams {
    /// The stream returned by `SyncStream.rate(window:on:)`.
    public struct Rate<Upstream: SyncStream, Executor: StreamExecutor>: SyncStream
    where Upstream.Output: TransferProgress {
        public typealias Output = TransferRate
        public typealias Failure = Upstream.Failure

        /// The progress stream measured.
        public let upstream: Upstream
        /// How much recent history the rate covers.
        public let window: Duration
        /// The clock, and where values are delivered.
        public let executor: Executor

        /// Creates the stream; usually reached through the operator method, which documents the semantics.
        public init(upstream: Upstream, window: Duration, executor: Executor) {
            precondition(window > .zero, "rate(window:on:) needs a positive window")
            self.upstream = upstream
            self.window = window
            self.executor = executor
        }

        public func subscribe(
            onValue: @escaping @Sendable (Output) -> Void,
            onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
        ) -> SubscriptionToken {
            let storage = TimedOperatorStorage(
                machine: RateStateMachine<Upstream.Output, Failure>(window: window), executor: executor,
                deliversOnExecutor: true, onValue: onValue, onCompletion: onCompletion)
            storage.connect(to: upstream)
            return SubscriptionToken(storage)
        }
    }
}
