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
    /// sent before it has been stored; `false` when not bound or the connection ended first.
    func downloadMark() async -> Bool {
        guard channel != nil, controller.wantsSync else { return false }
        return await connection.roundTrip()
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

    /// The next part of the partition's log: store it, publish it, and report progress.
    ///
    /// Ignored once the session stopped wanting to sync (suspended, closed) even if it is not unbound yet:
    /// what is not stored is sent again on the next bind.
    func receive(_ download: Download) {
        guard channel?.sessionID == download.sessionID, controller.wantsSync else { return }
        let new: [Changeset]
        do {
            new = try store.appendDownload(download.entries)
        } catch {
            failedFatally(error)
            return
        }
        feed.publish(new)
        let downloaded = store.downloadedBytes
        let remaining = Int(clamping: download.remainingBytes)
        notifier.update(.download, transferred: downloaded, transferrable: downloaded.addingClamped(remaining))
        notifier.update(.upload, transferred: store.uploadedBytes, transferrable: store.uploadableBytes)
        controller.handle(.pendingUploads(!store.unacknowledged.isEmpty))
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

    /// Appends `data` durably, reports it to upload progress, and uploads it when bound.
    func write(_ data: [UInt8]) throws(SyncError) {
        guard controller.state != .invalid else { throw .sessionInvalid }
        let version: UInt64
        do {
            version = try store.appendLocal(data)
        } catch {
            failedFatally(error)
            throw error
        }
        notifier.update(.upload, transferred: store.uploadedBytes, transferrable: store.uploadableBytes)
        controller.handle(.pendingUploads(true))
        if let channel, controller.wantsSync {
            let changeset = UploadChangeset(clientVersion: version, data: data)
            channel.send(.upload(Upload(sessionID: channel.sessionID, changesets: [changeset])))
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
