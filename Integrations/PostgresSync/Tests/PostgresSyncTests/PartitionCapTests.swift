import Foundation
import PostgresNIO
import PostgresSync
import SyncServer
import TestSupport
import Testing

/// The cap on the partitions in the database (`--max-partitions-on-disk`) across front ends sharing it
/// (issue 23, item 6): the store enforces it where it creates a partition's row, atomically in the
/// database, so front ends that each count only their own creations cannot together pass it.
extension PostgresTests {
    @Suite("Partitions cap across front ends")
    struct PartitionCapTests {
        /// The names in `sync_partitions`, sorted.
        static func partitionNames(_ url: DatabaseURL) async throws -> [String] {
            try await TestDatabase.admin(url) { connection, logger in
                var names: [String] = []
                for try await name in try await connection.query(
                    "SELECT name FROM sync_partitions ORDER BY name", logger: logger
                ).decode(String.self) { names.append(name) }
                return names
            }
        }

        @Test(
            "two stores with maximumPartitions 5 and one partition held: 20 first loads of new partitions at once create exactly 4, the rest throw PartitionCreationRefused; held partitions load"
        )
        func storesCreateAtMostTheCap() async throws {
            let url = try await TestDatabase.create()
            let first = try await openStore(url, name: "first", maximumPartitions: 5)
            let second = try await openStore(url, name: "second", maximumPartitions: 5)
            _ = try await first.summaries(of: "old")
            let outcomes = try await withThrowingTaskGroup(of: (String, Bool).self) { group in
                for index in 0..<20 {
                    let store = index.isMultiple(of: 2) ? first : second
                    group.addTask {
                        let name = "n\(index)"
                        do {
                            _ = try await store.summaries(of: name)
                            return (name, true)
                        } catch let refused as PartitionCreationRefused {
                            #expect(refused.partition == name)
                            #expect(refused.reason.contains("at most 5 partitions"), "\(refused)")
                            return (name, false)
                        }
                    }
                }
                var outcomes: [String: Bool] = [:]
                for try await (name, created) in group { outcomes[name] = created }
                return outcomes
            }
            let created = outcomes.filter(\.value).keys.sorted()
            #expect(created.count == 4, "created \(created)")
            #expect(try await Self.partitionNames(url) == (created + ["old"]).sorted())
            // Partitions the database holds load on any store, also one that never loaded them.
            let third = try await openStore(url, name: "third", maximumPartitions: 5)
            for name in created + ["old"] { _ = try await third.summaries(of: name) }
            #expect(try await third.historyID(of: "old") != 0)
            // A refused one stays refused, and was not created.
            let refused = try #require(outcomes.first { !$0.value }?.key)
            #expect(try await third.holdsPartition(refused) == false)
            await #expect(throws: PartitionCreationRefused.self) { try await third.historyID(of: refused) }
            #expect(try await Self.partitionNames(url).count == 5)
            for store in [first, second, third] { await store.close() }
        }

        /// One bind's outcome: bound (its first download) or refused (the error).
        private static func outcome(of client: WireTestClient) async throws -> ProtocolError? {
            switch try await client.next() {
            case .download: return nil
            case .error(let error): return error
            case let other: throw WireTestClient.Unexpected(description: "expected a download or an error: \(other)")
            }
        }

        @Test(
            "two front ends with a cap of 2 and 1 partition held, each having counted it: binding two new partitions at once, one on each, creates one; the other session is permissionDenied"
        )
        func frontEndsShareTheCap() async throws {
            let url = try await createDatabase(holding: "old")
            let frontEnds = try await InProcessFrontEnd.start(
                url, names: ["fe-a", "fe-b"], logLevel: .error, maximumPartitions: 2)
            var clients: [WireTestClient] = []
            for frontEnd in frontEnds {
                let client = try await WireTestClient.welcomed(
                    on: WebSocketTransport().connect(to: .webSocket(host: "127.0.0.1", port: frontEnd.port)))
                // Each front end counts the database's partitions (1) before this bind loads "old".
                #expect(try await client.bind(1, partition: "old", clientFileID: 7).flatMap(\.entries).count == 1)
                clients.append(client)
            }
            for (index, client) in clients.enumerated() {
                client.send(
                    .bind(Bind(sessionID: 2, partition: "new\(index)", clientFileID: 7, downloadedVersion: 0)))
            }
            var refusals: [ProtocolError] = []
            for client in clients {
                if let error = try await Self.outcome(of: client) { refusals.append(error) }
            }
            #expect(refusals.count == 1, "\(refusals)")
            for refused in refusals {
                #expect(refused.code == .permissionDenied, "\(refused)")
                #expect(refused.sessionID == 2)
                #expect(refused.retryAfterMilliseconds == nil)
                #expect(refused.message.contains("at most 2 partitions"), "\(refused.message)")
            }
            let names = try await Self.partitionNames(url)
            #expect(names.count == 2 && names.contains("old"), "\(names)")
            // The partitions held bind on either front end.
            for client in clients {
                for (index, name) in names.enumerated() {
                    _ = try await client.bind(UInt32(10 + index), partition: name, clientFileID: 8)
                }
            }
            for client in clients { client.connection.close() }
            for frontEnd in frontEnds { await frontEnd.stop() }
        }
    }
}

extension PostgresTests.FrontEndProcessTests {
    @Test(
        "two sync-server-pg with --max-partitions-on-disk 2 and 1 partition held, each having counted it: a new partition on each creates one; the other bind is permissionDenied"
    )
    func partitionsOnDiskAcrossFrontEnds() async throws {
        let url = try await createDatabase(holding: "old")
        var servers: [ChildProcess] = []
        var clients: [WireTestClient] = []
        for name in ["fe1", "fe2"] {
            let server = try ChildProcess(
                port: 0, database: database(url, name: name), extra: ["--max-partitions-on-disk", "2"])
            servers.append(server)
            let client = try await WireTestClient.welcomed(
                on: WebSocketTransport().connect(to: .webSocket(host: "127.0.0.1", port: try await server.port())))
            // Each front end counts the database's partitions (1) before this bind loads "old".
            _ = try await client.bind(1, partition: "old", clientFileID: 7)
            clients.append(client)
        }
        for (index, client) in clients.enumerated() {
            client.send(.bind(Bind(sessionID: 2, partition: "new\(index)", clientFileID: 7, downloadedVersion: 0)))
        }
        var refusals: [ProtocolError] = []
        for client in clients {
            switch try await client.next() {
            case .download: break
            case .error(let error): refusals.append(error)
            case let other: Issue.record("expected a download or an error: \(other)")
            }
        }
        #expect(refusals.map(\.code) == [.permissionDenied], "\(refusals)")
        #expect(refusals.allSatisfy { $0.sessionID == 2 && $0.retryAfterMilliseconds == nil }, "\(refusals)")
        let names = try await PostgresTests.PartitionCapTests.partitionNames(url)
        #expect(names.count == 2 && names.contains("old"), "\(names)")
        for client in clients { client.connection.close() }
        for server in servers { #expect(try await server.stop(SIGTERM) == 0, "\(server.stderr)") }
    }
}
