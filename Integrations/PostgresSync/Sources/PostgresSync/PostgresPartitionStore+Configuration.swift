import SyncServer

extension PostgresPartitionStore {
    /// How a `PostgresPartitionStore` reaches its database and bounds its waits.
    public struct Configuration: Sendable {
        /// The database.
        public var url: DatabaseURL
        /// The most connections the store's pool opens (the listening connection comes on top).
        /// Default: 16.
        public var maximumConnections: Int
        /// How long one operation (a load, a read, an append, opening) may wait for the database before it
        /// fails with `PostgresPartitionStoreError.timedOut`. Default: 10 s.
        public var operationTimeout: Duration
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
            operationTimeout: Duration = .seconds(10),
            applicationName: String? = nil,
            minimumListenRetryDelay: Duration = .milliseconds(50),
            maximumListenRetryDelay: Duration = .seconds(2),
            logLevel: SyncLogLevel = .warn,
            logger: (@Sendable (SyncLogEvent) -> Void)? = nil
        ) {
            self.url = url
            self.maximumConnections = maximumConnections
            self.operationTimeout = operationTimeout
            self.applicationName = applicationName ?? url.applicationName ?? "sync-server-pg"
            self.minimumListenRetryDelay = minimumListenRetryDelay
            self.maximumListenRetryDelay = max(minimumListenRetryDelay, maximumListenRetryDelay)
            self.logLevel = logLevel
            self.logger = logger
        }
    }
}
