import SyncServer
import TestSupport
import Testing

@testable import SyncWire

/// The server trusts no client: client files belong to credentials, client versions follow each other,
/// and a client that does not read cannot make the server hold more than a bounded amount for it.
@Suite("Trust", .timeLimit(.minutes(5)))
struct TrustTests {
    private func keyedServer(store: InMemoryPartitionStore = InMemoryPartitionStore()) async throws -> SyncServer {
        try await SyncServer.embedded(
            configuration: .init(store: store, authentication: .apiKeys(["alice": ["*"], "bob": ["*"]])))
    }

    @Test("a client file belongs to the credential that first used it in the partition, also after a restart")
    func clientFileBelongsToItsCredential() async throws {
        let store = InMemoryPartitionStore()
        let server = try await keyedServer(store: store)
        let alice = try await TestClient.welcomed(to: server, credential: .apiKey("alice"))
        _ = try await alice.bind(clientFileID: 7)
        alice.upload(from: 1, [bytes(1)])
        #expect(try await alice.nextDownload().entries == [.acknowledged(serverVersion: 1, clientVersion: 1)])

        let bob = try await TestClient.welcomed(to: server, credential: .apiKey("bob"))
        bob.send(.bind(Bind(sessionID: 1, partition: "p", clientFileID: 7, downloadedVersion: 0)))
        let error = try await bob.nextError()
        #expect(error.code == .foreignClientFile)
        #expect(error.code.isFatal)
        #expect(error.sessionID == 1)
        // Bob's own client file, and the same file id in another partition, are fine.
        #expect(try await bob.bind(2, clientFileID: 8).count == 1)
        #expect(try await bob.bind(3, partition: "q", clientFileID: 7).count == 1)

        // A new server on the same store knows who owns client file 7 from what it stored.
        let restarted = try await keyedServer(store: store)
        let bobAgain = try await TestClient.welcomed(to: restarted, credential: .apiKey("bob"))
        bobAgain.send(.bind(Bind(sessionID: 1, partition: "p", clientFileID: 7, downloadedVersion: 1)))
        #expect(try await bobAgain.nextError().code == .foreignClientFile)
        let aliceAgain = try await TestClient.welcomed(to: restarted, credential: .apiKey("alice"))
        #expect(try await aliceAgain.bind(clientFileID: 7, downloadedVersion: 1).count == 1)
    }

    @Test(
        "client versions must follow each other: a gap after the last integrated one is a client reset (historyLost), one inside an upload badClientVersion; either ends the session"
    )
    func clientVersionsMustNotSkip() async throws {
        let server = try await SyncServer.embedded()
        let client = try await TestClient.welcomed(to: server)
        _ = try await client.bind(clientFileID: 1)
        client.upload(from: 2, [bytes(2)])
        let skipped = try await client.nextError()
        #expect(skipped.code == .clientResetRequired)
        #expect(skipped.clientReset?.reason == .historyLost)
        #expect(skipped.sessionID == 1)
        // The session was ended: it must bind again.
        client.upload(from: 1, [bytes(1)])
        #expect(try await client.nextError().code == .unknownSession)

        _ = try await client.bind(clientFileID: 1)
        client.upload(from: 1, [bytes(1)])
        #expect(try await client.nextDownload().entries == [.acknowledged(serverVersion: 1, clientVersion: 1)])
        client.upload(from: 3, [bytes(3)])
        #expect(try await client.nextError().code == .clientResetRequired)

        _ = try await client.bind(clientFileID: 1, downloadedVersion: 1)
        client.send(
            .upload(
                Upload(
                    sessionID: 1,
                    changesets: [
                        UploadChangeset(clientVersion: 2, data: bytes(2)),
                        UploadChangeset(clientVersion: 4, data: bytes(4)),
                    ])))
        #expect(try await client.nextError().code == .badClientVersion)
        #expect(try await server.changesets(in: "p").map(\.clientVersion) == [1])
    }

    @Test("a client that stops reading is sent no more than the queue's mark, then cut off; others are unaffected")
    func aClientThatDoesNotReadIsBounded() async throws {
        let server = try await SyncServer.embedded()
        let writer = try await TestClient.welcomed(to: server)
        _ = try await writer.bind(clientFileID: 1)
        let changeset = bytes(1, count: 64 * 1024)
        writer.upload(from: 1, Array(repeating: changeset, count: 50))
        _ = try await writer.nextEntries(50)

        // Never reads its events: everything the server sends it stays queued.
        let lowWater = 256 * 1024
        let hardLimit = 512 * 1024
        let stalled = InMemoryTransport(lowWater: lowWater, hardLimit: hardLimit).connect(to: server.endpoint)
        let queue = try #require((stalled as? InMemoryPipe.ClientSide)?.pipe.toClient)
        stalled.send(.hello(Hello(credential: .anonymous)))
        stalled.send(.bind(Bind(sessionID: 1, partition: "p", clientFileID: 2, downloadedVersion: 0)))
        try await waitUntil("the backlog fills the queue to its mark", seconds: 20) { queue.queuedCost > lowWater }
        // Its pump is parked on the queue (waiting for it to drain), so what is queued now is all it sends
        // until the client reads: at most one message past the mark.
        try await waitUntil("its pump parked at the mark", seconds: 20) { queue.drainWaiterCount == 1 }
        let oneMessage = 64 * 1024 + 1024
        #expect(queue.queuedCost <= lowWater + oneMessage)

        // More uploads are forwarded to it (its session is bound); its pump stays parked and sends nothing more.
        writer.upload(from: 51, Array(repeating: changeset, count: 20))
        _ = try await writer.nextEntries(20)
        try await writer.expectNothingPending()
        #expect(queue.drainWaiterCount == 1)
        #expect(queue.queuedCost <= lowWater + oneMessage)

        // A reader is unaffected, and gets everything.
        let reader = try await TestClient.welcomed(to: server)
        let downloads = try await reader.bind(clientFileID: 3)
        #expect(downloads.flatMap(\.entries).count == 70)

        // Pings it never reads answers to push its queue past the hard limit: the server cuts it off.
        #expect(server.connectionCount == 3)
        var pings: UInt64 = 0
        try await waitUntil("the stalled client is cut off") {
            for _ in 0..<1000 {
                pings += 1
                stalled.send(.ping(id: pings))
            }
            return server.connectionCount == 2
        }
        #expect(queue.queuedCost > hardLimit)
        writer.upload(from: 71, [bytes(71)])
        #expect(try await writer.nextDownload().entries == [.acknowledged(serverVersion: 71, clientVersion: 71)])
        #expect(try await reader.nextDownload().entries == [.changeset(serverVersion: 71, data: bytes(71))])
    }
}
