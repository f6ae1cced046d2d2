import Synchronization

/// The connections a `NIOSyncServer` accepted that have not upgraded yet (TLS, the HTTP request): past
/// `maximum`, a new one is closed as soon as it is accepted, before a byte is read, as `sync-server`'s
/// `WebSocketLimits.maximumHandshakingConnections`.
final class HandshakingConnections: Sendable {
    /// The most connections in their opening handshake at once.
    let maximum: Int
    private let count = Atomic<Int>(0)

    init(maximum: Int) {
        self.maximum = max(1, maximum)
    }

    /// Connections in their opening handshake now.
    var current: Int { count.load(ordering: .relaxed) }

    /// Admits a connection just accepted, or refuses it (`nil`) when `maximum` are handshaking. The
    /// returned ticket must `end()` once when the connection upgrades or closes.
    func admit() -> Ticket? {
        guard count.wrappingAdd(1, ordering: .relaxed).newValue <= maximum else {
            count.wrappingSubtract(1, ordering: .relaxed)
            return nil
        }
        return Ticket(connections: self)
    }

    /// One admitted connection's place among the handshaking: `end()` frees it, once (a connection that
    /// upgrades and then closes ends it at the upgrade).
    final class Ticket: Sendable {
        private let connections: HandshakingConnections
        private let ended = Atomic<Bool>(false)

        fileprivate init(connections: HandshakingConnections) {
            self.connections = connections
        }

        /// Whether the connection is still in its opening handshake.
        var isHandshaking: Bool { !ended.load(ordering: .relaxed) }

        /// The connection upgraded or closed: no longer handshaking. Later calls do nothing.
        func end() {
            guard !ended.exchange(true, ordering: .relaxed) else { return }
            connections.count.wrappingSubtract(1, ordering: .relaxed)
        }
    }
}
