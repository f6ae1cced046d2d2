/// A peer broke the rules: the close code to fail the connection with (RFC 6455 §7.1.7) and why.
struct WebSocketViolation: Error, Sendable, Equatable {
    var code: WebSocketCloseCode
    var reason: String
}
