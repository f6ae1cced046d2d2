import Dispatch
import Foundation
import SyncStreams

/// One partition synced for one user: its state, its connection, its progress, and its changesets.
///
/// Everything here is callable synchronously from any thread except `write(_:)` and `wait(for:)`, which
/// wait. Every callback — `state`, `connectionState`, `changesets`, progress — runs on the session's
/// callback executor (the app's `callbackExecutor`, or a serial queue of the session's own), never on an
/// engine actor, so a subscriber that blocks delays nothing but that executor's other callbacks; progress
/// registrations may name another executor. Callbacks come in order, and never after `invalidate()`
/// returns. After the app closes (or the user logs out), `write` and `wait` throw `.appClosed`, streams
/// finish, and the other calls do nothing.
public final class SyncSession: Sendable, Hashable, CustomStringConvertible {
    /// The partition this session syncs.
    public let partition: String
    let engine: SessionEngine
    /// Where callbacks run when a registration names no executor.
    let callbackExecutor: any StreamExecutor

    /// How many `wait(for:)` calls are waiting now, each already watching the session's state.
    private let waits = Locked(0)

    init(partition: String, engine: SessionEngine, callbackExecutor: any StreamExecutor) {
        self.partition = partition
        self.engine = engine
        self.callbackExecutor = callbackExecutor
    }

    // MARK: State

    /// `.active`, `.dying`, `.inactive` or `.invalid`; subscribing delivers the current state at once.
    ///
    /// `value` is up to date as soon as a call that changes it (`suspend()`, `resume()`, `close()`)
    /// returns; subscribers hear of it on the callback executor.
    public var state: StateStream<SessionState> { engine.controller.stateStream }

    /// `.disconnected`, `.connecting` or `.connected`; subscribing delivers the current state at once.
    public var connectionState: StateStream<ConnectionState> { engine.connectionStatePublisher.stateStream }

    /// The session's `SyncStatus`: connection, activity, pending work (even while offline), when it was
    /// last fully synced, why it is offline, and the last error. Subscribing delivers the current snapshot
    /// at once, then each change, on the session's callback executor; finishes (after a final `.closed`
    /// snapshot) when the app closes or the user logs out. `value` is up to date at once.
    public var status: StateStream<SyncStatus> { engine.statusTracker.stream }

    /// Stops syncing in both directions; local writes keep working and are kept for upload. No effect on
    /// an invalid session.
    public func suspend() { engine.controller.handle(.suspend) }

    /// Starts syncing again after `suspend()` or `close()`, uploading what was written meanwhile. No effect
    /// on an invalid session, or after the app closed.
    public func resume() { engine.controller.handle(.resume) }

    /// Applies the app's stop policy: `.immediately` → `.inactive`; `.afterChangesUploaded` → `.dying`
    /// until everything written so far is uploaded, then `.inactive`; `.liveIndefinitely` → no effect.
    public func close() { engine.controller.handle(.close) }

    /// If the session is waiting to reconnect after a failure, resets the backoff and connects at once.
    /// No effect when connected, connecting, inactive, or invalid.
    public func reconnect() {
        let engine = engine
        Task { await engine.reconnect() }
    }

    /// The session's client resets: `.willReset`, then `.didReset`, for each reset the server asks for
    /// (see `ClientResetMode`; nothing in `.manual` mode). Delivered on the session's callback executor,
    /// after the configuration's `clientResetHandler`; only events after subscribing; finishes when the
    /// app closes or the user logs out.
    public var clientResets: AnySyncStream<ClientResetEvent, Never> {
        engine.clientResetSubject.eraseToAnyStream()
    }

    // MARK: Progress

    /// A stream of upload or download progress in `mode`, delivered on the session's callback executor.
    ///
    /// The exact semantics are `ProgressNotifier.progress(for:mode:)`'s: nothing before the first report
    /// (download progress is unknown until the server's first report), no repeats, estimates in 0…1; in
    /// `.forCurrentlyOutstandingWork` one final complete event, then the stream finishes. On an invalid
    /// session, or after the app closed, the stream finishes at once without a value.
    public func progress(for direction: ProgressDirection, mode: ProgressMode) -> AnySyncStream<SyncProgress, Never> {
        progress(for: direction, mode: mode, on: callbackExecutor)
    }

    func progress(
        for direction: ProgressDirection,
        mode: ProgressMode,
        on executor: any StreamExecutor
    ) -> AnySyncStream<SyncProgress, Never> {
        guard engine.controller.state != .invalid, !engine.controller.isShutDown else {
            return AnySyncStream { _, onCompletion in
                onCompletion(.finished)
                return .empty
            }
        }
        return engine.notifier.progress(for: direction, mode: mode).observe(onAny: executor)
    }

    /// Realm-style registration: calls `block` with each progress value on `executor` (default: the
    /// session's callback queue) until the token is invalidated or, in `.forCurrentlyOutstandingWork`, until
    /// the final complete value.
    ///
    /// - Returns: The registration's token; `nil` when there is nothing to observe: the session is invalid,
    ///   or (in `.forCurrentlyOutstandingWork`) nothing was outstanding — then `block` still receives exactly
    ///   one complete value.
    public func addProgressNotification(
        for direction: ProgressDirection,
        mode: ProgressMode,
        on executor: (any StreamExecutor)? = nil,
        block: @escaping @Sendable (SyncProgress) -> Void
    ) -> SubscriptionToken? {
        guard engine.controller.state != .invalid, !engine.controller.isShutDown else { return nil }
        let keeper = TokenKeeper()
        let finished = Locked(false)
        let token = engine.notifier.progress(for: direction, mode: mode)
            .handleEvents(receiveCompletion: { _ in finished.withLock { $0 = true } })
            .observe(onAny: executor ?? callbackExecutor)
            .subscribe(onValue: block, onCompletion: { _ in keeper.release() })
        // The notifier's streams deliver synchronously: a registration finished by the time `subscribe`
        // returns had nothing outstanding. Its one complete value may still be on its way to `executor`, so
        // the token is kept until that delivery is over.
        if finished.withLock({ $0 }) {
            keeper.keep(token)
            return nil
        }
        return token
    }

    // MARK: Waiting

    /// Returns once everything outstanding in `direction` when called is transferred: for `.upload`, every
    /// write that returned before the call is acknowledged by the server (counted by changeset, so a
    /// zero-byte one counts; a client reset that discards them makes the wait throw
    /// `.clientResetRequired`); for `.download`, everything the
    /// server had when the call was made is downloaded and stored. A download wait first waits for a
    /// connection, then makes a round trip to the server (so changes other clients uploaded before the call
    /// are counted), then waits for the download progress to complete.
    ///
    /// - Throws: `.sessionInactive` or `.sessionInvalid` if the session is, or becomes, inactive or
    ///   invalid before that (it never hangs on a stopped session); `.appClosed` after the app closed;
    ///   `.cancelled` if the task is cancelled.
    public func wait(for direction: ProgressDirection) async throws(SyncError) {
        switch direction {
        case .download:
            let engine = engine
            try await waitWhileSyncing { () throws(SyncError) in try await engine.waitForDownloads() }
        case .upload:
            let engine = engine
            try await waitWhileSyncing { () throws(SyncError) in try await engine.waitForUploads() }
        }
    }

    /// Runs `operation` unless the session is or becomes inactive or invalid, or the task is cancelled,
    /// whichever comes first.
    func waitWhileSyncing(
        _ operation: @escaping @Sendable () async throws(SyncError) -> Void
    ) async throws(SyncError) {
        if engine.controller.isShutDown { throw .appClosed }
        switch engine.controller.state {
        case .inactive: throw .sessionInactive
        case .invalid: throw .sessionInvalid
        case .active, .dying: break
        }
        let waiter = Waiter()
        let controller = engine.controller
        let outcome: SyncError? = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<SyncError?, Never>) in
                waiter.start(continuation)
                let stateToken = state.subscribe { _ in
                    // The controller's state, not the delivered one: it may be ahead of the delivery.
                    if controller.isShutDown { return waiter.finish(.appClosed) }
                    switch controller.state {
                    case .inactive: waiter.finish(.sessionInactive)
                    case .invalid: waiter.finish(.sessionInvalid)
                    case .active, .dying: break
                    }
                }
                let task = Task {
                    do throws(SyncError) {
                        try await operation()
                        waiter.finish(nil)
                    } catch {
                        waiter.finish(error)
                    }
                }
                waiter.hold([stateToken, SubscriptionToken { task.cancel() }])
                waits.withLock { $0 += 1 }
            }
        } onCancel: {
            waiter.finish(.cancelled)
        }
        waits.withLock { $0 -= 1 }
        if let outcome { throw outcome }
    }

    /// How many `wait(for:)` calls are waiting, each already watching the session's state and
    /// cancellation (tests wait for this event instead of sleeping).
    var activeWaitCount: Int { waits.withLock { $0 } }

    /// Callback form of `wait(for:)`: calls `completion` on `executor` (default: the session's callback
    /// queue) with `nil` once done, or with the error.
    public func wait(
        for direction: ProgressDirection,
        on executor: (any StreamExecutor)? = nil,
        completion: @escaping @Sendable (SyncError?) -> Void
    ) {
        let executor = executor ?? callbackExecutor
        Task {
            var outcome: SyncError?
            do throws(SyncError) { try await self.wait(for: direction) } catch { outcome = error }
            let result = outcome
            executor.execute { completion(result) }
        }
    }

    // MARK: Data

    /// Appends a changeset to the partition: durable on disk when this returns, works offline, and is
    /// uploaded when the session is connected.
    ///
    /// - Returns: The write's receipt (its client version): `isPending(_:)` tells whether the server has
    ///   acknowledged it yet, `try await receipt.uploaded` waits until it has (see `WriteReceipt`). Callers
    ///   that do not need it may ignore it.
    /// - Throws: `.changesetTooLarge` (nothing stored, the session stays usable) when `data` is larger than
    ///   the configuration's `maximumChangesetBytes`; `.sessionInvalid` on an invalid session; `.appClosed`
    ///   after the app closed; `.storageFailure` if the local store cannot be written (the session then
    ///   becomes invalid).
    @discardableResult
    public func write(_ data: Data) async throws(SyncError) -> WriteReceipt {
        let (clientFileID, clientVersion) = try await engine.write(data)
        return WriteReceipt(clientVersion: clientVersion, clientFileID: clientFileID, session: self)
    }

    /// Every changeset of the partition the server has ordered, in server-version order: first those
    /// already synced, then each new one as it is downloaded or acknowledged. Delivered on the session's
    /// callback executor, which also reads the changesets back from the local store (only an index of them
    /// is kept in memory); finishes when the app closes.
    ///
    /// A changeset the server holds twice — uploaded again by a client store restored from a backup taken
    /// before a recovering client reset (docs/Protocol.md, "Deduplication by origin") — comes once with its
    /// bytes and, at the later version, as an empty changeset (`data` empty) — on every client, the one that
    /// uploaded it again included (a server of protocol version 9 or later tells it which of its changesets
    /// were duplicates; an older server does not, and that client then gets its own bytes there).
    public var changesets: AnySyncStream<Changeset, Never> {
        engine.feed.stream(on: callbackExecutor)
    }

    // MARK: Identity

    public static func == (lhs: SyncSession, rhs: SyncSession) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
    public var description: String { "SyncSession(\(partition))" }
}

/// Keeps a finished registration's token alive until its last event was delivered, then lets it go.
private final class TokenKeeper: Sendable {
    private let state = Locked<(token: SubscriptionToken?, released: Bool)>((nil, false))

    func keep(_ token: SubscriptionToken) {
        state.withLock { if !$0.released { $0.token = token } }
    }

    func release() {
        let token = state.withLock { state -> SubscriptionToken? in
            state.released = true
            defer { state.token = nil }
            return state.token
        }
        _ = token  // released here, outside the lock
    }
}

/// One `wait(for:)`: resumes its continuation exactly once and then drops its subscriptions.
private final class Waiter: Sendable {
    private struct State {
        var continuation: CheckedContinuation<SyncError?, Never>?
        var outcome: SyncError??
        var tokens: [SubscriptionToken] = []
    }

    private let state = Locked(State())

    func start(_ continuation: CheckedContinuation<SyncError?, Never>) {
        let early = state.withLock { state -> SyncError?? in
            if let outcome = state.outcome { return .some(outcome) }
            state.continuation = continuation
            return .none
        }
        if let early { continuation.resume(returning: early) }
    }

    func hold(_ tokens: [SubscriptionToken]) {
        let drop = state.withLock { state -> [SubscriptionToken] in
            if state.outcome != nil { return tokens }
            state.tokens = tokens
            return []
        }
        for token in drop { token.invalidate() }
    }

    func finish(_ outcome: SyncError?) {
        let (continuation, tokens) = state.withLock {
            state -> (CheckedContinuation<SyncError?, Never>?, [SubscriptionToken]) in
            guard state.outcome == nil else { return (nil, []) }
            state.outcome = .some(outcome)
            defer {
                state.continuation = nil
                state.tokens = []
            }
            return (state.continuation, state.tokens)
        }
        continuation?.resume(returning: outcome)
        for token in tokens { token.invalidate() }
    }
}
