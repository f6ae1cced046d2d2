import SyncStorage
import SyncWire
import TestSupport
import Testing

@testable import SyncServer

/// Group commit across sessions (`ServerCore+GroupCommit`): uploads of different sessions waiting for one
/// partition share one `PartitionStore.append`, each acknowledged only once that append returned.
@Suite(.timeLimit(.minutes(5))) struct GroupCommitTests {
    /// `count` clients bound to partition "p" with client files 1…count (session 1 each), and the store
    /// holding its appends; client 1's upload is in the store's held append and the others' wait for the
    /// next commit when it returns.
    private func uploadsWaitingBehindAHeldAppend(
        _ count: Int
    ) async throws -> (server: SyncServer, store: ControllableStore, clients: [TestClient]) {
        let store = ControllableStore()
        let server = try await SyncServer.embedded(configuration: .init(store: store))
        var clients: [TestClient] = []
        for index in 1...count {
            let client = try await TestClient.welcomed(to: server)
            _ = try await client.bind(1, clientFileID: UInt64(index))
            clients.append(client)
        }
        await store.setHolds(reads: false, appends: true)
        clients[0].upload(1, from: 1, [bytes(1)])
        try await waitUntil("client 1's upload waits in its append") { await store.heldAppendCount == 1 }
        for (index, client) in clients.enumerated().dropFirst() {
            // Two changesets each, so that a batch's versions interleave nothing.
            client.upload(1, from: 1, [bytes(UInt8(10 * index)), bytes(UInt8(10 * index + 1), count: 7)])
        }
        try await waitUntil("the other uploads wait for the next commit") {
            await server.core.queuedUploadCount(in: "p") == count - 1
        }
        return (server, store, clients)
    }

    @Test("uploads of several sessions waiting for one partition are stored with one append, each acknowledged")
    func waitingUploadsShareOneAppend() async throws {
        let (server, store, clients) = try await uploadsWaitingBehindAHeldAppend(5)
        await store.setHolds(reads: false, appends: false)
        await store.releaseHeldAppends(failing: false)

        // Every client receives versions 1…9 in order: its own acknowledged, the others' bytes.
        var acknowledged: [UInt64: [UInt64]] = [:]  // client file → client versions acknowledged
        for (index, client) in clients.enumerated() {
            let entries = try await client.nextEntries(9)
            #expect(entries.map(\.serverVersion) == Array(1...9), "client \(index + 1)")
            for entry in entries {
                if case .acknowledged(_, let clientVersion) = entry {
                    acknowledged[UInt64(index + 1), default: []].append(clientVersion)
                }
            }
        }
        #expect(acknowledged == [1: [1], 2: [1, 2], 3: [1, 2], 4: [1, 2], 5: [1, 2]])

        // Two appends for five uploads: client 1's alone, then the four that waited meanwhile.
        let calls = await store.appendCalls
        #expect(calls.count == 2)
        #expect(calls.map(\.count) == [1, 8])

        // The log: versions 1…9, each client file's client versions in order, its bytes as uploaded.
        let log = try await server.changesets(in: "p")
        #expect(log.map(\.serverVersion) == Array(1...9))
        for clientFile in UInt64(1)...5 {
            let own = log.filter { $0.clientFileID == clientFile }
            #expect(own.map(\.clientVersion) == (clientFile == 1 ? [1] : [1, 2]), "client file \(clientFile)")
            let base = UInt8(10 * (clientFile - 1))
            let data = clientFile == 1 ? [bytes(1)] : [bytes(base), bytes(base + 1, count: 7)]
            #expect(own.map(\.data) == data, "client file \(clientFile)")
        }
    }

    @Test("an append that fails fails every upload of its batch: none is acknowledged or in the log")
    func aFailingAppendAcknowledgesNoneOfItsBatch() async throws {
        let (server, store, clients) = try await uploadsWaitingBehindAHeldAppend(4)
        // Client 1's append succeeds; the batch of the three that waited, held in its append in turn, fails.
        await store.releaseHeldAppends(failing: false)
        try await waitUntil("the batch's append waits") {
            let calls = await store.appendCalls.count
            let held = await store.heldAppendCount
            return calls == 2 && held == 1
        }
        await store.setHolds(reads: false, appends: false)
        await store.releaseHeldAppends(failing: true)

        #expect(try await clients[0].nextDownload().entries == [.acknowledged(serverVersion: 1, clientVersion: 1)])
        for client in clients.dropFirst() {
            // Its own session fails (retry later), and it receives no acknowledgement before that.
            var downloads: [Download] = []
            var error: ProtocolError?
            while error == nil {
                switch try await client.next() {
                case .error(let failure): error = failure
                case .download(let download): downloads.append(download)
                default: break
                }
            }
            #expect(error?.code == .internalError)
            #expect(error?.retryAfterMilliseconds != nil)
            #expect(
                !downloads.flatMap(\.entries).contains {
                    if case .acknowledged = $0 { return true } else { return false }
                })
        }
        #expect(await store.appendCalls.count == 2)  // the three in one append
        #expect(await store.appendCalls.last?.count == 6)
        #expect(try await server.changesets(in: "p").map(\.clientFileID) == [1])

        // The partition goes on: a retry stores them.
        _ = try await clients[1].bind(1, clientFileID: 2)
        clients[1].upload(1, from: 1, [bytes(10), bytes(11, count: 7)])
        #expect(
            try await clients[1].nextEntries(2) == [
                .acknowledged(serverVersion: 2, clientVersion: 1), .acknowledged(serverVersion: 3, clientVersion: 2),
            ])
    }

    @Test("a client file's next upload queued beside its previous one is stored by the next append, after it")
    func oneUploadPerClientFilePerAppend() async throws {
        let store = ControllableStore()
        let server = try await SyncServer.embedded(configuration: .init(store: store))
        let first = try await TestClient.welcomed(to: server)
        let second = try await TestClient.welcomed(to: server)
        let sameFile = try await TestClient.welcomed(to: server)  // another connection of client file 2
        _ = try await first.bind(1, clientFileID: 1)
        _ = try await second.bind(1, clientFileID: 2)
        _ = try await sameFile.bind(1, clientFileID: 2)
        await store.setHolds(reads: false, appends: true)
        first.upload(1, from: 1, [bytes(1)])
        try await waitUntil("client file 1's upload waits in its append") { await store.heldAppendCount == 1 }
        second.upload(1, from: 1, [bytes(21), bytes(22)])
        try await waitUntil("client file 2's upload is queued") { await server.core.queuedUploadCount(in: "p") == 1 }
        sameFile.upload(1, from: 3, [bytes(23)])  // follows the upload queued before it
        try await waitUntil("its next upload is queued") { await server.core.queuedUploadCount(in: "p") == 2 }
        await store.setHolds(reads: false, appends: false)
        await store.releaseHeldAppends(failing: false)

        // Client file 2's versions 1…3 acknowledged to both of its sessions, in order.
        for client in [second, sameFile] {
            let own = try await client.nextEntries(4).filter {
                if case .acknowledged = $0 { return true } else { return false }
            }
            #expect(
                own == [
                    .acknowledged(serverVersion: 2, clientVersion: 1),
                    .acknowledged(serverVersion: 3, clientVersion: 2),
                    .acknowledged(serverVersion: 4, clientVersion: 3),
                ])
        }
        #expect(await store.appendCalls.map { $0.map(\.clientVersion) } == [[1], [1, 2], [3]])
        let log = try await server.changesets(in: "p")
        #expect(log.map(\.clientFileID) == [1, 2, 2, 2])
        #expect(log.map(\.clientVersion) == [1, 1, 2, 3])
    }
}
