import Foundation
import SyncStorage
import SyncWire
import Testing

@testable import SyncServer

@Suite(.timeLimit(.minutes(1))) struct FilePartitionStoreTests {
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
        await #expect(throws: FilePartitionStoreError.malformedRecord(partition: "bad", offset: 8)) {
            _ = try await store.summaries(of: "bad")
        }
        #expect(try await store.summaries(of: "good").count == 1)
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
