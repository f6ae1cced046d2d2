import SyncServer
import SyncWire
import TestSupport
import Testing

/// The server's configured limits, each at its edge: the last one allowed, the first one refused with its
/// typed answer, and room again once something is released.
@Suite("Limits", .timeLimit(.minutes(5)))
struct LimitsTests {
    @Test(
        "maximumConnections over real sockets: the third of two allowed is refused with 503 before the upgrade, and admitted once one leaves"
    )
    func maximumConnections() async throws {
        let server = try await SyncServer.listeningForTests(configuration: .init(maximumConnections: 2))
        let endpoint = try #require(server.webSocketEndpoint)
        let first = try await TestClient.welcomed(on: WebSocketTransport.forTests().connect(to: endpoint))
        let second = try await TestClient.welcomed(on: WebSocketTransport.forTests().connect(to: endpoint))

        var third = WebSocketTransport.forTests().connect(to: endpoint).events.makeAsyncIterator()
        let refusal = await third.next()
        guard case .closed(.refused(let reason)) = refusal else {
            Issue.record("expected the third connection to be refused, got \(String(describing: refusal))")
            return
        }
        #expect(reason.contains("503"), "\(reason)")
        #expect(server.connectionCount == 2)
        try await second.expectNothingPending()

        first.close()
        try await waitUntil("the server to notice the first left") { server.connectionCount == 1 }
        let fourth = try await TestClient.welcomed(on: WebSocketTransport.forTests().connect(to: endpoint))
        try await fourth.expectNothingPending()
        await server.stop()
    }

    @Test("maximumConnections in process: the third of two allowed is refused")
    func maximumConnectionsInProcess() async throws {
        let server = try await SyncServer.embedded(configuration: .init(maximumConnections: 2))
        _ = try await TestClient.welcomed(to: server)
        _ = try await TestClient.welcomed(to: server)
        let third = InMemoryTransport().connect(to: server.endpoint)
        var events = third.events.makeAsyncIterator()
        guard case .closed(.refused) = await events.next() else {
            Issue.record("expected .refused")
            return
        }
        await server.stop()
    }

    @Test("maximumSessionsPerConnection: a bind beyond it is serverBusy for that session; unbinding makes room")
    func sessionsPerConnection() async throws {
        let server = try await SyncServer.embedded(configuration: .init(maximumSessionsPerConnection: 2))
        let client = try await TestClient.welcomed(to: server)
        _ = try await client.bind(1, partition: "a", clientFileID: 1)
        _ = try await client.bind(2, partition: "b", clientFileID: 1)
        client.send(.bind(Bind(sessionID: 3, partition: "c", clientFileID: 1, downloadedVersion: 0)))
        let busy = try await client.nextError()
        #expect(busy.code == .serverBusy)
        #expect(busy.sessionID == 3)
        #expect(busy.retryAfterMilliseconds == 5000)
        // Another connection has its own allowance.
        let other = try await TestClient.welcomed(to: server)
        _ = try await other.bind(1, partition: "c", clientFileID: 2)

        client.send(.unbind(sessionID: 2))
        #expect(try await client.next() == .unbound(sessionID: 2))
        _ = try await client.bind(3, partition: "c", clientFileID: 1)
        await server.stop()
    }

    @Test("a partition name of 1,024 UTF-8 bytes binds; 1,025 is malformedMessage for that session, counted in bytes")
    func partitionNameLength() async throws {
        let server = try await SyncServer.embedded()
        let client = try await TestClient.welcomed(to: server)
        _ = try await client.bind(1, partition: String(repeating: "p", count: 1024), clientFileID: 1)
        for name in [String(repeating: "p", count: 1025), String(repeating: "é", count: 513), ""] {
            client.send(.bind(Bind(sessionID: 2, partition: name, clientFileID: 1, downloadedVersion: 0)))
            let error = try await client.nextError()
            #expect(error.code == .malformedMessage, "\(name.utf8.count) bytes")
            #expect(error.sessionID == 2)
        }
        // The connection and its other session carry on.
        try await client.expectNothingPending()
        await server.stop()
    }

    @Test("an API key of 1,024 bytes is checked; one of 1,025 is authenticationFailed before any lookup, and closes")
    func apiKeyLength() async throws {
        let allowed = String(repeating: "k", count: 1024)
        let tooLong = String(repeating: "k", count: 1025)
        let server = try await SyncServer.embedded(
            configuration: .init(authentication: .apiKeys([allowed: ["*"], tooLong: ["*"]])))
        _ = try await TestClient.welcomed(to: server, credential: .apiKey(allowed))
        let client = try await TestClient(server)
        client.send(.hello(Hello(credential: .apiKey(tooLong))))
        let error = try await client.nextError()
        #expect(error.code == .authenticationFailed)
        #expect(error.message.contains("1024"), "\(error.message)")
        try await client.expectClosed(.connectionLost("the server closed the connection"))
        await server.stop()
    }
}
