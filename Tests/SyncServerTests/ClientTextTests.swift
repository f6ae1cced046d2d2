import SyncServer
import SyncStreams
import SyncWire
import Testing

/// Issue 23, item 7: what the server says about clients in its log is escaped, and what it says to
/// clients about its own failures carries no internal detail (paths, errno text, store errors).
@Suite("Client text and internal detail", .timeLimit(.minutes(5)))
struct ClientTextTests {
    @Test("a store failure reaches the client as internalError without the store's error text")
    func noInternalDetail() async throws {
        let store = ControllableStore()
        await store.setFailures(loads: true, appends: false)
        let server = try await SyncServer.embedded(configuration: .init(store: store))
        let client = try await TestClient.welcomed(to: server)
        client.connection.send(.bind(Bind(sessionID: 1, partition: "p", clientFileID: 1, downloadedVersion: 0)))
        let event = try await client.nextEvent()
        guard case .message(.error(let error)) = event else {
            Issue.record("expected an error, got \(event)")
            return
        }
        #expect(error.code == .internalError)
        #expect(!error.message.contains("Failure"), "\(error.message)")
        await server.stop()
    }

    @Test("a partition name with a newline and an escape sequence is escaped in the server's log")
    func logEscaped() async throws {
        let lines = Locked<[String]>([])
        let configuration = SyncServer.Configuration(
            authentication: .apiKeys(["k": ["allowed"]]), logLevel: .info,
            logger: { event in lines.withLock { $0.append(event.message) } })
        let server = try await SyncServer.embedded(configuration: configuration)
        let client = try await TestClient.welcomed(to: server, credential: .apiKey("k"))
        let name = "x\nFORGED info sync.server: connection 99 welcomed\u{1B}[2J"
        client.connection.send(.bind(Bind(sessionID: 1, partition: name, clientFileID: 1, downloadedVersion: 0)))
        _ = try await client.nextEvent()  // permissionDenied
        let logged = lines.withLock { $0 }.filter { $0.contains("FORGED") }
        #expect(!logged.isEmpty)
        for line in logged {
            #expect(!line.contains("\n") && !line.contains("\u{1B}"), "\(line.debugDescription)")
        }
        await server.stop()
    }
}
