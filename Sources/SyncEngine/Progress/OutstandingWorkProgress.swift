/// The state machine of one `.forCurrentlyOutstandingWork` subscription: turns the notifier's reports
/// (the `.reportIndefinitely` view: latest transferred `t` and transferrable `T`) into progress towards
/// the captured total.
///
/// - The first report captures `T`. Later reports lower the captured total to a smaller `T`, but never
///   below the transferred count already reported (so `transferredBytes` never goes backwards either);
///   a larger `T` is ignored.
/// - `transferredBytes = min(max(t, previously reported), captured)`: a drop in `t` keeps the previous.
/// - While incomplete, the estimate is `transferredBytes / captured`, below 1. A report equal to the
///   previous one is not repeated (`.none`).
/// - Once `transferredBytes >= captured`: `.emitAndFinish` with `captured/captured`, estimate 1.0; after
///   that every report gives `.none`.
///
/// ```
/// receive:  (0,100)    (50,300)      (40,300)  (80,90)       (90,400)
/// action:   emit 0/100 emit 50/100   none      emit 80/90    emitAndFinish 90/90
/// ```
struct OutstandingWorkProgress: Sendable, Hashable {
    /// What the subscription does with a report.
    enum Action: Sendable, Hashable {
        /// Nothing to deliver.
        case none
        /// Deliver the value.
        case emit(SyncProgress)
        /// Deliver the value (complete, estimate 1.0), then finish.
        case emitAndFinish(SyncProgress)
    }

    private enum State: Sendable, Hashable {
        case awaitingFirstReport
        case tracking(captured: Int, last: SyncProgress)
        case finished
    }

    private var state = State.awaitingFirstReport

    init() {}

    /// Whether the final value has been produced.
    var isFinished: Bool { state == .finished }

    /// The captured total, once known and until finished.
    var capturedTransferrableBytes: Int? {
        if case .tracking(let captured, _) = state { captured } else { nil }
    }

    /// Takes one report (already sanitized: `0 <= t <= T`) and says what to deliver.
    mutating func receive(_ report: SyncProgress) -> Action {
        let captured: Int
        let reported: Int
        let last: SyncProgress?
        switch state {
        case .finished:
            return .none
        case .awaitingFirstReport:
            captured = max(report.transferrableBytes, 0)
            reported = 0
            last = nil
        case .tracking(let previousCapture, let previous):
            reported = previous.transferredBytes
            captured = max(min(previousCapture, report.transferrableBytes), reported)
            last = previous
        }
        let transferred = min(max(report.transferredBytes, reported), captured)
        if transferred >= captured {
            state = .finished
            return .emitAndFinish(
                SyncProgress(transferredBytes: captured, transferrableBytes: captured, progressEstimate: 1))
        }
        // captured > transferred >= 0 here, so the division is defined.
        let progress = SyncProgress(
            transferredBytes: transferred,
            transferrableBytes: captured,
            progressEstimate: SyncProgress.incompleteFraction(transferred, of: captured))
        state = .tracking(captured: captured, last: progress)
        return progress == last ? .none : .emit(progress)
    }
}
