import SyncServer
import SyncWire
import Testing

@Suite("Concurrency", .timeLimit(.minutes(5)))
struct ConcurrencyTests {
    @Test func concurrentUploadersProduceOneGaplessOrderEveryoneSees() async throws {
        let clientCount = 6
        let uploadsPerClient = 10
        let changesetsPerUpload = 3
        let total = clientCount * uploadsPerClient * changesetsPerUpload
        let server = try await SyncServer.embedded(configuration: .init(maximumDownloadMessageBytes: 16))

        var clients: [TestClient] = []
        for index in 0..<clientCount {
            let client = try await TestClient.welcomed(to: server)
            _ = try await client.bind(clientFileID: UInt64(index + 1))
            clients.append(client)
        }

        await withTaskGroup(of: Void.self) { group in
            for (index, client) in clients.enumerated() {
                group.addTask {
                    for upload in 0..<uploadsPerClient {
                        let first = UInt64(upload * changesetsPerUpload + 1)
                        let data = (0..<changesetsPerUpload).map { offset in
                            [UInt8(index), UInt8(upload), UInt8(offset)]
                        }
                        client.upload(from: first, data)
                        await Task.yield()
                    }
                }
            }
        }

        var logs: [[DownloadEntry]] = []
        for client in clients {
            var seen: [DownloadEntry] = []
            while seen.count < total { seen += try await client.nextDownload().entries }
            logs.append(seen)
            try await client.expectNothingPending()
        }

        let log = try await server.changesets(in: "p")
        #expect(log.map(\.serverVersion) == (1...total).map(UInt64.init))
        for fileID in 1...UInt64(clientCount) {
            let versions = log.filter { $0.clientFileID == fileID }.map(\.clientVersion)
            #expect(versions == (1...(uploadsPerClient * changesetsPerUpload)).map(UInt64.init))
        }
        for (index, seen) in logs.enumerated() {
            let fileID = UInt64(index + 1)
            #expect(seen.map(\.serverVersion) == log.map(\.serverVersion))
            for (entry, stored) in zip(seen, log) {
                if stored.clientFileID == fileID {
                    #expect(
                        entry == .acknowledged(serverVersion: stored.serverVersion, clientVersion: stored.clientVersion)
                    )
                } else {
                    #expect(entry == .changeset(serverVersion: stored.serverVersion, data: stored.data))
                }
            }
        }
    }

    @Test func bindsRacingUploadsNeverSkipOrRepeatAVersion() async throws {
        let server = try await SyncServer.embedded()
        let writer = try await TestClient.welcomed(to: server)
        _ = try await writer.bind(clientFileID: 1)
        let total = 200
        let uploads = Task {
            for version in 1...total { writer.upload(from: UInt64(version), [bytes(UInt8(version % 256))]) }
        }
        var readers: [TestClient] = []
        for index in 0..<5 {
            let reader = try await TestClient.welcomed(to: server)
            reader.send(
                .bind(Bind(sessionID: 1, partition: "p", clientFileID: UInt64(index + 2), downloadedVersion: 0)))
            readers.append(reader)
        }
        await uploads.value
        for reader in readers {
            var seen: [UInt64] = []
            while seen.count < total { seen += try await reader.nextDownload().entries.map(\.serverVersion) }
            #expect(seen == (1...total).map(UInt64.init))
        }
    }
}
