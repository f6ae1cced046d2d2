import SyncStreams
import SyncWire

/// The actor behind one `SyncSession`: owns its local store, feeds its progress notifier and changeset
/// feed, and talks to the server through the `ServerConnection` it registers with while the session
/// wants to sync.
///
/// What the session should do is decided by its `SessionController` (synchronously, on the caller's
/// thread); this actor reconciles what it does with that decision (`reconcile()`), so the order in which
/// reconcile requests arrive does not matter.
actor SessionEngine {
    let partition: String
    nonisolated let notifier = ProgressNotifier()
    nonisolated let feed = ChangesetFeed()
    nonisolated let controller: SessionController
    nonisolated let connectionStatePublisher = OrderedPublisher<ConnectionState>(.disconnected)
    private let store: LocalStore
    private let connection: ServerConnection
    private let reportError: @Sendable (SyncError) -> Void

    /// The session number while registered with the connection.
    private var registration: UInt32?
    private var isReconciling = false
    private var needsReconcile = false
    /// The live binding, while bound.
    private var channel: BoundChannel?

    /// Group commit: what waits for the next fsync, and who waits for it.
    private var pending: [PendingWrite] = []
    private var pendingWaiters: [CheckedContinuation<SyncError?, Never>] = []
    private var isFlushing = false

    /// Records on their way to the file, with what to do once they are durable.
    private struct PendingWrite {
        var records: [Record]
        /// For a download: the server's count of bytes still to send after it.
        var remainingBytes: UInt64?
    }

    init(
        partition: String,
        store: LocalStore,
        connection: ServerConnection,
        controller: SessionController,
        reportError: @escaping @Sendable (SyncError) -> Void
    ) {
        self.partition = partition
        self.store = store
        self.connection = connection
        self.controller = controller
        self.reportError = reportError
        feed.publish(store.synced)
        notifier.update(.upload, transferred: store.uploadedBytes, transferrable: store.uploadableBytes)
        controller.handle(.pendingUploads(!store.unacknowledged.isEmpty))
    }

    // MARK: Following the controller

    /// Registers with the connection while the session wants to sync, and unregisters when it no longer
    /// does. Safe to call any number of times from anywhere; concurrent calls coalesce.
    func reconcile() async {
        if isReconciling {
            needsReconcile = true
            return
        }
        isReconciling = true
        defer { isReconciling = false }
        repeat {
            needsReconcile = false
            let wantsSync = controller.wantsSync
            if wantsSync, registration == nil {
                registration = await connection.register(self)
            } else if !wantsSync, let id = registration {
                registration = nil
                channel = nil
                await connection.unregister(id)
                connectionStateChanged(.disconnected)
            }
        } while needsReconcile
    }

    /// A round trip to the server on the session's live binding: `true` once every download the server
    /// sent before it is durable and published; `false` when not bound or the connection ended first.
    func downloadMark() async -> Bool {
        guard channel != nil, controller.wantsSync else { return false }
        guard await connection.roundTrip() else { return false }
        do {
            try await flushed()
            return true
        } catch {
            return false
        }
    }

    /// Connects at once if the connection is waiting to reconnect.
    func reconnect() async {
        guard registration != nil else { return }
        await connection.reconnect()
    }

    // MARK: Events from the connection

    /// The session is bound on a live connection: announce it and upload what the server lacks.
    func bound(to channel: BoundChannel) {
        self.channel = channel
        channel.send(
            .bind(
                Bind(
                    sessionID: channel.sessionID,
                    partition: partition,
                    clientFileID: store.clientFileID,
                    downloadedVersion: store.downloadedVersion
                )
            )
        )
        let pending = store.unacknowledged
        if !pending.isEmpty {
            channel.send(
                .upload(
                    Upload(
                        sessionID: channel.sessionID,
                        changesets: pending.map { UploadChangeset(clientVersion: $0.clientVersion, data: $0.data) }
                    )
                )
            )
        }
    }

    /// The binding made on connection attempt `attempt` ended.
    func unbound(attempt: Int) {
        if channel?.attempt == attempt { channel = nil }
    }

    /// The next part of the partition's log: queue it for the file; once it is durable it is published
    /// and counted in the progress (`didStore`). Returns at once, so downloads that arrive while the file
    /// is busy share the next fsync.
    ///
    /// Ignored once the session stopped wanting to sync (suspended, closed) even if it is not unbound yet:
    /// what is not stored is sent again on the next bind.
    func receive(_ download: Download) {
        guard channel?.sessionID == download.sessionID, controller.wantsSync else { return }
        let records: [Record]
        do {
            records = try store.records(for: download.entries)
        } catch {
            failedFatally(error)
            return
        }
        enqueue(PendingWrite(records: records, remainingBytes: download.remainingBytes))
    }

    /// The connection's state changed (called from the connection's actor, and from here).
    nonisolated func connectionStateChanged(_ state: ConnectionState) {
        connectionStatePublisher.enqueue(state)
        connectionStatePublisher.drain()
    }

    /// A fatal error for this session: report it and stop for good.
    func failedFatally(_ error: SyncError) {
        channel = nil
        if let id = registration {
            registration = nil
            Task { [connection] in await connection.unregister(id) }
        }
        reportError(error)
        controller.handle(.fatalError)
        connectionStateChanged(.disconnected)
    }

    /// A non-fatal error for this session.
    func report(_ error: SyncError) { reportError(error) }

    // MARK: Writing

    /// Appends `data` durably, reports it to upload progress, and uploads it when bound. Writes issued
    /// while the file is busy share the next fsync (group commit); each returns once its own record is on
    /// disk, and they are uploaded in client-version order.
    func write(_ data: [UInt8]) async throws(SyncError) {
        guard controller.state != .invalid else { throw .sessionInvalid }
        try await commit(PendingWrite(records: [store.recordLocal(data)], remainingBytes: nil))
    }

    /// Returns once everything queued for the file before the call is durable (and published).
    func flushed() async throws(SyncError) {
        guard isFlushing || !pending.isEmpty else { return }
        try await commit(PendingWrite(records: [], remainingBytes: nil))
    }

    // MARK: Group commit

    private func commit(_ write: PendingWrite) async throws(SyncError) {
        let failure: SyncError? = await withCheckedContinuation { continuation in
            pendingWaiters.append(continuation)
            enqueue(write)
        }
        if let failure { throw failure }
    }

    private func enqueue(_ write: PendingWrite) {
        pending.append(write)
        guard !isFlushing else { return }
        isFlushing = true
        Task { await self.flush() }
    }

    /// Writes everything pending with one fsync, then again for what arrived meanwhile, until nothing is
    /// left. The actor is free during each fsync, so new writes and downloads gather into the next batch.
    private func flush() async {
        while !pending.isEmpty || !pendingWaiters.isEmpty {
            let batch = pending
            let waiters = pendingWaiters
            pending = []
            pendingWaiters = []
            var failure: SyncError?
            do {
                try await store.file.append(batch.flatMap(\.records))
            } catch {
                failure = error
            }
            if let failure {
                failedFatally(failure)
            } else {
                didStore(batch)
            }
            for waiter in waiters { waiter.resume(returning: failure) }
        }
        isFlushing = false
    }

    /// A batch is durable: count it, publish its changesets, report progress, upload its local changesets.
    private func didStore(_ batch: [PendingWrite]) {
        var synced: [Changeset] = []
        var local: [UploadChangeset] = []
        var remaining: UInt64?
        for write in batch {
            synced += store.apply(write.records)
            for case .local(let clientVersion, let data) in write.records {
                local.append(UploadChangeset(clientVersion: clientVersion, data: data))
            }
            if let bytes = write.remainingBytes { remaining = bytes }
        }
        feed.publish(synced)
        if let remaining {
            let downloaded = store.downloadedBytes
            notifier.update(
                .download, transferred: downloaded, transferrable: downloaded.addingClamped(Int(clamping: remaining)))
        }
        notifier.update(.upload, transferred: store.uploadedBytes, transferrable: store.uploadableBytes)
        controller.handle(.pendingUploads(!store.unacknowledged.isEmpty))
        if let channel, controller.wantsSync, !local.isEmpty {
            channel.send(.upload(Upload(sessionID: channel.sessionID, changesets: local)))
        }
    }
}

extension Int {
    /// `self + other`, saturating at `Int.max`.
    func addingClamped(_ other: Int) -> Int {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? .max : sum
    }
}
