/// The status codes of a WebSocket close frame that this package sends or checks (RFC 6455 §7.4).
public struct WebSocketCloseCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// 1000: the purpose of the connection is fulfilled.
    public static let normalClosure = WebSocketCloseCode(rawValue: 1000)
    /// 1001: the endpoint is going away (the server is shutting down).
    public static let goingAway = WebSocketCloseCode(rawValue: 1001)
    /// 1002: the peer broke the WebSocket protocol.
    public static let protocolError = WebSocketCloseCode(rawValue: 1002)
    /// 1003: a kind of data this endpoint does not accept (text, where only binary is spoken).
    public static let unsupportedData = WebSocketCloseCode(rawValue: 1003)
    /// 1007: data inconsistent with its message's type (invalid UTF-8 in text; a malformed sync message).
    public static let invalidPayload = WebSocketCloseCode(rawValue: 1007)
    /// 1008: a policy was violated (the peer did not read what was sent to it).
    public static let policyViolation = WebSocketCloseCode(rawValue: 1008)
    /// 1009: a message too big to process.
    public static let messageTooBig = WebSocketCloseCode(rawValue: 1009)
    /// 1011: the server hit an unexpected condition.
    public static let internalError = WebSocketCloseCode(rawValue: 1011)
    /// 1013: try again later (the server is at its connection limit).
    public static let tryAgainLater = WebSocketCloseCode(rawValue: 1013)

    /// Whether a peer may send this code in a close frame: 1000–1003, 1007–1014, 3000–4999. The codes
    /// 1004–1006 and 1015 are reserved for reporting, never for the wire; the rest are unassigned.
    public var isValidOnTheWire: Bool {
        switch rawValue {
        case 1000...1003, 1007...1014, 3000...4999: true
        default: false
        }
    }

    public var description: String { "\(rawValue)" }
}
