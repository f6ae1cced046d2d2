/// The HTTP/1.1 upgrade that opens a WebSocket connection (RFC 6455 §4), both sides.
///
/// The server accepts a `GET` request with `Upgrade: websocket`, a `Connection` header containing the
/// `upgrade` token, `Sec-WebSocket-Version: 13` and a `Sec-WebSocket-Key` that is the Base64 of 16 bytes,
/// and answers `101 Switching Protocols` with `Sec-WebSocket-Accept` = Base64(SHA-1(key ‖ GUID)). A
/// request that is not one gets `400 Bad Request` (or `426 Upgrade Required` for another version) and the
/// connection is closed. Header names are case-insensitive; the head is at most `maximumHeadBytes`.
enum WebSocketHandshake {
    /// The GUID RFC 6455 §1.3 appends to the key.
    static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    /// The `Sec-WebSocket-Accept` value for `key`.
    static func acceptValue(forKey key: String) -> String {
        Base64.encode(SHA1.digest(Array((key + guid).utf8)))
    }

    /// Where an HTTP head (request or response line and headers) ends in `bytes`: the index just past the
    /// blank line, or `nil` if it has not arrived yet.
    static func headEnd(in bytes: ArraySlice<UInt8>) -> Int? {
        guard bytes.count >= 4 else { return nil }
        var index = bytes.startIndex
        while index + 3 < bytes.endIndex {
            if bytes[index] == 13, bytes[index + 1] == 10, bytes[index + 2] == 13, bytes[index + 3] == 10 {
                return index + 4
            }
            index += 1
        }
        return nil
    }

    /// A parsed HTTP head: the first line's parts and the headers (names lowercased).
    struct Head {
        var startLine: [Substring]
        var headers: [String: String]

        /// Parses `bytes` (the head, blank line included); `nil` when it is not valid HTTP/1.1 head text.
        init?(_ bytes: ArraySlice<UInt8>) {
            guard let text = String(validating: bytes, as: UTF8.self) else { return nil }
            var lines = text.split(separator: "\r\n", omittingEmptySubsequences: false)
            while lines.last?.isEmpty == true { lines.removeLast() }
            guard let first = lines.first else { return nil }
            startLine = first.split(separator: " ", maxSplits: 2)
            headers = [:]
            for line in lines.dropFirst() {
                guard let colon = line.firstIndex(of: ":"), colon != line.startIndex else { return nil }
                let name = line[..<colon].lowercased()
                let value = line[line.index(after: colon)...].trimmingSpaces
                // Repeated headers are joined with commas, as HTTP allows for list-valued ones.
                headers[name] = headers[name].map { "\($0), \(value)" } ?? value
            }
        }

        func has(_ name: String, token: String) -> Bool {
            guard let value = headers[name] else { return false }
            return value.split(separator: ",").contains { $0.trimmingSpaces.lowercased() == token }
        }
    }

    /// What the server makes of a client's request head.
    enum ServerDecision: Equatable {
        /// Upgrade: send `response`.
        case accept(response: [UInt8])
        /// Refuse: send `response` and close.
        case refuse(response: [UInt8], reason: String)
    }

    /// The server's answer to the request head `bytes`; a request whose `Origin` `originPolicy` does
    /// not allow gets `403 Forbidden`.
    static func answer(
        request bytes: ArraySlice<UInt8>, originPolicy: WebSocketOriginPolicy = .anyOrigin
    ) -> ServerDecision {
        guard let head = Head(bytes), head.startLine.count == 3 else {
            return .refuse(response: response(400, "Bad Request"), reason: "not an HTTP request")
        }
        guard head.startLine[0] == "GET", head.startLine[2] == "HTTP/1.1" else {
            return .refuse(response: response(400, "Bad Request"), reason: "not an HTTP/1.1 GET request")
        }
        guard head.headers["host"] != nil, head.has("upgrade", token: "websocket"),
            head.has("connection", token: "upgrade")
        else {
            return .refuse(response: response(400, "Bad Request"), reason: "not a WebSocket upgrade request")
        }
        guard head.headers["sec-websocket-version"] == "13" else {
            return .refuse(
                response: response(426, "Upgrade Required", headers: ["Sec-WebSocket-Version: 13"]),
                reason: "unsupported WebSocket version \(head.headers["sec-websocket-version"] ?? "(none)")")
        }
        guard let key = head.headers["sec-websocket-key"], Base64.decode(key)?.count == 16 else {
            return .refuse(response: response(400, "Bad Request"), reason: "a missing or malformed Sec-WebSocket-Key")
        }
        guard originPolicy.allows(origin: head.headers["origin"]) else {
            return .refuse(response: response(403, "Forbidden"), reason: "a web page of an origin not allowed")
        }
        return .accept(
            response: response(
                101, "Switching Protocols",
                headers: [
                    "Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Accept: \(acceptValue(forKey: key))",
                ]))
    }

    /// The client's request for `host:port`, with `key` (the Base64 of 16 random bytes).
    static func request(host: String, port: Int, key: String) -> [UInt8] {
        let authority = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        let lines = [
            "GET / HTTP/1.1", "Host: \(authority)", "Upgrade: websocket", "Connection: Upgrade",
            "Sec-WebSocket-Key: \(key)", "Sec-WebSocket-Version: 13", "", "",
        ]
        return Array(lines.joined(separator: "\r\n").utf8)
    }

    /// Checks the server's response head to a request made with `key` (offering no extension and no
    /// subprotocol); the reason it is refused, or `nil`.
    static func refusal(ofResponse bytes: ArraySlice<UInt8>, key: String) -> String? {
        guard let head = Head(bytes), head.startLine.count >= 2, head.startLine[0] == "HTTP/1.1" else {
            return "the server's answer is not HTTP/1.1"
        }
        guard head.startLine[1] == "101" else {
            return "the server answered \(head.startLine.dropFirst().joined(separator: " ")) instead of upgrading"
        }
        guard head.has("upgrade", token: "websocket"), head.has("connection", token: "upgrade") else {
            return "the server's 101 answer is not a WebSocket upgrade"
        }
        guard head.headers["sec-websocket-accept"] == acceptValue(forKey: key) else {
            return "the server's Sec-WebSocket-Accept does not match the key"
        }
        // The client offers no extension and no subprotocol: a server that names one would speak a
        // framing or a protocol this side does not know (RFC 6455 §4.1, the client fails the connection).
        if let extensions = head.headers["sec-websocket-extensions"] {
            return "the server's 101 answer names an extension the client did not offer (\(extensions))"
        }
        if let subprotocol = head.headers["sec-websocket-protocol"] {
            return "the server's 101 answer names a subprotocol the client did not offer (\(subprotocol))"
        }
        return nil
    }

    static func response(_ status: Int, _ text: String, headers: [String] = []) -> [UInt8] {
        var lines = ["HTTP/1.1 \(status) \(text)"] + headers
        if status != 101 { lines += ["Content-Length: 0", "Connection: close"] }
        return Array((lines + ["", ""]).joined(separator: "\r\n").utf8)
    }
}

extension Substring {
    fileprivate var trimmingSpaces: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
