import Foundation
import SyncStorage
import Testing

@testable import SyncServer
@testable import SyncWire

/// A wall clock the test sets.
final class TestClock: @unchecked Sendable {
    // @unchecked Sendable: `date` is only touched under `lock`.
    private let lock = NSLock()
    private var date: Date

    init(_ start: Date = Date(timeIntervalSince1970: 1_700_000_000)) { date = start }

    var now: Date { lock.withLock { date } }
    func advance(days: Double) { advance(seconds: days * 86_400) }
    func advance(seconds: Double) { lock.withLock { date += seconds } }
    var read: @Sendable () -> Date { { self.now } }
}

/// The server's side of client reset: forgetting client files offline longer than the maximum, durably,
/// and refusing their binds (and binds beyond the log) with what the client needs to recover exactly.
@Suite("Client reset on the server", .timeLimit(.minutes(5)))
struct ClientResetTests {
    private let thirtyDays: Duration = .seconds(30 * 86_400)

    private func server(
        _ clock: TestClock, store: any PartitionStore = InMemoryPartitionStore()
    ) async throws -> SyncServer {
        try await SyncServer.embedded(
            configuration: .init(store: store, maximumOfflineTime: thirtyDays, clock: clock.read))
    }

    /// Binds `clientFileID`, uploads `count` changesets from client version `from`, waits for their
    /// acknowledgement, unbinds.
    private func visit(
        _ server: SyncServer, clientFileID: UInt64, downloadedVersion: UInt64 = 0, uploading count: Int = 0,
        from first: UInt64 = 1
    ) async throws {
        let client = try await TestClient.welcomed(to: server)
        _ = try await client.bind(clientFileID: clientFileID, downloadedVersion: downloadedVersion)
        if count > 0 {
            client.upload(from: first, (0..<count).map { bytes(UInt8(first) + UInt8($0)) })
            #expect(try await client.nextEntries(count).count == count)
        }
        client.send(.unbind(sessionID: 1))
        #expect(try await client.next() == .unbound(sessionID: 1))
    }

    /// The error a bind of `clientFileID` gets.
    private func refusal(
        _ server: SyncServer, clientFileID: UInt64, downloadedVersion: UInt64 = 0
    ) async throws -> ProtocolError {
        let client = try await TestClient.welcomed(to: server)
        client.send(
            .bind(Bind(sessionID: 4, partition: "p", clientFileID: clientFileID, downloadedVersion: downloadedVersion)))
        return try await client.nextError()
    }

    @Test(
        "a client file unseen longer than the maximum is forgotten: its bind gets clientResetRequired with the last client version integrated, the log stays"
    )
    func offlineTooLongIsForgotten() async throws {
        let clock = TestClock()
        let server = try await server(clock)
        try await visit(server, clientFileID: 1, uploading: 2)
        clock.advance(days: 30)  // exactly the maximum: still known
        try await visit(server, clientFileID: 1, downloadedVersion: 2)
        clock.advance(days: 30)
        clock.advance(seconds: 1)
        let error = try await refusal(server, clientFileID: 1, downloadedVersion: 2)
        #expect(error.code == .clientResetRequired)
        #expect(error.code.isFatal)
        #expect(error.sessionID == 4)
        #expect(
            error.clientReset
                == ClientResetDetails(reason: .clientExpired, serverVersion: 2, lastIntegratedClientVersion: 2))
        // Forgotten for good, and only that client file; the changesets stay.
        #expect(try await refusal(server, clientFileID: 1).clientReset?.reason == .clientExpired)
        let other = try await TestClient.welcomed(to: server)
        #expect(entries(of: try await other.bind(clientFileID: 2)).map(\.serverVersion) == [1, 2])
        #expect(try await server.changesets(in: "p").map(\.clientFileID) == [1, 1])
    }

    @Test("a bound client file counts as seen: bound through twice the maximum, it is not forgotten")
    func boundIsSeen() async throws {
        let clock = TestClock()
        let server = try await server(clock)
        let bound = try await TestClient.welcomed(to: server)
        _ = try await bound.bind(clientFileID: 1)
        clock.advance(days: 61)
        try await visit(server, clientFileID: 2)  // a bind: the server looks for client files to forget
        bound.upload(from: 1, [bytes(1)])
        #expect(try await bound.nextDownload().entries == [.acknowledged(serverVersion: 1, clientVersion: 1)])
        bound.send(.unbind(sessionID: 1))
        #expect(try await bound.next() == .unbound(sessionID: 1))
        clock.advance(days: 29)
        try await visit(server, clientFileID: 1, downloadedVersion: 1, uploading: 1, from: 2)
        #expect(try await server.changesets(in: "p").map(\.clientVersion) == [1, 2])
    }

    @Test("last-seen times and forgotten client files survive restarts of a file store")
    func durableAcrossRestarts() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ClientResetTests-\(UUID())")
            .path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clock = TestClock()
        func run(_ body: (SyncServer) async throws -> Void) async throws {
            let store = try FilePartitionStore(directory: directory)
            let server = try await server(clock, store: store)
            try await body(server)
            await server.stop()
            await store.close()
        }
        try await run { server in try await visit(server, clientFileID: 1, uploading: 1) }
        clock.advance(days: 20)
        try await run { server in try await visit(server, clientFileID: 2, downloadedVersion: 0) }
        clock.advance(days: 11)
        try await run { (server: SyncServer) async throws in
            // Client file 1 was last seen 31 days ago, client file 2 eleven days ago.
            let error = try await refusal(server, clientFileID: 1, downloadedVersion: 1)
            #expect(
                error.clientReset
                    == ClientResetDetails(reason: .clientExpired, serverVersion: 1, lastIntegratedClientVersion: 1))
            try await visit(server, clientFileID: 2, downloadedVersion: 1)
        }
        #expect(
            FileManager.default.fileExists(
                atPath: directory + "/" + StoreFileName.forPartition("p", suffix: ".clients")))
        clock.advance(days: 1)
        try await run { (server: SyncServer) async throws in
            #expect(try await refusal(server, clientFileID: 1).clientReset?.lastIntegratedClientVersion == 1)
            #expect(try await server.changesets(in: "p").map(\.data) == [bytes(1)])
        }
    }

    @Test("a bind beyond the log says what the server holds: its latest version and the file's last client version")
    func historyLostDetails() async throws {
        let server = try await SyncServer.embedded()
        #expect(
            try await refusal(server, clientFileID: 1, downloadedVersion: 5).clientReset
                == ClientResetDetails(reason: .historyLost, serverVersion: 0, lastIntegratedClientVersion: 0))
        try await visit(server, clientFileID: 1, uploading: 3)
        try await visit(server, clientFileID: 2, uploading: 1)
        #expect(
            try await refusal(server, clientFileID: 1, downloadedVersion: 9).clientReset
                == ClientResetDetails(reason: .historyLost, serverVersion: 4, lastIntegratedClientVersion: 3))
    }

    @Test(
        "a bind's first download carries the log's history id, later ones none; a bind from another history, or with acknowledgements the log lacks, gets historyLost"
    )
    func historyID() async throws {
        let store = InMemoryPartitionStore()
        let server = try await SyncServer.embedded(configuration: .init(store: store))
        let id = try await (store as any PartitionStore).historyID(of: "p")
        #expect(id != 0)
        let client = try await TestClient.welcomed(to: server)
        client.send(.bind(Bind(sessionID: 1, partition: "p", clientFileID: 1, downloadedVersion: 0)))
        #expect(try await client.nextDownload().historyID == id)
        client.upload(from: 1, [bytes(1), bytes(2)])
        let later = try await client.nextDownload()
        #expect(later.entries.count == 2)
        #expect(later.historyID == nil)
        // The same history (or none known) binds.
        let again = try await TestClient.welcomed(to: server)
        again.send(
            .bind(
                Bind(
                    sessionID: 1, partition: "p", clientFileID: 1, downloadedVersion: 2, historyID: id,
                    acknowledgedClientVersion: 2)))
        #expect(try await again.nextDownload() == Download(sessionID: 1, entries: [], remainingBytes: 0, historyID: id))
        let unknown = try await TestClient.welcomed(to: server)
        unknown.send(.bind(Bind(sessionID: 1, partition: "p", clientFileID: 2, downloadedVersion: 2)))
        #expect(try await unknown.nextDownload().historyID == id)
        // Another history.
        let other = try await TestClient.welcomed(to: server)
        other.send(
            .bind(Bind(sessionID: 1, partition: "p", clientFileID: 3, downloadedVersion: 1, historyID: id &+ 1)))
        let refused = try await other.nextError()
        #expect(refused.code == .clientResetRequired)
        #expect(
            refused.clientReset
                == ClientResetDetails(reason: .historyLost, serverVersion: 2, lastIntegratedClientVersion: 0))
        // Acknowledgements the log lacks: client file 1 holds only versions 1 and 2.
        let restored = try await TestClient.welcomed(to: server)
        restored.send(
            .bind(
                Bind(
                    sessionID: 1, partition: "p", clientFileID: 1, downloadedVersion: 2, historyID: id,
                    acknowledgedClientVersion: 3)))
        #expect(
            try await restored.nextError().clientReset
                == ClientResetDetails(reason: .historyLost, serverVersion: 2, lastIntegratedClientVersion: 2))
    }

    @Test(
        "a bind whose checkpoint the log does not hold (other bytes there, or past its end: a server restored from an older copy of the same history) gets historyLost, before any expiry; the log's own checkpoint, or none (a version 5 client), binds",
        arguments: [false, true])
    func checkpoint(fileStore: Bool) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("DownloadedDigest-\(UUID())")
            .path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clock = TestClock()
        let memory = InMemoryPartitionStore()
        func open() throws -> any PartitionStore { fileStore ? try FilePartitionStore(directory: directory) : memory }
        let written = try open()
        let writer = try await server(clock, store: written)
        try await visit(writer, clientFileID: 1, uploading: 2)  // versions 1, 2: bytes(1), bytes(2) of client file 1
        await writer.stop()
        if let file = written as? FilePartitionStore { await file.close() }
        // Another server over the same log: a file store reads version 2 back from its file.
        let store = try open()
        let server = try await server(clock, store: store)
        let id = try await store.historyID(of: "p")
        func bind(
            _ clientFileID: UInt64, digest: UInt32?, at version: UInt64 = 2, acknowledged: UInt64 = 0,
            protocolVersion: UInt16 = WireProtocol.version
        ) async throws -> ServerMessage {
            let client = try await TestClient(server)
            client.send(.hello(Hello(protocolVersion: protocolVersion, credential: .anonymous)))
            #expect(
                try await client.next()
                    == .welcome(
                        protocolVersion: protocolVersion, maximumMessageBytes: UInt32(WireProtocol.maximumMessageSize)))
            client.send(
                .bind(
                    Bind(
                        sessionID: 1, partition: "p", clientFileID: clientFileID, downloadedVersion: 2, historyID: id,
                        acknowledgedClientVersion: acknowledged,
                        checkpoint: digest.map { LogCheckpoint(serverVersion: version, digest: $0) })))
            let answer = try await client.next()
            if case .download = answer {
                // Unbound: a bound client file counts as seen.
                client.send(.unbind(sessionID: 1))
                #expect(try await client.next() == .unbound(sessionID: 1))
            }
            return answer
        }
        func historyLost(lastIntegratedClientVersion: UInt64) -> ClientResetDetails {
            ClientResetDetails(
                reason: .historyLost, serverVersion: 2, lastIntegratedClientVersion: lastIntegratedClientVersion)
        }
        let bound = ServerMessage.download(Download(sessionID: 1, entries: [], remainingBytes: 0, historyID: id))
        let held = CRC32.checksum(bytes(2))
        // A reader (client file 2) holding the log's version 2 binds; one holding other bytes there is reset.
        #expect(try await bind(2, digest: held) == bound)
        let other = try await bind(2, digest: CRC32.checksum(bytes(22)))
        #expect(other.protocolError?.code == .clientResetRequired)
        #expect(other.protocolError?.clientReset == historyLost(lastIntegratedClientVersion: 0))
        #expect(try await bind(2, digest: CRC32.checksum(bytes(1)), at: 1) == bound)
        // A checkpoint past the log's end (a store a clientExpired reset replaced had got further).
        let past = try await bind(2, digest: held, at: 3)
        #expect(past.protocolError?.clientReset == historyLost(lastIntegratedClientVersion: 0))
        // The writer holds its own changeset at version 2, acknowledged.
        #expect(try await bind(1, digest: held, acknowledged: 2) == bound)
        let ownOther = try await bind(1, digest: held &+ 1, acknowledged: 2)
        #expect(ownOther.protocolError?.clientReset == historyLost(lastIntegratedClientVersion: 2))
        // A version 5 client names no digest: nothing to check.
        #expect(try await bind(2, digest: nil, protocolVersion: 5) == bound)
        // Offline too long and holding other bytes: historyLost first (its changesets feed starts again from
        // the new log), then, with the right bytes, clientExpired.
        clock.advance(days: 31)
        #expect(
            try await bind(1, digest: held &+ 1, acknowledged: 2).protocolError?.clientReset?.reason == .historyLost)
        #expect(try await bind(1, digest: held, acknowledged: 2).protocolError?.clientReset?.reason == .clientExpired)
        await server.stop()
        if let file = store as? FilePartitionStore { await file.close() }
    }

    @Test(
        "a forgotten client file whose bind saw client versions acknowledged that the log lacks (a server restored from an older copy) gets historyLost, not clientExpired"
    )
    func forgottenWithAcknowledgementsTheLogLacks() async throws {
        // Simulation seed 2318 (finding 14 of docs/RELIABILITY.md): the checkpoint's changeset matched, the
        // expiry answered clientExpired, and the reset's changesets feed carried on past versions the restored
        // log had given other content.
        let clock = TestClock()
        let server = try await server(clock)
        try await visit(server, clientFileID: 1, uploading: 2)  // client versions 1, 2 at server versions 1, 2
        clock.advance(days: 31)
        func bind(acknowledged: UInt64) async throws -> ClientResetDetails? {
            let client = try await TestClient.welcomed(to: server)
            client.send(
                .bind(
                    Bind(
                        sessionID: 4, partition: "p", clientFileID: 1, downloadedVersion: 2,
                        acknowledgedClientVersion: acknowledged)))
            return try await client.nextError().clientReset
        }
        let lost = ClientResetDetails(reason: .historyLost, serverVersion: 2, lastIntegratedClientVersion: 2)
        // Client version 3 was acknowledged by a log the server no longer has: history lost, as the bind
        // that forgets the client file and as any later one.
        #expect(try await bind(acknowledged: 3) == lost)
        #expect(
            try await bind(acknowledged: 2)
                == ClientResetDetails(reason: .clientExpired, serverVersion: 2, lastIntegratedClientVersion: 2))
        #expect(try await bind(acknowledged: 3) == lost)
    }

    @Test(
        "a re-upload of an integrated client version with other bytes (a copied client file) gets clientResetRequired after the last matching version; an identical one is still dropped"
    )
    func divergedReupload() async throws {
        let server = try await SyncServer.embedded()
        try await visit(server, clientFileID: 1, uploading: 2)  // versions 1, 2: bytes(1), bytes(2)
        let copy = try await TestClient.welcomed(to: server)
        _ = try await copy.bind(clientFileID: 1, downloadedVersion: 2)
        copy.upload(from: 2, [bytes(2)])  // the same bytes: a re-upload, dropped
        try await copy.expectNothingPending()
        copy.upload(from: 2, [bytes(9), bytes(10)])  // version 2 written again, differently
        let error = try await copy.nextError()
        #expect(error.code == .clientResetRequired)
        #expect(
            error.clientReset
                == ClientResetDetails(reason: .historyLost, serverVersion: 2, lastIntegratedClientVersion: 1))
        #expect(try await server.changesets(in: "p").map(\.data) == [bytes(1), bytes(2)])
    }

    @Test(
        "an upload past what the log holds of its client file (the server lost those versions) gets clientResetRequired (historyLost) with the last integrated version, not badClientVersion"
    )
    func uploadPastTheLogIsAReset() async throws {
        let server = try await SyncServer.embedded()
        try await visit(server, clientFileID: 1, uploading: 2)
        try await visit(server, clientFileID: 2, uploading: 3)  // the log: 5 versions, client file 1 up to 2
        let client = try await TestClient.welcomed(to: server)
        _ = try await client.bind(clientFileID: 1, downloadedVersion: 5)
        client.upload(from: 5, [bytes(5)])  // versions 3 and 4 were integrated by a server that lost them
        let error = try await client.nextError()
        #expect(error.code == .clientResetRequired)
        #expect(error.sessionID == 1)
        #expect(
            error.clientReset
                == ClientResetDetails(reason: .historyLost, serverVersion: 5, lastIntegratedClientVersion: 2))
        #expect(try await server.changesets(in: "p").count == 5)
    }
    @Test("without a maximum offline time nothing is recorded or forgotten")
    func withoutAMaximum() async throws {
        let clock = TestClock()
        let store = InMemoryPartitionStore()
        let server = try await SyncServer.embedded(configuration: .init(store: store, clock: clock.read))
        try await visit(server, clientFileID: 1, uploading: 1)
        clock.advance(days: 3650)
        try await visit(server, clientFileID: 1, downloadedVersion: 1, uploading: 1, from: 2)
        #expect(try await store.clientFileRecords(of: "p").isEmpty)
    }

    @Test("the side file keeps the latest record per client file and is compacted when reopened")
    func sideFileCompaction() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ClientFileLog-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/" + StoreFileName.forPartition("p", suffix: ".clients")
        let start = Date(timeIntervalSince1970: 1_700_000_000)
        do {
            let store = try FilePartitionStore(directory: directory)
            for step in 0..<100 {
                try await store.appendClientFileRecords(
                    [
                        .seen(clientFileID: 1, at: start + Double(step)),
                        .seen(clientFileID: 2, at: start + Double(step) + 0.5),
                    ], to: "p")
            }
            try await store.appendClientFileRecords(
                [.expired(clientFileID: 2, lastIntegratedClientVersion: 7, at: start + 1000)], to: "p")
            await store.close()
        }
        let before = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
        let expected: [ClientFileRecord] = [
            .seen(clientFileID: 1, at: start + 99),
            .expired(clientFileID: 2, lastIntegratedClientVersion: 7, at: start + 1000),
        ]
        for _ in 0..<2 {
            let store = try FilePartitionStore(directory: directory)
            #expect(try await store.clientFileRecords(of: "p") == expected)
            await store.close()
        }
        let after = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
        #expect(after < before / 10, "\(before) → \(after) bytes")
        #expect(!FileManager.default.fileExists(atPath: path + ".compacting"))
    }
}

extension ServerMessage {
    /// The error, when the message is one.
    fileprivate var protocolError: ProtocolError? {
        if case .error(let error) = self { error } else { nil }
    }
}
