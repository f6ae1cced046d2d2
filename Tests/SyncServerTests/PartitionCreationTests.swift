import Foundation
import SyncServer
import SyncWire
import Testing

/// Creating a partition costs files and fsyncs: a server caps the partitions its store holds
/// (`maximumPartitionsInStore`), and with API keys only a key that may write a partition may create it.
@Suite("Partition creation", .timeLimit(.minutes(5)))
struct PartitionCreationTests {
    /// The `.log` files in `directory` (one per partition a `FilePartitionStore` holds).
    private func logFiles(in directory: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".log") }.sorted()
    }

    @Test(
        "maximumPartitionsInStore 2 with a file store: a third new partition is permissionDenied (no retry, no file); existing ones still bind, also after a restart"
    )
    func partitionsInStoreCap() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("creation-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // One partition exists before the server starts: it counts.
        let first = try FilePartitionStore(directory: directory)
        _ = try await first.summaries(of: "old")
        await first.close()

        let store = try FilePartitionStore(directory: directory)
        let server = try await SyncServer.embedded(configuration: .init(store: store, maximumPartitionsInStore: 2))
        let client = try await TestClient.welcomed(to: server)
        _ = try await client.bind(1, partition: "a", clientFileID: 1)
        client.send(.bind(Bind(sessionID: 2, partition: "b", clientFileID: 1, downloadedVersion: 0)))
        let refused = try await client.nextError()
        Self.expectRefusedForGood(refused, sessionID: 2)
        #expect(refused.message.contains("2 partitions"), "\(refused.message)")
        #expect(try logFiles(in: directory) == ["a.log", "old.log"])
        // Partitions the store holds bind as before, on this connection and others.
        _ = try await client.bind(3, partition: "old", clientFileID: 1)
        let other = try await TestClient.welcomed(to: server)
        _ = try await other.bind(1, partition: "a", clientFileID: 2)
        try await client.expectNothingPending()
        await server.stop()
        await store.close()

        // A restart counts the files on disk.
        let again = try FilePartitionStore(directory: directory)
        let restarted = try await SyncServer.embedded(
            configuration: .init(store: again, maximumPartitionsInStore: 2))
        let late = try await TestClient.welcomed(to: restarted)
        late.send(.bind(Bind(sessionID: 1, partition: "c", clientFileID: 3, downloadedVersion: 0)))
        #expect(try await late.nextError().code == .permissionDenied)
        _ = try await late.bind(2, partition: "a", clientFileID: 3)
        #expect(try logFiles(in: directory) == ["a.log", "old.log"])
        await restarted.stop()
        await again.close()
    }

    @Test("maximumPartitionsInStore: many binds of new partitions at once create exactly the allowed number")
    func concurrentCreations() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("creation-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try FilePartitionStore(directory: directory)
        let server = try await SyncServer.embedded(configuration: .init(store: store, maximumPartitionsInStore: 5))
        // 20 connections bind 20 new partitions at once (two pairs share a name: it counts once).
        var clients: [TestClient] = []
        for _ in 0..<20 { clients.append(try await TestClient.welcomed(to: server)) }
        for (index, client) in clients.enumerated() {
            client.send(.bind(Bind(sessionID: 1, partition: "n\(index % 18)", clientFileID: 1, downloadedVersion: 0)))
        }
        var bound = 0
        var refused = 0
        for client in clients {
            switch try await client.next() {
            case .download: bound += 1
            case .error(let error) where error.code == .permissionDenied: refused += 1
            case let other: Issue.record("unexpected \(other)")
            }
        }
        #expect(try logFiles(in: directory).count == 5)
        #expect(bound + refused == 20)
        #expect(bound >= 5 && bound <= 7, "bound \(bound), refused \(refused)")
        await server.stop()
        await store.close()
    }

    @Test("maximumPartitionsInStore with the in-memory store: the cap holds too")
    func inMemoryCap() async throws {
        let server = try await SyncServer.embedded(configuration: .init(maximumPartitionsInStore: 1))
        let client = try await TestClient.welcomed(to: server)
        _ = try await client.bind(1, partition: "a", clientFileID: 1)
        client.send(.bind(Bind(sessionID: 2, partition: "b", clientFileID: 1, downloadedVersion: 0)))
        #expect(try await client.nextError().code == .permissionDenied)
        await server.stop()
    }

    @Test(
        "a read-only key (read: pattern) may bind a partition that exists but not create one, and its uploads are permissionDenied"
    )
    func readOnlyKeyCannotCreate() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("creation-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try FilePartitionStore(directory: directory)
        let keys: [String: Set<String>] = ["reader": ["read:shared/*"], "writer": ["shared/*"]]
        let server = try await SyncServer.embedded(
            configuration: .init(store: store, authentication: .apiKeys(keys)))
        let reader = try await TestClient.welcomed(to: server, credential: .apiKey("reader"))
        reader.send(.bind(Bind(sessionID: 1, partition: "shared/x", clientFileID: 1, downloadedVersion: 0)))
        let refused = try await reader.nextError()
        #expect(refused.code == .permissionDenied)
        #expect(refused.message.contains("create"), "\(refused.message)")
        #expect(try logFiles(in: directory).isEmpty)
        // Outside its patterns, as before.
        reader.send(.bind(Bind(sessionID: 2, partition: "private", clientFileID: 1, downloadedVersion: 0)))
        #expect(try await reader.nextError().code == .permissionDenied)

        let writer = try await TestClient.welcomed(to: server, credential: .apiKey("writer"))
        _ = try await writer.bind(1, partition: "shared/x", clientFileID: 2)
        writer.upload(1, from: 1, [[1, 2, 3]])
        _ = try await writer.nextDownload()
        #expect(try logFiles(in: directory).count == 1)

        let entries = try await reader.bind(3, partition: "shared/x", clientFileID: 1).flatMap(\.entries)
        #expect(entries == [.changeset(serverVersion: 1, data: [1, 2, 3])])
        reader.upload(3, from: 1, [[9]])
        let upload = try await reader.nextError()
        #expect(upload.code == .permissionDenied)
        #expect(upload.sessionID == 3)
        #expect(try await server.changesets(in: "shared/x").count == 1)
        try await reader.expectNothingPending()
        await server.stop()
        await store.close()
    }
}

/// A store that caps its partitions itself, as a store shared by several front ends does: loading a
/// partition it does not hold beyond `cap` throws `PartitionCreationRefused`, creating nothing. Counts
/// its partitions for the server as an `InMemoryPartitionStore` does.
private actor SelfCappedStore: PartitionStore {
    /// Called through the protocol, as the server calls a store (its witnesses, not the extension's defaults).
    let inner: any PartitionStore = InMemoryPartitionStore()
    let cap: Int
    private(set) var refusals = 0

    init(cap: Int) { self.cap = cap }

    private func admit(_ partition: String) async throws {
        guard try await !inner.holdsPartition(partition), try await inner.partitionCount() ?? 0 >= cap else { return }
        refusals += 1
        throw PartitionCreationRefused(
            partition: partition, reason: "the store holds at most \(cap) partitions and creates no more")
    }

    func summaries(of partition: String) async throws -> [StoredChangesetSummary] {
        try await admit(partition)
        return try await inner.summaries(of: partition)
    }

    func historyID(of partition: String) async throws -> UInt64 {
        try await admit(partition)
        return try await inner.historyID(of: partition)
    }

    func read(_ versions: ClosedRange<UInt64>, of partition: String) async throws -> [StoredChangeset] {
        try await inner.read(versions, of: partition)
    }

    func append(_ changesets: [StoredChangeset], to partition: String) async throws {
        try await inner.append(changesets, to: partition)
    }

    func partitionCount() async throws -> Int? { try await inner.partitionCount() }
    func holdsPartition(_ partition: String) async throws -> Bool { try await inner.holdsPartition(partition) }
}

extension PartitionCreationTests {
    @Test(
        "a store that refuses to create a partition (PartitionCreationRefused) gets the bind permissionDenied with its reason, not retried, nothing created; held partitions bind"
    )
    func storeRefusesCreation() async throws {
        // The store allows 1 partition, the server's own count 10: only the store refuses.
        let store = SelfCappedStore(cap: 1)
        let server = try await SyncServer.embedded(configuration: .init(store: store, maximumPartitionsInStore: 10))
        let client = try await TestClient.welcomed(to: server)
        _ = try await client.bind(1, partition: "a", clientFileID: 1)
        client.send(.bind(Bind(sessionID: 2, partition: "b", clientFileID: 1, downloadedVersion: 0)))
        let refused = try await client.nextError()
        Self.expectRefusedForGood(refused, sessionID: 2)
        #expect(refused.message.contains("at most 1 partitions"), "\(refused.message)")
        #expect(refused.message.contains("b is not created"), "\(refused.message)")
        #expect(try await store.holdsPartition("b") == false)
        #expect(try await store.partitionCount() == 1)
        // The held partition binds on another connection; the refused one is refused again, by the store.
        let other = try await TestClient.welcomed(to: server)
        _ = try await other.bind(1, partition: "a", clientFileID: 2)
        other.send(.bind(Bind(sessionID: 2, partition: "b", clientFileID: 2, downloadedVersion: 0)))
        #expect(try await other.nextError().code == .permissionDenied)
        #expect(await store.refusals == 2)
        try await client.expectNothingPending()
        try await other.expectNothingPending()
        await server.stop()
    }
}

extension PartitionCreationTests {
    /// A bind refused for good, as the partition cap refuses one: `permissionDenied` (fatal) for
    /// `sessionID`, with no retry hint.
    static func expectRefusedForGood(
        _ refused: ProtocolError, sessionID: UInt32, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(refused.code == .permissionDenied, sourceLocation: sourceLocation)
        #expect(refused.code.isFatal, sourceLocation: sourceLocation)
        #expect(refused.sessionID == sessionID, sourceLocation: sourceLocation)
        #expect(refused.retryAfterMilliseconds == nil, sourceLocation: sourceLocation)
    }
}
