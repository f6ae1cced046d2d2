import Foundation
import PostgresNIO
import PostgresSync
import SyncServer
import TestSupport
import Testing

/// Every test that needs PostgreSQL, one at a time (one restarts the cluster under the others' feet
/// otherwise). Each test creates a database of its own.
@Suite(
    "PostgreSQL", .serialized, .enabled(if: TestDatabase.isEnabled, TestDatabase.skipReason),
    .timeLimit(.minutes(10)))
struct PostgresTests {}

/// Opens a store on `url` that logs only errors.
func openStore(
    _ url: DatabaseURL, name: String = "tests", minimumListenRetryDelay: Duration = .milliseconds(50),
    maximumPartitions: Int? = nil
) async throws -> PostgresPartitionStore {
    try await PostgresPartitionStore.open(
        .init(
            url: url, maximumPartitions: maximumPartitions, applicationName: name,
            minimumListenRetryDelay: minimumListenRetryDelay, logLevel: .error))
}

/// A new test database holding `partition` with one changeset (written through a store of its own,
/// closed again): what a test of the partition cap starts from.
func createDatabase(holding partition: String) async throws -> DatabaseURL {
    let url = try await TestDatabase.create()
    let inspector = try await openStore(url, name: "inspector")
    try await inspector.append(changesets(file: 1, from: 1, at: 1, count: 1), to: partition)
    await inspector.close()
    return url
}

/// `count` changesets of client file `file` from client version `from`, at server versions from `at`.
func changesets(file: UInt64, from: UInt64, at: UInt64, count: Int) -> [StoredChangeset] {
    (0..<UInt64(count)).map { offset in
        StoredChangeset(
            serverVersion: at + offset, clientFileID: file, clientVersion: from + offset,
            data: Array("file \(file) version \(from + offset)".utf8), owner: "anonymous")
    }
}

extension PostgresTests {
    @Suite("PostgresPartitionStore")
    struct StoreTests {
        @Test("opening creates the schema at version 3; opening again keeps it and the data")
        func schemaCreatedAndKept() async throws {
            let url = try await TestDatabase.create()
            let first = try await openStore(url)
            try await first.append(changesets(file: 1, from: 1, at: 1, count: 2), to: "p")
            await first.close()
            let second = try await openStore(url)
            #expect(try await second.summaries(of: "p").map(\.serverVersion) == [1, 2])
            await second.close()
            let versions = try await TestDatabase.admin(url) { connection, logger in
                var versions: [Int32] = []
                for try await version in try await connection.query(
                    "SELECT version FROM sync_schema_version", logger: logger
                ).decode(Int32.self) { versions.append(version) }
                return versions
            }
            #expect(versions == [3])
        }

        @Test(
            "the store counts the database's partitions, another store's included, and tells whether it holds one without creating it"
        )
        func partitionsCounted() async throws {
            let url = try await TestDatabase.create()
            let store = try await openStore(url, name: "a")
            let other = try await openStore(url, name: "b")
            #expect(try await store.partitionCount() == 0)
            try await store.append(changesets(file: 1, from: 1, at: 1, count: 1), to: "p")
            // Loaded (its history id read) but empty: held too, as a file store's empty log is.
            _ = try await other.historyID(of: "empty")
            #expect(try await store.partitionCount() == 2)
            #expect(try await store.holdsPartition("p"))
            #expect(try await store.holdsPartition("empty"))
            #expect(try await !store.holdsPartition("q"))
            #expect(try await !other.holdsPartition("q"))
            // Asking made nothing.
            #expect(try await other.partitionCount() == 2)
            await store.close()
            await other.close()
        }

        @Test("a database whose schema is newer than the code is refused")
        func newerSchemaRefused() async throws {
            let url = try await TestDatabase.create()
            try await openStore(url).close()
            try await TestDatabase.admin(url) { connection, logger in
                try await connection.query("UPDATE sync_schema_version SET version = 4", logger: logger)
            }
            do {
                let store = try await openStore(url)
                await store.close()
                Issue.record("a schema of version 4 was accepted")
            } catch PostgresPartitionStoreError.schemaTooNew(let found, let supported) {
                #expect(found == 4)
                #expect(supported == 3)
            }
        }

        @Test("appends are read back in order; an append at a taken version is a conflict and writes nothing")
        func appendReadAndConflict() async throws {
            let url = try await TestDatabase.create()
            let store = try await openStore(url)
            let written = changesets(file: 1, from: 1, at: 1, count: 3)
            try await store.append(written, to: "p")
            #expect(try await store.read(1...3, of: "p") == written)
            #expect(try await store.read(2...2, of: "p") == [written[1]])
            #expect(try await store.summaries(of: "p", after: 1) == written.dropFirst().map(\.summary))
            #expect(try await store.summaries(of: "empty").isEmpty)

            await #expect(throws: PartitionStoreConflict(partition: "p", latestVersion: 3)) {
                try await store.append(changesets(file: 2, from: 1, at: 2, count: 1), to: "p")
            }
            // A version past the end would leave a gap: refused too, nothing written.
            await #expect(throws: PostgresPartitionStoreError.self) {
                try await store.append(changesets(file: 2, from: 1, at: 9, count: 1), to: "p")
            }
            #expect(try await store.summaries(of: "p").map(\.serverVersion) == [1, 2, 3])
            await store.close()
        }

        @Test("a client version stored twice is refused by the unique constraint, as a conflict")
        func clientVersionUnique() async throws {
            let url = try await TestDatabase.create()
            let store = try await openStore(url)
            try await store.append(changesets(file: 7, from: 1, at: 1, count: 2), to: "p")
            // Right version, but client version 2 of file 7 is there already.
            await #expect(throws: PartitionStoreConflict(partition: "p", latestVersion: 2)) {
                try await store.append(changesets(file: 7, from: 2, at: 3, count: 1), to: "p")
            }
            #expect(try await store.summaries(of: "p").map(\.clientVersion) == [1, 2])
            await store.close()
        }

        @Test("two stores appending to one partition at once get one gapless order, each changeset once")
        func concurrentAppendsAreTotallyOrdered() async throws {
            let url = try await TestDatabase.create()
            let stores = [try await openStore(url, name: "a"), try await openStore(url, name: "b")]
            let writers = 8
            let perWriter = 25
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<writers {
                    let store = stores[writer % 2]
                    group.addTask {
                        var latest = UInt64(try await store.summaries(of: "p").count)
                        for version in 1...UInt64(perWriter) {
                            // Retry at the log's end until the store takes it, as the server does.
                            while true {
                                do {
                                    let next = changesets(
                                        file: UInt64(writer + 1), from: version, at: latest + 1, count: 1)
                                    try await store.append(next, to: "p")
                                    latest += 1
                                    break
                                } catch let conflict as PartitionStoreConflict {
                                    latest = conflict.latestVersion
                                }
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            let log = try await stores[0].summaries(of: "p")
            #expect(log.map(\.serverVersion) == Array(1...UInt64(writers * perWriter)))
            for file in 1...UInt64(writers) {
                #expect(log.filter { $0.clientFileID == file }.map(\.clientVersion) == Array(1...UInt64(perWriter)))
            }
            #expect(try await stores[1].summaries(of: "p") == log)
            for store in stores { await store.close() }
        }

        @Test("another store's appends are announced with the partition and its latest version, never bytes")
        func appendsAreAnnounced() async throws {
            let url = try await TestDatabase.create()
            let listener = try await openStore(url, name: "listener")
            let writer = try await openStore(url, name: "writer")
            let notifications = try #require(listener.appendNotifications())
            try await eventually("listening") { listener.isListening }
            _ = try await listener.summaries(of: "p")  // loaded here: announced
            try await writer.append(changesets(file: 1, from: 1, at: 1, count: 2), to: "p")
            try await writer.append(changesets(file: 1, from: 1, at: 1, count: 1), to: "unloaded")
            try await writer.append(changesets(file: 1, from: 3, at: 3, count: 1), to: "p")
            let received = Drained(notifications)
            try await eventually("two notifications") { received.values.count >= 2 }
            #expect(
                received.values == [
                    AppendNotification(partition: "p", latestVersion: 2),
                    AppendNotification(partition: "p", latestVersion: 3),
                ])
            await writer.close()
            await listener.close()
            try await eventually("the stream ended with the store") { received.isFinished }
        }

        @Test("after its listening connection is terminated the store listens again and announces what it missed")
        func catchUpAfterListenerTerminated() async throws {
            let url = try await TestDatabase.create()
            // It listens again 3 s after losing its connection: room for the append below to commit first.
            let listener = try await openStore(url, name: "catch-up", minimumListenRetryDelay: .seconds(3))
            let writer = try await openStore(url, name: "writer")
            let received = Drained(try #require(listener.appendNotifications()))
            try await eventually("listening") { listener.isListening }
            _ = try await listener.summaries(of: "p")
            #expect(try await TestDatabase.terminate(applicationName: "catch-up/listen") == 1)
            try await eventually("the listener noticed") { !listener.isListening }
            try await eventually("the old listening backend is gone") {
                try await TestDatabase.backends(applicationName: "catch-up/listen") == 0
            }
            // Committed while nobody listens: the NOTIFY reaches no one. Shown, not assumed: still no listening
            // backend once the append returned, so none was there when it committed; the notification below can
            // only come from the catch-up read after listening again.
            try await writer.append(changesets(file: 1, from: 1, at: 1, count: 4), to: "p")
            #expect(
                try await TestDatabase.backends(applicationName: "catch-up/listen") == 0,
                "a listener was back before the append committed: the catch-up path was not forced")
            #expect(listener.listenCount == 1)
            try await eventually("listening again") { listener.listenCount == 2 && listener.isListening }
            try await eventually("a notification") { !received.values.isEmpty }
            #expect(received.values == [AppendNotification(partition: "p", latestVersion: 4)])
            await writer.close()
            await listener.close()
        }
    }
}
