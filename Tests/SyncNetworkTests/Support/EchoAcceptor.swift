import SyncStreams
import SyncWire

@testable import SyncNetwork

/// A server acceptor for network tests: answers each `ping` with a `pong`, counts connections, and
/// can refuse them.
final class EchoAcceptor: SyncConnectionAcceptor {
    let accepted = Locked(0)
    let refuse: Bool

    init(refuse: Bool = false) { self.refuse = refuse }

    func accept(_ connection: any SyncServerConnection) -> Bool {
        guard !refuse else { return false }
        accepted.withLock { $0 += 1 }
        Task {
            for await message in connection.incoming {
                if case .ping(let id) = message { connection.send(.pong(id: id)) }
            }
        }
        return true
    }
}

/// Starts a listener on a free loopback port with `limits` and `acceptor`.
func startListener(
    limits: WebSocketLimits = WebSocketLimits(), acceptor: EchoAcceptor = EchoAcceptor()
) async throws -> WebSocketListener {
    try await WebSocketListener.start(host: "127.0.0.1", port: 0, limits: limits, acceptor: acceptor)
}
