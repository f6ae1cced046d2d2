import SyncServer

extension PostgresPartitionStore {
    /// How a `PostgresPartitionStore` reaches its database and bounds its waits.
    public struct Configuration: Sendable {
        /// The database.
        public var url: DatabaseURL
        /// The most connections the store's pool opens (the listening connection comes on top).
        /// Default: 16.
        public var maximumConnections: Int
        /// The most partitions (rows of `sync_partitions`) the database may hold, enforced by the store
        /// where it creates one, atomically across every front end sharing the database; `nil` (default):
        /// no limit. Loading a partition the database does not hold at the cap throws
        /// `PartitionCreationRefused` and creates nothing (the server refuses that bind with
        /// `permissionDenied`); partitions it holds load as always. `sync-server-pg` sets it from
        /// `--max-partitions-on-disk`, with the server's own `maximumPartitionsInStore`.
        public var maximumPartitions: Int?
        /// How long one operation (a load, a read, an append, opening) may wait for the database before it
        /// fails with `PostgresPartitionStoreError.timedOut`. Default: 10 s.
        public var operationTimeout: Duration
        /// PostgreSQL's `statement_timeout` on every connection of the store (set when it connects): the
        /// database cancels a statement that runs longer, so a statement the store stopped waiting for
        /// (`operationTimeout`) does not keep its pooled connection. `.zero`: none. Default:
        /// `operationTimeout`.
        public var statementTimeout: Duration
        /// PostgreSQL's `lock_timeout` on every connection of the store: the database cancels a statement
        /// that waits longer for a lock (a row lock held by a stalled transaction), so waiters cannot
        /// exhaust the pool. `.zero`: none. Default: half of `operationTimeout`.
        public var lockTimeout: Duration
        /// How often the listening connection is probed (a `SELECT 1` that must answer within
        /// `operationTimeout`) while it waits for notifications: a connection whose peer vanished without
        /// closing it fails the probe and is replaced, and the store then announces what it missed.
        /// Default: 5 s.
        public var listenProbeInterval: Duration
        /// The `application_name` of the store's connections (the listening one gets `/listen` after it),
        /// as `pg_stat_activity` shows them. Default: the URL's `application_name`, else `"sync-server-pg"`.
        public var applicationName: String
        /// The wait before the first attempt to restore a lost listening connection; it doubles with each
        /// failed attempt. Default: 50 ms.
        public var minimumListenRetryDelay: Duration
        /// The longest wait between two attempts to restore the listening connection. Default: 2 s.
        public var maximumListenRetryDelay: Duration
        /// How much the store (and PostgresNIO under it) logs. Default: `.warn`.
        public var logLevel: SyncLogLevel
        /// Where log events go; `nil` (default): standard error, one line per event.
        public var logger: (@Sendable (SyncLogEvent) -> Void)?

        /// A configuration for `url`; every other parameter has the default described on its property.
        public init(
            url: DatabaseURL,
            maximumConnections: Int = 16,
            maximumPartitions: Int? = nil,
            operationTimeout: Duration = .seconds(10),
            statementTimeout: Duration? = nil,
            lockTimeout: Duration? = nil,
            listenProbeInterval: Duration = .seconds(5),
            applicationName: String? = nil,
            minimumListenRetryDelay: Duration = .milliseconds(50),
            maximumListenRetryDelay: Duration = .seconds(2),
            logLevel: SyncLogLevel = .warn,
            logger: (@Sendable (SyncLogEvent) -> Void)? = nil
        ) {
            self.url = url
            self.maximumConnections = maximumConnections
            self.maximumPartitions = maximumPartitions.map { max(0, $0) }
            self.operationTimeout = operationTimeout
            self.statementTimeout = statementTimeout ?? operationTimeout
            self.lockTimeout = lockTimeout ?? operationTimeout / 2
            self.listenProbeInterval = listenProbeInterval
            self.applicationName = applicationName ?? url.applicationName ?? "sync-server-pg"
            self.minimumListenRetryDelay = minimumListenRetryDelay
            self.maximumListenRetryDelay = max(minimumListenRetryDelay, maximumListenRetryDelay)
            self.logLevel = logLevel
            self.logger = logger
        }

        /// The session settings every connection of the store starts with (startup parameters): its
        /// `application_name`, `statement_timeout` and `lock_timeout` (in milliseconds; 0 is "none").
        func startupParameters(applicationName: String) -> [(String, String)] {
            [
                ("application_name", applicationName),
                ("statement_timeout", String(Self.milliseconds(statementTimeout))),
                ("lock_timeout", String(Self.milliseconds(lockTimeout))),
            ]
        }

        private static func milliseconds(_ duration: Duration) -> Int64 {
            let (seconds, attoseconds) = duration.components
            guard seconds >= 0, attoseconds >= 0 else { return 0 }
            // Rounded up, so that a positive duration never becomes 0 ("none").
            return seconds * 1_000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        }
    }
}
