import Foundation
import SyncServer
import SyncStorage
import SyncWire
import Testing

/// Each changeset has an origin — where it was first written (`UploadChangeset.origin`) — and the server
/// integrates each origin once (finding 13 of docs/RELIABILITY.md): a client store restored from a backup
/// taken before a recovering client reset, reset and recovering the same changeset again, uploads it under a
/// new client file with the origin it had; the server acknowledges it without delivering it twice.
@Suite("Changeset origins", .timeLimit(.minutes(5)))
struct ChangesetOriginTests {
    private func upload(
        _ client: TestClient, _ clientVersion: UInt64, _ data: [UInt8], origin: ChangesetOrigin? = nil
    ) {
        client.send(
            .upload(
                Upload(
                    sessionID: 1,
                    changesets: [UploadChangeset(clientVersion: clientVersion, data: data, origin: origin)])
            ))
    }

    @Test(
        "an upload of an origin the log holds with the same bytes is acknowledged to its uploader as a duplicate entry, reaches others empty, and is still known after a restart; other bytes under that origin are integrated",
        arguments: [false, true])
    func duplicateOrigin(fileStore: Bool) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("Origins-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let memory = InMemoryPartitionStore()
        func open() throws -> any PartitionStore { fileStore ? try FilePartitionStore(directory: directory) : memory }
        let first = try open()
        let server = try await SyncServer.embedded(configuration: .init(store: first))
        let writer = try await TestClient.welcomed(to: server)
        let reader = try await TestClient.welcomed(to: server)
        let recovered = try await TestClient.welcomed(to: server)
        _ = try await writer.bind(clientFileID: 10)
        _ = try await reader.bind(clientFileID: 20)
        _ = try await recovered.bind(clientFileID: 30)

        // Client file 10 writes bytes(1) as its client version 1 ("uploaded itself").
        upload(writer, 1, bytes(1))
        #expect(try await writer.nextDownload().entries == [.acknowledged(serverVersion: 1, clientVersion: 1)])
        #expect(try await reader.nextDownload().entries == [.changeset(serverVersion: 1, data: bytes(1))])
        _ = try await recovered.nextDownload()
        // Client file 30 holds it again, recovered by a client reset of a restored copy of client file 10.
        upload(recovered, 1, bytes(1), origin: ChangesetOrigin(clientFileID: 10, clientVersion: 1))
        let acknowledgement = try await recovered.nextDownload()
        #expect(acknowledgement.entries == [.acknowledged(serverVersion: 2, clientVersion: 1)])
        #expect(acknowledgement.acknowledgedDigests == [CRC32.checksum(bytes(1))])
        #expect(try await reader.nextDownload().entries == [.changeset(serverVersion: 2, data: [])])
        _ = try await writer.nextDownload()
        // Its own next changeset follows (client versions of client file 30: 1, 2).
        upload(recovered, 2, bytes(2))
        #expect(try await recovered.nextDownload().entries == [.acknowledged(serverVersion: 3, clientVersion: 2)])
        #expect(try await reader.nextDownload().entries == [.changeset(serverVersion: 3, data: bytes(2))])
        _ = try await writer.nextDownload()
        // The same origin with other bytes (a copied client file that reused the version) is integrated.
        upload(recovered, 3, bytes(9), origin: ChangesetOrigin(clientFileID: 10, clientVersion: 1))
        #expect(try await recovered.nextDownload().entries == [.acknowledged(serverVersion: 4, clientVersion: 3)])
        #expect(try await reader.nextDownload().entries == [.changeset(serverVersion: 4, data: bytes(9))])
        let log = try await server.changesets(in: "p")
        #expect(log.map(\.duplicateOf) == [nil, 1, nil, nil])
        #expect(log.map(\.effectiveOrigin.clientFileID) == [10, 10, 30, 10])
        await server.stop()
        if let file = first as? FilePartitionStore { await file.close() }

        // Another server over the same log: the origins are read back from it.
        let store = try open()
        let restarted = try await SyncServer.embedded(configuration: .init(store: store))
        let again = try await TestClient.welcomed(to: restarted)
        _ = try await again.bind(clientFileID: 40)
        // Recovered twice: client file 40 recovered client file 30's changeset 1, which keeps its first origin.
        upload(again, 1, bytes(1), origin: ChangesetOrigin(clientFileID: 10, clientVersion: 1))
        #expect(try await again.nextDownload().entries == [.acknowledged(serverVersion: 5, clientVersion: 1)])
        // Client file 30's own changeset 2, recovered.
        upload(again, 2, bytes(2), origin: ChangesetOrigin(clientFileID: 30, clientVersion: 2))
        #expect(try await again.nextDownload().entries == [.acknowledged(serverVersion: 6, clientVersion: 2)])
        // Client file 30 binds again and goes on after its duplicate entry.
        let back = try await TestClient.welcomed(to: restarted)
        back.send(
            .bind(
                Bind(sessionID: 1, partition: "p", clientFileID: 30, downloadedVersion: 4, acknowledgedClientVersion: 3)
            ))
        // Client file 40's duplicates reach it empty.
        #expect(
            try await back.nextDownload().entries == [
                .changeset(serverVersion: 5, data: []), .changeset(serverVersion: 6, data: []),
            ])
        upload(back, 4, bytes(4))
        #expect(try await back.nextDownload().entries == [.acknowledged(serverVersion: 7, clientVersion: 4)])
        // A new reader gets every changeset once, duplicates empty.
        let fresh = try await TestClient.welcomed(to: restarted)
        let entries = try await fresh.bind(clientFileID: 50).flatMap(\.entries)
        #expect(
            entries.map { entry -> [UInt8] in
                if case .changeset(_, let data) = entry { data } else { [0xFF] }
            } == [bytes(1), [], bytes(2), bytes(9), [], [], bytes(4)])
        let final = try await restarted.changesets(in: "p")
        #expect(final.map(\.duplicateOf) == [nil, 1, nil, nil, 1, 3, nil])
        await restarted.stop()
        if let file = store as? FilePartitionStore { await file.close() }
    }

    @Test("the file store reads a log written before origins (format 1) and writes format 1 for entries without one")
    func fileStoreFormats() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("Origins-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let plain = StoredChangeset(serverVersion: 1, clientFileID: 3, clientVersion: 1, data: [1, 2], owner: "o")
        let named = StoredChangeset(
            serverVersion: 2, clientFileID: 4, clientVersion: 1, data: [1, 2], owner: "o",
            origin: ChangesetOrigin(clientFileID: 3, clientVersion: 1), duplicateOf: 1)
        do {
            let store = try FilePartitionStore(directory: directory)
            #expect(try await store.summaries(of: "p").isEmpty)
            try await store.append([plain, named], to: "p")
            await store.close()
        }
        let store = try FilePartitionStore(directory: directory)
        #expect(try await store.summaries(of: "p") == [plain.summary, named.summary])
        #expect(try await store.read(1...2, of: "p") == [plain, named])
        await store.close()
        // The file's first record is in format 1, byte for byte as before origins.
        let file = try FileManager.default.contentsOfDirectory(atPath: directory).first { $0.hasSuffix(".log") }
        let contents = try [UInt8](Data(contentsOf: URL(fileURLWithPath: directory + "/" + (file ?? ""))))
        let formatOne: [UInt8] = [1, 1, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0]
        #expect(contents.firstRange(of: formatOne + Array("o".utf8) + [1, 2]) != nil)
    }
}
