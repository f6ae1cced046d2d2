import SyncEngine

/// A `ws://` or `wss://` URL as `NIOWebSocketTransport` reads it: scheme, host, port and request path.
///
/// `ws://host:port/path`, `wss://host/path` (port 443), `ws://host` (port 80), `wss://[::1]:8443/sync`.
/// The scheme is case-insensitive; host and port are checked as `SyncEndpoint(url:)` checks them (an IPv6
/// address in brackets, no `user@`); the path (with an optional `?query`) is sent as the upgrade
/// request's target, `/` when there is none. A `#fragment` is refused.
public struct SyncNIOURL: Sendable, Hashable, CustomStringConvertible {
    /// Whether the connection is TLS (`wss://`).
    public var usesTLS: Bool
    /// The host: a name, an IPv4 address, or an IPv6 address (without brackets).
    public var host: String
    /// The TCP port.
    public var port: Int
    /// The upgrade request's target: starts with `/`.
    public var path: String

    /// The port of a `wss://` URL that names none (RFC 6455 §3).
    public static let defaultTLSPort = 443

    /// Reads `text`.
    ///
    /// - Throws: `SyncEndpointURLError` saying what is wrong (`.unsupportedScheme` for anything but `ws`
    ///   and `wss`, `.unexpectedFragment` for a `#fragment`, `.unexpectedPath` for a path with spaces or
    ///   other characters a request target cannot carry).
    public init(_ text: String) throws(SyncEndpointURLError) {
        guard let separator = text.range(of: "://") else { throw .missingScheme(text) }
        let scheme = text[..<separator.lowerBound].lowercased()
        guard scheme == "ws" || scheme == "wss" else { throw .unsupportedScheme(scheme) }
        let afterScheme = text[separator.upperBound...]
        let authorityEnd = afterScheme.firstIndex { "/?#".contains($0) } ?? afterScheme.endIndex
        let authority = afterScheme[..<authorityEnd]
        var rest = afterScheme[authorityEnd...]
        if let hash = rest.firstIndex(of: "#") { throw .unexpectedFragment(String(rest[hash...])) }
        if rest.hasPrefix("?") { rest = "/" + rest }
        let path = rest.isEmpty ? "/" : String(rest)
        guard path.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 && $0.value < 0x7F }) else {
            throw .unexpectedPath(path)
        }
        // Host and port: checked by the root package's reader, on the authority alone.
        let endpoint = try SyncEndpoint(url: "ws://\(authority)")
        guard case .webSocket(let host, var port) = endpoint.kind else { throw .missingHost }
        let namesPort =
            authority.hasPrefix("[") ? authority.contains("]:") : authority.contains(":")
        if !namesPort && scheme == "wss" { port = Self.defaultTLSPort }
        self.usesTLS = scheme == "wss"
        self.host = host
        self.port = port
        self.path = path
    }

    /// The endpoint to configure an app with (`SyncAppConfiguration(endpoint:…)`): host and port. The
    /// scheme and path are the transport's (`NIOWebSocketTransport(url:)`).
    public var endpoint: SyncEndpoint { .webSocket(host: host, port: port) }

    public var description: String {
        let hostText = host.contains(":") ? "[\(host)]" : host
        return "\(usesTLS ? "wss" : "ws")://\(hostText):\(port)\(path)"
    }
}
