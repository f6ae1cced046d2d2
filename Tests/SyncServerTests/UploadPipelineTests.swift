import SyncWire
import TestSupport
import Testing

@testable import SyncServer

/// Uploads pipelined per connection (`ServerCore+GroupCommit`): a connection reads on while its upload is
/// committed; its later uploads queue and join the next append; everything else it sends, and its end,
/// waits for its queued uploads; and what it may queue is bounded.
@Suite(.timeLimit(.minutes(5))) struct UploadPipelineTests {
    /// A client bound to partition "p" (client file 1, session 1) whose first upload (client version 1) is
    /// held in the store's append.
    private func clientWithAHeldUpload() async throws -> (
        server: SyncServer, store: ControllableStore, client: TestClient
    ) {
        let store = ControllableStore()
        let server = try await SyncServer.embedded(configuration: .init(store: store))
        let client = try await TestClient.welcomed(to: server)
        _ = try await client.bind(1, clientFileID: 1)
        await store.setHolds(reads: false, appends: true)
        client.upload(1, from: 1, [bytes(1)])
        try await waitUntil("the first upload waits in its append") { await store.heldAppendCount == 1 }
        return (server, store, client)
    }

    private func releaseAppends(of store: ControllableStore) async {
        await store.setHolds(reads: false, appends: false)
        await store.releaseHeldAppends(failing: false)
    }

    @Test(
        "a connection's next uploads are read while its upload is committed, and the next append stores them together")
    func laterUploadsJoinTheNextAppend() async throws {
        let (server, store, client) = try await clientWithAHeldUpload()
        client.upload(1, from: 2, [bytes(2)])
        client.upload(1, from: 3, [bytes(3), bytes(4, count: 9)])
        try await waitUntil("both later uploads are queued while the first is committed") {
            await server.core.queuedUploadCount(in: "p") == 2
        }
        await releaseAppends(of: store)

        // Acknowledged in order, the two later uploads by one append, as one entry.
        #expect(
            try await client.nextEntries(4) == (1...4).map { .acknowledged(serverVersion: $0, clientVersion: $0) })
        #expect(await store.appendCalls.map { $0.map(\.clientVersion) } == [[1], [2, 3, 4]])
        #expect(try await server.changesets(in: "p").map(\.data) == [bytes(1), bytes(2), bytes(3), bytes(4, count: 9)])
        #expect(server.metrics.uploads.load(ordering: .relaxed) == 3)
    }

    @Test(
        "a message other than an upload is handled after the connection's queued uploads: a mark is answered after their acknowledgements"
    )
    func aMarkWaitsForQueuedUploads() async throws {
        let (server, store, client) = try await clientWithAHeldUpload()
        client.upload(1, from: 2, [bytes(2)])
        try await waitUntil("the second upload is queued") { await server.core.queuedUploadCount(in: "p") == 1 }
        client.send(.mark(sessionID: 1, id: 7))
        try await waitUntil("the mark waits for the queued uploads") {
            await server.core.handlersWaitingForUploads == 1
        }
        await releaseAppends(of: store)

        // Were the mark handled at once, it would be answered at once: the session was caught up with version 0.
        var entries: [DownloadEntry] = []
        while entries.count < 2 {
            switch try await client.next() {
            case .download(let download): entries += download.entries
            case let other: Issue.record("\(other) before the acknowledgements")
            }
        }
        #expect(
            entries == [
                .acknowledged(serverVersion: 1, clientVersion: 1), .acknowledged(serverVersion: 2, clientVersion: 2),
            ])
        #expect(try await client.next() == .marked(sessionID: 1, id: 7))
    }

    @Test("a refused upload fails its session only after the uploads the connection queued before it are stored")
    func aRefusalWaitsForQueuedUploads() async throws {
        let (server, store, client) = try await clientWithAHeldUpload()
        client.upload(1, from: 2, [bytes(2)])
        try await waitUntil("the second upload is queued") { await server.core.queuedUploadCount(in: "p") == 1 }
        // Client versions 5 and 7: not consecutive, refused (the session fails).
        let refused = [
            UploadChangeset(clientVersion: 5, data: bytes(5)), UploadChangeset(clientVersion: 7, data: bytes(7)),
        ]
        client.send(.upload(Upload(sessionID: 1, changesets: refused)))
        try await waitUntil("the refusal waits for the queued uploads") {
            await server.core.handlersWaitingForUploads == 1
        }
        await releaseAppends(of: store)

        // Were it refused at once, the session would have failed first and its queued upload been skipped.
        var error: ProtocolError?
        while error == nil {
            if case .error(let failure) = try await client.next() { error = failure }
        }
        #expect(error?.code == .badClientVersion)
        #expect(try await server.changesets(in: "p").map(\.clientVersion) == [1, 2])
    }

    @Test("a connection whose queued uploads hold 8 MiB reads no further message until they are handled")
    func queuedUploadsAreBounded() async throws {
        let (server, store, client) = try await clientWithAHeldUpload()
        let large = bytes(2, count: ServerCore.maximumQueuedUploadBytes)
        client.upload(1, from: 2, [large])  // queued: the upload before it holds 4 bytes
        client.upload(1, from: 3, [bytes(3)])  // queued, then waits: the two before it hold 8 MiB and 4 bytes
        client.upload(1, from: 4, [bytes(4)])  // not read while the one before it waits
        try await waitUntil("the third upload's handler waits") { await server.core.handlersWaitingForUploads == 1 }
        #expect(await server.core.queuedUploadCount(in: "p") == 2)
        await releaseAppends(of: store)

        #expect(
            try await client.nextEntries(4) == (1...4).map { .acknowledged(serverVersion: $0, clientVersion: $0) })
        #expect(try await server.changesets(in: "p").map(\.data) == [bytes(1), large, bytes(3), bytes(4)])
    }

    @Test("a connection that ends with uploads queued has them stored before its session is unbound")
    func anEndingConnectionsQueuedUploadsAreStored() async throws {
        let (server, store, client) = try await clientWithAHeldUpload()
        client.upload(1, from: 2, [bytes(2)])
        try await waitUntil("the second upload is queued") { await server.core.queuedUploadCount(in: "p") == 1 }
        client.close()
        try await waitUntil("the connection's end waits for its queued uploads") {
            await server.core.handlersWaitingForUploads == 1
        }
        await releaseAppends(of: store)
        try await waitUntil("the session is unbound") { await server.core.boundSessionCount(in: "p") == 0 }
        #expect(try await server.changesets(in: "p").map(\.clientVersion) == [1, 2])
    }
}
