import SyncServer
import SyncWire
import TestSupport
import Testing

@Suite("Connection lifecycle", .timeLimit(.minutes(5)))
struct ConnectionLifecycleTests {
    private let lost = SyncTransportError.connectionLost("the server closed the connection")

    @Test func connectionCountFollowsOpenConnections() async throws {
        let server = try await SyncServer.embedded()
        #expect(server.connectionCount == 0)
        let a = try await TestClient.welcomed(to: server)
        let b = try await TestClient.welcomed(to: server)
        #expect(server.connectionCount == 2)
        a.close()
        try await waitUntil("a's connection to be forgotten") { server.connectionCount == 1 }
        b.close()
        try await waitUntil("b's connection to be forgotten") { server.connectionCount == 0 }
    }

    @Test func dropAllConnectionsClosesThemAndKeepsAccepting() async throws {
        let server = try await SyncServer.embedded()
        let a = try await TestClient.welcomed(to: server)
        let b = try await TestClient.welcomed(to: server)
        _ = try await a.bind(clientFileID: 1)
        _ = try await b.bind(clientFileID: 2)

        server.dropAllConnections()
        #expect(server.connectionCount == 0)
        try await a.expectClosed(lost)
        try await b.expectClosed(lost)

        // a and b are closed, so what they received proves nothing: the server itself must unbind them.
        try await waitUntil("the dropped sessions to be unbound", seconds: 20) {
            await server.boundSessionCount(in: "p") == 0
        }

        let c = try await TestClient.welcomed(to: server)
        #expect(server.connectionCount == 1)
        _ = try await c.bind(clientFileID: 3)
        #expect(await server.boundSessionCount(in: "p") == 1)
        c.upload(from: 1, [bytes(1)])
        #expect(try await c.nextDownload().entries == [.acknowledged(serverVersion: 1, clientVersion: 1)])
        #expect(await server.boundSessionCount(in: "p") == 1)
    }

    @Test func stopClosesEveryConnectionAndRefusesNewOnes() async throws {
        let server = try await SyncServer.embedded()
        let a = try await TestClient.welcomed(to: server)
        _ = try await a.bind(clientFileID: 1)
        a.upload(from: 1, [bytes(1)])
        _ = try await a.nextDownload()

        await server.stop()
        #expect(server.connectionCount == 0)
        try await a.expectClosed(lost)

        let late = InMemoryTransport().connect(to: server.endpoint)
        var events: [SyncTransportEvent] = []
        for await event in late.events { events.append(event) }
        #expect(events.count == 1)
        guard case .closed(.refused?) = events.first else {
            Issue.record("expected a refusal, got \(events)")
            return
        }
        #expect(try await server.changesets(in: "p").count == 1)
        await server.stop()
    }

    @Test func aClientLeavingMidStreamDoesNotDisturbOthers() async throws {
        let server = try await SyncServer.embedded(configuration: .init(maximumDownloadMessageBytes: 4))
        let writer = try await TestClient.welcomed(to: server)
        let leaver = try await TestClient.welcomed(to: server)
        let stayer = try await TestClient.welcomed(to: server)
        _ = try await writer.bind(clientFileID: 1)
        _ = try await leaver.bind(clientFileID: 2)
        _ = try await stayer.bind(clientFileID: 3)

        for round in 0..<20 {
            writer.upload(from: UInt64(round * 3 + 1), [bytes(1), bytes(2), bytes(3)])
            if round == 5 { leaver.close() }
        }
        var seen: [DownloadEntry] = []
        while seen.count < 60 { seen += try await stayer.nextDownload().entries }
        #expect(seen.map(\.serverVersion) == Array(1...60))
        try await stayer.expectNothingPending()
        try await waitUntil("the leaver to be forgotten") { server.connectionCount == 2 }
    }

    @Test func serverSideErrorCloseUnbindsTheSessions() async throws {
        let server = try await SyncServer.embedded()
        let a = try await TestClient.welcomed(to: server)
        let b = try await TestClient.welcomed(to: server)
        _ = try await a.bind(clientFileID: 1)
        _ = try await b.bind(clientFileID: 2)
        #expect(await server.boundSessionCount(in: "p") == 2)
        b.send(.hello(Hello(credential: .anonymous)))
        #expect(try await b.nextError().code == .malformedMessage)
        try await b.expectClosed(lost)
        // b is closed, so "b received nothing" could not fail: the server must have unbound b's session.
        // The error close unbinds at once (before the connection's end is noticed), so no wait is needed
        // once the error arrived; a's session stays bound and keeps receiving.
        #expect(await server.boundSessionCount(in: "p") == 1)
        a.upload(from: 1, [bytes(1)])
        #expect(try await a.nextDownload().entries == [.acknowledged(serverVersion: 1, clientVersion: 1)])
        #expect(await server.boundSessionCount(in: "p") == 1)
    }
}
