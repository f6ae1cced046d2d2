import SyncWire

/// The limits of one WebSocket connection, on either side.
public struct WebSocketLimits: Sendable, Hashable {
    /// The largest message accepted (a frame or a fragmented message above it closes the connection
    /// with 1009). Default: `WireProtocol.maximumMessageSize`.
    public var maximumMessageBytes: Int
    /// The largest HTTP head of the opening handshake (beyond it: `431`, then close). Default: 16 KiB.
    public var maximumHandshakeBytes: Int
    /// How long a new connection may take to complete its opening handshake before it is dropped.
    /// Default: 10 s.
    public var handshakeTimeout: Duration
    /// How long the close handshake may take before the socket is closed anyway. Default: 5 s.
    public var closeTimeout: Duration
    /// Bytes of received messages waiting for the application past which the socket is no longer read
    /// (TCP then slows the sender down); reading resumes when half of them were taken. Default: 4 MiB.
    public var inboundHighWater: Int
    /// Bytes queued for sending below which `writable()` returns. Default: 1 MiB.
    public var outboundLowWater: Int
    /// Bytes queued for a peer that does not read past which the server drops the connection.
    /// Default: four maximum-size messages. Messages count when they are sent.
    public var outboundHardLimit: Int
    /// Bytes of control frames (pongs, the close frame) and handshake text queued and not written past
    /// which the connection is dropped: a peer that sends pings and never reads the pongs. Default: 64 KiB.
    public var maximumQueuedControlBytes: Int
    /// Servers only: how long a client may take, from the opening handshake on, before the application
    /// says it authenticated (`WebSocketServerConnection` sees `welcome` sent). Past it the connection is
    /// closed with 1008 (policy violation); pings do not extend it. `nil`: no such deadline (a listener
    /// that is not a sync server). `SyncServer.listening` uses 10 s when `nil`.
    public var helloTimeout: Duration?
    /// Servers only: the largest frame or message accepted before authentication (a client's `hello`);
    /// beyond it, 1009 from the frame's header. Until authenticated the server reads one message and
    /// then waits for the application's answer, so nothing more is buffered. `nil`: no separate limit.
    /// `SyncServer.listening` uses the configuration's credential limit plus 1 KiB when `nil`.
    public var maximumUnauthenticatedMessageBytes: Int?
    /// Servers only: connections accepted and still in their opening handshake past which a new one is
    /// closed at once (before any byte is read). Default: 1,024.
    public var maximumHandshakingConnections: Int
    /// Servers only: descriptors kept free for everything else (partition files, the store): a connection
    /// accepted when fewer than this many descriptors are left below `RLIMIT_NOFILE` is closed at once.
    /// Default: 64.
    public var reservedDescriptors: Int
    /// The most frames one fragmented message may take (beyond: 1008). Default: 1,024.
    public var maximumFragmentsPerMessage: Int
    /// The fewest bytes a fragment other than a message's last may carry (less: 1008). Default: 512.
    public var minimumFragmentBytes: Int
    /// How long the server lets an open connection send nothing at all before it drops it (TCP closed,
    /// no close handshake): a client that vanished without closing (a half-open connection), or that
    /// stopped in the middle of a frame. Default: 300 s. The engine pings every `pingInterval` (60 s)
    /// after the previous pong, and gives up on a pong after `pongTimeout` (120 s): keep this above the
    /// clients' ping interval plus pong timeout. Checked every quarter of it; used by servers only.
    public var idleTimeout: Duration
    /// Servers only: which browser pages may connect (see `WebSocketOriginPolicy`; refused: `403` before
    /// the upgrade). `nil`: every origin (a bare listener). `SyncServer.listening` uses, when `nil`,
    /// `.allowList([])` (no browser page) for an anonymous server and `.anyOrigin` for one with API keys.
    public var originPolicy: WebSocketOriginPolicy?
    /// Servers only: the most bytes of input all of a listener's connections may hold together — frames
    /// received in part and fragmented messages being assembled (messages handed to the application
    /// count against `inboundHighWater` instead). When a read takes the total past it, the connection
    /// holding the most is closed with 1013 (try again later) and its bytes dropped (see `InputBudget`).
    /// Raised to twice `maximumMessageBytes` when smaller. Default: 256 MiB.
    public var maximumBufferedInputBytes: Int

    public init(
        maximumMessageBytes: Int = WireProtocol.maximumMessageSize,
        maximumHandshakeBytes: Int = 16 * 1024,
        handshakeTimeout: Duration = .seconds(10),
        closeTimeout: Duration = .seconds(5),
        inboundHighWater: Int = 4 << 20,
        outboundLowWater: Int = 1 << 20,
        outboundHardLimit: Int = 4 * WireProtocol.maximumMessageSize,
        idleTimeout: Duration = .seconds(300),
        maximumQueuedControlBytes: Int = 64 << 10,
        helloTimeout: Duration? = nil,
        maximumUnauthenticatedMessageBytes: Int? = nil,
        maximumHandshakingConnections: Int = 1024,
        reservedDescriptors: Int = 64,
        maximumFragmentsPerMessage: Int = 1024,
        minimumFragmentBytes: Int = 512,
        originPolicy: WebSocketOriginPolicy? = nil,
        maximumBufferedInputBytes: Int = 256 << 20
    ) {
        self.maximumMessageBytes = maximumMessageBytes
        self.maximumHandshakeBytes = maximumHandshakeBytes
        self.handshakeTimeout = handshakeTimeout
        self.closeTimeout = closeTimeout
        self.inboundHighWater = inboundHighWater
        self.outboundLowWater = outboundLowWater
        self.outboundHardLimit = outboundHardLimit
        self.idleTimeout = idleTimeout
        self.maximumQueuedControlBytes = maximumQueuedControlBytes
        self.helloTimeout = helloTimeout
        self.maximumUnauthenticatedMessageBytes = maximumUnauthenticatedMessageBytes
        self.maximumHandshakingConnections = maximumHandshakingConnections
        self.reservedDescriptors = reservedDescriptors
        self.maximumFragmentsPerMessage = maximumFragmentsPerMessage
        self.minimumFragmentBytes = minimumFragmentBytes
        self.originPolicy = originPolicy
        self.maximumBufferedInputBytes = maximumBufferedInputBytes
    }
}
