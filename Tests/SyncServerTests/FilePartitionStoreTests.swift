import Foundation
import SyncStorage
import SyncWire
import Testing

@testable import SyncServer

@Suite(.timeLimit(.minutes(5))) struct FilePartitionStoreTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("FilePartitionStoreTests-\(UUID())")
        .path

    func changeset(_ version: UInt64, bytes: Int = 3, owner: String = "alice") -> StoredChangeset {
        StoredChangeset(
            serverVersion: version, clientFileID: 7, clientVersion: version,
            data: (0..<bytes).map { UInt8(truncatingIfNeeded: Int(version) &+ $0) }, owner: owner)
    }

    @Test("appended changesets come back after reopening: summaries, ranges, bytes and owners")
    func reopen() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let written = (1...20).map { changeset(UInt64($0), bytes: $0 * 100, owner: $0 % 2 == 0 ? "ü" : "bob") }
        do {
            let store = try FilePartitionStore(directory: directory)
            #expect(try await store.summaries(of: "a/b").isEmpty)
            try await store.append(Array(written[0..<5]), to: "a/b")
            try await store.append(Array(written[5...]), to: "a/b")
            #expect(try await store.read(3...4, of: "a/b") == Array(written[2...3]))
            await store.close()
        }
        let store = try FilePartitionStore(directory: directory)
        #expect(try await store.summaries(of: "a/b") == written.map(\.summary))
        #expect(try await store.read(1...20, of: "a/b") == written)
        #expect(try await store.read(19...40, of: "a/b") == Array(written[18...]))
        #expect(try await store.summaries(of: "A/B").isEmpty)  // another partition, another file
        await store.close()
    }

    @Test(
        "each partition's log has a history id, kept across reopening; an emptied directory gives the partition another"
    )
    func historyID() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let first: UInt64
        let other: UInt64
        do {
            let store = try FilePartitionStore(directory: directory)
            first = try await store.historyID(of: "p")
            other = try await store.historyID(of: "q")
            #expect(first != 0)
            #expect(other != first)
            #expect(try await store.historyID(of: "p") == first)
            try await store.append([changeset(1)], to: "p")
            await store.close()
        }
        do {
            let store = try FilePartitionStore(directory: directory)
            #expect(try await store.historyID(of: "p") == first)
            #expect(try await store.historyID(of: "q") == other)
            await store.close()
        }
        try FileManager.default.removeItem(atPath: directory)
        let store = try FilePartitionStore(directory: directory)
        let again = try await store.historyID(of: "p")
        #expect(again != 0)
        #expect(again != first)
        await store.close()
    }

    @Test("a directory whose parents are missing is created with them")
    func createsParents() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let nested = directory + "/a/b/c"
        let store = try FilePartitionStore(directory: nested)
        try await store.append([changeset(1)], to: "p")
        #expect(FileManager.default.fileExists(atPath: nested + "/LOCK"))
        await store.close()
    }

    @Test("a second store on the same directory is refused with .locked until the first closes")
    func locked() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let first = try FilePartitionStore(directory: directory)
        #expect(throws: FilePartitionStoreError.locked(path: directory)) {
            _ = try FilePartitionStore(directory: directory)
        }
        await first.close()
        try await FilePartitionStore(directory: directory).close()
    }

    @Test(
        "a torn final record (a crash mid-append) is cut at reopen, logged with its partition and bytes; the rest remain"
    )
    func tornTail() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        do {
            let store = try FilePartitionStore(directory: directory)
            _ = try await store.summaries(of: "p")
            try await store.append([changeset(1), changeset(2)], to: "p")
            await store.close()
        }
        let file = try #require(
            try FileManager.default.contentsOfDirectory(atPath: directory).first { $0.hasSuffix(".log") })
        let handle = try #require(FileHandle(forWritingAtPath: directory + "/" + file))
        handle.seekToEndOfFile()
        handle.write(Data([0xA5, 40, 0, 0, 0, 1, 2, 3]))  // a record header cut short
        handle.closeFile()
        let events = LoggedEvents()
        let store = try FilePartitionStore(directory: directory, logger: events.append)
        #expect(try await store.summaries(of: "p").map(\.serverVersion) == [1, 2])
        let logged = events.all
        #expect(logged.count == 1, "\(logged)")
        #expect(logged.first?.level == .warn)
        #expect(logged.first?.category == "sync.server.storage")
        #expect(logged.first?.message.contains("partition p: cut 8 bytes") == true, "\(logged)")
        try await store.append([changeset(3)], to: "p")
        #expect(try await store.read(1...3, of: "p") == [changeset(1), changeset(2), changeset(3)])
        await store.close()
    }

    @Test("a record that is intact but not a changeset is a typed error for its partition only")
    func malformedRecord() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        do {
            let store = try FilePartitionStore(directory: directory)
            _ = try await store.summaries(of: "bad")
            try await store.append([changeset(1)], to: "good")
            await store.close()
        }
        let file = try #require(
            try FileManager.default.contentsOfDirectory(atPath: directory).first {
                $0.hasSuffix(".log") && $0.contains("bad")
            })
        let log = try RecordLog(path: directory + "/" + file)
        try log.append([9, 9, 9])
        log.close()
        let store = try FilePartitionStore(directory: directory)
        await #expect(
            throws: FilePartitionStoreError.malformedRecord(
                partition: "bad", offset: UInt64(RecordFormat.fileHeaderSize))
        ) {
            _ = try await store.summaries(of: "bad")
        }
        #expect(try await store.summaries(of: "good").count == 1)
        await store.close()
    }

    @Test("unload closes a partition's file; summaries opens it again with everything appended before")
    func unloadAndReload() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try FilePartitionStore(directory: directory)
        _ = try await store.summaries(of: "p")
        try await store.append([changeset(1), changeset(2)], to: "p")
        #expect(store.openPartitionCount == 1)
        await store.unload("p")
        #expect(store.openPartitionCount == 0)
        await store.unload("p")  // not open: nothing happens
        #expect(try await store.summaries(of: "p").map(\.serverVersion) == [1, 2])
        try await store.append([changeset(3)], to: "p")
        #expect(try await store.read(1...3, of: "p") == [changeset(1), changeset(2), changeset(3)])
        await store.close()
    }

    @Test("an embedded server on a file store: what was uploaded is served again after a restart on the same directory")
    func embeddedServerRestart() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        do {
            let store = try FilePartitionStore(directory: directory)
            let server = try await SyncServer.embedded(configuration: .init(store: store))
            let writer = try await TestClient.welcomed(to: server)
            _ = try await writer.bind(clientFileID: 1)
            writer.upload(from: 1, [bytes(1), bytes(2, count: 300)])
            #expect(try await writer.nextDownload().entries.count == 2)  // acknowledged: durable
            await server.stop()
            await store.close()
        }
        let store = try FilePartitionStore(directory: directory)
        let server = try await SyncServer.embedded(configuration: .init(store: store))
        let reader = try await TestClient.welcomed(to: server)
        let downloads = try await reader.bind(clientFileID: 2)
        #expect(
            entries(of: downloads) == [
                .changeset(serverVersion: 1, data: bytes(1)), .changeset(serverVersion: 2, data: bytes(2, count: 300)),
            ])
        // The writer's client file is still known: its next upload continues at client version 3.
        let writer = try await TestClient.welcomed(to: server)
        _ = try await writer.bind(2, clientFileID: 1, downloadedVersion: 2)
        writer.upload(2, from: 3, [bytes(3)])
        #expect(try await writer.nextDownload().entries == [.acknowledged(serverVersion: 3, clientVersion: 3)])
        #expect(try await server.changesets(in: "p").map(\.data) == [bytes(1), bytes(2, count: 300), bytes(3)])
        await server.stop()
        await store.close()
    }
}

/// Log events collected from any thread.
final class LoggedEvents: @unchecked Sendable {
    // @unchecked Sendable: `events` is only touched under `lock`.
    private let lock = NSLock()
    private var events: [SyncLogEvent] = []

    var all: [SyncLogEvent] { lock.withLock { events } }

    @Sendable func append(_ event: SyncLogEvent) { lock.withLock { events.append(event) } }
}
