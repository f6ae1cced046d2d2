import Synchronization

extension SyncServer {
    /// What a front end of another transport serving an embedded server (`sync-server-nio`'s
    /// `NIOSyncServer`) saw on its client sockets: the counts `prometheusMetrics` shows for the root
    /// listener's sockets on a networked server.
    public enum FrontEndEvent: Sendable, Hashable {
        /// `bytes` read from a client socket (TLS records, HTTP heads and frames, as they arrived):
        /// `sync_received_bytes_total`.
        case received(bytes: Int)
        /// `bytes` written to a client socket: `sync_sent_bytes_total`.
        case sent(bytes: Int)
        /// A connection closed as soon as it was accepted, because too many were in their opening handshake:
        /// `sync_connections_refused_total{reason="handshaking_limit"}`.
        case refusedHandshaking
        /// A connection closed because its opening handshake failed (too slow, not a WebSocket request):
        /// `sync_connections_refused_total{reason="bad_handshake"}`.
        case refusedHandshake
    }

    /// Counts `event` in the server's metrics: one relaxed atomic add, from any thread (an event loop's).
    ///
    /// For an embedded server only: a server from `listening` counts its own sockets, and an event counted
    /// here as well would be counted twice. Negative byte counts are ignored.
    public func count(_ event: FrontEndEvent) {
        let network = metrics.network
        switch event {
        case .received(let bytes): if bytes > 0 { network.bytesReceived.add(bytes, ordering: .relaxed) }
        case .sent(let bytes): if bytes > 0 { network.bytesSent.add(bytes, ordering: .relaxed) }
        case .refusedHandshaking: network.refusedHandshaking.add(1, ordering: .relaxed)
        case .refusedHandshake: network.refusedHandshake.add(1, ordering: .relaxed)
        }
    }
}
