/// How a progress stream reports: for as long as it is subscribed, or until the work outstanding at
/// registration is done.
///
/// In the marble examples below each update is `(transferred, transferrable)` and each delivered value is
/// `transferred/transferrable estimate`; `|` is the stream finishing.
public enum ProgressMode: Sendable, Hashable {
    /// Reports every change until the subscription is invalidated; never finishes on its own.
    ///
    /// - `transferrableBytes` is always the latest transferrable count, so the total may grow.
    /// - The estimate is `(t − base) / (T − base)`, where `base` is the transferred count at the last point
    ///   the direction was complete (0 before it ever was; shared by every subscriber of the direction),
    ///   and exactly 1.0 when `t ≥ T`. So the estimate restarts from 0 only after it reached 1.
    /// - It may report complete many times.
    ///
    /// ```
    /// update:    (0,100)    (50,100)    (100,100)      (100,200)    (150,200)
    /// receives:  0/100 0.0  50/100 0.5  100/100 1.0 ✓  100/200 0.0  150/200 0.5
    /// ```
    case reportIndefinitely

    /// Reports progress towards the transferrable count captured at registration (or at the first update,
    /// when nothing was known at registration), then finishes.
    ///
    /// - `transferrableBytes` is the captured total. A later, smaller transferrable lowers it; a larger one
    ///   is ignored (new work is not waited for).
    /// - `transferredBytes` is `min(t, captured)`; neither it nor the estimate ever goes backwards.
    /// - Once `t ≥ captured`: one final value with `progressEstimate == 1.0` and `isTransferComplete`,
    ///   then `.finished`. With nothing outstanding at registration that happens during `subscribe`.
    ///
    /// ```
    /// update:    (0,100)   |subscribe  (50,300)    (40,300)  (80,90)    (90,400)
    /// receives:            0/100 0.0   50/100 0.5            80/90 0.89 90/90 1.0 ✓ |
    /// ```
    case forCurrentlyOutstandingWork
}
