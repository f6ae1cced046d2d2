import SyncServer
import SyncWire
import TestSupport
import Testing

/// Two servers (front ends) on one `SharedMemoryStore`: conflicts, notifications, re-uploads through the
/// other server, binds and marks past a server's view. Notifications are held back where a test needs a
/// server's view to be stale.
@Suite("Shared store", .timeLimit(.minutes(5)))
struct SharedStoreTests {
    let store = SharedMemoryStore()

    func frontEnds() async throws -> (SyncServer, SyncServer) {
        let configuration = SyncServer.Configuration(store: store, logLevel: .off)
        return (
            try await SyncServer.embedded(configuration: configuration),
            try await SyncServer.embedded(configuration: configuration)
        )
    }

    @Test("an append the store refuses as a conflict is retried after the entries it lacked, under the next version")
    func conflictRefreshRetry() async throws {
        let (serverA, serverB) = try await frontEnds()
        let a = try await TestClient.welcomed(to: serverA)
        let b = try await TestClient.welcomed(to: serverB)
        _ = try await a.bind(clientFileID: 1)
        _ = try await b.bind(clientFileID: 2)
        store.holdNotifications()

        a.upload(from: 1, [bytes(1)])
        #expect(try await a.nextDownload().entries == [.acknowledged(serverVersion: 1, clientVersion: 1)])
        // B does not know version 1: its append at version 1 is refused, it reads version 1, then stores at 2.
        b.upload(from: 1, [bytes(2)])
        #expect(
            try await b.nextEntries(2) == [
                .changeset(serverVersion: 1, data: bytes(1)), .acknowledged(serverVersion: 2, clientVersion: 1),
            ])
        #expect(store.conflicts == 1)
        #expect(store.log(of: "p").map(\.data) == [bytes(1), bytes(2)])
        #expect(store.log(of: "p").map(\.clientFileID) == [1, 2])

        store.releaseNotifications()
        #expect(try await a.nextDownload().entries == [.changeset(serverVersion: 2, data: bytes(2))])
        try await a.expectNothingPending()
        try await b.expectNothingPending()
    }

    @Test(
        "an upload that loses to other writers many times in a row (12, more than any fixed limit of attempts) is stored after them, with no error"
    )
    func manyConflictsInARowCostRetriesOnly() async throws {
        let (serverA, _) = try await frontEnds()
        let a = try await TestClient.welcomed(to: serverA)
        _ = try await a.bind(clientFileID: 1)
        store.holdNotifications()
        store.letRivalWin(times: 12)
        a.upload(from: 1, [bytes(1)])
        let rivals = (1...12).map { DownloadEntry.changeset(serverVersion: UInt64($0), data: [0xEE]) }
        #expect(try await a.nextEntries(13) == rivals + [.acknowledged(serverVersion: 13, clientVersion: 1)])
        #expect(store.conflicts == 12)
        #expect(
            store.log(of: "p").map(\.clientFileID) == Array(repeating: SharedMemoryStore.rivalClientFileID, count: 12)
                + [1])
        try await a.expectNothingPending()
    }

    @Test("a notification sends the other server's sessions each new entry once, in order")
    func notificationsFanOut() async throws {
        let (serverA, serverB) = try await frontEnds()
        let a = try await TestClient.welcomed(to: serverA)
        let b1 = try await TestClient.welcomed(to: serverB)
        let b2 = try await TestClient.welcomed(to: serverB)
        _ = try await a.bind(clientFileID: 1)
        _ = try await b1.bind(clientFileID: 2)
        _ = try await b2.bind(clientFileID: 3)

        for version in 1...5 {
            a.upload(from: UInt64(version), [bytes(UInt8(version))])
            _ = try await a.nextDownload()
        }
        let expected = (1...5).map { DownloadEntry.changeset(serverVersion: UInt64($0), data: bytes(UInt8($0))) }
        #expect(try await b1.nextEntries(5) == expected)
        #expect(try await b2.nextEntries(5) == expected)
        b1.upload(from: 1, [bytes(9)])
        #expect(try await b1.nextDownload().entries == [.acknowledged(serverVersion: 6, clientVersion: 1)])
        #expect(try await a.nextDownload().entries == [.changeset(serverVersion: 6, data: bytes(9))])
        #expect(try await b2.nextDownload().entries == [.changeset(serverVersion: 6, data: bytes(9))])
        for client in [a, b1, b2] { try await client.expectNothingPending() }
        #expect(store.conflicts == 0)
    }

    @Test("a re-upload through the other server stores only what the log lacks and is acknowledged from the log")
    func reuploadThroughOtherServer() async throws {
        let (serverA, serverB) = try await frontEnds()
        let observer = try await TestClient.welcomed(to: serverB)
        _ = try await observer.bind(clientFileID: 99)
        store.holdNotifications()

        let first = try await TestClient.welcomed(to: serverA)
        _ = try await first.bind(clientFileID: 7)
        first.upload(from: 1, [bytes(1), bytes(2)])
        #expect(try await first.nextEntries(2).map(\.serverVersion) == [1, 2])
        first.close()

        // The same client file reconnects through B (whose view is stale) and uploads 1…3 again.
        let second = try await TestClient.welcomed(to: serverB)
        _ = try await second.bind(clientFileID: 7)
        second.upload(from: 1, [bytes(1), bytes(2), bytes(3)])
        #expect(
            try await second.nextEntries(3) == [
                .acknowledged(serverVersion: 1, clientVersion: 1),
                .acknowledged(serverVersion: 2, clientVersion: 2),
                .acknowledged(serverVersion: 3, clientVersion: 3),
            ])
        #expect(store.log(of: "p").map(\.clientVersion) == [1, 2, 3])
        #expect(store.log(of: "p").map(\.data) == [bytes(1), bytes(2), bytes(3)])
        #expect(try await observer.nextEntries(3).map(\.serverVersion) == [1, 2, 3])
        try await second.expectNothingPending()
    }

    @Test("a bind past the server's view but within the store's log is served from there, not refused")
    func bindPastTheView() async throws {
        let (serverA, serverB) = try await frontEnds()
        let observer = try await TestClient.welcomed(to: serverB)
        _ = try await observer.bind(clientFileID: 99)
        store.holdNotifications()
        let writer = try await TestClient.welcomed(to: serverA)
        _ = try await writer.bind(clientFileID: 1)
        writer.upload(from: 1, [bytes(1), bytes(2)])
        _ = try await writer.nextEntries(2)

        // A client that downloaded versions 1…2 through A binds through B, whose view ends at 0.
        let reader = try await TestClient.welcomed(to: serverB)
        let backlog = try await reader.bind(clientFileID: 2, downloadedVersion: 2)
        #expect(entries(of: backlog).isEmpty)
        writer.upload(from: 3, [bytes(3)])
        _ = try await writer.nextDownload()
        store.releaseNotifications()
        #expect(try await reader.nextDownload().entries == [.changeset(serverVersion: 3, data: bytes(3))])
    }

    @Test("marked through one server covers what the other committed before the mark")
    func markCoversOtherServersCommits() async throws {
        let (serverA, serverB) = try await frontEnds()
        let reader = try await TestClient.welcomed(to: serverB)
        _ = try await reader.bind(clientFileID: 2)
        store.holdNotifications()
        let writer = try await TestClient.welcomed(to: serverA)
        _ = try await writer.bind(clientFileID: 1)
        writer.upload(from: 1, [bytes(1), bytes(2)])
        _ = try await writer.nextEntries(2)

        reader.send(.mark(sessionID: 1, id: 5))
        #expect(try await reader.nextEntries(2).map(\.serverVersion) == [1, 2])
        #expect(try await reader.next() == .marked(sessionID: 1, id: 5))
    }

    @Test("an append announced while the server loads the partition reaches the binding client")
    func notificationDuringLoad() async throws {
        let (serverA, serverB) = try await frontEnds()
        let writer = try await TestClient.welcomed(to: serverA)
        _ = try await writer.bind(clientFileID: 1)
        let reader = try await TestClient.welcomed(to: serverB)
        // B reads the (empty) log, then waits; meanwhile A appends and the store announces it.
        store.pauseLoads()
        reader.send(.bind(Bind(sessionID: 1, partition: "p", clientFileID: 2, downloadedVersion: 0)))
        try await waitUntil("B is loading") { store.waitingLoads == 1 }
        writer.upload(from: 1, [bytes(1)])
        _ = try await writer.nextDownload()
        store.resumeLoads()
        #expect(try await reader.nextEntries(1) == [.changeset(serverVersion: 1, data: bytes(1))])
    }

    @Test("the server stops following the store's notifications when it stops")
    func followingEndsWithTheServer() async throws {
        let (serverA, serverB) = try await frontEnds()
        try await waitUntil("both servers follow the store") { store.subscriberCount == 2 }
        await serverA.stop()
        try await waitUntil("one server follows the store") { store.subscriberCount == 1 }
        await serverB.stop()
        try await waitUntil("no server follows the store") { store.subscriberCount == 0 }
    }

    @Test("clients uploading concurrently through two servers all see one gapless log, each entry once (seed 16)")
    func concurrentUploadsThroughTwoServers() async throws {
        var generator = SeededGenerator(seed: 16)
        print("SharedStoreTests.concurrentUploadsThroughTwoServers: seed 16")
        let (serverA, serverB) = try await frontEnds()
        let clientCount = 6
        let uploadsPerClient = 12
        var clients: [TestClient] = []
        for index in 0..<clientCount {
            let client = try await TestClient.welcomed(to: index % 2 == 0 ? serverA : serverB)
            _ = try await client.bind(clientFileID: UInt64(index + 1))
            clients.append(client)
        }
        let batches = (0..<clientCount).map { _ in
            (0..<uploadsPerClient).map { _ in Int.random(in: 1...3, using: &generator) }
        }
        let total = batches.joined().reduce(0, +)
        await withTaskGroup(of: Void.self) { group in
            for (index, client) in clients.enumerated() {
                let sizes = batches[index]
                group.addTask {
                    var next: UInt64 = 1
                    for size in sizes {
                        client.upload(from: next, (0..<size).map { bytes(UInt8(index), count: Int(next) + $0) })
                        next += UInt64(size)
                        await Task.yield()
                    }
                }
            }
        }
        for (index, client) in clients.enumerated() {
            let seen = try await client.nextEntries(total)
            #expect(seen.map(\.serverVersion) == (1...total).map(UInt64.init))
            for (entry, stored) in zip(seen, store.log(of: "p")) {
                if stored.clientFileID == UInt64(index + 1) {
                    #expect(
                        entry == .acknowledged(serverVersion: stored.serverVersion, clientVersion: stored.clientVersion)
                    )
                } else {
                    #expect(entry == .changeset(serverVersion: stored.serverVersion, data: stored.data))
                }
            }
            try await client.expectNothingPending()
        }
        #expect(store.log(of: "p").count == total)
        #expect(try await serverB.changesets(in: "p") == store.log(of: "p"))
        for fileID in 1...UInt64(clientCount) {
            let versions = store.log(of: "p").filter { $0.clientFileID == fileID }.map(\.clientVersion)
            #expect(versions == (1...UInt64(batches[Int(fileID) - 1].reduce(0, +))).map { $0 })
        }
    }
}
