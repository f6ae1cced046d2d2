import Dispatch
import SyncWire

/// The network transport: the sync protocol's binary messages over WebSocket (RFC 6455) over TCP, one
/// message per WebSocket binary message.
///
/// `.webSocket(host:port:)` endpoints connect for real: the host is resolved off the event loop, the
/// socket is non-blocking on `EventLoop.shared()` (one thread for all of a process's client connections),
/// and the upgrade is checked (`Sec-WebSocket-Accept`). `.inProcess` endpoints are served by an
/// `InMemoryTransport`, so one transport reaches both kinds of server.
///
/// Events: `.opened` after the upgrade; `.message` per server message; `.closed(.refused)` when the host
/// cannot be resolved or reached or refuses the upgrade; `.closed(.connectionLost)` when an open
/// connection ends (the server's close code and reason in the text); `.closed(.malformedFrame)` when the
/// server broke the WebSocket or sync protocol (this side closes with 1002, 1007 or 1009 first).
/// Receiving is bounded: past `limits.inboundHighWater` bytes of unread messages the socket is not read.
/// When the event loop cannot be started (the process is out of descriptors) the connection reports
/// `.closed(.refused)` at once, and the next attempt tries again.
public struct WebSocketTransport: SyncTransport {
    /// The limits of each connection.
    public var limits: WebSocketLimits
    private let inProcess = InMemoryTransport()

    public init(limits: WebSocketLimits = WebSocketLimits()) {
        self.limits = limits
    }

    public func connect(to endpoint: SyncEndpoint) -> any SyncClientConnection {
        switch endpoint.kind {
        case .inProcess:
            return inProcess.connect(to: endpoint)
        case .webSocket(let host, let port):
            let loop: EventLoop
            do {
                loop = try EventLoop.shared()
            } catch {
                return RefusedClientConnection(reason: "cannot start the network event loop: \(error)")
            }
            let connection = WebSocketClientConnection(loop: loop, limits: limits)
            let limits = limits
            DispatchQueue.global().async {
                connection.start(host: host, port: port, limits: limits)
            }
            return connection
        }
    }
}
