import Foundation
import SyncStorage
import SyncStreams
import SyncWire

/// The actor behind one `SyncSession`: owns its local store, feeds its progress notifier and changeset
/// feed, and talks to the server through the `ServerConnection` it registers with while the session
/// wants to sync.
///
/// What the session should do is decided by its `SessionController` (synchronously, on the caller's
/// thread); this actor reconciles what it does with that decision (`reconcile()`), so the order in which
/// reconcile requests arrive does not matter.
///
/// Memory stays bounded by what is in flight, whatever the partition's size:
/// - uploads go out in messages below the message limit, at most `Limits.uploadWindowBytes` sent and not
///   yet acknowledged, their bytes read back from the store file as they are sent;
/// - writes and downloads wait in a group-commit queue of at most `Limits.pendingBytes`; `write` and the
///   connection's reading of downloads wait while it is full (so a fast server is slowed, through the
///   transport's flow control, to the pace of the disk).
actor SessionEngine {
    /// The sizes that bound a session's memory.
    struct Limits: Sendable {
        /// The largest changeset `write` accepts.
        var maximumChangesetBytes: Int
        /// The largest message sent to the server.
        var maximumMessageBytes: Int
        /// Upload bytes sent and not yet acknowledged, at most (one changeset always fits).
        var uploadWindowBytes: Int
        /// Bytes waiting for the next fsync beyond which writers and the download reader wait.
        var pendingBytes: Int
    }

    let partition: String
    nonisolated let notifier = ProgressNotifier()
    nonisolated let feed: ChangesetFeed
    nonisolated let controller: SessionController
    nonisolated let connectionStatePublisher: OrderedPublisher<ConnectionState>
    /// The session's `SyncStatus` (see `SessionStatusTracker`).
    nonisolated let statusTracker: SessionStatusTracker
    /// The writes' receipts: what is pending, and who waits for an acknowledgement (see `ReceiptLedger`).
    nonisolated let receipts: ReceiptLedger
    /// The wall clock `SyncStatus`'s dates come from.
    nonisolated let wallClock: @Sendable () -> Date
    /// The bytes the server last reported still to send on the current binding; `nil` while unknown.
    private var downloadRemaining: Int?
    /// The error that made the session invalid, once one did.
    nonisolated var fatalError: SyncError? { fatalErrorBox.withLock { $0 } }
    private nonisolated let fatalErrorBox = Locked<SyncError?>(nil)
    /// Whether the server is checking the credential right now (the handshake is under way).
    nonisolated let credentialCheck = OrderedPublisher<Bool>(false)
    /// The client resets' events, sent on `callbackExecutor` (see `SessionEngine+ClientReset`).
    nonisolated let clientResetSubject = PassthroughSubject<ClientResetEvent, Never>()
    /// The local store; a client reset replaces it.
    var store: LocalStore
    let connection: ServerConnection
    private let limits: Limits
    let logger: SyncLogger
    private let reportError: @Sendable (SyncError) -> Void
    /// Where the session's callbacks run.
    nonisolated let callbackExecutor: any StreamExecutor
    /// What a client reset does, and who hears of it besides `clientResetSubject`.
    let clientReset: ClientResetSettings

    /// The session number while registered with the connection.
    var registration: UInt32? {
        didSet { if registration == nil { registrationEpoch &+= 1 } }
    }
    /// Counts the times `registration` was let go of, so that `reconcile()` can tell that it was let go of
    /// (by a client reset or a fatal error) while it waited for `connection.register(self)`.
    private var registrationEpoch: UInt64 = 0
    private var isReconciling = false
    private var needsReconcile = false
    /// The live binding, while bound, and a number that changes with every binding.
    private var channel: BoundChannel?
    private var binding: UInt64 = 0
    /// Who waits for uploads (`waitForUploads`), by ticket: the client version (of the current store) that
    /// must be acknowledged.
    var uploadWaiters: [UInt64: (target: UInt64, continuation: CheckedContinuation<SyncError?, Never>)] = [:]
    /// Who waits for a binding (`waitForDownloads`), by ticket.
    private var bindingWaiters: [UInt64: CheckedContinuation<BoundChannel?, Never>] = [:]
    private var nextTicket: UInt64 = 0
    /// How many rounds `waitForDownloads` calls have made (a round: wait for a binding, ask for a mark).
    /// Each round suspends until something happens, so this counts events, never a spin (tests check it).
    private(set) var downloadWaitRounds = 0

    /// Client versions up to this one are acknowledged, durably (tests check what an upload wait waited for).
    var acknowledgedClientVersionForTests: UInt64 { store.acknowledgedClientVersion }

    /// The store's client file id (tests check that a deleted store comes back with a new one).
    var clientFileIDForTests: UInt64 { store.clientFileID }
    var downloadedVersionForTests: UInt64 { store.downloadedVersion }

    /// How many records wait for the next fsync, and how many the fsync under way is making durable (tests
    /// hold an fsync and watch writes gather behind it).
    var pendingRecordCount: Int { pending.reduce(0) { $0 + $1.records.count } }
    private(set) var committingRecordCount = 0

    /// Every durable local changeset's bytes, read back from the file, in client-version order (tests
    /// check what a reopened store holds).
    func localChangesetsForTests() async throws(SyncError) -> [[UInt8]] {
        try await store.file.read(store.local.map(\.location)).map { payload throws(SyncError) in
            guard case .local(_, let data)? = try? Record(decoding: payload) else {
                throw .storageFailure("not a local changeset record")
            }
            return data
        }
    }

    /// Whether an upload pass runs, and the bytes sent and not acknowledged (tests check the upload window).
    var uploadsForTests: (isUploading: Bool, inFlightBytes: Int) { (isUploading, inFlightBytes) }

    /// How many writes wait for a client reset to finish (tests make a write land during a reset).
    var resetWaiterCountForTests: Int { resetWaiters.count }

    /// Whether a `waitForDownloads` call is suspended until the next binding.
    var isWaitingForBinding: Bool { !bindingWaiters.isEmpty }

    /// Uploads: the next client version to send on this binding, and the bytes sent and not yet acknowledged.
    private var nextToSend: UInt64 = 1
    private var inFlightBytes = 0
    /// The last client version taken out of the window (`releaseAcknowledgedFromWindow`).
    private var windowAcknowledged: UInt64 = 0
    /// The binding on which a changeset too large for the server's message limit was reported: once per
    /// binding, and uploading stops there until the next one.
    private var reportedTooLarge: UInt64?
    private var isUploading = false

    /// Group commit: what waits for the next fsync, who waits for it, and who waits for room.
    private var pending: [PendingWrite] = []
    private var pendingBytes = 0 {
        didSet { peakPendingBytes = max(peakPendingBytes, pendingBytes) }
    }
    /// The most bytes the group-commit queue ever held (tests check the bound).
    private(set) var peakPendingBytes = 0
    private var pendingWaiters: [CheckedContinuation<SyncError?, Never>] = []
    private var roomWaiters: [CheckedContinuation<Void, Never>] = []
    private var isFlushing = false
    var isClosed = false
    /// Set while a client reset replaces the store: the session neither syncs nor takes writes meanwhile.
    var isResetting = false
    /// The client reset in progress (see `SessionEngine+ClientReset`); `shutDown()` waits for it.
    var resetTask: Task<Void, Never>?
    /// After a client reset failed transiently (a full disk): the wait before the session registers again
    /// (and the server asks for the reset again), and the backoff that grows with each failure in a row.
    var resetRetry: ScheduledWork?
    var resetBackoff = BackoffState()
    /// The first client version of the store that the server acknowledged with other bytes
    /// (`divergedAcknowledgement`), kept until a reset replaces the store: a retry of a reset that failed
    /// is answered with what the server holds by then (after it forgot the client file, every client
    /// version it holds counts as integrated), and must still recover the store's own changesets from there.
    /// Durable in the store (`Record.diverged`), so that it bounds a reset after a relaunch too.
    var divergedClientVersion: UInt64?
    /// Writes waiting for a client reset to finish.
    var resetWaiters: [CheckedContinuation<Void, Never>] = []
    /// Bytes counted by stores a client reset replaced, so that progress counts keep growing across it.
    var uploadedBase = 0
    var downloadedBase = 0

    /// Records on their way to the file, with what to do once they are durable.
    private struct PendingWrite {
        var records: [Record]
        /// For a download: the server's count of bytes still to send after it.
        var remainingBytes: UInt64?
        var byteCount: Int { records.reduce(0) { $0 + ($1.changesetData?.count ?? 0) } }
    }

    init(
        partition: String,
        store: LocalStore,
        synced: [SyncedEntry],
        connection: ServerConnection,
        controller: SessionController,
        callbackExecutor: any StreamExecutor,
        limits: Limits,
        logger: SyncLogger = .off,
        clientReset: ClientResetSettings = ClientResetSettings(),
        wallClock: @escaping @Sendable () -> Date = { Date() },
        reportError: @escaping @Sendable (SyncError) -> Void
    ) {
        let notifier = notifier
        let tracker = SessionStatusTracker(
            inputs: SessionStatusInputs(
                pending: PendingWork(
                    uploadChangesets: store.unacknowledgedCount, uploadBytes: store.unacknowledgedBytes,
                    downloadBytes: nil),
                lastSyncedAt: store.lastSyncedAt),
            executor: callbackExecutor,
            sessionState: { [controller] in controller.state },
            progress: { notifier.current($0) })
        statusTracker = tracker
        receipts = ReceiptLedger(
            clientFileID: store.clientFileID, written: UInt64(store.local.count),
            acknowledged: store.acknowledgedClientVersion, lineage: store.lineage, executor: callbackExecutor)
        self.wallClock = wallClock
        self.logger = logger
        self.clientReset = clientReset
        self.callbackExecutor = callbackExecutor
        self.partition = partition
        self.store = store
        divergedClientVersion = store.divergedClientVersion
        self.connection = connection
        self.controller = controller
        self.limits = limits
        self.reportError = { error in
            tracker.update { $0.lastError = error }
            reportError(error)
        }
        connectionStatePublisher = OrderedPublisher(.disconnected, executor: callbackExecutor)
        feed = ChangesetFeed(file: store.file, reportError: reportError)
        feed.publish(synced)
        // What the store holds was complete when it was last synced: estimates count from there.
        notifier.start(.upload, from: store.uploadedBytes)
        notifier.start(.download, from: store.downloadedBytes)
        notifier.update(.upload, transferred: store.uploadedBytes, transferrable: store.uploadableBytes)
        controller.handle(.pendingUploads(store.hasUnacknowledged))
    }

    /// Tells the status tracker the pending counts of the store as it is now.
    func refreshPendingStatus() {
        let pending = PendingWork(
            uploadChangesets: store.unacknowledgedCount, uploadBytes: store.unacknowledgedBytes,
            downloadBytes: downloadRemaining)
        statusTracker.update { $0.pending = pending }
    }

    /// Feeds the upload counts (of this store and the ones a client reset replaced) to the notifier.
    func reportUploadProgress() {
        notifier.update(
            .upload, transferred: uploadedBase.addingClamped(store.uploadedBytes),
            transferrable: uploadedBase.addingClamped(store.uploadableBytes))
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
            let wantsSync = controller.wantsSync && !isClosed && !isResetting && resetRetry == nil
            if wantsSync, registration == nil {
                let epoch = registrationEpoch
                let id = await connection.register(self)
                if registrationEpoch == epoch, registration == nil {
                    registration = id
                } else {
                    // A client reset or a fatal error ran while this actor waited for the connection (actor
                    // re-entrancy) and let go of the registration: this id is stale. Keeping it would leave the
                    // session registered with a connection that forgot it, and never registering again.
                    if let id { await connection.unregister(id) }
                    needsReconcile = true
                }
            } else if !wantsSync, let id = registration {
                registration = nil
                dropBinding()
                await connection.unregister(id)
                connectionStateChanged(.disconnected)
            }
            if !wantsSync { resumeBindingWaiters(with: nil) }
        } while needsReconcile
    }

    /// Connects at once if the connection is waiting to reconnect, or binds at once if this session waits
    /// to be bound again after a session error, or asks the server again at once after a client reset that
    /// failed transiently.
    func reconnect() async {
        if resetRetry != nil { return await retryReset() }
        guard let registration else { return }
        await connection.reconnect(session: registration)
    }

    /// Returns once everything the server held for the partition when this was called (or, if not bound
    /// then, when the session was next bound) is downloaded, durable and published.
    ///
    /// - Throws: `.sessionInactive` / `.sessionInvalid` when the session stops wanting to sync first,
    ///   `.appClosed` after shut-down, `.cancelled` when the task is cancelled.
    func waitForDownloads() async throws(SyncError) {
        while true {
            downloadWaitRounds += 1
            guard let channel = await nextBinding() else {
                if isClosed { throw .appClosed }
                if Task.isCancelled { throw .cancelled }
                throw controller.state == .invalid ? .sessionInvalid : .sessionInactive
            }
            if await connection.mark(channel.sessionID) {
                try await flushed()
                return
            }
            if Task.isCancelled { throw .cancelled }
            // The binding ended before the answer: wait for the next one.
            if self.channel?.binding == channel.binding { dropBinding() }
        }
    }

    /// Returns once every changeset written before the call (every durable local changeset) is
    /// acknowledged — counted by client version, so a zero-byte changeset counts too. Across a client reset
    /// that recovers them, it waits for their new client versions; one that discards them throws
    /// `.clientResetRequired`.
    ///
    /// - Throws: `.appClosed` after shut-down, `.sessionInvalid` after a fatal error, `.cancelled` when the
    ///   task is cancelled, `.clientResetRequired` when a reset discarded them.
    func waitForUploads() async throws(SyncError) {
        if isClosed { throw .appClosed }
        let target = UInt64(store.local.count)
        guard store.acknowledgedClientVersion < target else { return }
        nextTicket += 1
        let ticket = nextTicket
        let failure: SyncError? = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<SyncError?, Never>) in
                if Task.isCancelled {
                    continuation.resume(returning: .cancelled)
                } else {
                    uploadWaiters[ticket] = (target, continuation)
                }
            }
        } onCancel: {
            Task { await self.endUploadWaiter(ticket, with: .cancelled) }
        }
        if let failure { throw failure }
    }

    /// Ends one upload waiter with `outcome` (`nil`: done).
    func endUploadWaiter(_ ticket: UInt64, with outcome: SyncError?) {
        uploadWaiters.removeValue(forKey: ticket)?.continuation.resume(returning: outcome)
    }

    /// Ends every upload waiter whose changesets are acknowledged (or all, with `failure`).
    func resumeUploadWaiters(failing failure: SyncError? = nil) {
        for (ticket, waiter) in uploadWaiters where failure != nil || waiter.target <= store.acknowledgedClientVersion {
            endUploadWaiter(ticket, with: failure)
        }
    }

    /// The live binding, waiting for one while the session wants to sync; `nil` when it does not (or the
    /// task is cancelled).
    private func nextBinding() async -> BoundChannel? {
        if let channel { return channel }
        guard controller.wantsSync, !isClosed, !Task.isCancelled else { return nil }
        nextTicket += 1
        let ticket = nextTicket
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<BoundChannel?, Never>) in
                if Task.isCancelled {
                    continuation.resume(returning: nil)
                } else {
                    bindingWaiters[ticket] = continuation
                }
            }
        } onCancel: {
            Task { await self.cancelBindingWaiter(ticket) }
        }
    }

    private func cancelBindingWaiter(_ ticket: UInt64) {
        bindingWaiters.removeValue(forKey: ticket)?.resume(returning: nil)
    }

    private func resumeBindingWaiters(with channel: BoundChannel?) {
        let waiters = bindingWaiters.values
        bindingWaiters.removeAll()
        for waiter in waiters { waiter.resume(returning: channel) }
    }

    // MARK: Events from the connection

    /// The session is bound on a live connection: announce it and upload what the server lacks.
    func bound(to channel: BoundChannel) {
        binding += 1
        let bound = BoundChannel(
            connection: channel.connection, sessionID: channel.sessionID, attempt: channel.attempt, binding: binding,
            serverMaximumMessageBytes: channel.serverMaximumMessageBytes)
        self.channel = bound
        nextToSend = store.reservedAcknowledgedClientVersion + 1
        windowAcknowledged = store.reservedAcknowledgedClientVersion
        inFlightBytes = 0
        bound.send(
            .bind(
                Bind(
                    sessionID: bound.sessionID,
                    partition: partition,
                    clientFileID: store.clientFileID,
                    downloadedVersion: store.downloadedVersion,
                    historyID: store.historyID,
                    acknowledgedClientVersion: store.acknowledgedClientVersion,
                    checkpoint: store.checkpoint
                )
            )
        )
        logger.log(
            .detail, LogCategory.session,
            "\(partition): bound as session \(bound.sessionID), holding server version \(store.downloadedVersion), "
                + "\(store.local.count - Int(store.acknowledgedClientVersion)) changesets to upload")
        resumeBindingWaiters(with: bound)
        Task { await self.sendUploads() }
    }

    /// The binding made on connection attempt `attempt` ended.
    func unbound(attempt: Int) {
        if channel?.attempt == attempt { dropBinding() }
    }

    func dropBinding() {
        if channel != nil {
            // The server's next binding reports afresh: registrations meanwhile wait for that report.
            notifier.markStale(.download)
        }
        channel = nil
        inFlightBytes = 0
        if downloadRemaining != nil {
            downloadRemaining = nil
            refreshPendingStatus()
        }
    }

    /// The next part of the partition's log: queue it for the file; once it is durable it is published
    /// and counted in the progress (`didStore`). Returns once the group-commit queue has room, so a server
    /// faster than the disk is slowed (the connection reads its next message only then).
    ///
    /// Ignored once the session stopped wanting to sync (suspended, closed) even if it is not unbound yet:
    /// what is not stored is sent again on the next bind.
    func receive(_ download: Download) async {
        guard channel?.sessionID == download.sessionID, controller.wantsSync, !isClosed else { return }
        if let diverged = store.divergedAcknowledgement(in: download.entries, digests: download.acknowledgedDigests) {
            return divergedAcknowledgement(diverged)
        }
        let records: [Record]
        do {
            records = try store.records(
                for: download.entries, historyID: download.historyID, duplicates: download.acknowledgedDuplicates)
        } catch {
            failedFatally(error)
            return
        }
        enqueue(PendingWrite(records: records, remainingBytes: download.remainingBytes))
        // The server holds what it acknowledged durably: the window reopens now, not once the
        // acknowledgements are durable here too (behind this store's fsyncs of the writes in flight).
        if releaseAcknowledgedFromWindow() { Task { await self.sendUploads() } }
        await waitForRoom()
    }

    /// The connection's state changed (called from the connection's actor, and from here).
    nonisolated func connectionStateChanged(_ state: ConnectionState) {
        connectionStatePublisher.enqueue(state)
        connectionStatePublisher.drain()
        statusTracker.update { inputs in
            inputs.connection = state
            if state != .disconnected { inputs.reconnect = nil }
            // Bound: the connection works again.
            if state == .connected { inputs.lastError = nil }
        }
    }

    /// The connection (or this session's binding) failed and tries again at `next` (called from the
    /// connection).
    nonisolated func reconnectScheduled(next: Date, lastError: SyncError?) {
        statusTracker.update { inputs in
            inputs.reconnect = (next, lastError)
            if let lastError { inputs.lastError = lastError }
        }
    }

    /// The handshake that checks the credential started (`true`) or ended (called from the connection).
    nonisolated func credentialCheckChanged(_ checking: Bool) {
        credentialCheck.enqueue(checking)
        credentialCheck.drain()
    }

    /// A fatal error for this session: report it and stop for good.
    ///
    /// The connection state is `.disconnected` before anything says the session failed: whoever sees the
    /// session `.invalid` (its value, the status, or a callback on the same serial executor) sees it
    /// disconnected too, never an invalid session that is still connecting.
    func failedFatally(_ error: SyncError) {
        connectionStateChanged(.disconnected)
        fatalErrorBox.withLock { $0 = $0 ?? error }
        statusTracker.update { $0.fatalError = $0.fatalError ?? error }
        dropBinding()
        if let id = registration { Task { [connection] in await connection.unregister(id) } }
        registration = nil  // also when `reconcile()` is waiting for one: it must not keep it
        reportError(error)
        resumeUploadWaiters(failing: .sessionInvalid)
        controller.handle(.fatalError)
        resumeBindingWaiters(with: nil)
    }

    /// A non-fatal error for this session.
    func report(_ error: SyncError) { reportError(error) }

    // MARK: Uploading

    /// Sends the durable local changesets the server lacks, in client-version order, in messages below
    /// the message limit (the client's, and the server's from its `welcome`), keeping at most
    /// `uploadWindowBytes` unacknowledged; their bytes are read back from the store. Runs until nothing
    /// more may be sent; concurrent calls coalesce. A changeset whose upload alone exceeds the server's
    /// limit is not sent (the server would close the connection with 1009, and the client would send it
    /// again on every reconnect): uploading stops there and `.messageTooLarge` is reported, once per
    /// binding.
    private func sendUploads() async {
        guard !isUploading else { return }
        isUploading = true
        defer { isUploading = false }
        while let channel, controller.wantsSync, !isClosed, reportedTooLarge != channel.binding {
            let candidates = store.unacknowledged(from: nextToSend)
            guard !candidates.isEmpty, inFlightBytes < limits.uploadWindowBytes else { return }
            let maximumMessageBytes = min(limits.maximumMessageBytes, channel.serverMaximumMessageBytes ?? .max)
            var batch: [LocalStore.LocalEntry] = []
            var size = 1 + 4 + 4
            var bytes = 0
            var namesOrigins = false
            for entry in candidates {
                // A recovered changeset names its origin (and the first one the count of origins).
                let originSize =
                    entry.origin == nil
                    ? 0 : WireProtocol.uploadOriginSize + (namesOrigins ? 0 : WireProtocol.uploadOriginCountSize)
                let entrySize = 8 + 4 + entry.byteCount + originSize
                if batch.isEmpty, size + entrySize > maximumMessageBytes {
                    reportedTooLarge = channel.binding
                    logger.log(
                        .error, LogCategory.session,
                        "\(partition): client version \(nextToSend) needs a \(size + entrySize)-byte upload; the "
                            + "server accepts at most \(maximumMessageBytes) bytes: uploading stops here")
                    reportError(.messageTooLarge(bytes: size + entrySize, limit: maximumMessageBytes))
                    return
                }
                // A changeset larger than the whole window may go, but only alone: with nothing else in flight.
                let overWindow = inFlightBytes + bytes + entry.byteCount > limits.uploadWindowBytes
                if (!batch.isEmpty && size + entrySize > maximumMessageBytes)
                    || (overWindow && (!batch.isEmpty || inFlightBytes > 0))
                {
                    break
                }
                batch.append(entry)
                namesOrigins = namesOrigins || entry.origin != nil
                size += entrySize
                bytes += entry.byteCount
            }
            guard !batch.isEmpty else { return }
            let first = nextToSend
            let payloads: [RecordPayload]
            let file = store.file
            do {
                payloads = try await file.read(batch.map(\.location))
            } catch {
                // A client reset replaced (and closed) that store meanwhile: the read says nothing about the
                // new one, whose changesets the next pass uploads (simulation seed 3922).
                guard store.file === file, self.channel?.binding == channel.binding else { continue }
                failedFatally(error)
                return
            }
            guard self.channel?.binding == channel.binding else { continue }
            var changesets: [UploadChangeset] = []
            changesets.reserveCapacity(batch.count)
            for (offset, payload) in payloads.enumerated() {
                guard case .local(let clientVersion, let data)? = try? Record(decoding: payload),
                    clientVersion == first + UInt64(offset)
                else {
                    failedFatally(.storeCorrupted(path: store.file.path, offset: batch[offset].location.offset))
                    return
                }
                changesets.append(
                    UploadChangeset(clientVersion: clientVersion, data: data, origin: batch[offset].origin))
            }
            logger.log(
                .debug, LogCategory.session, "\(partition): uploading \(changesets.count) changesets, \(bytes) bytes")
            channel.send(.upload(Upload(sessionID: channel.sessionID, changesets: changesets)))
            nextToSend = first + UInt64(batch.count)
            inFlightBytes += bytes
        }
    }

    // MARK: Writing

    /// Appends `data` durably, reports it to upload progress, and uploads it when bound. Writes issued
    /// while the file is busy share the next fsync (group commit); each returns once its own record is on
    /// disk, and they are uploaded in client-version order. Waits first while the group-commit queue is full;
    /// only then are the bytes copied into the store's record, so writes that wait for room hold nothing
    /// but the caller's `Data`.
    func write(_ data: Data) async throws(SyncError) -> (clientFileID: UInt64, clientVersion: UInt64) {
        try checkWritable()
        guard data.count <= limits.maximumChangesetBytes else {
            throw .changesetTooLarge(bytes: data.count, limit: limits.maximumChangesetBytes)
        }
        await waitForRoom()
        try checkWritable()
        while isResetting {
            await withCheckedContinuation { resetWaiters.append($0) }
            try checkWritable()
        }
        let record = store.recordLocal(Array(data))
        let clientFileID = store.clientFileID
        try await commit(PendingWrite(records: [record], remainingBytes: nil))
        guard case .local(let clientVersion, _) = record else {
            preconditionFailure("recordLocal makes a .local record")
        }
        return (clientFileID, clientVersion)
    }

    private func checkWritable() throws(SyncError) {
        if isClosed { throw .appClosed }
        if controller.state == .invalid { throw .sessionInvalid }
    }

    /// Returns once everything queued for the file before the call is durable (and published).
    func flushed() async throws(SyncError) {
        guard isFlushing || !pending.isEmpty else { return }
        try await commit(PendingWrite(records: [], remainingBytes: nil))
    }

    // MARK: Shutting down

    /// Stops for good (the app closed or the user logged out): unregisters from the connection, lets the
    /// group commit in flight finish, refuses later writes, ends the changeset feed and closes the file
    /// (unlocking it for the next app).
    func shutDown() async {
        guard !isClosed else { return }
        isClosed = true
        controller.handle(.shutDown)
        resetRetry?.cancel()
        resetRetry = nil
        await reconcile()
        // A client reset in progress stops at its next step (it checks `isClosed`): wait for it, so that
        // nothing it does happens after the app closed.
        if let reset = resetTask { await reset.value }
        resetTask = nil
        if isFlushing || !pending.isEmpty { _ = try? await flushed() }
        let waiters = roomWaiters
        roomWaiters = []
        for waiter in waiters { waiter.resume() }
        resumeBindingWaiters(with: nil)
        resumeUploadWaiters(failing: .appClosed)
        receipts.close(.appClosed)
        feed.finish()
        statusTracker.finish()
        // Every other stream of the session ends too, after what was published before.
        connectionStateChanged(.disconnected)
        connectionStatePublisher.finish()
        controller.finishStateStream()
        notifier.finish()
        let resets = clientResetSubject
        callbackExecutor.execute { resets.send(completion: .finished) }
        await store.file.close()
    }

    // MARK: Group commit

    private func commit(_ write: PendingWrite) async throws(SyncError) {
        let failure: SyncError? = await withCheckedContinuation { continuation in
            pendingWaiters.append(continuation)
            enqueue(write)
        }
        if let failure { throw failure }
    }

    /// Queues a `.diverged` record for the store's next commit (no one waits for it: a client reset flushes
    /// it before it writes its new store).
    func persistDiverged(clientVersion: UInt64) {
        enqueue(PendingWrite(records: [.diverged(clientVersion: clientVersion)], remainingBytes: nil))
    }

    /// Queues a `.synced` record for the store's next commit (no one waits for it).
    fileprivate func persistSynced(at date: Date) {
        enqueue(PendingWrite(records: [.synced(at: date)], remainingBytes: nil))
    }

    private func enqueue(_ write: PendingWrite) {
        pending.append(write)
        pendingBytes += write.byteCount
        guard !isFlushing else { return }
        isFlushing = true
        Task { await self.flush() }
    }

    /// Suspends while the group-commit queue holds `pendingBytes` or more (unless shut down). Every waiter
    /// checks again when woken, so only as many proceed as there is room for.
    private func waitForRoom() async {
        while pendingBytes >= limits.pendingBytes, !isClosed {
            await withCheckedContinuation { roomWaiters.append($0) }
        }
    }

    /// Writes everything pending with one fsync, then again for what arrived meanwhile, until nothing is
    /// left. The actor is free during each fsync, so new writes and downloads gather into the next batch.
    private func flush() async {
        while !pending.isEmpty || !pendingWaiters.isEmpty {
            let batch = pending
            let waiters = pendingWaiters
            pending = []
            pendingWaiters = []
            let records = batch.flatMap(\.records)
            var failure: SyncError?
            var locations: [RecordLocation] = []
            var bodyChecksums: [UInt32] = []
            if !records.isEmpty {
                // The clock is read only when the timing is logged: below .debug a commit costs the log nothing.
                let started = logger.isEnabled(.debug) ? ContinuousClock.now : nil
                committingRecordCount = records.count
                do {
                    (locations, bodyChecksums) = try await store.file.appendChecksummed(records.map(\.payload))
                } catch {
                    failure = error
                }
                committingRecordCount = 0
                if let started {
                    logger.log(
                        .debug, LogCategory.store,
                        "\(partition): committed \(records.count) records in \(ContinuousClock.now - started)")
                }
            }
            pendingBytes -= batch.reduce(0) { $0 + $1.byteCount }
            var failedWaiters: [CheckedContinuation<SyncError?, Never>] = []
            if let failure {
                failedWaiters = storeFailed(failure, batch: batch)
            } else {
                didStore(batch, records: records, at: locations, bodyChecksums: bodyChecksums)
            }
            for waiter in waiters + failedWaiters { waiter.resume(returning: failure) }
            if pendingBytes < limits.pendingBytes {
                let ready = roomWaiters
                roomWaiters = []
                for waiter in ready { waiter.resume() }
            }
        }
        isFlushing = false
    }

    /// A batch could not be made durable (a full disk, an I/O error): a transient failure, not a fatal one.
    /// Its writes fail with `failure`, and so does every write queued after it (their records continue
    /// versions that will not exist); the reservations go back to what is durable. A lost download is
    /// reported on `errors` and fetched again: the session is unbound and bound again after its backoff,
    /// from what the store holds.
    /// The session stays usable: later writes succeed once the cause is gone. Returns the waiters of the
    /// writes dropped from the queue.
    private func storeFailed(_ failure: SyncError, batch: [PendingWrite]) -> [CheckedContinuation<SyncError?, Never>] {
        let dropped = pending
        let droppedWaiters = pendingWaiters
        pending = []
        pendingWaiters = []
        pendingBytes -= dropped.reduce(0) { $0 + $1.byteCount }
        store.dropReservations()
        statusTracker.update { $0.lastError = failure }
        logger.log(.error, LogCategory.store, "\(partition): could not store a batch: \(failure)")
        // A lost download has no writer to tell: report it, and fetch it again.
        if (batch + dropped).contains(where: { $0.remainingBytes != nil }) {
            reportError(failure)
            if let id = registration {
                dropBinding()
                Task { [connection] in await connection.rebindAfterStoreFailure(id, error: failure) }
            }
        }
        return droppedWaiters
    }

    /// Takes the changesets sent on this binding that the server acknowledged since the last call out of
    /// the upload window: those up to the store's acknowledged client version, counting acknowledgements
    /// received and not yet durable (`LocalStore.reservedAcknowledgedClientVersion`). Returns whether any
    /// left it.
    ///
    /// Reopening the window on arrival is safe: the server acknowledges only what it stored durably. If
    /// the app stops before the acknowledgement is durable here, the next binding uploads those changesets
    /// again and the server recognises them by client version.
    @discardableResult
    private func releaseAcknowledgedFromWindow() -> Bool {
        let acknowledged = min(store.reservedAcknowledgedClientVersion, nextToSend - 1)
        guard acknowledged > windowAcknowledged else { return false }
        for clientVersion in (windowAcknowledged + 1)...acknowledged {
            inFlightBytes -= store.local[Int(clientVersion - 1)].byteCount
        }
        inFlightBytes = max(0, inFlightBytes)
        windowAcknowledged = acknowledged
        return true
    }

    /// A batch is durable: count it, publish its changesets, report progress, upload its local changesets.
    private func didStore(
        _ batch: [PendingWrite], records: [Record], at locations: [RecordLocation], bodyChecksums: [UInt32]
    ) {
        feed.publish(store.apply(records, at: locations, bodyChecksums: bodyChecksums))
        releaseAcknowledgedFromWindow()
        if let remaining = batch.last(where: { $0.remainingBytes != nil })?.remainingBytes {
            let downloaded = downloadedBase.addingClamped(store.downloadedBytes)
            if remaining == 0, logger.isEnabled(.detail), notifier.current(.download)?.isTransferComplete == false {
                logger.log(.detail, LogCategory.session, "\(partition): download complete, \(downloaded) bytes held")
            }
            notifier.update(
                .download, transferred: downloaded, transferrable: downloaded.addingClamped(Int(clamping: remaining)))
            if channel != nil { downloadRemaining = Int(clamping: remaining) }
        }
        reportUploadProgress()
        resumeUploadWaiters()
        receipts.update(written: UInt64(store.local.count), acknowledged: store.acknowledgedClientVersion)
        controller.handle(.pendingUploads(store.hasUnacknowledged))
        noteSyncState(afterServerReport: batch.contains { $0.remainingBytes != nil })
        if channel != nil { Task { await self.sendUploads() } }
    }
}

extension SessionEngine {
    /// After a durable batch: refreshes the status's pending counts, clears a storage error (the store
    /// works), and — when the batch carried a server report that left the session fully synced (bound,
    /// nothing left to download, nothing unacknowledged) — records the time in the status and, durably, in
    /// the store (a `.synced` record, queued behind the batch: the group commit's next fsync).
    fileprivate func noteSyncState(afterServerReport: Bool) {
        let synced = afterServerReport && downloadRemaining == 0 && !store.hasUnacknowledged
        let now = synced ? wallClock() : nil
        let pending = PendingWork(
            uploadChangesets: store.unacknowledgedCount, uploadBytes: store.unacknowledgedBytes,
            downloadBytes: downloadRemaining)
        statusTracker.update { inputs in
            inputs.pending = pending
            if case .storageFailure? = inputs.lastError { inputs.lastError = nil }
            if let now { inputs.lastSyncedAt = now }
        }
        if let now, !isClosed { persistSynced(at: now) }
    }
}

extension Int {
    /// `self + other`, saturating at `Int.max`.
    func addingClamped(_ other: Int) -> Int {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? .max : sum
    }
}
