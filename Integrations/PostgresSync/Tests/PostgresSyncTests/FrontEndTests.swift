import Foundation
import PostgresSync
import SyncEngine
import SyncServer
import TestSupport
import Testing

extension PostgresTests {
    /// Two `SyncServer`s in this process, each with its own `PostgresPartitionStore` (its own pool and
    /// listening connection) on one database, and engine clients on each over loopback WebSocket.
    @Suite("Front ends in one process")
    struct FrontEndTests {
        @Test(
            "clients on two front ends uploading to one partition at once end with the same log, byte for byte, in the same order"
        )
        func twoFrontEndsConverge() async throws {
            let url = try await TestDatabase.create()
            let frontEnds = try await InProcessFrontEnd.start(url, names: ["fe-a", "fe-b"], logLevel: .error)
            let ports = frontEnds.map(\.port)
            let perWriter = 40
            var writers: [Client] = []
            for index in 0..<4 { writers.append(try await Client(tag: "w\(index)", port: ports[index % 2])) }
            let readers = [try await Client(tag: "r0", port: ports[0]), try await Client(tag: "r1", port: ports[1])]
            try await Client.writeAtOnce(writers, count: perWriter)
            let total = writers.count * perWriter
            let log = try await frontEnds[0].store.read(1...UInt64(total + 10), of: "p")
            #expect(log.map(\.serverVersion) == Array(1...UInt64(total)))
            for client in readers + writers {
                try await eventually("\(client.tag) holds \(total) changesets") {
                    client.received.values.count >= total
                }
                #expect(differences(of: client, from: log) == [])
            }
            for client in readers + writers { await client.close() }
            for frontEnd in frontEnds { await frontEnd.stop() }
        }
    }
}

extension PostgresTests.FrontEndTests {
    @Test(
        "many writers on two front ends contending for one partition cost retries only: no session error reaches any app, every changeset is stored once"
    )
    func contentionCostsRetriesOnly() async throws {
        let url = try await TestDatabase.create()
        let frontEnds = try await InProcessFrontEnd.start(url, names: ["fe-a", "fe-b"], logLevel: .error)
        let ports = frontEnds.map(\.port)
        let perWriter = 30
        var writers: [Client] = []
        for index in 0..<8 { writers.append(try await Client(tag: "w\(index)", port: ports[index % 2])) }
        try await Client.writeAtOnce(writers, count: perWriter)
        let total = writers.count * perWriter
        let log = try await frontEnds[0].store.read(1...UInt64(total + 10), of: "p")
        #expect(log.map(\.serverVersion) == Array(1...UInt64(total)))
        for writer in writers {
            let own = log.filter { writer.isOwn($0.data) }.map(\.data)
            #expect(own == writer.written.map { Array($0) }, "\(writer.tag)'s changesets in the log")
            #expect(writer.errors.values.isEmpty, "\(writer.tag): \(writer.errors.values.map(\.error))")
        }
        for client in writers { await client.close() }
        for frontEnd in frontEnds { await frontEnd.stop() }
    }
}
