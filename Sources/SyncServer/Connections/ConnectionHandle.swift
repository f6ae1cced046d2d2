import SyncWire
import Synchronization

/// The server's handle on one accepted connection: its number, its transport, and whether the server
/// closed it.
final class ConnectionHandle: Sendable {
    /// Unique within a server, from 1.
    let id: UInt64
    private let transport: any SyncServerConnection
    /// The client's address, for a network connection.
    let peer: String?
    private let closedByServer = Atomic<Bool>(false)

    init(id: UInt64, transport: any SyncServerConnection) {
        self.id = id
        self.transport = transport
        peer = (transport as? any PeerAddressed)?.peerAddress
    }

    /// The client's messages, in order.
    var incoming: AsyncStream<ClientMessage> { transport.incoming }

    /// Whether the server closed the connection (a client's close does not set it).
    var isClosed: Bool { closedByServer.load(ordering: .acquiring) }

    /// Sends `message` unless the server closed the connection.
    func send(_ message: ServerMessage) {
        guard !isClosed else { return }
        transport.send(message)
    }

    /// Suspends until the client has taken enough of what was sent that more may be sent, or the
    /// connection is closed (the transport's flow control).
    func writable() async {
        guard !isClosed else { return }
        await transport.writable()
    }

    /// Closes the connection once; the client sees `.closed(.connectionLost)` unless it closed first.
    func close() {
        guard !closedByServer.exchange(true, ordering: .acquiringAndReleasing) else { return }
        transport.close()
    }
}
