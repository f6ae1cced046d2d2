import Foundation
import SyncStreams

/// What a session's `SyncStatus` is made of, besides what is read live (the controller's state, the
/// notifier's progress). The session's engine and connection set these as things happen.
struct SessionStatusInputs: Sendable {
    var connection: ConnectionState = .disconnected
    var pending: PendingWork = .none
    var lastSyncedAt: Date?
    var isResetting = false
    var fatalError: SyncError?
    /// Set while the connection (or the binding) waits for its next attempt.
    var reconnect: (next: Date, lastError: SyncError?)?
    var lastError: SyncError?
    var isShutDown = false
}

/// Keeps a session's `SyncStatus` and publishes it, cheaply.
///
/// The write path only records facts (`update`): one lock, a few stores, and — when no delivery is
/// scheduled yet — one job on the callback executor. The snapshot is computed in that job, from the
/// newest facts, and published only when it differs from the last one. So a burst of updates costs one
/// job and produces at most one event, and nothing per byte: the engine updates once per group commit
/// (not per write), per connection change and per error. Nobody subscribed: the same, and the job sends
/// into a subject without subscribers.
final class SessionStatusTracker: Sendable {
    private struct State: Sendable {
        var inputs: SessionStatusInputs
        var isScheduled = false
        var isFinished = false
        var lastPublished: SyncStatus
    }

    private let state: Locked<State>
    private let publisher: OrderedPublisher<SyncStatus>
    private let executor: any StreamExecutor
    /// The session's state and whether it shut down (read live from its controller).
    private let sessionState: @Sendable () -> SessionState
    /// The latest `.reportIndefinitely` progress per direction (read live from the notifier).
    private let progress: @Sendable (ProgressDirection) -> SyncProgress?

    init(
        inputs: SessionStatusInputs,
        executor: any StreamExecutor,
        sessionState: @escaping @Sendable () -> SessionState,
        progress: @escaping @Sendable (ProgressDirection) -> SyncProgress?
    ) {
        self.executor = executor
        self.sessionState = sessionState
        self.progress = progress
        let first = Self.status(
            of: inputs, state: sessionState(), upload: progress(.upload), download: progress(.download))
        state = Locked(State(inputs: inputs, lastPublished: first))
        publisher = OrderedPublisher(first)
    }

    /// The status: the current snapshot (up to date with every `update` that returned), then each change,
    /// delivered on the session's callback executor.
    var stream: StateStream<SyncStatus> {
        StateStream(publisher.subject) { [self] in current }
    }

    /// The snapshot as of now.
    var current: SyncStatus {
        let inputs = state.withLock { $0.inputs }
        return snapshot(inputs)
    }

    /// Records facts and schedules a publication (unless one is scheduled already).
    func update(_ change: (inout SessionStatusInputs) -> Void = { _ in }) {
        let schedule = state.withLock { state -> Bool in
            change(&state.inputs)
            guard !state.isScheduled, !state.isFinished else { return false }
            state.isScheduled = true
            return true
        }
        if schedule { executor.execute { self.publish() } }
    }

    /// Publishes the final snapshot (`.closed`), then finishes the stream, on the executor (the session
    /// shut down). Later updates publish nothing.
    func finish() {
        state.withLock { $0.inputs.isShutDown = true }
        executor.execute {
            self.state.withLock { state in
                state.isFinished = true
                let status = self.snapshot(state.inputs)
                guard status != state.lastPublished else { return }
                state.lastPublished = status
                self.publisher.enqueue(status)
            }
            self.publisher.finish()
        }
    }

    private func publish() {
        state.withLock { state in
            state.isScheduled = false
            guard !state.isFinished else { return }
            let status = snapshot(state.inputs)
            guard status != state.lastPublished else { return }
            state.lastPublished = status
            // Enqueued under the lock, so snapshots are queued in the order they were computed.
            publisher.enqueue(status)
        }
        publisher.drain()
    }

    private func snapshot(_ inputs: SessionStatusInputs) -> SyncStatus {
        Self.status(
            of: inputs, state: sessionState(), upload: progress(.upload), download: progress(.download))
    }

    /// The snapshot for `inputs`, the session's `state` and its latest progress.
    static func status(
        of inputs: SessionStatusInputs, state: SessionState, upload: SyncProgress?, download: SyncProgress?
    ) -> SyncStatus {
        let connection: ConnectionState = inputs.isShutDown ? .disconnected : inputs.connection
        let activity = SyncActivity.of([SessionActivity(connection: connection, upload: upload, download: download)])
        var pending = inputs.pending
        if connection != .connected { pending.downloadBytes = nil }
        return SyncStatus(
            connection: connection,
            activity: activity,
            pending: pending,
            lastSyncedAt: inputs.lastSyncedAt,
            offlineReason: offlineReason(inputs, state: state, connection: connection),
            lastError: inputs.fatalError ?? inputs.lastError)
    }

    private static func offlineReason(
        _ inputs: SessionStatusInputs, state: SessionState, connection: ConnectionState
    ) -> OfflineReason? {
        if inputs.isShutDown { return .closed }
        if let fatal = inputs.fatalError ?? (state == .invalid ? SyncError.sessionInvalid : nil) {
            switch fatal {
            case .authenticationFailed, .permissionDenied: return .credentialRefused
            case .clientResetRequired: return .clientReset
            default: return .closed
            }
        }
        if inputs.isResetting { return .clientReset }
        if state == .inactive { return .suspended }
        if connection == .connected { return nil }
        if let reconnect = inputs.reconnect {
            return .waitingToReconnect(next: reconnect.next, lastError: reconnect.lastError)
        }
        return nil
    }
}
