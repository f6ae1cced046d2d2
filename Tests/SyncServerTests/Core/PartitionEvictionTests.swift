import Foundation
import SyncServer
import SyncWire
import TestSupport
import Testing

/// Idle partitions are evicted (their index dropped, their files closed) beyond `maximumIdlePartitions`
/// and loaded again on the next bind; `maximumPartitions` counts only live ones.
@Suite("Partition eviction", .timeLimit(.minutes(5)))
struct PartitionEvictionTests {
    /// The descriptors this process has open on files inside `directory` (Linux: the `/proc/self/fd`
    /// entries that point there), so that files other tests open meanwhile do not count; `nil` elsewhere.
    static func openDescriptorCount(inside directory: URL) -> Int? {
        #if os(Linux)
            let prefix = directory.resolvingSymlinksInPath().path + "/"
            guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else {
                return nil
            }
            return entries.count { entry in
                let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(entry)")
                return target?.hasPrefix(prefix) == true
            }
        #else
            return nil
        #endif
    }

    /// Binds `partition` as session 1, uploads one changeset, waits for its acknowledgement, unbinds.
    func writeOnce(_ client: TestClient, _ partition: String, _ value: UInt8) async throws {
        let downloads = try await client.bind(1, partition: partition, clientFileID: 1)
        #expect(downloads == [Download(sessionID: 1, entries: [], remainingBytes: 0)], "\(partition)")
        client.upload(1, from: 1, [bytes(value)])
        #expect(try await client.nextDownload().entries == [.acknowledged(serverVersion: 1, clientVersion: 1)])
        client.send(.unbind(sessionID: 1))
        #expect(try await client.next() == .unbound(sessionID: 1))
    }

    @Test(
        "with a file store, binding and unbinding many more partitions than the maximum all succeed; open files stay bounded"
    )
    func manyPartitionsOnFiles() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "PartitionEvictionTests-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try FilePartitionStore(directory: directory.path)
        let server = try await SyncServer.embedded(
            configuration: .init(store: store, maximumPartitions: 3, maximumIdlePartitions: 2))
        let client = try await TestClient.welcomed(to: server)
        // 40 times the maximum; 10 times under a sanitizer, where each file create and fsync costs more.
        let count = BuildFlavor.iterations(120, sanitized: 30)
        let before = Self.openDescriptorCount(inside: directory)
        for index in 0..<count { try await writeOnce(client, "p\(index)", UInt8(truncatingIfNeeded: index)) }
        // Evictions run in the background: they end with at most the two idle partitions open.
        try await waitUntil("evictions to finish") { store.openPartitionCount <= 2 }
        if let before {
            // Only the descriptors on this test's own data directory count (other tests' files do not).
            // Without eviction each partition keeps two (240 here); with it, the two idle partitions'
            // four, beside what the store held before the first bind. Waited for, not read once: an
            // eviction's files close on the store's I/O thread just after the partition stops counting
            // as open (one run read 5 there).
            var after = before
            try await waitUntil("descriptors inside the data directory to fall to at most \(before + 4)") {
                after = Self.openDescriptorCount(inside: directory) ?? before
                return after - before <= 4
            }
            #expect(after - before <= 4, "\(before) → \(after) descriptors inside \(directory.path)")
        }
        // Every partition's log is intact: the evicted ones load again.
        for index in 0..<count {
            let downloads = try await client.bind(1, partition: "p\(index)", clientFileID: 2)
            #expect(
                entries(of: downloads) == [.changeset(serverVersion: 1, data: bytes(UInt8(truncatingIfNeeded: index)))])
            client.send(.unbind(sessionID: 1))
            #expect(try await client.next() == .unbound(sessionID: 1))
        }
        await server.stop()
        await store.close()
    }

    @Test(
        "maximumPartitions counts live partitions: a further one is serverBusy while they are bound, not once one is unbound"
    )
    func maximumCountsLivePartitions() async throws {
        let server = try await SyncServer.embedded(configuration: .init(maximumPartitions: 2))
        let client = try await TestClient.welcomed(to: server)
        _ = try await client.bind(1, partition: "a", clientFileID: 1)
        _ = try await client.bind(2, partition: "b", clientFileID: 1)
        client.send(.bind(Bind(sessionID: 3, partition: "c", clientFileID: 1, downloadedVersion: 0)))
        let busy = try await client.nextError()
        #expect(busy.code == .serverBusy)
        #expect(busy.sessionID == 3)
        #expect(busy.retryAfterMilliseconds == 5000)
        // A second session on a live partition is no further partition.
        _ = try await client.bind(4, partition: "b", clientFileID: 2)

        client.send(.unbind(sessionID: 1))
        #expect(try await client.next() == .unbound(sessionID: 1))
        _ = try await client.bind(3, partition: "c", clientFileID: 1)
        // "a" is idle, not gone: binding it again would make a third live partition.
        client.send(.bind(Bind(sessionID: 5, partition: "a", clientFileID: 1, downloadedVersion: 0)))
        #expect(try await client.nextError().code == .serverBusy)
        await server.stop()
    }

    @Test("beyond maximumIdlePartitions the least recently used idle partition is unloaded; binding it loads it again")
    func leastRecentlyUsedIsUnloaded() async throws {
        let store = ControllableStore()
        let server = try await SyncServer.embedded(configuration: .init(store: store, maximumIdlePartitions: 1))
        let client = try await TestClient.welcomed(to: server)
        try await writeOnce(client, "a", 1)
        try await writeOnce(client, "b", 2)
        try await waitUntil("a to be unloaded") { await store.unloaded == ["a"] }
        try await writeOnce(client, "c", 3)
        try await waitUntil("b to be unloaded") { await store.unloaded == ["a", "b"] }

        let reader = try await TestClient.welcomed(to: server)
        #expect(
            entries(of: try await reader.bind(1, partition: "a", clientFileID: 2)) == [
                .changeset(serverVersion: 1, data: bytes(1))
            ])
        #expect(await store.loaded == ["a", "b", "c", "a"])
        // "a" is live now; "c" is the one idle partition, and stays loaded.
        #expect(await store.unloaded == ["a", "b"])
        await server.stop()
    }

    @Test("a bind that arrives while its partition is being evicted waits for the eviction and loads it again")
    func bindDuringEviction() async throws {
        let store = ControllableStore()
        await store.setHoldsUnloads(true)
        let server = try await SyncServer.embedded(configuration: .init(store: store, maximumIdlePartitions: 0))
        let writer = try await TestClient.welcomed(to: server)
        try await writeOnce(writer, "a", 7)
        try await waitUntil("the eviction to reach the store") { await store.heldUnloadCount == 1 }

        let reader = try await TestClient.welcomed(to: server)
        reader.send(.bind(Bind(sessionID: 1, partition: "a", clientFileID: 2, downloadedVersion: 0)))
        await store.setHoldsUnloads(false)
        #expect(try await reader.nextDownload().entries == [.changeset(serverVersion: 1, data: bytes(7))])
        #expect(await store.loaded == ["a", "a"])
        // The reader keeps receiving what is written now.
        _ = try await writer.bind(1, partition: "a", clientFileID: 1, downloadedVersion: 1)
        writer.upload(1, from: 2, [bytes(8)])
        #expect(try await reader.nextDownload().entries == [.changeset(serverVersion: 2, data: bytes(8))])
        await server.stop()
    }
}
