import Foundation
import SyncWire

extension SyncServer {
    /// How a `SyncServer` stores, authenticates and sizes its traffic.
    public struct Configuration: Sendable {
        /// Where partition logs are kept. Default: a new `InMemoryPartitionStore`.
        public var store: any PartitionStore
        /// Which credentials may connect and which partitions each may sync. Default: `.anonymousAllowed`.
        public var authentication: Authentication
        /// The most changeset bytes the server puts into one `download` message. Default: 64 KiB.
        ///
        /// A run of entries larger than this (a bind's backlog, or uploads forwarded to other sessions)
        /// goes out as several `download` messages, each with at most this many changeset bytes but at
        /// least one changeset, each with the exact `remainingBytes` still to come, so clients see progress
        /// in steps. Acknowledgements carry no bytes and ride along with the changesets around them; no
        /// message exceeds `maximumMessageBytes`.
        public var maximumDownloadMessageBytes: Int
        /// The largest message, in bytes, the server sends (and, over a network, accepts). Default:
        /// `WireProtocol.maximumMessageSize` (16 MiB).
        public var maximumMessageBytes: Int
        /// The largest changeset, in bytes, an upload may carry. Default: the largest that fits in one
        /// message of `maximumMessageBytes` with its framing (`WireProtocol.maximumChangesetSize`).
        ///
        /// An upload holding a bigger one is refused as a whole with `.messageTooLarge` for its session
        /// (fatal: the server also forgets the session).
        public var maximumChangesetBytes: Int
        /// The most sessions one connection may bind at once; a `bind` beyond it is refused with
        /// `.serverBusy` for that session. Default: 1,000.
        public var maximumSessionsPerConnection: Int
        /// The most partitions the server serves at once — partitions with a bound session or an
        /// operation in progress (idle ones, see `maximumIdlePartitions`, do not count); a `bind` of a
        /// further partition is refused with `.serverBusy`, retry after 5 s. Default: 100,000.
        public var maximumPartitions: Int
        /// The most idle partitions (no session bound, nothing in progress) the server keeps loaded so
        /// that binding them again costs no reading of their log. Beyond it, the least recently used idle
        /// partition is evicted: its index is dropped from memory and the store's `unload` closes its
        /// files (a `FilePartitionStore` holds two descriptors per loaded partition); the next bind loads
        /// it again. 0: evict as soon as idle. Default: 128.
        public var maximumIdlePartitions: Int
        /// The most partitions the store may hold (`nil`: no limit); a `bind` that would create a further
        /// one is refused with `.permissionDenied` for that session (fatal: it is not retried), and nothing
        /// is created for it. Partitions the store holds bind as always. Default: 1,000,000.
        ///
        /// Creating a partition costs the store files and fsyncs (a `FilePartitionStore` writes a log and a
        /// history file per partition), so a client that binds ever new names would otherwise fill the
        /// disk. The server counts the store's partitions once (`PartitionStore.partitionCount()`) and the
        /// ones it creates from then on; with a store that does not count (the default for a custom store),
        /// there is no limit. A store that refuses a creation itself (`PartitionCreationRefused`, as a
        /// `PostgresPartitionStore` shared by several servers does at its `maximumPartitions`) has the bind
        /// refused the same way.
        public var maximumPartitionsInStore: Int?
        /// The longest partition name, in UTF-8 bytes; a longer one is refused with `.malformedMessage`.
        /// Default: 1,024.
        public var maximumPartitionNameBytes: Int
        /// The longest API key, in UTF-8 bytes; a longer one is refused with `.authenticationFailed`.
        /// Default: 1,024.
        public var maximumCredentialBytes: Int
        /// The most connections open at once; further ones are refused. Default: 10,000.
        public var maximumConnections: Int
        /// How much the server logs (see `SyncLogLevel`). Default: `.warn`.
        public var logLevel: SyncLogLevel
        /// Where log events go, one at a time and in one order, on the thread that logs them (or, while
        /// another thread's events are being delivered, on that thread). `nil` (default): standard error,
        /// one line per event.
        public var logger: (@Sendable (SyncLogEvent) -> Void)?
        /// How long a client file may stay unseen (no bind, upload or unbind of it) before the server forgets
        /// it; `nil` (default): never.
        ///
        /// Forgetting a client file drops what the server keeps per client file (its owner, the last client
        /// version integrated, its byte counts) and records it as expired, durably with the store (see
        /// `ClientFileRecord`); the log's changesets stay. A later bind of it is refused with
        /// `clientResetRequired` (reason `.clientExpired`, with the last client version integrated), so the
        /// client resets its copy instead of the server taking its re-uploads for new changesets. A bound
        /// client file counts as seen. The server checks when a session binds the partition. With a maximum
        /// set, the server records when each client file was last seen, at most once per 1 % of the maximum
        /// per client file (it assumes, after a restart, that a file was seen that much later than recorded).
        public var maximumOfflineTime: Duration?
        /// The wall clock that `maximumOfflineTime` is measured with. Default: the system's.
        public var clock: @Sendable () -> Date
        /// A monotonic clock (time since any fixed start) that catches jumps of `clock` while the server
        /// runs: between two readings, wall time that moved otherwise than this clock (a clock set forward
        /// by days, or back) is not counted as time offline. `nil`: `clock` is trusted as it is. Default:
        /// the system's continuous clock when `clock` is the system's, `nil` when a `clock` is given.
        public var uptime: (@Sendable () -> Duration)?

        /// A configuration; every parameter has the default described on its property.
        public init(
            store: any PartitionStore = InMemoryPartitionStore(),
            authentication: Authentication = .anonymousAllowed,
            maximumDownloadMessageBytes: Int = 64 * 1024,
            maximumMessageBytes: Int = WireProtocol.maximumMessageSize,
            maximumChangesetBytes: Int? = nil,
            maximumSessionsPerConnection: Int = 1_000,
            maximumPartitions: Int = 100_000,
            maximumIdlePartitions: Int = 128,
            maximumPartitionsInStore: Int? = 1_000_000,
            maximumPartitionNameBytes: Int = 1_024,
            maximumCredentialBytes: Int = 1_024,
            maximumConnections: Int = 10_000,
            logLevel: SyncLogLevel = .warn,
            logger: (@Sendable (SyncLogEvent) -> Void)? = nil,
            maximumOfflineTime: Duration? = nil,
            clock: (@Sendable () -> Date)? = nil,
            uptime: (@Sendable () -> Duration)? = nil
        ) {
            self.store = store
            self.authentication = authentication
            self.maximumDownloadMessageBytes = maximumDownloadMessageBytes
            self.maximumMessageBytes = maximumMessageBytes
            self.maximumChangesetBytes =
                maximumChangesetBytes ?? WireProtocol.maximumChangesetSize(forMessageSize: maximumMessageBytes)
            self.maximumSessionsPerConnection = maximumSessionsPerConnection
            self.maximumPartitions = maximumPartitions
            self.maximumIdlePartitions = max(0, maximumIdlePartitions)
            self.maximumPartitionsInStore = maximumPartitionsInStore.map { max(0, $0) }
            self.maximumPartitionNameBytes = maximumPartitionNameBytes
            self.maximumCredentialBytes = maximumCredentialBytes
            self.maximumConnections = maximumConnections
            self.logLevel = logLevel
            self.logger = logger
            self.maximumOfflineTime = maximumOfflineTime.map { max($0, .zero) }
            self.clock = clock ?? { Date() }
            self.uptime = uptime ?? (clock == nil ? Self.systemUptime : nil)
        }

        /// The system's continuous clock (it counts time the machine sleeps), as time since a fixed start.
        static let systemUptime: @Sendable () -> Duration = {
            let start = ContinuousClock.now
            return { start.duration(to: .now) }
        }()
    }
}
