import Synchronization

/// What a `WebSocketListener` counts for metrics: bytes on its sockets and connections it closed before
/// they reached the application. Each count is one relaxed atomic add on the loop's thread; readers
/// (a metrics scrape) load them from any thread.
package final class ListenerCounters: Sendable {
    /// Bytes read from and written to accepted sockets (handshakes, frames, control frames).
    package let bytesReceived = Atomic<Int>(0)
    package let bytesSent = Atomic<Int>(0)
    /// Connections closed as soon as accepted: `limits.maximumHandshakingConnections` were handshaking.
    package let refusedHandshaking = Atomic<Int>(0)
    /// Connections closed as soon as accepted: too few descriptors were left (`limits.reservedDescriptors`).
    package let refusedDescriptors = Atomic<Int>(0)
    /// Upgrade requests refused with `503` because the listener is shutting down.
    package let refusedStopping = Atomic<Int>(0)
    /// Connections whose opening handshake failed (not a WebSocket request, too large, too slow).
    package let refusedHandshake = Atomic<Int>(0)
    /// Plain HTTP requests answered before any upgrade (`/metrics`, `/healthz`).
    package let plainHTTPRequests = Atomic<Int>(0)

    package init() {}
}

/// The answer to a plain HTTP `GET` (no `Upgrade` header) a listener serves before any WebSocket upgrade.
package struct PlainHTTPResponse: Sendable {
    package var status: Int
    package var reason: String
    package var contentType: String
    package var body: String

    package init(status: Int, reason: String, contentType: String = "text/plain; charset=utf-8", body: String) {
        self.status = status
        self.reason = reason
        self.contentType = contentType
        self.body = body
    }

    /// The whole response; the connection closes after it.
    var bytes: [UInt8] {
        let body = Array(self.body.utf8)
        let head = [
            "HTTP/1.1 \(status) \(reason)", "Content-Type: \(contentType)", "Content-Length: \(body.count)",
            "Cache-Control: no-store", "Connection: close", "", "",
        ]
        return Array(head.joined(separator: "\r\n").utf8) + body
    }
}

/// Answers a plain HTTP `GET` for `path` (the request target, query included), or `nil` to refuse it as
/// a bad WebSocket request (`400`).
package typealias PlainHTTPResponder = @Sendable (_ path: String) -> PlainHTTPResponse?
