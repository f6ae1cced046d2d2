import Dispatch
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL
import SyncEngine

/// The sync protocol over WebSocket on swift-nio: `ws://` and `wss://` (TLS through NIOSSL), with a
/// request path, for a server behind a TLS-terminating proxy or `sync-server-nio --tls-cert`.
///
/// ```swift
/// let transport = try NIOWebSocketTransport(url: "wss://sync.example.com/sync")
/// let app = SyncApp(configuration: .init(server: transport.endpoint, directory: dir, transport: transport))
/// ```
///
/// The URL gives the scheme and the path; the endpoint an app is configured with gives host and port
/// (`endpoint` is the URL's), so every `.webSocket` endpoint is reached with the URL's scheme and path —
/// a `wss://` transport never falls back to plain text. `.inProcess` endpoints are served in memory.
///
/// Connecting: NIO's `ClientBootstrap` resolves the host and connects Happy Eyeballs style (RFC 8305: both
/// address families raced); TLS verifies the server's certificate chain against `trustRoots` and its
/// name against the URL's host. Events: `.opened` after the upgrade; `.message` per server message;
/// `.closed(.certificateRejected)` when the server's certificate is refused (expired, for another host
/// name, from an untrusted authority, or the trust roots cannot be loaded) — the engine reports it as
/// the fatal `SyncError.certificateRejected` and does not retry; `.closed(.refused)` when the server
/// cannot be reached or refuses the upgrade; `.closed(.connectionLost)` when an open connection ends;
/// `.closed(.malformedFrame)` when the server breaks the WebSocket or sync protocol.
public struct NIOWebSocketTransport: SyncTransport {
    /// The URL: its scheme and path are used for every connection.
    public let url: SyncNIOURL
    /// Who a `wss://` connection trusts (ignored for `ws://`).
    public let trustRoots: TrustRoots
    /// The largest message sent or received.
    public let maximumMessageBytes: Int
    /// How long the TCP connect (every address Happy Eyeballs tries) may take.
    public let connectTimeout: TimeAmount
    private let group: any EventLoopGroup
    private let contexts: TLSContextCache
    private let inProcess = InMemoryTransport()

    /// A transport for `url`, trusting `trustRoots`, on `eventLoopGroup` (default: NIO's shared one).
    public init(
        url: SyncNIOURL, trustRoots: TrustRoots = .system,
        maximumMessageBytes: Int = WireProtocol.maximumMessageSize, connectTimeout: TimeAmount = .seconds(30),
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) {
        self.url = url
        self.trustRoots = trustRoots
        self.maximumMessageBytes = maximumMessageBytes
        self.connectTimeout = connectTimeout
        self.group = eventLoopGroup
        self.contexts = TLSContextCache(trustRoots: trustRoots)
    }

    /// A transport for the `ws://` or `wss://` URL `url` (see `SyncNIOURL`).
    ///
    /// - Throws: `SyncEndpointURLError` when `url` is not one.
    public init(
        url: String, trustRoots: TrustRoots = .system, maximumMessageBytes: Int = WireProtocol.maximumMessageSize,
        connectTimeout: TimeAmount = .seconds(30),
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) throws(SyncEndpointURLError) {
        self.init(
            url: try SyncNIOURL(url), trustRoots: trustRoots, maximumMessageBytes: maximumMessageBytes,
            connectTimeout: connectTimeout, eventLoopGroup: eventLoopGroup)
    }

    /// The URL's host and port: the endpoint to configure an app with.
    public var endpoint: SyncEndpoint { url.endpoint }

    public func connect(to endpoint: SyncEndpoint) -> any SyncClientConnection {
        switch endpoint.kind {
        case .inProcess:
            return inProcess.connect(to: endpoint)
        case .webSocket(let host, let port):
            var target = url
            target.host = host
            target.port = port
            let connection = NIOClientConnection(target: target, maximumMessageBytes: maximumMessageBytes)
            let (group, contexts, connectTimeout, usesTLS) = (group, contexts, connectTimeout, target.usesTLS)
            // Loading trust roots reads files: off the caller's thread (the cooperative pool), once.
            DispatchQueue.global().async {
                var tls: NIOSSLContext?
                if usesTLS {
                    switch contexts.context() {
                    case .success(let context): tls = context
                    case .failure(let error):
                        connection.fail(.certificateRejected("cannot load the trust roots: \(error)"))
                        return
                    }
                }
                connection.start(group: group, tls: tls, connectTimeout: connectTimeout)
            }
            return connection
        }
    }
}

/// The TLS client context of a transport, made once (loading the system trust store or a CA file).
final class TLSContextCache: Sendable {
    private let trustRoots: TrustRoots
    private let made = NIOLockedValueBox<Result<NIOSSLContext, any Error>?>(nil)

    init(trustRoots: TrustRoots) { self.trustRoots = trustRoots }

    /// The context, or why it cannot be made. Blocking (file reads) the first time.
    func context() -> Result<NIOSSLContext, any Error> {
        made.withLockedValue { made in
            if let made { return made }
            let result = Result { try NIOSSLContext(configuration: trustRoots.tlsConfiguration()) }
            made = result
            return result
        }
    }
}
