/// Why a text is not a `ws://host:port` URL `SyncEndpoint(url:)` accepts.
public enum SyncEndpointURLError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No `scheme://` at the start.
    case missingScheme(String)
    /// A scheme other than `ws` or `wss`.
    case unsupportedScheme(String)
    /// A `wss://` URL (the whole text): the root package's `WebSocketTransport` speaks no TLS, on any
    /// platform. Use `NIOWebSocketTransport(url:)` from the `SyncNIO` package (`Integrations/SyncNIO`),
    /// which speaks `wss://`, or connect with `ws://` on a network you trust.
    case tlsRequiresSyncNIO(String)
    /// Nothing between `ws://` and the port.
    case missingHost
    /// A host with characters no host name or IPv4 address has (spaces, `%`, …), or brackets around
    /// something that is not an IPv6 address.
    case invalidHost(String)
    /// An IPv6 address without the brackets a URL needs (`ws://[::1]:9000`, not `ws://::1:9000`).
    case unbracketedIPv6Address(String)
    /// A port that is not a number from 1 to 65535.
    case invalidPort(String)
    /// `user@` before the host: credentials go in `SyncCredentials`, never in the URL.
    case unexpectedUserInfo
    /// A path after the port (the server serves every path the same way; give none).
    case unexpectedPath(String)
    /// A `?query` after the port.
    case unexpectedQuery(String)
    /// A `#fragment` after the port.
    case unexpectedFragment(String)

    public var description: String {
        switch self {
        case .missingScheme(let text): "\(text) is not a ws:// URL (expected ws://host:port)"
        case .tlsRequiresSyncNIO(let url):
            "\(url): wss:// (TLS) is not spoken by the built-in WebSocketTransport (ws:// only); use the SyncNIO "
                + "package's NIOWebSocketTransport (Integrations/SyncNIO), which speaks wss://"
        case .unsupportedScheme(let scheme): "the scheme \(scheme):// is not supported (expected ws://host:port)"
        case .missingHost: "the URL names no host (expected ws://host:port)"
        case .invalidHost(let host): "\(host) is not a host name or an IP address"
        case .unbracketedIPv6Address(let text): "an IPv6 address must be in brackets: ws://[\(text)]"
        case .invalidPort(let port): "the port must be a number from 1 to 65535, not \"\(port)\""
        case .unexpectedUserInfo: "a URL with user@ is not accepted: log in with SyncCredentials instead"
        case .unexpectedPath(let path): "a path (\(path)) is not accepted: give ws://host:port only"
        case .unexpectedQuery(let query): "a query (\(query)) is not accepted: give ws://host:port only"
        case .unexpectedFragment(let fragment): "a fragment (\(fragment)) is not accepted: give ws://host:port only"
        }
    }
}
