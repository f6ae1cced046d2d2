import Foundation
import SyncStorage
import SyncWire

extension SyncApp {
    /// How an app reaches its server, where it keeps its files, and how its connections behave.
    ///
    /// Every timer of the engine (backoff, connect timeout, keepalive, pong timeout) runs on
    /// `timerExecutor`, so tests drive them in virtual time with a `TestExecutor`.
    public struct Configuration: Sendable {
        /// The server: `server.endpoint` of an embedded `SyncServer`, or `.webSocket(host:port:)`.
        public var server: SyncEndpoint
        /// Where each user's sessions keep their local stores (created if missing).
        public var directory: URL
        /// How the server is reached. The default (`WebSocketTransport`) reaches `.webSocket` servers over
        /// the network and in-process servers in memory.
        public var transport: any SyncTransport
        /// One connection per user (default) or per session.
        public var connectionSharing: ConnectionSharing
        /// What `SyncSession.close()` does.
        public var stopPolicy: StopPolicy
        /// Reconnect delays.
        public var backoff: ReconnectBackoff
        /// How long connecting and the handshake may take before the attempt counts as failed.
        public var connectTimeout: Duration
        /// How often an idle connection pings the server; each interval is shortened by a random 0–10 %.
        public var pingInterval: Duration
        /// How long to wait for the answer to a ping before the connection counts as lost.
        public var pongTimeout: Duration
        /// Where the engine's timers run. Default: a dispatch queue of the app's own.
        public var timerExecutor: any StreamExecutor
        /// Where callbacks run: the app's (`errors`, `sessions`, `asyncOpen`) and each session's (`state`,
        /// `connectionState`, `changesets`, progress without an executor of its own). `nil` (default): a
        /// serial queue for the app and one per session. Never the engine's actors.
        public var callbackExecutor: (any StreamExecutor)?
        /// The source of randomness for backoff and keepalive jitter: returns a number in `0..<1`.
        public var random: @Sendable () -> Double
        /// The largest changeset `SyncSession.write(_:)` accepts; a larger one is refused with
        /// `.changesetTooLarge` before anything is stored. Default: `WireProtocol.maximumChangesetSize`, the
        /// largest that fits in one message with its framing (what the reference server accepts).
        public var maximumChangesetBytes: Int
        /// Upload bytes a session sends ahead of the server's acknowledgements, at most (a changeset larger
        /// than the window goes alone, when nothing else is unacknowledged). An acknowledgement reopens the
        /// window when it arrives, before it is durable locally. Default: 6 MiB.
        public var uploadWindowBytes: Int
        /// Bytes a session lets wait for its next fsync (writes and downloads together) before `write`
        /// and the reading of further downloads wait (one write always fits). Default: 8 MiB.
        public var pendingWriteBytes: Int
        /// How much the engine logs (see `SyncLogLevel`). Default: `.warn`. At `.off` logging costs one
        /// comparison per log point.
        public var logLevel: SyncLogLevel
        /// Where log events go, one at a time and in one order, on the thread that logs them (or, while
        /// another thread's events are being delivered, on that thread). `nil` (default): standard error,
        /// one line per event with a timestamp, the level and the category. `SyncApp.logs` streams them too,
        /// in the same order.
        public var logger: (@Sendable (SyncLogEvent) -> Void)?
        /// The system calls the local stores make (open, read, write, fsync, truncate, lock). Default: the
        /// real ones. Tests inject failures (a failing fsync, an open that blocks) through it.
        package var fileSystem: any FileSystem = SystemFileSystem()
        /// What a session does when the server says its local copy must be reset (see `ClientResetMode`).
        /// Default: `.recoverUnsyncedChanges`.
        public var clientResetMode: ClientResetMode
        /// Called with each client reset's events (`.willReset`, then `.didReset`) and the session, on the
        /// session's callback executor, before `SyncSession.clientResets` subscribers hear of them; the
        /// reset waits for it to return from `.willReset`. `nil` (default): nobody but the stream.
        public var clientResetHandler: (@Sendable (ClientResetEvent, SyncSession) -> Void)?
        /// The wall clock `SyncStatus`'s dates (`lastSyncedAt`, the next reconnect) come from. Tests set a
        /// fixed one; the engine's timers still run on `timerExecutor`.
        package var wallClock: @Sendable () -> Date = { Date() }
        /// Fault injection for tests (internal).
        var testHooks = TestHooks()

        /// Fault injection points for tests.
        struct TestHooks: Sendable {
            /// See `ClientResetSettings.beforeSwap`.
            var beforeClientResetSwap: @Sendable () throws(SyncError) -> Void = {}
            /// Called by `deleteLocalFiles` once it holds the store's lock, just before it renames the store.
            var deleteLocalFilesWillRename: @Sendable () -> Void = {}
        }

        /// A configuration with Realm's defaults: connections shared per user, stop after changes are
        /// uploaded, backoff 1 s ×2 up to 5 min, connect timeout 120 s, ping every 60 s, pong timeout 120 s.
        public init(
            server: SyncEndpoint,
            directory: URL,
            transport: any SyncTransport = WebSocketTransport(),
            connectionSharing: ConnectionSharing = .perUser,
            stopPolicy: StopPolicy = .afterChangesUploaded,
            backoff: ReconnectBackoff = ReconnectBackoff(),
            connectTimeout: Duration = .seconds(120),
            pingInterval: Duration = .seconds(60),
            pongTimeout: Duration = .seconds(120),
            timerExecutor: (any StreamExecutor)? = nil,
            callbackExecutor: (any StreamExecutor)? = nil,
            random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
            maximumChangesetBytes: Int = WireProtocol.maximumChangesetSize,
            uploadWindowBytes: Int = 6 << 20,
            pendingWriteBytes: Int = 8 << 20,
            logLevel: SyncLogLevel = .warn,
            logger: (@Sendable (SyncLogEvent) -> Void)? = nil,
            clientResetMode: ClientResetMode = .recoverUnsyncedChanges,
            clientResetHandler: (@Sendable (ClientResetEvent, SyncSession) -> Void)? = nil
        ) {
            self.server = server
            self.directory = directory
            self.transport = transport
            self.connectionSharing = connectionSharing
            self.stopPolicy = stopPolicy
            self.backoff = backoff
            self.connectTimeout = connectTimeout
            self.pingInterval = pingInterval
            self.pongTimeout = pongTimeout
            self.timerExecutor = timerExecutor ?? DispatchQueue(label: "SyncEngine.timers")
            self.callbackExecutor = callbackExecutor
            self.random = random
            self.maximumChangesetBytes = min(maximumChangesetBytes, WireProtocol.maximumChangesetSize)
            self.uploadWindowBytes = max(1, uploadWindowBytes)
            self.pendingWriteBytes = max(1, pendingWriteBytes)
            self.logLevel = logLevel
            self.logger = logger
            self.clientResetMode = clientResetMode
            self.clientResetHandler = clientResetHandler
        }

        /// The sizes that bound each session's memory.
        var sessionLimits: SessionEngine.Limits {
            SessionEngine.Limits(
                maximumChangesetBytes: maximumChangesetBytes,
                maximumMessageBytes: WireProtocol.maximumMessageSize,
                uploadWindowBytes: uploadWindowBytes,
                pendingBytes: pendingWriteBytes)
        }
    }
}

/// How a user logs in.
public enum SyncCredentials: Sendable, Hashable {
    /// No identity. Accepted by servers that allow anonymous clients (the embedded server by default).
    case anonymous
    /// An API key the server knows; it names the partitions the user may sync.
    case apiKey(String)
}
