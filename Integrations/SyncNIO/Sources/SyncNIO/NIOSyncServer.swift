import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket
import SyncServer

/// A `SyncServer`'s core served over WebSocket on swift-nio, with optional TLS (`wss://`): the front end
/// of `sync-server-nio`.
///
/// Every connection that upgrades (at `path`, or any path when it is `nil`) becomes a `SyncServerConnection` handed to the server's
/// acceptor, exactly as an in-process client's; `GET /metrics` answers the server's metrics in the
/// Prometheus text format (`SyncServer.prometheusMetrics`), `GET /healthz` `200 ok` (`503` once the server
/// drains or stops), other plain HTTP requests `426 Upgrade Required` (`404` for another path than
/// `path`; `503` while the server drains or stops). Messages larger than `maximumMessageBytes` close the connection.
public final class NIOSyncServer: Sendable {
    /// The server whose core is served.
    public let server: SyncServer
    /// The address and port listened on (the port the system picked for port 0).
    public let host: String
    public let port: Int
    /// Whether clients connect with `wss://`.
    public let usesTLS: Bool
    /// The one path clients upgrade at (`nil`: any).
    public let path: String?
    private let listener: any Channel
    /// The listeners of `serveMetrics(host:port:)`, closed by `stop()`.
    private let metricsListeners = NIOLockedValueBox<[any Channel]>([])
    private let eventLoopGroup: any EventLoopGroup
    /// Connections accepted and not upgraded yet (see `maximumHandshakingConnections`).
    private let handshaking: HandshakingConnections

    /// How many connections are in their opening handshake now: lets a test wait for them.
    var handshakingConnectionCount: Int { handshaking.current }

    /// A certificate chain and its private key, PEM files (as `--tls-cert` and `--tls-key` name them).
    public struct TLSIdentity: Sendable, Hashable {
        public var certificateChainFile: String
        public var privateKeyFile: String

        public init(certificateChainFile: String, privateKeyFile: String) {
            self.certificateChainFile = certificateChainFile
            self.privateKeyFile = privateKeyFile
        }
    }

    private init(
        server: SyncServer, host: String, port: Int, usesTLS: Bool, path: String?, listener: any Channel,
        handshaking: HandshakingConnections, eventLoopGroup: any EventLoopGroup
    ) {
        self.server = server
        self.handshaking = handshaking
        self.eventLoopGroup = eventLoopGroup
        self.path = path
        self.host = host
        self.port = port
        self.usesTLS = usesTLS
        self.listener = listener
    }

    /// Listens on `host:port` (0: a free port) for WebSocket clients of `server` (an embedded
    /// `SyncServer`: its `endpoint` takes the connections), with TLS when `tls` is given, upgrading
    /// requests for `path` only (its query ignored) when one is given. A connection not upgraded within
    /// `handshakeTimeout`, or upgraded and silent for `idleTimeout`, is closed. A request carrying an
    /// `Origin` header (a browser page) that `originPolicy` refuses is answered `403 Forbidden` without an
    /// upgrade; the default refuses every page, as `sync-server` does when anonymous (pass `.anyOrigin` for
    /// a server with API keys, as `sync-server` and `sync-server-nio` do by default). Until the client's
    /// `hello` is answered with `welcome`, a frame or message larger than
    /// `maximumUnauthenticatedMessageBytes` is closed with 1009 from its header, nothing behind the
    /// `hello` is read, and a connection not welcomed within `helloTimeout` (pings do not extend it) is
    /// closed with 1008, as `sync-server`'s (its default: the API key limit, 1 KiB, plus 1 KiB). Past
    /// `maximumHandshakingConnections` accepted and not yet upgraded, a new connection is closed as soon
    /// as it is accepted. The bytes of every client socket and the connections refused before the upgrade
    /// are counted in the server's metrics (`SyncServer.count(_:)`).
    ///
    /// - Throws: when the certificate or key cannot be loaded, or the address cannot be bound.
    public static func start(
        serving server: SyncServer, host: String = "127.0.0.1", port: Int = 0, tls: TLSIdentity? = nil,
        path: String? = nil, originPolicy: WebSocketOriginPolicy = .allowList([]),
        maximumMessageBytes: Int = WireProtocol.maximumMessageSize, handshakeTimeout: TimeAmount = .seconds(10),
        idleTimeout: TimeAmount = .seconds(300), helloTimeout: TimeAmount = .seconds(10),
        maximumUnauthenticatedMessageBytes: Int = 2048, inboundHighWater: Int = 4 << 20,
        maximumHandshakingConnections: Int = 1_024,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws -> NIOSyncServer {
        guard case .inProcess(let acceptor) = server.endpoint.kind else {
            throw NIOSyncServerError.notAnEmbeddedServer
        }
        return try await start(
            serving: server, acceptor: acceptor, host: host, port: port, tls: tls, path: path,
            originPolicy: originPolicy, maximumMessageBytes: maximumMessageBytes, handshakeTimeout: handshakeTimeout,
            idleTimeout: idleTimeout, helloTimeout: helloTimeout,
            maximumUnauthenticatedMessageBytes: maximumUnauthenticatedMessageBytes, inboundHighWater: inboundHighWater,
            maximumHandshakingConnections: maximumHandshakingConnections, eventLoopGroup: eventLoopGroup)
    }

    /// `start(serving:…)` handing the connections to `acceptor` (tests: an acceptor that does not read).
    static func start(
        serving server: SyncServer, acceptor: any SyncConnectionAcceptor, host: String = "127.0.0.1", port: Int = 0,
        tls: TLSIdentity? = nil, path: String? = nil, originPolicy: WebSocketOriginPolicy = .allowList([]),
        maximumMessageBytes: Int = WireProtocol.maximumMessageSize, handshakeTimeout: TimeAmount = .seconds(10),
        idleTimeout: TimeAmount = .seconds(300), helloTimeout: TimeAmount = .seconds(10),
        maximumUnauthenticatedMessageBytes: Int = 2048, inboundHighWater: Int = 4 << 20,
        maximumHandshakingConnections: Int = 1_024,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws -> NIOSyncServer {
        var sslContext: NIOSSLContext?
        if let tls {
            let chain = try NIOSSLCertificate.fromPEMFile(tls.certificateChainFile).map {
                NIOSSLCertificateSource.certificate($0)
            }
            let key = try NIOSSLPrivateKey(file: tls.privateKeyFile, format: .pem)
            var configuration = TLSConfiguration.makeServerConfiguration(
                certificateChain: chain, privateKey: .privateKey(key))
            configuration.minimumTLSVersion = .tlsv12
            sslContext = try NIOSSLContext(configuration: configuration)
        }
        let context = sslContext
        let handshaking = HandshakingConnections(maximum: maximumHandshakingConnections)
        // Send queue bounds: a stalled client is closed past 4 largest messages (64 MiB by default).
        let highWater = max(4 * maximumMessageBytes, 1 << 20)
        let lowWater = 1 << 20
        let bootstrap = ServerBootstrap(group: eventLoopGroup)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                // Too many handshaking already: closed before a byte is read.
                guard let ticket = handshaking.admit() else {
                    server.count(.refusedHandshaking)
                    channel.close(promise: nil)
                    return channel.eventLoop.makeSucceededVoidFuture()
                }
                channel.closeFuture.whenComplete { _ in ticket.end() }
                // A connection that has not upgraded within the handshake timeout (TLS and HTTP included)
                // is closed: a silent client never holds a descriptor for long.
                channel.eventLoop.scheduleTask(in: handshakeTimeout) {
                    if ticket.isHandshaking {
                        server.count(.refusedHandshake)
                        channel.close(promise: nil)
                    }
                }
                return channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    try pipeline.addHandler(SocketByteCounter(server: server))
                    if let context { try pipeline.addHandler(NIOSSLServerHandler(context: context)) }
                    let upgrader = NIOWebSocketServerUpgrader(
                        maxFrameSize: maximumMessageBytes, automaticErrorHandling: true,
                        shouldUpgrade: { channel, head in
                            // A draining server upgrades no one: `PlainHTTPHandler` answers 503.
                            let accepted =
                                !server.isStopping
                                && (path.map { PlainHTTPHandler.path(of: head.uri) == $0 } ?? true)
                                && originPolicy.allows(origin: head.headers.first(name: "origin"))
                            return channel.eventLoop.makeSucceededFuture(accepted ? HTTPHeaders() : nil)
                        },
                        upgradePipelineHandler: { channel, _ in
                            channel.eventLoop.makeCompletedFuture {
                                ticket.end()
                                let pipeline = channel.pipeline.syncOperations
                                // Before `welcome`: a small frame limit, one message read (see HelloGate).
                                let gate = HelloGate(limit: maximumUnauthenticatedMessageBytes)
                                let loopGate = NIOLoopBound(gate, eventLoop: channel.eventLoop)
                                let connection = NIOServerConnection(
                                    channel: channel, highWater: highWater, lowWater: lowWater,
                                    inboundHighWater: inboundHighWater,
                                    welcomed: { channel.eventLoop.execute { loopGate.value.open() } },
                                    backlogChanged: { isBacklogged in
                                        // Read on the loop: the latest state wins, whatever the order. At
                                        // once on the loop (a received message), so no second read burst
                                        // (NIO reads up to 4 × 64 KiB per wake-up) slips in.
                                        if channel.eventLoop.inEventLoop {
                                            loopGate.value.backlogged = isBacklogged()
                                        } else {
                                            channel.eventLoop.execute { loopGate.value.backlogged = isBacklogged() }
                                        }
                                    })
                                gate.refuse = { connection.close(code: .messageTooLarge) }
                                gate.withheldForBacklog = { connection.readWithheld() }
                                try pipeline.addHandler(
                                    gate,
                                    position: .before(
                                        try pipeline.handler(type: ByteToMessageHandler<WebSocketFrameDecoder>.self)))
                                // No `welcome` within the hello timeout, however often the client pings: 1008.
                                channel.eventLoop.scheduleTask(in: helloTimeout) {
                                    if loopGate.value.phase != .open { connection.close(code: .policyViolation) }
                                }
                                // Silent for the idle timeout (clients ping every 60 s by default): closed.
                                try pipeline.addHandler(IdleStateHandler(readTimeout: idleTimeout))
                                try pipeline.addHandler(
                                    NIOWebSocketFrameAggregator(
                                        minNonFinalFragmentSize: 0, maxAccumulatedFrameCount: Int.max,
                                        maxAccumulatedFrameSize: maximumMessageBytes))
                                try pipeline.addHandler(
                                    ServerFrameHandler(connection: connection, maximumMessageBytes: maximumMessageBytes)
                                )
                                // A stopped server refuses: the client sees the close (1001, going away).
                                if !acceptor.accept(connection) { connection.close() }
                            }
                        })
                    try pipeline.configureHTTPServerPipeline(
                        withServerUpgrade: (
                            upgraders: [upgrader],
                            completionHandler: { context in
                                if let plain = try? context.pipeline.syncOperations.context(
                                    handlerType: PlainHTTPHandler.self)
                                {
                                    context.pipeline.syncOperations.removeHandler(context: plain, promise: nil)
                                }
                            }
                        ))
                    try pipeline.addHandler(
                        PlainHTTPHandler(server: server, upgradePath: path, originPolicy: originPolicy))
                }
            }
        let listener = try await bootstrap.bind(host: host, port: port).get()
        let boundPort = listener.localAddress?.port ?? port
        return NIOSyncServer(
            server: server, host: host, port: boundPort, usesTLS: context != nil, path: path, listener: listener,
            handshaking: handshaking, eventLoopGroup: eventLoopGroup)
    }

    /// Also serves `GET /metrics` and `GET /healthz` on `host:port` (port 0: a free one), plain HTTP
    /// without TLS, as on the server's own port; every other request is answered `404` (no upgrade).
    /// Returns the port; `stop()` closes it.
    ///
    /// - Throws: when the address cannot be bound.
    public func serveMetrics(host: String, port: Int) async throws -> Int {
        let server = self.server
        let listener = try await ServerBootstrap(group: eventLoopGroup)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                // A client that sends no request is not kept: closed after 10 s.
                channel.eventLoop.scheduleTask(in: .seconds(10)) { channel.close(promise: nil) }
                return channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    try pipeline.configureHTTPServerPipeline(withErrorHandling: true)
                    try pipeline.addHandler(PlainHTTPHandler(server: server, metricsOnly: true))
                }
            }
            .bind(host: host, port: port).get()
        metricsListeners.withLockedValue { $0.append(listener) }
        return listener.localAddress?.port ?? port
    }

    /// `ws://host:port` or `wss://host:port` (an IPv6 host in brackets), and the path if there is one.
    public var url: String {
        let hostText = host.contains(":") ? "[\(host)]" : host
        return "\(usesTLS ? "wss" : "ws")://\(hostText):\(port)\(path ?? "")"
    }

    /// Stops accepting, then stops the server (every connection is closed with 1001, going away).
    public func stop() async {
        try? await listener.close()
        for metricsListener in metricsListeners.withLockedValue({ $0 }) { try? await metricsListener.close() }
        await server.stop()
    }
}

/// Why `NIOSyncServer.start` refused a server.
public enum NIOSyncServerError: Error, Sendable, CustomStringConvertible {
    /// The server's `endpoint` is not in-process (it always is for `SyncServer.embedded`).
    case notAnEmbeddedServer

    public var description: String { "the server takes no in-process connections" }
}

/// Answers plain HTTP requests (those that do not upgrade): `GET /metrics` with the server's metrics,
/// `GET /healthz` with 200 (503 once the server drains or stops), a path other than the upgrade path
/// (when there is one) with 404, a page whose `Origin` the policy refuses with 403, an upgrade request
/// while the server drains or stops with 503, anything else with 426; then closes. Serving `metricsOnly`
/// (`serveMetrics`), every path but `/metrics` and `/healthz` is 404.
final class PlainHTTPHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let server: SyncServer
    private let upgradePath: String?
    private let originPolicy: WebSocketOriginPolicy
    private let metricsOnly: Bool
    private var path: String?
    private var originAllowed = true

    init(
        server: SyncServer, upgradePath: String? = nil, originPolicy: WebSocketOriginPolicy = .anyOrigin,
        metricsOnly: Bool = false
    ) {
        self.server = server
        self.upgradePath = upgradePath
        self.originPolicy = originPolicy
        self.metricsOnly = metricsOnly
    }

    /// A request target without its query.
    static func path(of target: String) -> Substring { target.prefix { $0 != "?" } }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            path = head.uri
            originAllowed = originPolicy.allows(origin: head.headers.first(name: "origin"))
        case .body: break
        case .end:
            let (status, body, contentType, upgrade) = answer(Self.path(of: path ?? ""))
            var headers = HTTPHeaders()
            headers.add(name: "Content-Type", value: contentType)
            headers.add(name: "Content-Length", value: "\(body.utf8.count)")
            headers.add(name: "Connection", value: "close")
            if upgrade { headers.add(name: "Upgrade", value: "websocket") }
            let head = HTTPResponseHead(version: .http1_1, status: status, headers: headers)
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            context.write(
                wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(string: body)))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { [channel = context.channel] _ in
                channel.close(promise: nil)
            }
        }
    }

    /// The status, body and content type for a request of `target`, and whether to say `Upgrade: websocket`.
    private func answer(
        _ target: Substring
    ) -> (status: HTTPResponseStatus, body: String, contentType: String, upgrade: Bool) {
        let text = "text/plain; charset=utf-8"
        switch target {
        case "/metrics":
            return (.ok, server.prometheusMetrics, "text/plain; version=0.0.4; charset=utf-8", false)
        case "/healthz":
            return server.isStopping ? (.serviceUnavailable, "stopping\n", text, false) : (.ok, "ok\n", text, false)
        default:
            let found = !metricsOnly && (upgradePath.map { target == $0 } ?? true)
            guard found else { return (.notFound, "not found\n", text, false) }
            guard originAllowed else { return (.forbidden, "web pages may not connect\n", text, false) }
            if server.isStopping { return (.serviceUnavailable, "stopping\n", text, false) }
            return (.upgradeRequired, "upgrade to WebSocket to sync\n", text, true)
        }
    }
}
