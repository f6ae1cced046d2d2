import SyncStreams

/// The `.reportIndefinitely` view of a direction's reports: every report, as it comes; finishes when the
/// notifier does.
///
/// A stream type rather than a closure-based `AnySyncStream`: the subject already calls its subscribers
/// inside a callback scope, so the closure form's per-event scope (a thread-local increment and decrement,
/// and one more indirect call) would be spent for nothing.
///
/// Cost (P7, 1,000 subscribers): a delivery touches the subject's subscriber, this subscription's filter
/// object and the user's callback, nothing more:
/// - The subject callback captures only the filter object, so that object is the closure's context (no
///   separate context box).
/// - The type is generic over `Output` (always `SyncProgress`, see `init`) so that `subscribe` takes
///   `onValue` at the abstraction `SyncStream` passes it in (the value passed indirectly). With
///   `Output = SyncProgress` fixed, the conformance wrapped every subscriber's callback in a reabstraction
///   thunk whose context is one more heap object per subscription, read on every delivery; in the profile
///   that thunk was the hottest symbol. Specialized (as `ProgressNotifier` uses it), `report as! Output`
///   is a no-op.
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
struct IndefiniteProgressStream<Output: Sendable>: SyncStream {
    typealias Failure = Never

    let reports: CurrentValueSubject<ProgressEvent?, Never>

    init(reports: CurrentValueSubject<ProgressEvent?, Never>) where Output == SyncProgress {
        self.reports = reports
    }

    func subscribe(
        onValue: @escaping @Sendable (Output) -> Void,
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
        private let onValue: @Sendable (Output) -> Void
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

        init(onValue: @escaping @Sendable (Output) -> Void) { self.onValue = onValue }

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
                // Output is SyncProgress (the only initializer requires it): a no-op once specialized.
                onValue(report as! Output)
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
