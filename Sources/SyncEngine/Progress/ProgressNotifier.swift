/// Turns cumulative byte counts into progress streams with `ProgressMode` semantics, per direction.
///
/// A notifier knows nothing in a direction until the first `update(_:transferred:transferrable:)` for
/// that direction: streams registered before then deliver nothing (no invented `(0,0)` "complete") until
/// that first update. A session feeds upload as soon as its local store is open, and download at the
/// server's first report; anyone writing their own transport can do the same.
///
/// Delivery is synchronous: values are delivered during `update` (to every subscriber, before `update`
/// returns, unless another thread is delivering this direction at that moment: then that thread delivers
/// them, before its own `update` returns), and a registration's current snapshot during `subscribe`.
/// Events to each subscriber are serialized, and all subscribers of a direction see its reports in the
/// order the updates were applied, none skipped, also when `update` is called from several threads at
/// once. Consecutive identical reports are not repeated. Callbacks may re-enter the notifier
/// (`update`, register, invalidate): a registration from inside a callback receives its snapshot right
/// after that callback returns, and an `update` from inside a callback is delivered after it returns.
///
/// ```swift
/// let notifier = ProgressNotifier()
/// let token = notifier.progress(for: .upload, mode: .forCurrentlyOutstandingWork)
///     .subscribe(onValue: { print($0.progressEstimate) }, onCompletion: { _ in print("done") })
/// // nothing yet: upload unknown
/// notifier.update(.upload, transferred: 0, transferrable: 100)    // 0.0 (captures 100)
/// notifier.update(.upload, transferred: 50, transferrable: 300)   // 0.5 (300 ignored: new work)
/// notifier.update(.upload, transferred: 100, transferrable: 300)  // 1.0, then "done"
/// ```
public final class ProgressNotifier: Sendable {
    private let upload = ProgressChannel()
    private let download = ProgressChannel()

    /// A notifier that knows nothing yet in either direction.
    public init() {}

    /// Feeds the cumulative byte counts for `direction`, from any thread.
    ///
    /// Counts are cumulative for the life of the transfer (transferred so far; transferred plus pending).
    /// A negative input is taken as 0; a `transferrable` below `transferred` is raised to `transferred`.
    /// Subscribers of `direction` receive the resulting values (see `ProgressMode`) before this returns,
    /// unless another thread is delivering for `direction` at that moment, which then delivers them.
    ///
    /// ```
    /// update(.upload, 0, 100)  update(.upload, 50, 100)  update(.upload, 50, 100)  update(.upload, 100, 100)
    /// .reportIndefinitely:     0.0     0.5   (repeat: not delivered)   1.0 ✓
    /// ```
    public func update(_ direction: ProgressDirection, transferred: Int, transferrable: Int) {
        channel(direction).update(transferred: transferred, transferrable: transferrable)
    }

    /// A stream of progress for `direction` in `mode`.
    ///
    /// Each subscription delivers the current snapshot at once, during `subscribe`, when one is known
    /// (nothing otherwise, until the first update), then a value for each change, delivered during
    /// `update`. `.reportIndefinitely` finishes only with the notifier (`finish()`);
    /// `.forCurrentlyOutstandingWork` finishes right after its complete value, which comes during
    /// `subscribe` when nothing is outstanding. See `ProgressMode`
    /// for the values. Invalidating the token stops delivery (no callback starts after `invalidate()`
    /// returns) and releases the callbacks.
    ///
    /// ```
    /// update:                      (0,100)  (100,100)  (100,200)  (200,200)
    /// .reportIndefinitely:         0.0      1.0 ✓      0.0        1.0 ✓
    /// .forCurrentlyOutstandingWork 0.0      1.0 ✓ |
    /// ```
    public func progress(for direction: ProgressDirection, mode: ProgressMode) -> AnySyncStream<SyncProgress, Never> {
        let reports = channel(direction).subject
        switch mode {
        case .reportIndefinitely:
            return AnySyncStream(IndefiniteProgressStream(reports: reports))
        case .forCurrentlyOutstandingWork:
            return AnySyncStream(OutstandingWorkProgressStream(reports: reports))
        }
    }

    /// Before the first update of `direction`: its estimates count from `held` transferred bytes (until the
    /// first complete point), as if it had been complete there. A session starts both directions from what
    /// its store held at launch, so a long-lived store's first estimate after a launch measures the work
    /// since then, not ~0.999. Internal: a public notifier starts from 0 (see `ProgressMode`).
    func start(_ direction: ProgressDirection, from held: Int) {
        channel(direction).start(from: held)
    }

    /// The latest report of `direction` is stale (a session's binding ended, and the server's next report
    /// may say anything): a registration made from now on captures the next report, not this one (a
    /// `.forCurrentlyOutstandingWork` one made offline never completes from what was true before). Existing
    /// subscribers see nothing of it, and not the next report either when it is the same. `current(_:)` keeps
    /// the latest report. Internal: a session calls it when its binding ends.
    func markStale(_ direction: ProgressDirection) {
        channel(direction).markStale()
    }

    /// Ends every stream of the notifier, in both directions: each subscriber receives the reports of the
    /// updates applied before, then `.finished` (a `.forCurrentlyOutstandingWork` subscription finishes
    /// without a complete value if its work was not done); later updates are ignored, and a later
    /// registration finishes at once. `current(_:)` keeps the last report. A session calls it when it shuts
    /// down (`SyncApp.close()`, `SyncUser.logOut()`), so `for await` over its progress ends. Idempotent.
    public func finish() {
        upload.finish()
        download.finish()
    }

    /// The latest `.reportIndefinitely` progress for `direction`, or nil before its first update.
    ///
    /// ```
    /// current(.download)                              // nil
    /// update(.download, transferred: 10, transferrable: 40)
    /// current(.download)                              // 10/40 bytes, estimate 0.25
    /// ```
    public func current(_ direction: ProgressDirection) -> SyncProgress? {
        channel(direction).current
    }

    private func channel(_ direction: ProgressDirection) -> ProgressChannel {
        switch direction {
        case .upload: upload
        case .download: download
        }
    }
}
