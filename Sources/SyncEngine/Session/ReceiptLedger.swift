import SyncStreams
import SyncWire

/// What a session knows about its writes' receipts, readable synchronously from any thread: the current
/// store's client file id, how many changesets it holds and how many the server acknowledged, and what
/// each client reset of this process did to the store it replaced. It answers `SyncSession.isPending(_:)`,
/// publishes `SyncSession.pendingWrites`, and wakes `WriteReceipt.uploaded` awaits.
///
/// The session's engine tells it what is durable (`update`, after each group commit — before the writes
/// of that commit return, so a receipt is pending as soon as `write` returned), what a client reset did
/// (`replaced`, at the moment the new store takes over), and that the session shut down (`close`).
/// Waiters are resumed outside the lock.
final class ReceiptLedger: Sendable {
    /// How a receipt's write stands.
    enum Resolution: Equatable, Sendable {
        /// Written, not yet acknowledged.
        case pending
        /// The server holds it.
        case acknowledged
        /// A client reset discarded it; the reset's error.
        case discarded(SyncError)
        /// Not a write of this session's stores as far as this process knows.
        case unknown
    }

    /// What a client reset did to the store it replaced.
    private struct Replacement: Sendable {
        /// Client versions up to this one were held by the server.
        let lastIntegrated: UInt64
        /// The new store, when the reset recovered the others (as its client versions 1, 2, …); `nil` when
        /// it discarded them.
        let recoveredInto: UInt64?
        /// What discarded writes' awaits throw.
        let error: SyncError
    }

    private struct Waiter: Sendable {
        let clientFileID: UInt64
        let clientVersion: UInt64
        let continuation: CheckedContinuation<SyncError?, Never>
    }

    private struct State: Sendable {
        var clientFileID: UInt64
        var written: UInt64
        var acknowledged: UInt64
        /// Stores replaced by client resets, by client file id.
        var replaced: [UInt64: Replacement] = [:]
        var waiters: [UInt64: Waiter] = [:]
        var nextTicket: UInt64 = 0
        /// Set by `close`: what later awaits throw.
        var closed: SyncError?

        var pendingWrites: PendingWrites {
            PendingWrites(clientFileID: clientFileID, clientVersions: (acknowledged + 1)..<(written + 1))
        }

        /// Follows a write through the client resets since it was written, to where it is now.
        func resolve(_ clientFileID: UInt64, _ clientVersion: UInt64) -> Resolution {
            var file = clientFileID
            var version = clientVersion
            // Each step leaves a replaced store for its replacement: at most one step per reset.
            for _ in 0...replaced.count {
                if file == self.clientFileID {
                    guard version >= 1, version <= written else { return .unknown }
                    return version <= acknowledged ? .acknowledged : .pending
                }
                guard let replacement = replaced[file] else { return .unknown }
                if version <= replacement.lastIntegrated { return .acknowledged }
                guard let next = replacement.recoveredInto else { return .discarded(replacement.error) }
                file = next
                version -= replacement.lastIntegrated
            }
            return .unknown
        }

        /// Removes and returns the waiters whose writes are no longer pending, with their outcomes.
        mutating func settledWaiters() -> [(CheckedContinuation<SyncError?, Never>, SyncError?)] {
            var settled: [(CheckedContinuation<SyncError?, Never>, SyncError?)] = []
            for (ticket, waiter) in waiters {
                let outcome: SyncError??
                switch resolve(waiter.clientFileID, waiter.clientVersion) {
                case .pending: outcome = .none
                case .acknowledged: outcome = .some(nil)
                case .discarded(let error): outcome = .some(error)
                case .unknown: outcome = .some(ReceiptLedger.unknownStore)
                }
                if let outcome {
                    waiters[ticket] = nil
                    settled.append((waiter.continuation, outcome))
                }
            }
            return settled
        }
    }

    static let unknownStore = SyncError.invalidArgument(
        "the receipt names a store this session does not know (another session's, or one replaced by a client "
            + "reset older than the \(LocalStore.maximumLineage) its store remembers)")

    /// What a discarded write's receipt throws, for a reset because of `reason`.
    static func discarded(by reason: ClientResetReason) -> SyncError {
        .clientResetRequired("a client reset (\(reason)) discarded this write")
    }

    private let state: Locked<State>
    private let publisher: OrderedPublisher<PendingWrites>

    /// `lineage`: the resets before this launch, as the store keeps them (`LocalStore.lineage`).
    init(
        clientFileID: UInt64, written: UInt64, acknowledged: UInt64, lineage: [ResetLineage] = [],
        executor: any StreamExecutor
    ) {
        var initial = State(clientFileID: clientFileID, written: written, acknowledged: acknowledged)
        for reset in lineage {
            initial.replaced[reset.replacedClientFileID] = Replacement(
                lastIntegrated: reset.lastIntegrated,
                recoveredInto: reset.recovered ? reset.replacementClientFileID : nil,
                error: Self.discarded(by: reset.reason))
        }
        state = Locked(initial)
        publisher = OrderedPublisher(initial.pendingWrites, executor: executor)
    }

    /// The pending writes now, then each change, on the executor; finishes after `close`.
    var stream: StateStream<PendingWrites> {
        StateStream(publisher.subject) { [publisher] in publisher.current }
    }

    /// How `clientFileID`'s `clientVersion` stands.
    func resolve(_ clientFileID: UInt64, _ clientVersion: UInt64) -> Resolution {
        state.withLock { $0.resolve(clientFileID, clientVersion) }
    }

    /// The current store's client file id, when it holds `clientVersion`.
    func clientFileID(holding clientVersion: UInt64) -> UInt64? {
        state.withLock { state in
            clientVersion >= 1 && clientVersion <= state.written ? state.clientFileID : nil
        }
    }

    /// How many awaits wait (tests check that a cancelled one let go).
    var waiterCount: Int { state.withLock { $0.waiters.count } }

    /// The current store now holds `written` changesets, of which the first `acknowledged` are acknowledged.
    func update(written: UInt64, acknowledged: UInt64) {
        settle { state in
            state.written = written
            state.acknowledged = acknowledged
        }
    }

    /// A client reset replaced the store: the server held the old store's client versions up to
    /// `lastIntegrated`; the others are the new store's first ones when `recovered`, else gone (`error`).
    func replaced(
        lastIntegrated: UInt64, recovered: Bool, error: SyncError,
        by clientFileID: UInt64, written: UInt64, acknowledged: UInt64
    ) {
        settle { state in
            state.replaced[state.clientFileID] = Replacement(
                lastIntegrated: lastIntegrated, recoveredInto: recovered ? clientFileID : nil, error: error)
            state.clientFileID = clientFileID
            state.written = written
            state.acknowledged = acknowledged
        }
    }

    /// The session shut down: every await ends with `error`, later ones too; the stream finishes.
    func close(_ error: SyncError) {
        let waiters = state.withLock { state -> [Waiter] in
            state.closed = state.closed ?? error
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        publisher.finish()
        for waiter in waiters { waiter.continuation.resume(returning: error) }
    }

    /// Waits until the write is acknowledged (`nil`), discarded (the reset's error), or the wait ends: the
    /// task is cancelled (`.cancelled`) or the ledger closed (its error).
    func wait(_ clientFileID: UInt64, _ clientVersion: UInt64) async -> SyncError? {
        let ticket = state.withLock { state -> UInt64 in
            state.nextTicket += 1
            return state.nextTicket
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<SyncError?, Never>) in
                let immediate = state.withLock { state -> SyncError?? in
                    // Checked under the lock: a cancellation after this finds the waiter registered.
                    if Task.isCancelled { return .some(.cancelled) }
                    if let closed = state.closed { return .some(closed) }
                    switch state.resolve(clientFileID, clientVersion) {
                    case .acknowledged: return .some(nil)
                    case .discarded(let error): return .some(error)
                    case .unknown: return .some(Self.unknownStore)
                    case .pending:
                        state.waiters[ticket] = Waiter(
                            clientFileID: clientFileID, clientVersion: clientVersion, continuation: continuation)
                        return .none
                    }
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: ticket) }
            waiter?.continuation.resume(returning: .cancelled)
        }
    }

    /// Changes the state, then publishes the pending writes and resumes the waiters it settled, outside
    /// the lock.
    private func settle(_ change: (inout State) -> Void) {
        let settled = state.withLock { state -> [(CheckedContinuation<SyncError?, Never>, SyncError?)] in
            guard state.closed == nil else { return [] }
            let before = state.pendingWrites
            change(&state)
            if state.pendingWrites != before { publisher.enqueue(state.pendingWrites) }
            return state.settledWaiters()
        }
        publisher.drain()
        for (continuation, outcome) in settled { continuation.resume(returning: outcome) }
    }
}
