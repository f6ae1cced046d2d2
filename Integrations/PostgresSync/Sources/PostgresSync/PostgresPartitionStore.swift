import Logging
import NIOConcurrencyHelpers
import NIOCore
import PostgresNIO
import SyncServer

/// A `PartitionStore` in PostgreSQL that several `SyncServer`s (front ends, in one process or many) share:
/// the database decides each partition's one order and keeps it durably; each front end serves its own
/// clients and learns of the others' appends through `LISTEN`/`NOTIFY`.
///
/// - **Order:** an append runs `sync_append` (see `PostgresSchema`), one statement and one transaction:
///   it locks the partition's row in `sync_partitions` with `SELECT … FOR UPDATE`, checks that the first
///   version follows `latest_version`, inserts the changesets, moves `latest_version`, and announces the
///   new latest version with `pg_notify`. Concurrent appends to one partition queue on the row lock, so
///   versions are gapless and totally ordered; appends to different partitions do not wait for each
///   other. An append that finds the log ahead writes nothing and throws `PartitionStoreConflict`.
/// - **Idempotent:** `UNIQUE (partition_id, client_file_id, client_version)` refuses a client's changeset
///   stored twice; the store reports that as a `PartitionStoreConflict` too, so the server reads what it
///   lacks and drops the duplicate (the server's own filter normally gets there first).
/// - **Durable before acknowledged:** `append` returns once the transaction committed (with PostgreSQL's
///   default `synchronous_commit`, once its WAL is flushed); the server acknowledges only after that.
///   When the outcome is unknown (the connection broke during the commit, or `operationTimeout`
///   passed), it throws; if the commit did happen, the next append answers `PartitionStoreConflict` and
///   the server finds the entries, so nothing is stored twice.
/// - **Fan-out:** a dedicated connection `LISTEN`s on `sync_appends`; a notification carries the
///   partition's id and latest version (never bytes). Each `appendNotifications()` stream gets every
///   notification for the partitions this store has loaded. When the listening connection is lost the
///   store reconnects with backoff and, once listening again, announces the latest version of every
///   partition it has loaded, so a server reads from the last version it holds and its clients miss
///   nothing. A listening connection that stays open but silent is found by a probe (`SELECT 1` every
///   `listenProbeInterval`, answered within `operationTimeout`) and replaced the same way.
/// - **History:** every partition's row has a random history id (`historyID(of:)`), so a log lost or
///   replaced in the database gets clients of the old one reset (`historyLost`).
/// - **Origins:** every entry keeps its origin and duplicate mark (`StoredChangeset.origin`,
///   `.duplicateOf`; `storesChangesetOrigins`), so the front ends integrate each origin once: a changeset
///   recovered again by a second client reset is a duplicate entry, delivered to other clients empty.
/// - **Cap:** with `Configuration.maximumPartitions`, a partition's row is created only while the database
///   holds fewer rows, under an advisory lock that serialises the creations of every front end (see
///   `partitionCount()`); past it, loading a partition the database does not hold throws
///   `PartitionCreationRefused`, which the server refuses as its own cap (`permissionDenied`).
/// - **Failures:** every operation gives up after `operationTimeout` with
///   `PostgresPartitionStoreError.timedOut`; database errors become `.database` with their SQLSTATE. The
///   server reports both to clients as `internalError` with a retry hint; the connection pool reconnects
///   when the database is back. Every connection starts with `statement_timeout` and `lock_timeout` (see
///   `Configuration`), so the database cancels a statement the store stopped waiting for, and a stalled
///   lock cannot keep the pool's connections.
///
/// Open with `open(_:)`, which creates or migrates the schema; `close()` when done.
public final class PostgresPartitionStore: PartitionStore {
    /// The configuration the store was opened with.
    public let configuration: Configuration

    private let client: PostgresClient
    private let clientTask: Task<Void, Never>
    private let log: StoreLog
    private let state = NIOLockedValueBox(State())

    private struct State: Sendable {
        /// Partitions this store has loaded (it announces only those), by name and by id.
        var ids: [String: Int64] = [:]
        var names: [Int64: String] = [:]
        var subscribers: [Int: AsyncStream<AppendNotification>.Continuation] = [:]
        var nextSubscriber = 0
        var listener: Task<Void, Never>?
        var listens = 0
        var isListening = false
        var isClosed = false
    }

    private init(configuration: Configuration) {
        self.configuration = configuration
        log = StoreLog(level: configuration.logLevel, sink: configuration.logger)
        let url = configuration.url
        var clientConfiguration: PostgresClient.Configuration
        if let directory = url.socketDirectory {
            clientConfiguration = PostgresClient.Configuration(
                unixSocketPath: "\(directory)/.s.PGSQL.\(url.port)", username: url.user, password: url.password,
                database: url.database)
        } else {
            let tls: PostgresClient.Configuration.TLS =
                switch url.tls {
                case .disable: .disable
                case .prefer: .prefer(.makeClientConfiguration())
                case .require: .require(.makeClientConfiguration())
                }
            clientConfiguration = PostgresClient.Configuration(
                host: url.host, port: url.port, username: url.user, password: url.password, database: url.database,
                tls: tls)
        }
        clientConfiguration.options.maximumConnections = configuration.maximumConnections
        clientConfiguration.options.connectTimeout = configuration.operationTimeout
        clientConfiguration.options.additionalStartupParameters = configuration.startupParameters(
            applicationName: configuration.applicationName)
        let client = PostgresClient(configuration: clientConfiguration, backgroundLogger: log.logger)
        self.client = client
        clientTask = Task { await client.run() }
    }

    /// Connects to the database, creates or migrates the schema (see `PostgresSchema`), and starts
    /// listening for appends.
    ///
    /// - Throws: `PostgresPartitionStoreError`: `.timedOut` when the database cannot be reached within
    ///   `operationTimeout`, `.database` when it refuses (authentication, a missing database),
    ///   `.schemaTooNew` when a newer front end migrated it.
    public static func open(_ configuration: Configuration) async throws -> PostgresPartitionStore {
        let store = PostgresPartitionStore(configuration: configuration)
        do {
            let logger = store.log.logger
            let found = try await store.run("create or migrate the schema") { client in
                try await PostgresSchema.migrate(client, logger: logger)
            }
            if found < PostgresSchema.version {
                store.log(.info, "migrated the schema from version \(found) to \(PostgresSchema.version)")
            }
        } catch {
            await store.close()
            throw error
        }
        store.startListening()
        return store
    }

    /// Stops listening, ends every notification stream, and closes the connections. Later operations
    /// throw `.closed`. Idempotent.
    public func close() async {
        let (listener, subscribers) = state.withLockedValue { state in
            defer {
                state.isClosed = true
                state.subscribers = [:]
                state.listener = nil
            }
            return (state.listener, Array(state.subscribers.values))
        }
        listener?.cancel()
        await listener?.value
        for subscriber in subscribers { subscriber.finish() }
        clientTask.cancel()
        await clientTask.value
    }

    /// How many times the listening connection started listening (1 after opening, one more after each
    /// reconnection).
    public var listenCount: Int { state.withLockedValue { $0.listens } }

    /// Whether the listening connection is listening now.
    public var isListening: Bool { state.withLockedValue { $0.isListening } }

    // MARK: - PartitionStore

    public func summaries(of partition: String) async throws -> [StoredChangesetSummary] {
        try await summaries(of: partition, after: 0)
    }

    public func summaries(of partition: String, after version: UInt64) async throws -> [StoredChangesetSummary] {
        let id = try await partitionID(of: partition)
        let after = Int64(clamping: version)
        return try await run("read the log of \(partition)") { client in
            let rows = try await client.query(
                """
                SELECT server_version, client_file_id, client_version, octet_length(data), owner,
                    origin_client_file_id, origin_client_version, duplicate_of
                FROM sync_changesets WHERE partition_id = \(id) AND server_version > \(after)
                ORDER BY server_version
                """)
            var summaries: [StoredChangesetSummary] = []
            for try await (
                serverVersion, clientFileID, clientVersion, length, owner, originFile, originVersion, duplicateOf
            )
                in rows.decode((Int64, Int64, Int64, Int32, String, Int64?, Int64?, Int64?).self)
            {
                summaries.append(
                    StoredChangesetSummary(
                        serverVersion: UInt64(serverVersion), clientFileID: UInt64(bitPattern: clientFileID),
                        clientVersion: UInt64(clientVersion), byteCount: Int(length), owner: owner,
                        origin: Self.origin(originFile, originVersion), duplicateOf: duplicateOf.map(UInt64.init)))
            }
            return summaries
        }
    }

    public func read(_ versions: ClosedRange<UInt64>, of partition: String) async throws -> [StoredChangeset] {
        let id = try await partitionID(of: partition)
        let (lower, upper) = (Int64(clamping: versions.lowerBound), Int64(clamping: versions.upperBound))
        return try await run("read versions \(versions.lowerBound)…\(versions.upperBound) of \(partition)") {
            client in
            let rows = try await client.query(
                """
                SELECT server_version, client_file_id, client_version, owner, data,
                    origin_client_file_id, origin_client_version, duplicate_of
                FROM sync_changesets WHERE partition_id = \(id) AND server_version BETWEEN \(lower) AND \(upper)
                ORDER BY server_version
                """)
            var changesets: [StoredChangeset] = []
            for try await (
                serverVersion, clientFileID, clientVersion, owner, data, originFile, originVersion, duplicateOf
            )
                in rows.decode((Int64, Int64, Int64, String, ByteBuffer, Int64?, Int64?, Int64?).self)
            {
                changesets.append(
                    StoredChangeset(
                        serverVersion: UInt64(serverVersion), clientFileID: UInt64(bitPattern: clientFileID),
                        clientVersion: UInt64(clientVersion), data: Array(data.readableBytesView), owner: owner,
                        origin: Self.origin(originFile, originVersion), duplicateOf: duplicateOf.map(UInt64.init)))
            }
            return changesets
        }
    }

    /// Appends `changesets` in one transaction (`sync_append`: row lock, version check, insert, notify),
    /// returning once it committed.
    ///
    /// - Throws: `PartitionStoreConflict` when the log already reaches the first version (or holds one of
    ///   the client versions); `PostgresPartitionStoreError` otherwise (nothing written, or — after a
    ///   broken connection or a timeout — perhaps written; see the type's documentation).
    public func append(_ changesets: [StoredChangeset], to partition: String) async throws {
        guard let first = changesets.first else { return }
        let id = try await partitionID(of: partition)
        let firstVersion = Int64(clamping: first.serverVersion)
        let files = changesets.map { Int64(bitPattern: $0.clientFileID) }
        let clientVersions = changesets.map { Int64(clamping: $0.clientVersion) }
        let owners = changesets.map(\.owner)
        let data = changesets.map { ByteBuffer(bytes: $0.data) }
        // Origins as three arrays (PostgresNIO encodes no arrays of optionals): whether there is one, and
        // its file (bit pattern) and version, 0 when none; a duplicate mark's version, 0 when none.
        let hasOrigin = changesets.map { $0.origin != nil }
        let originFiles = changesets.map { Int64(bitPattern: $0.origin?.clientFileID ?? 0) }
        let originVersions = changesets.map { Int64(clamping: $0.origin?.clientVersion ?? 0) }
        let duplicateOf = changesets.map { Int64(clamping: $0.duplicateOf ?? 0) }
        let found: Int64
        do {
            found = try await run("append to \(partition)") { client in
                let rows = try await client.query(
                    """
                    SELECT sync_append(\(id), \(firstVersion), \(files), \(clientVersions), \(owners), \(data),
                        \(hasOrigin), \(originFiles), \(originVersions), \(duplicateOf))
                    """)
                for try await latest in rows.decode(Int64.self) { return latest }
                throw PostgresPartitionStoreError.unexpectedRow(operation: "append to \(partition)")
            }
        } catch PostgresPartitionStoreError.database(_, let code?, _) where code == "23505" {
            // unique_violation: a client version the log already holds.
            let latest = try await latestVersion(of: id, partition: partition)
            throw PartitionStoreConflict(partition: partition, latestVersion: UInt64(latest))
        }
        if found == firstVersion - 1 { return }
        guard found > firstVersion - 1 else {
            throw PostgresPartitionStoreError.logShorter(
                partition: partition, latestVersion: UInt64(max(found, 0)), expected: UInt64(firstVersion - 1))
        }
        throw PartitionStoreConflict(partition: partition, latestVersion: UInt64(found))
    }

    /// The rows of `sync_partitions`: every partition any front end ever loaded (`summaries` or `historyID`
    /// register it), written or not, so that the server enforces `maximumPartitionsInStore`
    /// (`sync-server-pg --max-partitions-on-disk`). The server reads it once, before it creates its first
    /// partition, and then counts the ones it creates itself — a fast path that sees the others' creations
    /// only from its next start. With `Configuration.maximumPartitions` the store enforces the cap where it
    /// creates a row, atomically across front ends (`register(_:within:)`), so together they never pass it.
    public func partitionCount() async throws -> Int? {
        try await run("count the partitions") { client in
            let rows = try await client.query("SELECT count(*) FROM sync_partitions")
            for try await count in rows.decode(Int64.self) { return Int(count) }
            throw PostgresPartitionStoreError.unexpectedRow(operation: "count the partitions")
        }
    }

    /// Whether `partition` has a row in `sync_partitions` (loaded here, or found in the database), asked
    /// without creating one: a bind the server refuses leaves nothing behind.
    public func holdsPartition(_ partition: String) async throws -> Bool {
        if state.withLockedValue({ $0.ids[partition] != nil }) { return true }
        return try await run("look for partition \(partition)") { client in
            let rows = try await client.query(
                "SELECT EXISTS (SELECT 1 FROM sync_partitions WHERE name = \(partition))")
            for try await found in rows.decode(Bool.self) { return found }
            throw PostgresPartitionStoreError.unexpectedRow(operation: "look for partition \(partition)")
        }
    }

    /// `true`: each entry's origin and duplicate mark are kept (schema version 3, see `PostgresSchema`), so
    /// the front ends integrate each origin once.
    public var storesChangesetOrigins: Bool { true }

    /// The origin of a row: its two origin columns, both set or both `NULL` (none).
    private static func origin(_ clientFileID: Int64?, _ clientVersion: Int64?) -> ChangesetOrigin? {
        guard let clientFileID, let clientVersion else { return nil }
        return ChangesetOrigin(clientFileID: UInt64(bitPattern: clientFileID), clientVersion: UInt64(clientVersion))
    }

    /// The partition's `history_id` (see `PostgresSchema`), set to a new random id the first time. Read
    /// from the database each time (the server reads it when it loads the partition), so that a database
    /// replaced or emptied under a running front end shows its own id at the next load.
    public func historyID(of partition: String) async throws -> UInt64 {
        let id = try await partitionID(of: partition)
        let candidate = Int64(bitPattern: UInt64.random(in: 1...UInt64.max))
        let found = try await run("read the history id of \(partition)") { client in
            // Concurrent first reads (several front ends): the row lock orders the updates, and only the
            // first finds the id NULL.
            try await client.query(
                "UPDATE sync_partitions SET history_id = \(candidate) WHERE id = \(id) AND history_id IS NULL")
            let rows = try await client.query("SELECT history_id FROM sync_partitions WHERE id = \(id)")
            for try await historyID in rows.decode(Int64?.self) {
                if let historyID { return historyID }
            }
            throw PostgresPartitionStoreError.unexpectedRow(operation: "read the history id of \(partition)")
        }
        return UInt64(bitPattern: found)
    }

    public func appendNotifications() -> AsyncStream<AppendNotification>? {
        let (stream, continuation) = AsyncStream.makeStream(of: AppendNotification.self)
        let id: Int? = state.withLockedValue { state in
            guard !state.isClosed else { return nil }
            defer { state.nextSubscriber += 1 }
            state.subscribers[state.nextSubscriber] = continuation
            return state.nextSubscriber
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLockedValue { $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    // MARK: - Queries

    /// Runs `body` with the client within `operationTimeout`, as `operation`; errors become
    /// `PostgresPartitionStoreError`s.
    private func run<Result: Sendable>(
        _ operation: String,
        _ body: @escaping @Sendable (PostgresClient) async throws -> Result
    ) async throws -> Result {
        guard !state.withLockedValue({ $0.isClosed }) else { throw PostgresPartitionStoreError.closed }
        let client = self.client
        do {
            return try await withDeadline(configuration.operationTimeout, operation) { try await body(client) }
        } catch {
            let wrapped = PostgresPartitionStoreError.wrap(error, operation)
            log(.debug, "\(wrapped)")
            throw wrapped
        }
    }

    /// The id of the partition's row, creating the row if needed; from then on the store announces the
    /// partition's appends.
    ///
    /// - Throws: `PartitionCreationRefused` when the database has no row for it and holds
    ///   `maximumPartitions` already (see `register(_:within:)`); `PostgresPartitionStoreError` otherwise.
    private func partitionID(of partition: String) async throws -> Int64 {
        if let id = state.withLockedValue({ $0.ids[partition] }) { return id }
        let id: Int64
        if let limit = configuration.maximumPartitions {
            guard let registered = try await register(partition, within: limit) else {
                // The name as a quoted, escaped literal: client-controlled text never forges a log line.
                let name = String(reflecting: partition)
                log(.info, "the database holds its maximum of \(limit) partitions: \(name) is not created")
                throw PartitionCreationRefused(
                    partition: partition, reason: "the server holds at most \(limit) partitions and creates no more")
            }
            id = registered
        } else {
            id = try await run("register partition \(partition)") { client in
                try await client.query(
                    "INSERT INTO sync_partitions (name) VALUES (\(partition)) ON CONFLICT (name) DO NOTHING")
                let rows = try await client.query("SELECT id FROM sync_partitions WHERE name = \(partition)")
                for try await id in rows.decode(Int64.self) { return id }
                throw PostgresPartitionStoreError.unexpectedRow(operation: "register partition \(partition)")
            }
        }
        state.withLockedValue { state in
            state.ids[partition] = id
            state.names[id] = partition
        }
        return id
    }

    /// The id of the partition's row, creating the row only while `sync_partitions` holds fewer than
    /// `limit` rows; `nil` when it has none and may not get one.
    ///
    /// A partition that has a row is found without a lock. Otherwise one transaction takes the advisory
    /// lock `PostgresSchema.creationLock`, which serialises every capped creation of every front end on
    /// the database, then counts the rows and inserts only below `limit`: each statement after the lock
    /// sees every row committed by the creations before it (READ COMMITTED takes a snapshot per statement,
    /// and the lock is released only once the transaction that held it committed), so front ends creating
    /// at once never pass the cap together. A row inserted meanwhile under the same name (by another front
    /// end) is found instead.
    private func register(_ partition: String, within limit: Int) async throws -> Int64? {
        let logger = log.logger
        let limit = Int64(clamping: limit)
        return try await run("register partition \(partition)") { client -> Int64? in
            let held = try await client.query("SELECT id FROM sync_partitions WHERE name = \(partition)")
            for try await id in held.decode(Int64.self) { return id }
            return try await client.withTransaction(logger: logger) { connection -> Int64? in
                try await connection.query(
                    "SELECT pg_advisory_xact_lock(\(PostgresSchema.creationLock))", logger: logger)
                try await connection.query(
                    """
                    INSERT INTO sync_partitions (name) SELECT \(partition)
                    WHERE (SELECT count(*) FROM sync_partitions) < \(limit)
                    ON CONFLICT (name) DO NOTHING
                    """, logger: logger)
                let rows = try await connection.query(
                    "SELECT id FROM sync_partitions WHERE name = \(partition)", logger: logger)
                for try await id in rows.decode(Int64.self) { return id }
                return nil
            }
        }
    }

    private func latestVersion(of id: Int64, partition: String) async throws -> Int64 {
        try await run("read the latest version of \(partition)") { client in
            let rows = try await client.query("SELECT latest_version FROM sync_partitions WHERE id = \(id)")
            for try await latest in rows.decode(Int64.self) { return latest }
            throw PostgresPartitionStoreError.unexpectedRow(operation: "read the latest version of \(partition)")
        }
    }

    // MARK: - Listening

    private func startListening() {
        let task = Task { await self.listen() }
        let isClosed = state.withLockedValue { state in
            if !state.isClosed { state.listener = task }
            return state.isClosed
        }
        if isClosed { task.cancel() }
    }

    /// Keeps a connection listening on the channel until cancelled: connects, `LISTEN`s, announces the
    /// latest version of every loaded partition (what may have been missed), then dispatches
    /// notifications; when the connection fails, waits (`minimumListenRetryDelay`, doubling up to
    /// `maximumListenRetryDelay`) and starts again.
    private func listen() async {
        var delay = configuration.minimumListenRetryDelay
        var connectionID = 0
        while !Task.isCancelled {
            do {
                connectionID += 1
                let id = connectionID
                let connection = try await withDeadline(configuration.operationTimeout, "connect to listen") {
                    [configuration, log] in
                    try await PostgresConnection.connect(
                        configuration: Self.listenerConfiguration(configuration), id: id, logger: log.logger)
                }
                do {
                    try await connection.listen(on: PostgresSchema.channel) { notifications in
                        try await announceLoadedPartitions(on: connection)
                        state.withLockedValue { state in
                            state.listens += 1
                            state.isListening = true
                        }
                        log(.info, "listening for appends on \(PostgresSchema.channel)")
                        delay = configuration.minimumListenRetryDelay
                        try await withThrowingTaskGroup(of: Void.self) { group in
                            group.addTask {
                                for try await notification in notifications { self.dispatch(notification.payload) }
                            }
                            group.addTask { try await self.probe(connection) }
                            // The first to end (the connection failed, or a probe did) ends both.
                            defer { group.cancelAll() }
                            try await group.next()
                        }
                    }
                } catch {
                    try? await connection.close()
                    throw error
                }
                try? await connection.close()
            } catch {
                if Task.isCancelled { break }
                log(.warn, "the listening connection failed: \(PostgresPartitionStoreError.wrap(error, "listen"))")
            }
            state.withLockedValue { $0.isListening = false }
            guard !Task.isCancelled else { break }
            log(.info, "listening again in \(delay)")
            try? await Task.sleep(for: delay)
            delay = min(delay * 2, configuration.maximumListenRetryDelay)
        }
        state.withLockedValue { $0.isListening = false }
    }

    /// Probes `connection` every `listenProbeInterval` with a `SELECT 1` that must answer within
    /// `operationTimeout`; when one does not, closes the connection (which ends its notifications) and
    /// throws. Returns when cancelled.
    private func probe(_ connection: PostgresConnection) async throws {
        while !Task.isCancelled {
            do { try await Task.sleep(for: configuration.listenProbeInterval) } catch { return }
            do {
                try await withDeadline(configuration.operationTimeout, "probe the listening connection") {
                    [log] in
                    _ = try await connection.query("SELECT 1", logger: log.logger)
                }
            } catch {
                if Task.isCancelled { return }
                // Not awaited: closing a connection whose peer vanished must not keep the listener waiting.
                Task { try? await connection.close() }
                throw error
            }
        }
    }

    /// The listening connection's configuration: the store's database, `application_name` with `/listen`.
    private static func listenerConfiguration(_ configuration: Configuration) throws -> PostgresConnection.Configuration
    {
        let url = configuration.url
        var result: PostgresConnection.Configuration
        if let directory = url.socketDirectory {
            result = PostgresConnection.Configuration(
                unixSocketPath: "\(directory)/.s.PGSQL.\(url.port)", username: url.user, password: url.password,
                database: url.database)
        } else {
            let tls: PostgresConnection.Configuration.TLS =
                switch url.tls {
                case .disable: .disable
                case .prefer: .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
                case .require: .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
                }
            result = PostgresConnection.Configuration(
                host: url.host, port: url.port, username: url.user, password: url.password, database: url.database,
                tls: tls)
        }
        result.options.additionalStartupParameters = configuration.startupParameters(
            applicationName: configuration.applicationName + "/listen")
        return result
    }

    /// Announces the latest version of every partition the store has loaded, read on `connection` after
    /// it started listening (so nothing committed after the read goes unannounced).
    private func announceLoadedPartitions(on connection: PostgresConnection) async throws {
        let ids = state.withLockedValue { Array($0.names.keys) }
        guard !ids.isEmpty else { return }
        let rows = try await connection.query(
            "SELECT id, latest_version FROM sync_partitions WHERE id = ANY(\(ids))", logger: log.logger)
        for try await (id, latest) in rows.decode((Int64, Int64).self) {
            announce(id: id, latestVersion: UInt64(latest))
        }
    }

    /// Parses a notification's payload (`"<partition id> <latest version>"`) and announces it.
    private func dispatch(_ payload: String) {
        let fields = payload.split(separator: " ")
        guard fields.count == 2, let id = Int64(fields[0]), let latest = UInt64(fields[1]) else {
            log(.warn, "ignored a notification with payload \(payload.prefix(64))")
            return
        }
        announce(id: id, latestVersion: latest)
    }

    private func announce(id: Int64, latestVersion: UInt64) {
        let (name, subscribers) = state.withLockedValue { ($0.names[id], Array($0.subscribers.values)) }
        guard let name else { return }  // Not loaded here: nobody here serves it.
        let notification = AppendNotification(partition: name, latestVersion: latestVersion)
        for subscriber in subscribers { subscriber.yield(notification) }
    }
}
