extension SyncEndpoint {
    /// The port of a `ws://` URL that names none (RFC 6455 §3).
    public static let defaultWebSocketPort = 80

    /// The WebSocket endpoint `url` names: `ws://host:port`, `ws://host` (port 80), `ws://[IPv6]:port`.
    ///
    /// The scheme is case-insensitive; the host is a name, an IPv4 address, or an IPv6 address in
    /// brackets (kept without them: `ws://[::1]:9000` is `.webSocket(host: "::1", port: 9000)`). A final
    /// `/` is allowed; anything else after the authority is refused, as are credentials in the URL. The
    /// host is not resolved here (connecting does that).
    ///
    /// `wss://` is refused with `.tlsRequiresSyncNIO`: this package's transport speaks no TLS (the `SyncNIO`
    /// package's `NIOWebSocketTransport` does, and reads `wss://` URLs with paths).
    ///
    /// - Throws: `SyncEndpointURLError` saying what is wrong.
    public init(url text: String) throws(SyncEndpointURLError) {
        guard let separator = text.range(of: "://") else { throw .missingScheme(text) }
        let scheme = text[..<separator.lowerBound].lowercased()
        guard scheme != "wss" else { throw .tlsRequiresSyncNIO(text) }
        guard scheme == "ws" else { throw .unsupportedScheme(scheme) }
        let afterScheme = text[separator.upperBound...]
        let authorityEnd = afterScheme.firstIndex { "/?#".contains($0) } ?? afterScheme.endIndex
        let authority = afterScheme[..<authorityEnd]
        try Self.checkRest(afterScheme[authorityEnd...])
        guard !authority.contains("@") else { throw .unexpectedUserInfo }

        let host: Substring
        let portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw .invalidHost(String(authority)) }
            host = authority[authority.index(after: authority.startIndex)..<close]
            guard host.contains(":"), host.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else {
                throw .invalidHost(String(authority[...close]))
            }
            let rest = authority[authority.index(after: close)...]
            if rest.isEmpty {
                portText = nil
            } else if rest.hasPrefix(":") {
                portText = rest.dropFirst()
            } else {
                throw .invalidPort(String(rest))
            }
        } else {
            let colons = authority.count { $0 == ":" }
            if colons > 1 { throw .unbracketedIPv6Address(String(authority)) }
            if let colon = authority.firstIndex(of: ":") {
                host = authority[..<colon]
                portText = authority[authority.index(after: colon)...]
            } else {
                host = authority
                portText = nil
            }
            guard !host.isEmpty else { throw .missingHost }
            guard host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-._".contains($0)) }) else {
                throw .invalidHost(String(host))
            }
        }
        guard !host.isEmpty else { throw .missingHost }
        var port = Self.defaultWebSocketPort
        if let portText {
            guard portText.allSatisfy(\.isASCII), portText.allSatisfy(\.isNumber), portText.count <= 5,
                let number = Int(portText), (1...65_535).contains(number)
            else { throw .invalidPort(String(portText)) }
            port = number
        }
        self.init(.webSocket(host: String(host), port: port))
    }

    /// The `ws://host:port` URL of a WebSocket endpoint (an IPv6 host in brackets); `nil` for an
    /// in-process one. `SyncEndpoint(url:)` reads it back to the same endpoint.
    public var url: String? {
        guard case .webSocket(let host, let port) = kind else { return nil }
        return host.contains(":") ? "ws://[\(host)]:\(port)" : "ws://\(host):\(port)"
    }

    /// Refuses what follows the authority unless it is empty or a single `/`.
    private static func checkRest(_ rest: Substring) throws(SyncEndpointURLError) {
        guard !rest.isEmpty, rest != "/" else { return }
        let body =
            rest.hasPrefix("/") && rest.dropFirst().first.map({ "?#".contains($0) }) == true ? rest.dropFirst() : rest
        switch body.first {
        case "?":
            let end = body.firstIndex(of: "#") ?? body.endIndex
            throw .unexpectedQuery(String(body[..<end]))
        case "#": throw .unexpectedFragment(String(body))
        default:
            let end = body.firstIndex { "?#".contains($0) } ?? body.endIndex
            throw .unexpectedPath(String(body[..<end]))
        }
    }
}
