import SyncStreams

/// The `.reportIndefinitely` view of a direction's reports: every report, as it comes; finishes when the
/// notifier does.
///
/// A stream type rather than a closure-based `AnySyncStream`: the subject already calls its subscribers
/// inside a callback scope, so the closure form's per-event scope (a thread-local increment and decrement,
/// and one more indirect call) would be spent for nothing.
///
/// Cost: each subscription's filter state lives in the object its subject callback runs in. The callback
/// captures only that object, so the object itself is the closure's context (no separate context box), and a
/// delivery touches the same cache lines as an unfiltered one: the subject's subscriber, this object, the
/// user's callback. When the filter was a second object beside the callback's context, P7 went from 5.1 to
/// 9.5 ns per delivery with 1,000 subscribers (one more cache line each); see docs/PERFORMANCE.md.
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
        // Capture only `filter`: a closure whose sole capture is one class reference uses it as its
        // context, so no context box sits between the subject's subscriber and the filter.
        let filter = StaleRepeatFilter(onValue: onValue)
        return reports.subscribe(onValue: { filter.receive($0) }, onCompletion: onCompletion)
    }

    /// One subscription: the user's value callback and its memory of a stale marker (the report to skip if
    /// it comes next).
    ///
    /// Layout matters here (P7): a report reads `onValue` and `memory`, declared first so they sit in the
    /// object's first bytes, next to each other; the report to skip, read only after a stale marker, comes
    /// after them.
    private final class StaleRepeatFilter: @unchecked Sendable {
        // @unchecked Sendable: the mutable state is only touched inside one subscription's callbacks, which
        // the subject serializes and orders with its lock. `onValue` is immutable and Sendable; a `let`, so
        // calling it needs no retain.
        private let onValue: @Sendable (SyncProgress) -> Void
        private var memory = Memory.nothingDelivered
        /// The report to skip if it comes next; meaningful in `.skipPending` only.
        private var skipIfEqual: SyncProgress?

        private enum Memory: UInt8 {
            /// No report delivered yet: a stale marker names a report this subscription never saw.
            case nothingDelivered
            /// A report was delivered: every stale marker after that names the report it delivered last (the
            /// publisher delivers every queued event, in order).
            case delivered
            /// A stale marker came after a delivered report: the next report is skipped if it is
            /// `skipIfEqual`.
            case skipPending
        }

        init(onValue: @escaping @Sendable (SyncProgress) -> Void) { self.onValue = onValue }

        @inline(__always)
        func receive(_ event: ProgressEvent?) {
            switch event {
            case .report(let report)?:
                if _slowPath(memory != .delivered) {
                    let skip = memory == .skipPending ? skipIfEqual : nil
                    memory = .delivered
                    skipIfEqual = nil
                    if skip == report { return }
                }
                onValue(report)
            case .stale(let after)?:
                guard memory != .nothingDelivered else { return }
                memory = .skipPending
                skipIfEqual = after
            case nil:
                return
            }
        }
    }
}
