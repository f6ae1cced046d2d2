import SyncStorage
import SyncWire
import Synchronization

/// The server's sync logic: connections' protocol state, the partitions they sync, and the pumps that
/// send each bound session its entries.
///
/// Each connection's messages arrive one at a time, in order (its task waits for `handle` to return).
/// Messages of different connections interleave only where an operation waits for the store; those
/// waits happen while holding the partition's gate, so per partition the log grows strictly one operation
/// after another.
///
/// Entries reach sessions only through their pumps (`pump(_:)`): one per bound session, running on this
/// actor while it has something to send, sending the session's entries in version order, one message at
/// a time, each only once the connection is writable. So the log's bytes are never held in memory for a
/// whole backlog, a slow client slows only itself, and each session sees each entry once, in order.
actor ServerCore {
    let store: any PartitionStore
    let configuration: SyncServer.Configuration
    let logger: SyncLogger
    static let category = "sync.server"
    /// Set when the server has a maximum offline time (see `ServerCore+ClientReset`).
    let clientFileTracking: ClientFileTracking?
    /// What the server counts for `/metrics`.
    let metrics: ServerMetrics
    /// Who may connect: the configuration's, until `replaceAuthentication` (a reloaded keys file).
    private var authentication: SyncServer.Authentication

    /// Every partition loaded or in use; idle ones are evicted beyond a maximum (`ServerCore+Eviction`).
    var partitions: [PartitionName: Partition] = [:]
    var idlePartitions = IdlePartitions()
    var evictingPartitions: Set<PartitionName> = []
    private var connections: [UInt64: ConnectionState] = [:]
    /// Per connection whose send turn is taken: the pumps waiting for it, in order (see `takeSendTurn`).
    private var sendTurns: [UInt64: [CheckedContinuation<Void, Never>]] = [:]
    /// Pumps running, and those of them suspended waiting for their connection's send turn or for it to
    /// be writable (tests wait for every running pump to be waiting instead of sleeping).
    private(set) var pumpCounts = (running: 0, waiting: 0)
    /// The store's appends by any writer, for a shared store (see `ServerCore+SharedStore.swift`).
    let appendNotifications: AsyncStream<AppendNotification>?
    /// Per partition being caught up after a notification: the highest version announced so far.
    var catchUpTargets: [PartitionName: UInt64] = [:]
    /// The "seen" records being written for sessions that ended (`clientFileSeenLater`), by number:
    /// `stop()` waits for them, so what the server learnt is durable when it returns.
    var seenRecordWrites: [Int: Task<Void, Never>] = [:]
    var nextSeenRecordWrite = 0
    /// The store's count of its partitions, read once when `maximumPartitionsInStore` is set (see
    /// `ServerCore+PartitionCreation`), and the partitions created since and being created.
    var storePartitionCount: Task<Result<Int?, any Error>, Never>?
    var partitionsCreated = 0
    var creationsInProgress = 0

    /// How long clients are told to wait after a storage failure.
    static let retryAfterStorageFailure: UInt32 = 1000
    /// How long clients are told to wait when a limit of the server is reached.
    static let retryAfterBusy: UInt32 = 5000

    init(configuration: SyncServer.Configuration, metrics: ServerMetrics) {
        self.metrics = metrics
        authentication = configuration.authentication
        store = configuration.store
        self.configuration = configuration
        logger = SyncLogger(level: configuration.logLevel, sink: configuration.logger)
        clientFileTracking = ClientFileTracking(configuration)
        appendNotifications = configuration.store.appendNotifications()
    }

    // MARK: - Connections

    /// Handles one message of `handle`'s connection; returns when it is handled (entries it makes
    /// available are sent by the sessions' pumps, later).
    func handle(_ message: ClientMessage, from handle: ConnectionHandle) async {
        let connection = state(of: handle)
        switch connection.phase {
        case .closed:
            return
        case .awaitingHello:
            guard case .hello(let hello) = message else {
                return fail(connection, .malformedMessage, "the first message must be hello")
            }
            greet(connection, hello)
        case .ready(let access):
            switch message {
            case .hello:
                fail(connection, .malformedMessage, "hello was already received")
            case .bind(let bind):
                await self.bind(bind, on: connection, access: access)
            case .upload(let upload):
                await self.upload(upload, on: connection)
            case .unbind(let sessionID):
                unbind(sessionID, on: connection)
            case .ping(let id):
                connection.handle.send(.pong(id: id))
                // Its bound client files are seen: their durable "seen" record is refreshed when due (at
                // most once per record interval), so it lags at most that much plus the ping interval
                // even if the server crashes — not since the bind.
                for session in connection.sessions.values {
                    clientFileSeenLater(session.clientFileID, in: session.partition)
                }
            case .mark(let sessionID, let id):
                await markCaughtUp(sessionID, id: id, on: connection)
            }
        }
    }

    /// Replaces who may connect from the next `hello` on; connections already authenticated keep their
    /// access.
    func replaceAuthentication(_ authentication: SyncServer.Authentication) {
        self.authentication = authentication
    }

    /// Forgets a connection whose messages ended, unbinding its sessions.
    func connectionEnded(_ handle: ConnectionHandle) {
        guard let connection = connections.removeValue(forKey: handle.id) else { return }
        logger.log(.info, Self.category, "connection \(handle.id) ended (\(connection.sessions.count) sessions bound)")
        endAllSessions(of: connection)
        connection.phase = .closed
    }

    /// How many sessions are bound to `name` (0 when it is not loaded).
    func boundSessionCount(in name: String) -> Int { partitions[PartitionName(name)]?.subscribers.count ?? 0 }

    private func state(of handle: ConnectionHandle) -> ConnectionState {
        if let connection = connections[handle.id] { return connection }
        let connection = ConnectionState(handle: handle)
        connections[handle.id] = connection
        return connection
    }

    private func greet(_ connection: ConnectionState, _ hello: Hello) {
        guard (WireProtocol.oldestSupportedVersion...WireProtocol.version).contains(hello.protocolVersion) else {
            return fail(
                connection,
                .unsupportedProtocolVersion,
                "the server speaks protocol versions \(WireProtocol.oldestSupportedVersion)…\(WireProtocol.version), "
                    + "not \(hello.protocolVersion)"
            )
        }
        if case .apiKey(let key) = hello.credential, key.utf8.count > configuration.maximumCredentialBytes {
            return fail(
                connection, .authenticationFailed,
                "the API key is longer than \(configuration.maximumCredentialBytes) bytes")
        }
        guard let access = authentication.access(for: hello.credential) else {
            return fail(connection, .authenticationFailed, "the credential was refused")
        }
        connection.owner = hello.credential.ownerIdentity
        connection.protocolVersion = hello.protocolVersion
        connection.phase = .ready(access)
        logger.log(.info, Self.category, "connection \(connection.handle.id) welcomed as \(connection.owner)")
        // From version 5 the welcome says the largest message the server accepts, so a client refuses an
        // upload that cannot fit instead of being closed with 1009 and sending it again forever.
        connection.handle.send(
            hello.protocolVersion >= 5
                ? .welcome(
                    protocolVersion: hello.protocolVersion,
                    maximumMessageBytes: UInt32(clamping: configuration.maximumMessageBytes))
                : .welcome(protocolVersion: hello.protocolVersion))
    }

    /// Sends a connection-level error, then closes the connection and unbinds its sessions.
    private func fail(_ connection: ConnectionState, _ code: ProtocolErrorCode, _ message: String) {
        logger.log(.warn, Self.category, "connection \(connection.handle.id) closed: \(code): \(message.escapedForLog)")
        connection.handle.send(.error(ProtocolError(code: code, message: message)))
        connection.handle.close()
        endAllSessions(of: connection)
        connection.phase = .closed
    }

    // MARK: - Sessions

    private func bind(_ bind: Bind, on connection: ConnectionState, access: PartitionAccess) async {
        let sessionID = bind.sessionID
        guard bind.partition.utf8.count <= configuration.maximumPartitionNameBytes, !bind.partition.isEmpty else {
            return reject(
                sessionID, on: connection, .malformedMessage,
                "a partition name must have 1 to \(configuration.maximumPartitionNameBytes) bytes")
        }
        guard let permission = access.permission(for: bind.partition) else {
            return reject(sessionID, on: connection, .permissionDenied, "the credential may not sync \(bind.partition)")
        }
        guard connection.sessions[sessionID] == nil else {
            return reject(sessionID, on: connection, .sessionAlreadyBound, "session \(sessionID) is already bound")
        }
        guard connection.sessions.count < configuration.maximumSessionsPerConnection else {
            return reject(
                sessionID, on: connection, .serverBusy,
                "a connection may bind at most \(configuration.maximumSessionsPerConnection) sessions",
                retryAfterMilliseconds: Self.retryAfterBusy)
        }
        guard isLive(bind.partition) || livePartitionCount < configuration.maximumPartitions else {
            return reject(
                sessionID, on: connection, .serverBusy,
                "the server serves at most \(configuration.maximumPartitions) partitions",
                retryAfterMilliseconds: Self.retryAfterBusy)
        }
        let partition = self.partition(named: bind.partition)
        await partition.acquire()
        defer { release(partition) }
        let creating: Bool
        switch await admitLoad(of: partition, permission: permission) {
        case .load(let creates):
            creating = creates
        case .refuse(let message):
            return reject(sessionID, on: connection, .permissionDenied, message)
        case .fail(let message):
            return reject(
                sessionID, on: connection, .internalError, message,
                retryAfterMilliseconds: Self.retryAfterStorageFailure)
        }
        do {
            try await load(partition, reaching: bind.downloadedVersion)
            if creating { creationEnded(succeeded: true) }
        } catch {
            if creating { await creationEnded(of: partition) }
            // The store's own cap (shared by several front ends): refused as the server's own count refuses.
            if let refused = error as? PartitionCreationRefused {
                return reject(sessionID, on: connection, .permissionDenied, refused.description)
            }
            return reject(
                sessionID, on: connection, .internalError, "could not load \(bind.partition): \(error)",
                retryAfterMilliseconds: Self.retryAfterStorageFailure
            )
        }
        let refusal: (message: String, details: ClientResetDetails)?
        do {
            refusal = try await clientResetRefusal(for: bind, in: partition)
        } catch {
            return reject(
                sessionID, on: connection, .internalError,
                "could not read version \(bind.checkpoint?.serverVersion ?? 0) of \(bind.partition): \(error)",
                retryAfterMilliseconds: Self.retryAfterStorageFailure)
        }
        if let refusal {
            return reject(
                sessionID, on: connection, .clientResetRequired, refusal.message, clientReset: refusal.details)
        }
        guard partition.claim(bind.clientFileID, for: connection.owner) else {
            return reject(
                sessionID, on: connection, .foreignClientFile,
                "client file \(bind.clientFileID) of \(bind.partition) belongs to another credential")
        }
        await clientFileSeen(bind.clientFileID, in: partition)
        guard !connection.handle.isClosed, case .ready = connection.phase, connection.sessions[sessionID] == nil else {
            return
        }
        let session = BoundSession(
            connection: connection.handle,
            sessionID: sessionID,
            partition: partition,
            clientFileID: bind.clientFileID,
            mayUpload: permission == .write,
            namesDuplicates: connection.protocolVersion >= 9,
            from: bind.downloadedVersion
        )
        connection.sessions[sessionID] = session
        partition.subscribers[session.key] = session
        metrics.sessionsBound.add(1, ordering: .relaxed)
        logger.log(
            .detail, Self.category,
            "connection \(connection.handle.id) bound session \(sessionID) to \(bind.partition.escapedForLog) from version "
                + "\(bind.downloadedVersion) of \(partition.latestVersion)")
        startPump(session)
    }

    private func upload(_ upload: Upload, on connection: ConnectionState) async {
        let sessionID = upload.sessionID
        guard let session = connection.sessions[sessionID] else {
            return reject(sessionID, on: connection, .unknownSession, "session \(sessionID) is not bound")
        }
        guard session.mayUpload else {
            return failSession(
                session, on: connection, .permissionDenied,
                "the credential may read \(session.partition.name) but not upload to it")
        }
        if let tooLarge = upload.changesets.first(where: { $0.data.count > configuration.maximumChangesetBytes }) {
            return failSession(
                session, on: connection, .messageTooLarge,
                "changeset \(tooLarge.clientVersion) has \(tooLarge.data.count) bytes; "
                    + "the limit is \(configuration.maximumChangesetBytes)")
        }
        for (previous, next) in zip(upload.changesets, upload.changesets.dropFirst())
        where next.clientVersion != previous.clientVersion + 1 {
            return failSession(
                session, on: connection, .badClientVersion,
                "client version \(next.clientVersion) follows \(previous.clientVersion)")
        }
        // Stored with the uploads of other sessions waiting for the partition meanwhile: one append.
        await integrate(upload, of: session, on: connection)
    }

    /// A re-upload (client versions the log holds for the session's client file) whose bytes differ from
    /// the integrated ones: the client file was copied (a second device) or restored from a backup, and its
    /// new writes reuse version numbers. Dropping them as duplicates would lose them silently; the client
    /// must be reset (`historyLost`), recovering its changesets after the last one that matches. `nil` when
    /// every re-uploaded changeset matches (or the store cannot be read: the dedupe then stands).
    func divergedReupload(
        _ changesets: [UploadChangeset], of session: BoundSession
    ) async -> (message: String, details: ClientResetDetails)? {
        let partition = session.partition
        let held = changesets.compactMap { changeset in
            partition.serverVersion(of: session.clientFileID, clientVersion: changeset.clientVersion)
                .map { (changeset, $0) }
        }
        guard let first = held.first?.1, let last = held.last?.1 else { return nil }
        var stored: [UInt64: [UInt8]] = [:]
        for (_, version) in held { if let data = partition.cachedData(of: version) { stored[version] = data } }
        if held.contains(where: { stored[$0.1] == nil }) {
            partition.readers += 1
            defer {
                partition.readers -= 1
                noteIfIdle(partition)
            }
            guard let read = try? await store.read(first...last, of: partition.name) else { return nil }
            for changeset in read { stored[changeset.serverVersion] = changeset.data }
        }
        let diverged = held.first { changeset, version in
            guard let data = stored[version] else { return false }
            return data != changeset.data
        }
        guard let (changeset, _) = diverged else { return nil }
        return (
            "client version \(changeset.clientVersion) of client file \(session.clientFileID) was uploaded again with "
                + "other bytes (the client file was copied or restored from a backup): the client must be reset",
            ClientResetDetails(
                reason: .historyLost, serverVersion: partition.latestVersion,
                lastIntegratedClientVersion: changeset.clientVersion - 1)
        )
    }

    private func unbind(_ sessionID: UInt32, on connection: ConnectionState) {
        guard let session = connection.sessions[sessionID] else {
            return reject(sessionID, on: connection, .unknownSession, "session \(sessionID) is not bound")
        }
        endSession(session, on: connection)
        connection.handle.send(.unbound(sessionID: sessionID))
    }

    func mark(_ sessionID: UInt32, id: UInt64, on connection: ConnectionState) {
        guard let session = connection.sessions[sessionID] else {
            return reject(sessionID, on: connection, .unknownSession, "session \(sessionID) is not bound")
        }
        session.marks.append((id, session.partition.latestVersion))
        if session.isCaughtUp {
            answerMarks(of: session)
        } else {
            startPump(session)
        }
    }

    private func reject(
        _ sessionID: UInt32,
        on connection: ConnectionState,
        _ code: ProtocolErrorCode,
        _ message: String,
        retryAfterMilliseconds: UInt32? = nil,
        clientReset: ClientResetDetails? = nil
    ) {
        reject(
            sessionID, on: connection.handle, code, message, retryAfterMilliseconds: retryAfterMilliseconds,
            clientReset: clientReset)
    }

    private func reject(
        _ sessionID: UInt32,
        on handle: ConnectionHandle,
        _ code: ProtocolErrorCode,
        _ message: String,
        retryAfterMilliseconds: UInt32? = nil,
        clientReset: ClientResetDetails? = nil
    ) {
        logger.log(
            code == .internalError ? .error : .warn, Self.category,
            "connection \(handle.id), session \(sessionID): \(code): \(message.escapedForLog)")
        let error = ProtocolError(
            sessionID: sessionID,
            code: code,
            // The details of a storage failure (paths, errno text, the store's errors) stay in the log.
            message: code == .internalError ? "the server's storage failed; retry later" : message,
            retryAfterMilliseconds: retryAfterMilliseconds,
            clientReset: clientReset
        )
        if code == .clientResetRequired { metrics.clientResets.add(1, ordering: .relaxed) }
        handle.send(.error(error))
    }

    /// Unbinds `session` on the server and reports `code` for it — unless its binding already ended while
    /// the failed operation waited for the store (its pump failed, or the client unbound it): that end was
    /// reported, or asked for, already. A second report would reach the client after it bound the same
    /// session number again, and end its new binding on the client only, while the server kept serving it.
    func failSession(
        _ session: BoundSession,
        on connection: ConnectionState,
        _ code: ProtocolErrorCode,
        _ message: String,
        retryAfterMilliseconds: UInt32? = nil,
        clientReset: ClientResetDetails? = nil
    ) {
        guard session.isBound else {
            logger.log(
                .detail, Self.category,
                "connection \(connection.handle.id), session \(session.sessionID): \(code) for a binding that "
                    + "already ended, not reported: \(message.escapedForLog)")
            return
        }
        endSession(session, on: connection)
        reject(
            session.sessionID, on: connection, code, message, retryAfterMilliseconds: retryAfterMilliseconds,
            clientReset: clientReset)
    }

    private func endSession(_ session: BoundSession, on connection: ConnectionState) {
        connection.sessions.removeValue(forKey: session.sessionID)
        end(session)
    }

    private func end(_ session: BoundSession) {
        if session.isBound { metrics.sessionsBound.subtract(1, ordering: .relaxed) }
        session.isBound = false
        session.marks = []
        session.partition.subscribers.removeValue(forKey: session.key)
        clientFileSeenLater(session.clientFileID, in: session.partition)
        noteIfIdle(session.partition)
    }

    private func endAllSessions(of connection: ConnectionState) {
        for session in connection.sessions.values { end(session) }
        connection.sessions = [:]
    }

    // MARK: - Pumps

    /// Runs `session`'s pump unless it is already running.
    func startPump(_ session: BoundSession) {
        guard session.isBound, !session.isPumping else { return }
        session.isPumping = true
        // The pump logs as its own connection's work, whoever's message started it.
        let context = ConnectionLogContext(id: session.connection.id, peer: session.connection.peer)
        Task { await ConnectionLogContext.$current.withValue(context) { await self.pump(session) } }
    }

    /// Sends `session` its entries from its cursor to the partition's latest version, one message at a
    /// time, each once the connection is writable; then answers the marks it passed. Ends when caught up
    /// (entries appended meanwhile are included: the check and the end happen without suspending), or
    /// when the session ends.
    private func pump(_ session: BoundSession) async {
        pumpCounts.running += 1
        defer {
            pumpCounts.running -= 1
            session.isPumping = false
            answerMarks(of: session)
        }
        while session.isBound {
            answerMarks(of: session)
            guard !session.isCaughtUp else { return }
            let connectionID = session.connection.id
            pumpCounts.waiting += 1
            await takeSendTurn(connectionID)
            await session.connection.writable()
            pumpCounts.waiting -= 1
            let sent = await sendNextDownload(session)
            passSendTurn(connectionID)
            guard sent else { return }
        }
    }

    /// Sends `session` its next message, once its connection was writable; `false` when the session or
    /// its connection ended (or the store failed). Runs holding the connection's send turn.
    private func sendNextDownload(_ session: BoundSession) async -> Bool {
        guard session.isBound, !session.connection.isClosed else { return false }
        guard let download = await nextDownload(for: session) else { return false }
        guard session.isBound else { return false }
        session.connection.send(.download(download.message))
        session.nextVersion = download.nextVersion
        session.hasSentFirstDownload = true
        return true
    }

    /// Takes the connection's send turn, waiting (first come, first served) while another pump of the
    /// same connection holds it. One pump at a time waits for `writable()` and queues a message, so a
    /// connection's queue passes the low-water mark by at most one message however many sessions it
    /// has bound (otherwise every waiting pump would pass `writable()` together, each queue a message,
    /// and a client that reads could pass the transport's hard limit and be dropped).
    private func takeSendTurn(_ connectionID: UInt64) async {
        guard sendTurns[connectionID] != nil else {
            sendTurns[connectionID] = []
            return
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            sendTurns[connectionID, default: []].append(continuation)
        }
    }

    /// Hands the connection's send turn to the next waiting pump, or frees it.
    private func passSendTurn(_ connectionID: UInt64) {
        guard var waiters = sendTurns[connectionID], !waiters.isEmpty else {
            sendTurns[connectionID] = nil
            return
        }
        let next = waiters.removeFirst()
        sendTurns[connectionID] = waiters
        next.resume()
    }

    /// The session's next message and the cursor after it; `nil` (and the session failed) when the store
    /// cannot read the entries.
    private func nextDownload(for session: BoundSession) async -> (message: Download, nextVersion: UInt64)? {
        let partition = session.partition
        guard
            let run = DownloadBatcher.nextRun(
                from: session.nextVersion,
                through: partition.latestVersion,
                clientFileID: session.clientFileID,
                maximumBytes: configuration.maximumDownloadMessageBytes,
                maximumMessageSize: configuration.maximumMessageBytes,
                entry: partition.entry
            )
        else {
            // Nothing to send but the first report.
            let empty = Download(
                sessionID: session.sessionID, entries: [], remainingBytes: 0, historyID: firstHistoryID(of: session))
            return (empty, session.nextVersion)
        }
        // The bytes of every entry: other clients' changesets are sent, the session's own are digested.
        var data: [UInt64: [UInt8]] = [:]
        var missing: [UInt64] = []
        for version in run {
            if let cached = partition.cachedData(of: version) {
                data[version] = cached
            } else {
                missing.append(version)
            }
        }
        if let first = missing.first, let last = missing.last {
            partition.readers += 1
            defer {
                partition.readers -= 1
                noteIfIdle(partition)
            }
            do {
                for changeset in try await store.read(first...last, of: partition.name) {
                    data[changeset.serverVersion] = changeset.data
                }
            } catch {
                failPump(session, "could not read \(partition.name) versions \(first)…\(last): \(error)")
                return nil
            }
            guard missing.allSatisfy({ data[$0] != nil }) else {
                failPump(session, "the store did not return \(partition.name) versions \(first)…\(last)")
                return nil
            }
        }
        var digests: [UInt32] = []
        var duplicates: [UInt64] = []
        let entries = run.map { version -> DownloadEntry in
            let summary = partition.entry(version)
            if summary.clientFileID == session.clientFileID {
                // Computed once, when the upload was stored (`storeUploads`), while the entry is in the cache.
                digests.append(partition.cachedChecksum(of: version) ?? CRC32.checksum(data[version] ?? []))
                if summary.duplicateOf != nil, session.namesDuplicates { duplicates.append(version) }
                return .acknowledged(serverVersion: version, clientVersion: summary.clientVersion)
            }
            // A duplicate (an origin integrated before) reaches other clients empty.
            return .changeset(serverVersion: version, data: summary.duplicateOf == nil ? data[version] ?? [] : [])
        }
        let remaining = partition.remainingBytes(after: run.upperBound, for: session.clientFileID)
        let download = Download(
            sessionID: session.sessionID, entries: entries, remainingBytes: remaining,
            historyID: firstHistoryID(of: session), acknowledgedDigests: digests, acknowledgedDuplicates: duplicates)
        return (download, run.upperBound + 1)
    }

    /// The log's identity for the session's first download (the client stores it and binds with it from
    /// then on); `nil` for the later ones.
    private func firstHistoryID(of session: BoundSession) -> UInt64? {
        session.hasSentFirstDownload ? nil : session.partition.historyID
    }

    /// A pump could not read from the store: the session is unbound and told to retry later.
    private func failPump(_ session: BoundSession, _ message: String) {
        guard session.isBound else { return }
        connections[session.connection.id]?.sessions.removeValue(forKey: session.sessionID)
        end(session)
        reject(
            session.sessionID, on: session.connection, .internalError, message,
            retryAfterMilliseconds: Self.retryAfterStorageFailure)
    }

    private func answerMarks(of session: BoundSession) {
        guard session.isBound else { return }
        for id in session.takeAnsweredMarks() {
            session.connection.send(.marked(sessionID: session.sessionID, id: id))
        }
    }

    // MARK: - Partitions

    /// The partition's whole log, loaded if needed; waits for operations on the partition in progress.
    func changesets(in name: String) async throws -> [StoredChangeset] {
        let partition = self.partition(named: name)
        await partition.acquire()
        defer { release(partition) }
        try await loadCurrent(partition)
        guard partition.latestVersion > 0 else { return [] }
        return try await store.read(1...partition.latestVersion, of: name)
    }

    private func partition(named name: String) -> Partition {
        idlePartitions.remove(name)
        if let partition = partitions[PartitionName(name)] { return partition }
        let partition = Partition(name: name)
        partitions[PartitionName(name)] = partition
        metrics.partitionsLoaded.store(partitions.count, ordering: .relaxed)
        return partition
    }

    /// Loads the partition's summaries from the store unless already loaded. Call while holding its gate.
    func load(_ partition: Partition) async throws {
        guard !partition.isLoaded else { return }
        let summaries = try await store.summaries(of: partition.name)
        let historyID = try await store.historyID(of: partition.name)
        let clientFiles = try await loadClientFiles(of: partition.name, summaries: summaries)
        try partition.restore(from: summaries)
        partition.historyID = historyID
        adopt(clientFiles, in: partition)
    }
}

extension WireCredential {
    /// Who the credential is, as recorded with what it uploads: `"anonymous"`, or `"key:"` and a 64-bit
    /// FNV-1a hash of the key (the key itself is never stored).
    var ownerIdentity: String {
        switch self {
        case .anonymous:
            return "anonymous"
        case .apiKey(let key):
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in key.utf8 {
                hash ^= UInt64(byte)
                hash = hash &* 0x0000_0100_0000_01b3
            }
            return "key:" + String(hash, radix: 16)
        }
    }
}
