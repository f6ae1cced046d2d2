import Dispatch
import Foundation
import SyncStorage
import SyncStreams
import SyncWire

/// A logged-in user: opens sessions, one per partition, and lists them.
public final class SyncUser: Sendable, Hashable {
    /// A stable identifier derived from the credentials; also the name of the user's local directory.
    public let identifier: String
    let credentials: SyncCredentials
    let directory: URL
    let configuration: SyncApp.Configuration
    private let callbackExecutor: any StreamExecutor
    private let errorSink: ErrorSink
    private let onLogOut: @Sendable (SyncUser) -> Void
    private let registry = Locked<Registry>(Registry())
    private let sessionsPublisher: OrderedPublisher<[SyncSession]>
    private let statePublisher: OrderedPublisher<UserState>
    private let activity: ActivityTracker
    private let statusAggregator: StatusAggregator

    private enum Slot: Sendable {
        /// Being opened (its store is read off the cooperative pool); callers wait for the task.
        case opening(Task<SyncSession, any Error>)
        case open(SyncSession)
    }

    private struct Registry: Sendable {
        var slots: [ExactName: Slot] = [:]
        var order: [SyncSession] = []
        var sharedConnection: ServerConnection?
        var connections: [ServerConnection] = []
        var isLoggedOut = false
        /// Partitions whose local store `deleteLocalFiles` is deleting: opening them fails meanwhile.
        var deleting: Set<ExactName> = []
    }

    init(
        credentials: SyncCredentials,
        directory: URL,
        configuration: SyncApp.Configuration,
        callbackExecutor: any StreamExecutor,
        errorSink: ErrorSink,
        onLogOut: @escaping @Sendable (SyncUser) -> Void
    ) {
        self.identifier = Self.identifier(for: credentials)
        self.credentials = credentials
        self.directory = directory
        self.configuration = configuration
        self.callbackExecutor = callbackExecutor
        self.errorSink = errorSink
        self.onLogOut = onLogOut
        sessionsPublisher = OrderedPublisher([], executor: callbackExecutor)
        statePublisher = OrderedPublisher(.loggedIn, executor: callbackExecutor)
        activity = ActivityTracker(
            sources: sessionsPublisher.stateStream, activity: { $0.activity }, combine: SyncActivity.of)
        statusAggregator = StatusAggregator(sources: sessionsPublisher.stateStream, status: { $0.status })
    }

    /// `.loggedIn`, then `.loggedOut` after `logOut()`, or `.removed` after `remove()`; delivered on the
    /// app's callback executor.
    public var state: StateStream<UserState> { statePublisher.stateStream }

    /// "Am I synced?" over every session of the user, even as sessions open and close: `.offline` while
    /// none is connected, `.syncing` with the connected sessions' progress added up, `.synced` when they
    /// have moved everything. See `SyncActivity`; `.offline` from `logOut()` on.
    public var syncActivity: StateStream<SyncActivity> { activity.state }

    /// The status of every session of the user together (see `SyncStatus`; how the fields combine: the
    /// least connected, pending work added up, the oldest `lastSyncedAt`, the most severe offline reason).
    /// The current value at once, then each change; after `logOut()`, a final `.closed` snapshot, then it
    /// finishes.
    public var status: StateStream<SyncStatus> { statusAggregator.state }

    /// Every session opened, in the order they were opened.
    public var allSessions: [SyncSession] { registry.withLock { $0.order } }

    /// The session for `partition`, if one was opened.
    public func session(for partition: String) -> SyncSession? {
        registry.withLock { registry in
            if case .open(let session)? = registry.slots[ExactName(partition)] { return session }
            return nil
        }
    }

    /// The user's sessions as a state: the current list at once, then each change, delivered on the app's
    /// callback executor; finishes… never (it stays at `[]` after `logOut()`).
    public var sessions: StateStream<[SyncSession]> { sessionsPublisher.stateStream }

    /// Opens (or returns the already open) session for `partition` and starts syncing it. An inactive
    /// session (suspended or closed) is resumed, as Realm revives a session when its Realm opens again.
    ///
    /// With `suspended: true` a session that opens now starts `.inactive`, as if `suspend()` had been
    /// called before it could connect: it never connects or binds until `resume()`, and it can be written
    /// to (offline) meanwhile. An already open session is returned as it is (neither resumed nor
    /// suspended).
    ///
    /// Opening reads the partition's local store, off the cooperative pool and outside any lock other
    /// sessions need: what was written before and not acknowledged is uploaded again, and what was
    /// downloaded before is not downloaded again. A final write torn by a crash is cut and reported on
    /// `app.errors` as `.storeRepaired`.
    ///
    /// - Throws: `.invalidArgument` for an empty partition name or one over 1,024 UTF-8 bytes;
    ///   `.storeInUse` when another app has the store open; `.storeCorrupted` or `.storageFailure` if the
    ///   local store cannot be opened, and `.storeInUse` while `SyncApp.deleteLocalFiles(for:partition:)`
    ///   deletes it; `.appClosed` after `logOut()` or `SyncApp.close()`.
    public func openSession(partition: String, suspended: Bool = false) async throws(SyncError) -> SyncSession {
        guard !partition.isEmpty else { throw .invalidArgument("a partition name must not be empty") }
        guard partition.utf8.count <= Self.maximumPartitionNameBytes else {
            throw .invalidArgument("a partition name must have at most \(Self.maximumPartitionNameBytes) bytes")
        }
        let found = registry.withLock { registry -> Slot?? in
            guard !registry.isLoggedOut else { return nil }
            guard !registry.deleting.contains(ExactName(partition)) else { return .some(nil) }
            if let slot = registry.slots[ExactName(partition)] { return slot }
            let task = Task { () async throws -> SyncSession in
                do throws(SyncError) {
                    return try await self.makeSession(partition: partition, suspended: suspended)
                } catch {
                    self.registry.withLock { registry in
                        if case .opening? = registry.slots[ExactName(partition)] {
                            registry.slots[ExactName(partition)] = nil
                        }
                    }
                    throw error
                }
            }
            registry.slots[ExactName(partition)] = .opening(task)
            return .opening(task)
        }
        guard let found else { throw .appClosed }
        guard let slot = found else {
            throw .storeInUse(path: directory.appendingPathComponent(Self.fileName(for: partition)).path)
        }
        let session: SyncSession
        switch slot {
        case .open(let open):
            session = open
            if session.state.value == .inactive && !suspended { session.resume() }
        case .opening(let task):
            do {
                session = try await task.value
            } catch let error as SyncError {
                throw error
            } catch {
                throw .storageFailure("\(error)")
            }
        }
        return session
    }

    /// The longest partition name, in UTF-8 bytes (the reference server's default limit).
    static let maximumPartitionNameBytes = 1_024

    /// Opens the session for `partition` and reports the initial download: `.connecting`, then
    /// `.waitingForUser` while the server checks the credential, then `.progress` values
    /// (`.forCurrentlyOutstandingWork`), then `.open(session)` once everything the server had is
    /// downloaded, and finishes; or `.error` and finishes. Delivered on the app's callback executor.
    ///
    /// With a `timeout` (on the configuration's timer executor), `.error(.timedOut)` ends the stream when the
    /// download has not completed in time — offline, say; the session stays open and keeps trying.
    /// Invalidating the token stops waiting (the session stays open).
    public func asyncOpen(partition: String, timeout: Duration? = nil) -> AnySyncStream<AsyncOpenState, Never> {
        let executor = callbackExecutor
        let timers = configuration.timerExecutor
        return AnySyncStream { onValue, onCompletion in
            let output = PassthroughSubject<AsyncOpenState, Never>()
            let outcome = AsyncOpenOutcome(output)
            let outputToken = output.observe(onAny: executor).subscribe(onValue: onValue, onCompletion: onCompletion)
            let task = Task {
                outcome.send(.connecting)
                do throws(SyncError) {
                    let session = try await self.openSession(partition: partition)
                    let checkToken = session.engine.credentialCheck.subject.removeDuplicates().subscribe { checking in
                        if checking { outcome.send(.waitingForUser) }
                    }
                    let progressToken = session.engine.notifier
                        .progress(for: .download, mode: .forCurrentlyOutstandingWork)
                        .subscribe { outcome.send(.progress($0)) }
                    defer {
                        checkToken.invalidate()
                        progressToken.invalidate()
                    }
                    do throws(SyncError) {
                        try await session.wait(for: .download)
                    } catch .sessionInvalid {
                        // Report why, not just that the session is invalid.
                        throw session.engine.fatalError ?? .sessionInvalid
                    }
                    outcome.finish(.open(session))
                } catch {
                    if error != .cancelled { outcome.finish(.error(error)) }
                }
                outcome.finish(nil)
            }
            let timer = timeout.map { timeout in
                timers.schedule(after: timeout) {
                    outcome.finish(.error(.timedOut("asyncOpen of \(partition) did not complete within \(timeout)")))
                    task.cancel()
                }
            }
            return SubscriptionToken {
                timer?.cancel()
                task.cancel()
                outputToken.invalidate()
            }
        }
    }

    /// Deletes `partition`'s local store (see `SyncApp.deleteLocalFiles(for:partition:)`). While it runs,
    /// the partition is marked as being deleted, so `openSession` fails with `.storeInUse` instead of
    /// opening a store about to go; and the store's lock is held from the check to the rename, so no other
    /// app (or user object of a later login) opens it in between.
    func deleteLocalFiles(partition: String) async throws(SyncError) {
        let path = directory.appendingPathComponent(Self.fileName(for: partition))
        let marked = registry.withLock { registry -> Bool in
            guard registry.slots[ExactName(partition)] == nil, !registry.deleting.contains(ExactName(partition)) else {
                return false
            }
            registry.deleting.insert(ExactName(partition))
            return true
        }
        guard marked else { throw .storeInUse(path: path.path) }
        defer { registry.withLock { _ = $0.deleting.remove(ExactName(partition)) } }
        let willRename = configuration.testHooks.deleteLocalFilesWillRename
        let fileSystem = configuration.fileSystem
        try await BlockingQueue.engine.run { () throws(SyncError) in
            try LocalFiles.removeStore(path, fileSystem: fileSystem, willRename: willRename)
        }
    }

    /// Every connection of the user reconnects at once with a fresh backoff if it waits to reconnect, and
    /// every session waiting to be bound again after a session error is bound at once (see
    /// `SyncApp.reconnect()`). Returns once every connection has done so.
    func reconnect() async {
        let connections = registry.withLock { $0.connections }
        await withTaskGroup(of: Void.self) { group in
            for connection in connections { group.addTask { await connection.reconnect() } }
        }
    }

    /// Logs the user out: every session stops as on `SyncApp.close()` (changes not uploaded yet stay on
    /// disk), its connections close, its store files are unlocked and closed, and the app forgets the user,
    /// so that a later `login` with the same credentials starts afresh. Later calls on this user and its
    /// sessions throw `.appClosed` or do nothing. Calling it again does nothing.
    public func logOut() async {
        let taken = registry.withLock { registry -> (slots: [Slot], connections: [ServerConnection])? in
            guard !registry.isLoggedOut else { return nil }
            registry.isLoggedOut = true
            defer {
                registry.slots = [:]
                registry.order = []
                registry.sharedConnection = nil
                registry.connections = []
                sessionsPublisher.enqueue([])
            }
            return (Array(registry.slots.values), registry.connections)
        }
        guard let taken else { return }
        sessionsPublisher.drain()
        activity.stop(at: .offline)
        statusAggregator.finish()
        for slot in taken.slots {
            switch slot {
            case .open(let session): await session.engine.shutDown()
            case .opening(let task): _ = try? await task.value  // it sees the log-out and closes its store
            }
        }
        for connection in taken.connections { await connection.close() }
        statePublisher.enqueue(.loggedOut)
        statePublisher.drain()
        onLogOut(self)
    }

    /// Logs the user out (see `logOut()`) and deletes its local files: every partition's store, so that
    /// logging in again downloads everything afresh and re-uploads nothing. The directory is first renamed
    /// aside (one atomic step), then deleted, so a crash never leaves a half-deleted store in use.
    ///
    /// The lock of every store in the directory is taken first, as `SyncApp.deleteLocalFiles` does.
    ///
    /// - Throws: `.storeInUse(path:)` when another app (in this process or another) has one of the user's
    ///   stores open (nothing is deleted), `.storageFailure` if the files cannot be deleted (the user is
    ///   logged out anyway).
    public func remove() async throws(SyncError) {
        await logOut()
        let directory = directory
        let fileSystem = configuration.fileSystem
        try await BlockingQueue.engine.run { () throws(SyncError) in
            try LocalFiles.removeDirectory(directory, fileSystem: fileSystem)
        }
        statePublisher.enqueue(.removed)
        statePublisher.drain()
    }

    private func makeSession(partition: String, suspended: Bool) async throws(SyncError) -> SyncSession {
        let path = directory.appendingPathComponent(Self.fileName(for: partition)).path
        let (store, synced, discardedBytes) = try await LocalStore.open(
            path: path, fileSystem: configuration.fileSystem, newClientFileID: { UInt64.random(in: 1...UInt64.max) })
        // The store's lock is held: no client reset of it runs, and what an interrupted one left can go.
        await BlockingQueue.engine.run { LocalFiles.removeResetLeftover(of: path) }
        let connection = registry.withLock { registry -> ServerConnection? in
            guard !registry.isLoggedOut else { return nil }
            switch configuration.connectionSharing {
            case .perUser:
                if let shared = registry.sharedConnection { return shared }
                let connection = makeConnection()
                registry.sharedConnection = connection
                registry.connections.append(connection)
                return connection
            case .perSession:
                let connection = makeConnection()
                registry.connections.append(connection)
                return connection
            }
        }
        guard let connection else {
            await store.file.close()
            throw .appClosed
        }
        let sessionExecutor =
            configuration.callbackExecutor ?? DispatchQueue(label: "SyncSession.callbacks.\(partition)")
        let sessionReference = WeakReference<SyncSession>()
        let engineReference = WeakReference<SessionEngine>()
        let logger = errorSink.logger
        let controller = SessionController(
            stopPolicy: configuration.stopPolicy, suspended: suspended, executor: sessionExecutor,
            log: { state in logger.log(.info, LogCategory.session, "\(partition): \(state)") }
        ) {
            guard let engine = engineReference.object else { return }
            engine.statusTracker.update()
            Task { await engine.reconcile() }
        }
        let errorSink = errorSink
        let handler = configuration.clientResetHandler
        let clientReset = ClientResetSettings(
            mode: configuration.clientResetMode,
            handler: { event in
                guard let handler, let session = sessionReference.object else { return }
                handler(event, session)
            },
            beforeSwap: configuration.testHooks.beforeClientResetSwap,
            fileSystem: configuration.fileSystem)
        let engine = SessionEngine(
            partition: partition,
            store: store,
            synced: synced,
            connection: connection,
            controller: controller,
            callbackExecutor: sessionExecutor,
            limits: configuration.sessionLimits,
            logger: logger,
            clientReset: clientReset,
            wallClock: configuration.wallClock,
            reportError: { errorSink.report($0, session: sessionReference.object) }
        )
        engineReference.object = engine
        let session = SyncSession(partition: partition, engine: engine, callbackExecutor: sessionExecutor)
        sessionReference.object = session
        let registered = registry.withLock { registry -> Bool in
            guard !registry.isLoggedOut else { return false }
            registry.slots[ExactName(partition)] = .open(session)
            registry.order.append(session)
            sessionsPublisher.enqueue(registry.order)
            return true
        }
        guard registered else {
            await engine.shutDown()
            throw .appClosed
        }
        sessionsPublisher.drain()
        if discardedBytes > 0 {
            errorSink.report(.storeRepaired(path: path, discardedBytes: discardedBytes), session: session)
        }
        await engine.reconcile()
        return session
    }

    private func makeConnection() -> ServerConnection {
        let errorSink = errorSink
        let credential: WireCredential =
            switch credentials {
            case .anonymous: .anonymous
            case .apiKey(let key): .apiKey(key)
            }
        return ServerConnection(
            settings: ServerConnection.Settings(
                endpoint: configuration.server,
                transport: configuration.transport,
                credential: credential,
                backoff: configuration.backoff,
                connectTimeout: configuration.connectTimeout,
                pingInterval: configuration.pingInterval,
                pongTimeout: configuration.pongTimeout,
                executor: configuration.timerExecutor,
                random: configuration.random,
                logger: errorSink.logger,
                wallClock: configuration.wallClock,
                reportError: { errorSink.report($0, session: nil) }
            )
        )
    }

    public static func == (lhs: SyncUser, rhs: SyncUser) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    /// `"anonymous"`, or `"apikey-"` and a hash of the key (the key itself never reaches the disk).
    static func identifier(for credentials: SyncCredentials) -> String {
        switch credentials {
        case .anonymous:
            return "anonymous"
        case .apiKey(let key):
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325  // FNV-1a
            for byte in key.utf8 {
                hash ^= UInt64(byte)
                hash = hash &* 0x0000_0100_0000_01b3
            }
            return "apikey-" + String(hash, radix: 16)
        }
    }

    /// The file name of `partition`'s local store (see `StoreFileName`: injective, distinct on
    /// case-insensitive file systems, never a path).
    static func fileName(for partition: String) -> String {
        StoreFileName.forPartition(partition, suffix: ".synclog")
    }
}
