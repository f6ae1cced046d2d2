/// How a WebSocket channel ended.
enum WebSocketChannelEnd: Sendable, Equatable {
    /// This side closed it (after a close handshake, or before the connection opened).
    case closedHere
    /// The peer sent a close frame with this code (`nil`: none) and reason.
    case closedByPeer(WebSocketCloseCode?, String)
    /// The peer broke the protocol; this side failed the connection with the violation's code.
    case violation(WebSocketViolation)
    /// The TCP connect failed (a client may try the host's next address).
    case connectFailed(String)
    /// The opening handshake failed.
    case handshakeFailed(String)
    /// The connection broke without a close handshake (reset, EOF, a peer that does not read).
    case lost(String)
}
