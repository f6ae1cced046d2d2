extension WebSocketHandshake {
    /// The request target of a plain HTTP `GET` — HTTP/1.0 or 1.1 without an `Upgrade` header, such as a
    /// metrics scraper's or a health check's — or `nil` for anything else (a WebSocket upgrade included).
    static func plainGetTarget(request bytes: ArraySlice<UInt8>) -> String? {
        guard let head = Head(bytes), head.startLine.count == 3, head.startLine[0] == "GET",
            head.startLine[2] == "HTTP/1.1" || head.startLine[2] == "HTTP/1.0", head.headers["upgrade"] == nil
        else { return nil }
        return String(head.startLine[1])
    }
}
