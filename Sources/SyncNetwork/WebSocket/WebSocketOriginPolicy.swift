/// Which web pages a server lets open a WebSocket connection, judged from the `Origin` header browsers
/// add to every WebSocket request (RFC 6455 §4.2.1, §10.2). Programs other than browsers send none, and
/// are never refused for it. A refused request is answered `403 Forbidden` before any upgrade.
public enum WebSocketOriginPolicy: Sendable, Hashable {
    /// Every request is upgraded, whatever its `Origin`.
    case anyOrigin
    /// A request carrying `Origin` is upgraded only when it is one of these (`scheme://host[:port]`,
    /// compared ignoring ASCII case); requests without `Origin` are upgraded. An empty list refuses every
    /// browser page.
    case allowList(Set<String>)

    /// Whether a request whose `Origin` header is `origin` (`nil`: none) may be upgraded.
    public func allows(origin: String?) -> Bool {
        guard let origin else { return true }
        switch self {
        case .anyOrigin: return true
        case .allowList(let origins):
            let wanted = origin.lowercased()
            return origins.contains { $0.lowercased() == wanted }
        }
    }
}
