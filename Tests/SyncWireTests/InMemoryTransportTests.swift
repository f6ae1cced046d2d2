import SyncStreams
import Testing

@testable import SyncWire

/// An acceptor that keeps the server sides it is given, or refuses them.
private final class RecordingAcceptor: SyncConnectionAcceptor {
    let accepts: Bool
    private let accepted = Locked<[any SyncServerConnection]>([])

    init(accepts: Bool = true) { self.accepts = accepts }

    func accept(_ connection: any SyncServerConnection) -> Bool {
        if accepts { accepted.withLock { $0.append(connection) } }
        return accepts
    }

    var connections: [any SyncServerConnection] { accepted.withLock { $0 } }
}

@Suite("In-memory transport", .timeLimit(.minutes(5)))
struct InMemoryTransportTests {
    @Test("opens, carries messages both ways in order, and closes from the client")
    func roundTrip() async throws {
        let acceptor = RecordingAcceptor()
        let client = InMemoryTransport().connect(to: .inProcess(acceptor))
        let server = try #require(acceptor.connections.first)
        client.send(.ping(id: 1))
        client.send(.ping(id: 2))
        server.send(.pong(id: 1))
        server.send(.pong(id: 2))
        client.close()
        client.close()  // idempotent
        server.send(.pong(id: 3))  // after the close: dropped

        var events: [SyncTransportEvent] = []
        for await event in client.events { events.append(event) }
        #expect(events == [.opened, .message(.pong(id: 1)), .message(.pong(id: 2)), .closed(nil)])
        var incoming: [ClientMessage] = []
        for await message in server.incoming { incoming.append(message) }
        #expect(incoming == [.ping(id: 1), .ping(id: 2)])
    }

    @Test("a close from the server is a lost connection for the client")
    func serverCloses() async {
        let acceptor = RecordingAcceptor()
        let client = InMemoryTransport().connect(to: .inProcess(acceptor))
        acceptor.connections.first?.close()
        client.send(.ping(id: 1))  // after the close: dropped
        var events: [SyncTransportEvent] = []
        for await event in client.events { events.append(event) }
        #expect(events == [.opened, .closed(.connectionLost("the server closed the connection"))])
    }

    @Test("a stopped acceptor and a network endpoint are refused at once")
    func refused() async {
        let stopped = InMemoryTransport().connect(to: .inProcess(RecordingAcceptor(accepts: false)))
        var events: [SyncTransportEvent] = []
        for await event in stopped.events { events.append(event) }
        #expect(events.count == 1)
        guard case .closed(.refused)? = events.first else {
            Issue.record("expected a refusal, got \(events)")
            return
        }
        let network = InMemoryTransport().connect(to: .webSocket(host: "127.0.0.1", port: 1))
        for await event in network.events { events.append(event) }
        guard events.count == 2, case .closed(.refused)? = events.last else {
            Issue.record("expected a refusal, got \(events)")
            return
        }
    }

    @Test("endpoints are equal by server identity or by address")
    func endpointIdentity() {
        let a = RecordingAcceptor()
        let b = RecordingAcceptor()
        #expect(SyncEndpoint.inProcess(a) == .inProcess(a))
        #expect(SyncEndpoint.inProcess(a) != .inProcess(b))
        #expect(SyncEndpoint.webSocket(host: "h", port: 1) == .webSocket(host: "h", port: 1))
        #expect(SyncEndpoint.webSocket(host: "h", port: 1) != .webSocket(host: "h", port: 2))
        #expect(SyncEndpoint.inProcess(a) != .webSocket(host: "h", port: 1))
        #expect(Set([SyncEndpoint.inProcess(a), .inProcess(a), .inProcess(b)]).count == 2)
        #expect(SyncEndpoint.webSocket(host: "h", port: 1).description == "ws://h:1")
    }
}
