@_exported import SyncNetwork
import SyncStreams
@_exported import SyncWire
import Synchronization

/// The reference sync server: orders each partition's changesets and streams them to every bound session.
///
/// `SyncServer.embedded()` runs the server in this process; clients reach it with
/// `InMemoryTransport().connect(to: server.endpoint)`. Each connection's messages are handled one at a
/// time, in order, by the server's core, which answers as the `SyncWire` message docs describe:
///
/// - `hello` must come first. A wrong protocol version gets `.unsupportedProtocolVersion`, a refused
///   credential `.authenticationFailed`, anything else before it (or a second `hello`)
///   `.malformedMessage`; each such connection-level error is followed by closing the connection.
///   Otherwise the answer is `.welcome(protocolVersion:maximumMessageBytes:)` with the client's version
///   (`WireProtocol.oldestSupportedVersion`…`WireProtocol.version`) and, from version 5, the largest
///   message the server accepts (`Configuration.maximumMessageBytes`).
/// - `bind` loads the partition from the store (once) and sends the log after `downloadedVersion` as
///   one or more `download` messages (always at least one, even when empty), the client's own changesets
///   (same `clientFileID`) as `.acknowledged` entries. Then the session receives every later entry of the
///   partition exactly once, in server-version order, until it is unbound or its connection ends.
/// - `upload` integrates the changesets whose client version is above the last one integrated for the
///   session's `clientFileID` (others are re-uploads and are dropped silently), stores them durably,
///   then acknowledges them to the uploading session and forwards them to every other bound session.
/// - `unbind` answers `.unbound`; `ping` answers `.pong` with the same id.
///
/// A session-level error (`.permissionDenied`, `.badClientVersion`, `.messageTooLarge`, `.internalError`,
/// and `.clientResetRequired` for a `downloadedVersion` beyond the log or a client file forgotten after
/// `Configuration.maximumOfflineTime`) leaves the session unbound on the server, so the client may bind
/// the same session number again; `.sessionAlreadyBound` and
/// `.unknownSession` leave the bound sessions as they were. Storage failures are reported as
/// `.internalError` with `retryAfterMilliseconds` 1000.
///
/// Several servers may share one store that announces appends (see `PartitionStore`, shared stores):
/// each is then a front end for the same partitions, the store decides the one order of each
/// partition's log, and every session bound to any of them receives every entry once, in that order.
/// A re-upload through another front end is dropped like one through the same server.
public final class SyncServer: Sendable {
    /// The address clients connect to: `.inProcess` with this server's acceptor.
    ///
    /// Connecting after `stop()` is refused (`.closed(.refused)`).
    public let endpoint: SyncEndpoint

    /// Where network clients connect, for a server started with `listening(host:port:…)`:
    /// `.webSocket(host:port:)` with the port it got. `nil` for an embedded server.
    public let webSocketEndpoint: SyncEndpoint?

    let core: ServerCore  // internal: tests look at it (`@testable`)
    private let registry: ConnectionRegistry
    private let listener: WebSocketListener?
    /// What `/metrics` shows.
    let metrics: ServerMetrics
    /// Listeners that serve only `/metrics` and `/healthz` (see `serveMetrics(host:port:)`).
    private let metricsListeners = Locked<[WebSocketListener]>([])
    /// Follows the store's appends by other front ends (`nil` for a store only this server writes).
    private let appendFollower: Task<Void, Never>?

    private init(
        configuration: Configuration, core: ServerCore, registry: ConnectionRegistry, listener: WebSocketListener?
    ) {
        metrics = core.metrics
        self.core = core
        self.registry = registry
        self.listener = listener
        endpoint = .inProcess(ConnectionAcceptor(core: core, registry: registry))
        webSocketEndpoint = listener.map { .webSocket(host: $0.host, port: $0.port) }
        appendFollower = core.followAppendNotifications()
    }

    deinit { appendFollower?.cancel() }

    private convenience init(configuration: Configuration) {
        let metrics = ServerMetrics(
            network: ListenerCounters(), syncLatency: (configuration.store as? FilePartitionStore)?.syncLatency)
        self.init(
            configuration: configuration, core: ServerCore(configuration: configuration, metrics: metrics),
            registry: ConnectionRegistry(maximumConnections: configuration.maximumConnections, metrics: metrics),
            listener: nil)
    }

    /// Starts a server in this process with `configuration`; it accepts connections at once.
    ///
    /// Nothing is loaded from the store until a session binds. Currently never throws; the signature
    /// leaves room for servers whose start-up can fail.
    public static func embedded(configuration: Configuration = .init()) async throws -> SyncServer {
        SyncServer(configuration: configuration)
    }

    /// Starts a server that listens for WebSocket clients on `host:port` (port 0: a free port, see
    /// `webSocketEndpoint`) and also serves in-process clients at `endpoint`.
    ///
    /// Use a `FilePartitionStore` in `configuration` for a server whose logs survive restarts, or a store
    /// shared by several servers (front ends, see `PartitionStore`) to serve the same partitions from
    /// several processes or machines. `limits` bound each connection (default: `WebSocketLimits` with
    /// `configuration.maximumMessageBytes`; a `helloTimeout` of 10 s and a
    /// `maximumUnauthenticatedMessageBytes` of `configuration.maximumCredentialBytes` + 1 KiB when `nil`;
    /// an `originPolicy` refusing every browser page when anonymous, accepting all with API keys, when
    /// `nil`).
    ///
    /// - Throws: `NetworkError` when the host cannot be resolved or the port cannot be bound.
    public static func listening(
        host: String = "127.0.0.1", port: Int = 0, configuration: Configuration = .init(),
        limits: WebSocketLimits? = nil
    ) async throws -> SyncServer {
        var limits = limits ?? WebSocketLimits()
        if limits.maximumMessageBytes == WebSocketLimits().maximumMessageBytes {
            limits.maximumMessageBytes = configuration.maximumMessageBytes
        }
        // The limit `welcome` announces is the one the transport enforces.
        var configuration = configuration
        configuration.maximumMessageBytes = min(configuration.maximumMessageBytes, limits.maximumMessageBytes)
        let counters = ListenerCounters()
        let metrics = ServerMetrics(
            network: counters, syncLatency: (configuration.store as? FilePartitionStore)?.syncLatency)
        let core = ServerCore(configuration: configuration, metrics: metrics)
        let registry = ConnectionRegistry(maximumConnections: configuration.maximumConnections, metrics: metrics)
        let acceptor = ConnectionAcceptor(core: core, registry: registry)
        if limits.helloTimeout == nil { limits.helloTimeout = .seconds(10) }
        if limits.originPolicy == nil {
            // Anyone may sync anything on an anonymous server: a page a browser shows must not, on behalf
            // of whoever views it (a server on localhost or an intranet is reachable from their browser).
            if case .anonymousAllowed = configuration.authentication {
                limits.originPolicy = .allowList([])
            } else {
                limits.originPolicy = .anyOrigin
            }
        }
        if limits.maximumUnauthenticatedMessageBytes == nil {
            limits.maximumUnauthenticatedMessageBytes = configuration.maximumCredentialBytes + 1024
        }
        let listener = try await WebSocketListener.start(
            host: host, port: port, limits: limits, acceptor: acceptor, counters: counters,
            plainHTTP: { [registry] target in metrics.respond(to: target) { registry.openCount } })
        return SyncServer(configuration: configuration, core: core, registry: registry, listener: listener)
    }

    /// Stops the server: refuses every later connection, closes every open one (clients see
    /// `.closed(.connectionLost)`), and returns once every connection's in-flight message is handled.
    /// A networked server also closes its listening socket first and closes each WebSocket connection
    /// with code 1001 (going away), waiting for the close handshakes (each bounded by the limits'
    /// `closeTimeout`).
    ///
    /// Changesets whose upload was already integrated stay in the store. `changesets(in:)` keeps
    /// working. Calling it again does nothing more.
    public func stop() async {
        metrics.isStopping.store(true, ordering: .relaxed)
        // A networked server first stops accepting, so that closes from here on say 1001 (going away).
        await listener?.stopAccepting()
        let tasks = registry.stop()
        for task in tasks { await task.value }
        // What the sessions that ended taught the maximum offline time is durable before the store closes.
        await core.finishSeenRecords()
        await listener?.shutDown()
        for metricsListener in metricsListeners.withLock({ $0 }) { await metricsListener.shutDown() }
        appendFollower?.cancel()
    }

    /// Closes every connection open now (clients see `.closed(.connectionLost)`) and keeps accepting new
    /// ones: a fault injection for tests.
    ///
    /// When it returns, `connectionCount` no longer counts those connections and the server ignores
    /// any message from them that it has not started handling; their sessions are unbound shortly after.
    public func dropAllConnections() {
        registry.dropAll()
    }

    /// The partition's whole log, in server-version order, loading it from the store if no session has
    /// bound it yet.
    ///
    /// With a shared store, the log as the store holds it now (what other front ends appended included).
    /// A duplicate entry (`StoredChangeset.duplicateOf`: an origin integrated before, uploaded again) holds
    /// the bytes of the entry it repeats; clients other than its uploader receive it empty. Waits for an
    /// upload to the partition that is being stored. Throws what the store's `load` throws, or
    /// `PartitionLogError` when the stored log's versions are not 1, 2, 3, ….
    public func changesets(in partition: String) async throws -> [StoredChangeset] {
        try await core.changesets(in: partition)
    }

    /// How many connections are open: accepted, and closed neither by the server nor (as far as the
    /// server has noticed) by the client.
    ///
    /// Drops at once when the server closes connections; drops shortly after a client closes one, once
    /// the server has handled the messages it sent before closing.
    public var connectionCount: Int { registry.openCount }

    /// How many sessions are bound to `partition` now (0 for a partition never loaded): lets tests see
    /// that the server itself unbound a session, which a closed client can no longer show.
    package func boundSessionCount(in partition: String) async -> Int {
        await core.boundSessionCount(in: partition)
    }

    /// Starts draining before a stop: new connections are refused (`503`), `/healthz` answers `503`,
    /// open connections carry on. `stop()` then closes them.
    package func beginDraining() {
        metrics.isStopping.store(true, ordering: .relaxed)
        registry.refuseNew()
    }

    /// Replaces who may connect (a reloaded keys file) from the next `hello` on; connections already
    /// authenticated keep their access.
    package func replaceAuthentication(_ authentication: Authentication) async {
        await core.replaceAuthentication(authentication)
    }

    /// The server's metrics in the Prometheus text exposition format (version 0.0.4): what `GET /metrics`
    /// answers on a networked server's port (before any upgrade) and on `serveMetrics(host:port:)`'s. A
    /// front end of another transport serving an embedded server (`sync-server-nio`) answers its own
    /// `GET /metrics` with it, having counted its sockets' bytes and refusals with `count(_:)`.
    public var prometheusMetrics: String { metrics.prometheusText(openConnections: registry.openCount) }

    /// Whether the server began to drain or stop (`beginDraining()`, `stop()`): `/healthz` then answers
    /// `503`, as another transport's front end should too.
    public var isStopping: Bool { metrics.isStopping.load(ordering: .relaxed) }

    /// Also serves `GET /metrics` and `GET /healthz` (only those: WebSocket upgrades are refused with
    /// `503`) on `host:port` (port 0: a free one); returns the port. `stop()` closes it.
    ///
    /// - Throws: `NetworkError` when the host cannot be resolved or the port cannot be bound.
    package func serveMetrics(host: String, port: Int) async throws -> Int {
        let metrics = self.metrics
        let registry = self.registry
        let listener = try await WebSocketListener.start(
            host: host, port: port, limits: WebSocketLimits(), acceptor: RefusingAcceptor(),
            plainHTTP: { target in metrics.respond(to: target) { registry.openCount } })
        metricsListeners.withLock { $0.append(listener) }
        return listener.port
    }

    /// For a networked server, the most bytes of messages ever queued at once for one client (open or
    /// gone): what a slow or stalled reader cost it at worst. 0 for an embedded server.
    package var peakOutboundQueueBytes: Int { listener?.peakOutboundQueueBytes ?? 0 }

    /// The sessions' pumps running now, and how many of them wait for their connection's send turn or
    /// for it to be writable: a test waits until every running pump waits instead of sleeping.
    /// How many connections were ever admitted (each reconnect counts): a test sees a client that
    /// reconnects in a loop.
    package var admittedConnectionCount: Int { registry.admittedCount }

    package var pumpCounts: (running: Int, waiting: Int) {
        get async { await core.pumpCounts }
    }

    /// For a networked server, how many accepted connections are open, handshaking ones included (0 for
    /// an embedded server).
    package var openConnectionCount: Int {
        get async { await listener?.openConnectionCount ?? 0 }
    }

    /// For a networked server, how many accepted connections are in their opening handshake (0 for an
    /// embedded server).
    package var handshakingConnectionCount: Int {
        get async { await listener?.handshakingCount ?? 0 }
    }
}
