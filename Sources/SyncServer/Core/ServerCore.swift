import SyncWire

/// The server's sync logic: connections' protocol state and the partitions they sync.
///
/// Each connection's messages arrive one at a time, in order (its task waits for `handle` to return).
/// Messages of different connections interleave only where an operation waits for the store; those
/// waits happen while holding the partition's gate, so per partition the log grows, and sessions are
/// subscribed and sent their entries, strictly one operation after another. Every message to a client is
/// sent from here, in the order the log grows, so each session sees each entry once and in order.
actor ServerCore {
    private let store: any PartitionStore
    private let authentication: SyncServer.Authentication
    private let maximumDownloadMessageBytes: Int
    private let maximumChangesetBytes: Int

    private var partitions: [String: Partition] = [:]
    private var connections: [UInt64: ConnectionState] = [:]

    /// How long clients are told to wait after a storage failure.
    static let retryAfterStorageFailure: UInt32 = 1000

    init(configuration: SyncServer.Configuration) {
        store = configuration.store
        authentication = configuration.authentication
        maximumDownloadMessageBytes = configuration.maximumDownloadMessageBytes
        maximumChangesetBytes = configuration.maximumChangesetBytes
    }

    // MARK: - Connections

    /// Handles one message of `handle`'s connection; returns when every resulting message is sent.
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
            }
        }
    }

    /// Forgets a connection whose messages ended, unbinding its sessions.
    func connectionEnded(_ handle: ConnectionHandle) {
        guard let connection = connections.removeValue(forKey: handle.id) else { return }
        endAllSessions(of: connection)
        connection.phase = .closed
    }

    private func state(of handle: ConnectionHandle) -> ConnectionState {
        if let connection = connections[handle.id] { return connection }
        let connection = ConnectionState(handle: handle)
        connections[handle.id] = connection
        return connection
    }

    private func greet(_ connection: ConnectionState, _ hello: Hello) {
        guard hello.protocolVersion == WireProtocol.version else {
            return fail(
                connection,
                .unsupportedProtocolVersion,
                "the server speaks protocol version \(WireProtocol.version), not \(hello.protocolVersion)"
            )
        }
        guard let access = authentication.access(for: hello.credential) else {
            return fail(connection, .authenticationFailed, "the credential was refused")
        }
        connection.phase = .ready(access)
        connection.handle.send(.welcome(protocolVersion: WireProtocol.version))
    }

    /// Sends a connection-level error, then closes the connection and unbinds its sessions.
    private func fail(_ connection: ConnectionState, _ code: ProtocolErrorCode, _ message: String) {
        connection.handle.send(.error(ProtocolError(code: code, message: message)))
        connection.handle.close()
        endAllSessions(of: connection)
        connection.phase = .closed
    }

    // MARK: - Sessions

    private func bind(_ bind: Bind, on connection: ConnectionState, access: PartitionAccess) async {
        let sessionID = bind.sessionID
        guard access.allows(bind.partition) else {
            return reject(sessionID, on: connection, .permissionDenied, "the credential may not sync \(bind.partition)")
        }
        guard connection.sessions[sessionID] == nil else {
            return reject(sessionID, on: connection, .sessionAlreadyBound, "session \(sessionID) is already bound")
        }
        let partition = self.partition(named: bind.partition)
        await partition.acquire()
        defer { partition.release() }
        do {
            try await load(partition)
        } catch {
            return reject(
                sessionID, on: connection, .internalError, "could not load \(bind.partition): \(error)",
                retryAfterMilliseconds: Self.retryAfterStorageFailure
            )
        }
        guard bind.downloadedVersion <= partition.latestVersion else {
            return reject(
                sessionID, on: connection, .malformedMessage,
                "downloadedVersion \(bind.downloadedVersion) is beyond the log's last version \(partition.latestVersion)"
            )
        }
        guard !connection.handle.isClosed else { return }
        let session = BoundSession(
            connection: connection.handle,
            sessionID: sessionID,
            partition: bind.partition,
            clientFileID: bind.clientFileID
        )
        connection.sessions[sessionID] = session
        partition.subscribers[session.key] = session
        send(partition.log[Int(bind.downloadedVersion)...], to: session)
    }

    private func upload(_ upload: Upload, on connection: ConnectionState) async {
        let sessionID = upload.sessionID
        guard let session = connection.sessions[sessionID] else {
            return reject(sessionID, on: connection, .unknownSession, "session \(sessionID) is not bound")
        }
        if let tooLarge = upload.changesets.first(where: { $0.data.count > maximumChangesetBytes }) {
            endSession(session, on: connection)
            return reject(
                sessionID, on: connection, .messageTooLarge,
                "changeset \(tooLarge.clientVersion) has \(tooLarge.data.count) bytes; "
                    + "the limit is \(maximumChangesetBytes)"
            )
        }
        for (previous, next) in zip(upload.changesets, upload.changesets.dropFirst())
        where next.clientVersion <= previous.clientVersion {
            endSession(session, on: connection)
            return reject(
                sessionID, on: connection, .badClientVersion,
                "client version \(next.clientVersion) follows \(previous.clientVersion)"
            )
        }
        guard let partition = partitions[session.partition] else { return }
        await partition.acquire()
        defer { partition.release() }
        let integrated = partition.lastClientVersion[session.clientFileID] ?? 0
        let fresh = upload.changesets.filter { $0.clientVersion > integrated }
        guard !fresh.isEmpty else { return }
        let first = partition.nextServerVersion
        let stored = fresh.enumerated().map { offset, changeset in
            StoredChangeset(
                serverVersion: first + UInt64(offset),
                clientFileID: session.clientFileID,
                clientVersion: changeset.clientVersion,
                data: changeset.data
            )
        }
        do {
            try await store.append(stored, to: partition.name)
        } catch {
            endSession(session, on: connection)
            return reject(
                sessionID, on: connection, .internalError, "could not store the upload: \(error)",
                retryAfterMilliseconds: Self.retryAfterStorageFailure
            )
        }
        partition.append(stored)
        for subscriber in partition.subscribers.values {
            send(stored, to: subscriber)
        }
    }

    private func unbind(_ sessionID: UInt32, on connection: ConnectionState) {
        guard let session = connection.sessions[sessionID] else {
            return reject(sessionID, on: connection, .unknownSession, "session \(sessionID) is not bound")
        }
        endSession(session, on: connection)
        connection.handle.send(.unbound(sessionID: sessionID))
    }

    private func reject(
        _ sessionID: UInt32,
        on connection: ConnectionState,
        _ code: ProtocolErrorCode,
        _ message: String,
        retryAfterMilliseconds: UInt32? = nil
    ) {
        let error = ProtocolError(
            sessionID: sessionID,
            code: code,
            message: message,
            retryAfterMilliseconds: retryAfterMilliseconds
        )
        connection.handle.send(.error(error))
    }

    private func endSession(_ session: BoundSession, on connection: ConnectionState) {
        connection.sessions.removeValue(forKey: session.sessionID)
        partitions[session.partition]?.subscribers.removeValue(forKey: session.key)
    }

    private func endAllSessions(of connection: ConnectionState) {
        for session in connection.sessions.values {
            partitions[session.partition]?.subscribers.removeValue(forKey: session.key)
        }
        connection.sessions = [:]
    }

    private func send(_ entries: some Collection<StoredChangeset>, to session: BoundSession) {
        let downloads = DownloadBatcher.downloads(
            of: entries,
            to: session.sessionID,
            clientFileID: session.clientFileID,
            maximumBytes: maximumDownloadMessageBytes
        )
        for download in downloads {
            session.connection.send(.download(download))
        }
    }

    // MARK: - Partitions

    /// The partition's log, loaded if needed; waits for operations on the partition in progress.
    func changesets(in name: String) async throws -> [StoredChangeset] {
        let partition = self.partition(named: name)
        await partition.acquire()
        defer { partition.release() }
        try await load(partition)
        return partition.log
    }

    private func partition(named name: String) -> Partition {
        if let partition = partitions[name] { return partition }
        let partition = Partition(name: name)
        partitions[name] = partition
        return partition
    }

    /// Loads the partition's log from the store unless already loaded. Call while holding its gate.
    private func load(_ partition: Partition) async throws {
        guard !partition.isLoaded else { return }
        let log = try await store.load(partition: partition.name)
        try partition.restore(from: log)
    }
}
