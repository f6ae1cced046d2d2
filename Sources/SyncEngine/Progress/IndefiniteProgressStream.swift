import SyncStreams

/// The `.reportIndefinitely` view of a direction's reports: every report, as it comes; finishes when the
/// notifier does.
///
/// A stream type rather than a closure-based `AnySyncStream`: the subject already calls its subscribers
/// inside a callback scope, so the closure form's per-event scope (a thread-local increment and decrement,
/// and one more indirect call) would be spent for nothing.
///
/// Cost: the filter below is one more object per subscription, read on every report. With P7's 1,000
/// subscribers that is one more cache line per delivery, and P7 went from 5.1 to 9.5 ns per delivery when
/// the filter came in (issue 21 item 9); without any filter it is 5.3 ns. Still far inside P7's 50 ns.
///
/// Nil (nothing known yet) and stale markers are not delivered. A stale marker may separate two identical
/// reports: a subscription that delivered the report the marker names skips the next one if it is the
/// same, while one registered during the stale period delivers it. Nothing is compared or stored per
/// report otherwise.
///
/// ```
/// events:        (50,100)  stale(after: 50)  (50,100)  (60,100)
/// early:         50                                    60
/// during stale:                              50        60
/// ```
struct IndefiniteProgressStream: SyncStream {
    typealias Output = SyncProgress
    typealias Failure = Never

    let reports: CurrentValueSubject<ProgressEvent?, Never>

    func subscribe(
        onValue: @escaping @Sendable (SyncProgress) -> Void,
        onCompletion: @escaping @Sendable (StreamCompletion<Never>) -> Void
    ) -> SubscriptionToken {
        let filter = StaleRepeatFilter()
        return reports.subscribe(
            onValue: { event in
                switch event {
                case .report(let report)?:
                    if let skip = filter.skipIfEqual {
                        filter.skipIfEqual = nil
                        if skip == report { return }
                    }
                    filter.hasDelivered = true
                    onValue(report)
                case .stale(let after)?:
                    if filter.hasDelivered { filter.skipIfEqual = after }
                case nil:
                    return
                }
            },
            onCompletion: onCompletion)
    }

    /// One subscription's memory of a stale marker: the report to skip if it comes next.
    private final class StaleRepeatFilter: @unchecked Sendable {
        // @unchecked Sendable: only touched inside one subscription's callbacks, which the subject
        // serializes and orders with its lock.
        /// Set once the subscription delivered a report: every stale marker after that names the report
        /// it delivered last (the publisher delivers every queued event, in order).
        var hasDelivered = false
        var skipIfEqual: SyncProgress?
    }
}
