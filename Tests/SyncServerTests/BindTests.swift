import SyncServer
import SyncStorage
import SyncWire
import Testing

@Suite("Bind", .timeLimit(.minutes(5)))
struct BindTests {
    @Test func bindOnEmptyPartitionSendsOneEmptyDownload() async throws {
        let server = try await SyncServer.embedded()
        let client = try await TestClient.welcomed(to: server)
        let downloads = try await client.bind(7, clientFileID: 1)
        #expect(downloads == [Download(sessionID: 7, entries: [], remainingBytes: 0)])
        try await client.expectNothingPending()
    }

    @Test func backlogIsChunkedWithExactRemainingBytes() async throws {
        let server = try await SyncServer.embedded(configuration: .init(maximumDownloadMessageBytes: 100))
        let writer = try await TestClient.welcomed(to: server)
        _ = try await writer.bind(clientFileID: 1)
        writer.upload(from: 1, (1...10).map { bytes($0, count: 40) })
        #expect(try await writer.nextDownload().entries.count == 10)

        let reader = try await TestClient.welcomed(to: server)
        let downloads = try await reader.bind(clientFileID: 2)
        #expect(downloads.map(\.remainingBytes) == [320, 240, 160, 80, 0])
        #expect(downloads.allSatisfy { $0.entries.count == 2 && $0.sessionID == 1 })
        let all = entries(of: downloads)
        #expect(all.map(\.serverVersion) == Array(1...10))
        #expect(all == (1...10).map { .changeset(serverVersion: UInt64($0), data: bytes(UInt8($0), count: 40)) })
        try await reader.expectNothingPending()
    }

    @Test func aChangesetBiggerThanTheDownloadLimitTravelsAlone() async throws {
        let server = try await SyncServer.embedded(configuration: .init(maximumDownloadMessageBytes: 10))
        let writer = try await TestClient.welcomed(to: server)
        _ = try await writer.bind(clientFileID: 1)
        writer.upload(from: 1, [bytes(1, count: 3), bytes(2, count: 50), bytes(3, count: 3)])
        _ = try await writer.nextDownload()

        let reader = try await TestClient.welcomed(to: server)
        let downloads = try await reader.bind(clientFileID: 2)
        #expect(downloads.map(\.entries.count) == [1, 1, 1])
        #expect(downloads.map(\.remainingBytes) == [53, 3, 0])
    }

    @Test func rebindWithDownloadedVersionSkipsWhatTheClientHas() async throws {
        let server = try await SyncServer.embedded()
        let writer = try await TestClient.welcomed(to: server)
        _ = try await writer.bind(clientFileID: 1)
        writer.upload(from: 1, [bytes(1), bytes(2), bytes(3)])
        _ = try await writer.nextDownload()

        let reader = try await TestClient.welcomed(to: server)
        let downloads = try await reader.bind(clientFileID: 2, downloadedVersion: 2)
        #expect(
            downloads == [
                Download(sessionID: 1, entries: [.changeset(serverVersion: 3, data: bytes(3))], remainingBytes: 0)
            ])

        let upToDate = try await TestClient.welcomed(to: server)
        #expect(
            try await upToDate.bind(clientFileID: 3, downloadedVersion: 3) == [
                Download(sessionID: 1, entries: [], remainingBytes: 0)
            ])
    }

    @Test func ownChangesetsComeBackAsAcknowledgementsOnRebind() async throws {
        let server = try await SyncServer.embedded()
        let a = try await TestClient.welcomed(to: server)
        let b = try await TestClient.welcomed(to: server)
        _ = try await a.bind(clientFileID: 1)
        _ = try await b.bind(clientFileID: 2)
        a.upload(from: 1, [bytes(1)])
        _ = try await a.nextDownload()
        b.upload(from: 1, [bytes(2, count: 5)])
        _ = try await a.nextDownload()
        a.upload(from: 2, [bytes(3)])
        _ = try await a.nextDownload()
        a.close()

        let again = try await TestClient.welcomed(to: server)
        let downloads = try await again.bind(clientFileID: 1)
        #expect(
            downloads == [
                Download(
                    sessionID: 1,
                    entries: [
                        .acknowledged(serverVersion: 1, clientVersion: 1),
                        .changeset(serverVersion: 2, data: bytes(2, count: 5)),
                        .acknowledged(serverVersion: 3, clientVersion: 2),
                    ],
                    remainingBytes: 0,
                    acknowledgedDigests: [CRC32.checksum(bytes(1)), CRC32.checksum(bytes(3))]
                )
            ]
        )
    }

    @Test func permissionIsCheckedPerAPIKey() async throws {
        let server = try await SyncServer.embedded(
            configuration: .init(authentication: .apiKeys(["limited": ["mine"], "admin": ["*"]]))
        )
        let limited = try await TestClient.welcomed(to: server, credential: .apiKey("limited"))
        limited.send(.bind(Bind(sessionID: 4, partition: "theirs", clientFileID: 1, downloadedVersion: 0)))
        let error = try await limited.nextError()
        #expect(error.code == .permissionDenied)
        #expect(error.sessionID == 4)
        #expect(try await limited.bind(4, partition: "mine", clientFileID: 1).count == 1)

        let admin = try await TestClient.welcomed(to: server, credential: .apiKey("admin"))
        #expect(try await admin.bind(partition: "theirs", clientFileID: 2).count == 1)
    }

    @Test func duplicateSessionIDIsRefusedAndTheFirstKeepsStreaming() async throws {
        let server = try await SyncServer.embedded()
        let client = try await TestClient.welcomed(to: server)
        _ = try await client.bind(1, partition: "p", clientFileID: 1)
        client.send(.bind(Bind(sessionID: 1, partition: "q", clientFileID: 1, downloadedVersion: 0)))
        let error = try await client.nextError()
        #expect(error.code == .sessionAlreadyBound)
        #expect(error.sessionID == 1)

        let other = try await TestClient.welcomed(to: server)
        _ = try await other.bind(partition: "p", clientFileID: 2)
        other.upload(from: 1, [bytes(9)])
        #expect(try await client.nextDownload().entries == [.changeset(serverVersion: 1, data: bytes(9))])
    }

    @Test("a client holding versions beyond the server's log is told to reset, not to retry")
    func downloadedVersionBeyondTheLogRequiresAClientReset() async throws {
        let server = try await SyncServer.embedded()
        let client = try await TestClient.welcomed(to: server)
        client.send(.bind(Bind(sessionID: 3, partition: "p", clientFileID: 1, downloadedVersion: 5)))
        let error = try await client.nextError()
        #expect(error.code == .clientResetRequired)
        #expect(error.code.isFatal)
        #expect(error.sessionID == 3)
        #expect(try await client.bind(3, clientFileID: 1).count == 1)
    }

    @Test func storeLoadFailureIsAnInternalErrorToRetry() async throws {
        let store = ControllableStore()
        await store.setFailures(loads: true, appends: false)
        let server = try await SyncServer.embedded(configuration: .init(store: store))
        let client = try await TestClient.welcomed(to: server)
        client.send(.bind(Bind(sessionID: 2, partition: "p", clientFileID: 1, downloadedVersion: 0)))
        let error = try await client.nextError()
        #expect(error.code == .internalError)
        #expect(error.sessionID == 2)
        #expect(error.retryAfterMilliseconds == 1000)

        await store.setFailures(loads: false, appends: false)
        #expect(try await client.bind(2, clientFileID: 1).count == 1)
    }

    @Test func aBrokenStoredLogIsRefused() async throws {
        let broken = StoredChangeset(serverVersion: 2, clientFileID: 1, clientVersion: 1, data: [])
        let server = try await SyncServer.embedded(
            configuration: .init(store: ControllableStore(logs: ["p": [broken]]))
        )
        let client = try await TestClient.welcomed(to: server)
        client.send(.bind(Bind(sessionID: 1, partition: "p", clientFileID: 1, downloadedVersion: 0)))
        #expect(try await client.nextError().code == .internalError)
        await #expect(throws: PartitionLogError(partition: "p", expectedServerVersion: 1, foundServerVersion: 2)) {
            try await server.changesets(in: "p")
        }
    }

    @Test func aNewServerOnTheSameStoreServesTheSameLog() async throws {
        let store = InMemoryPartitionStore()
        let first = try await SyncServer.embedded(configuration: .init(store: store))
        let writer = try await TestClient.welcomed(to: first)
        _ = try await writer.bind(clientFileID: 1)
        writer.upload(from: 1, [bytes(1), bytes(2)])
        _ = try await writer.nextDownload()
        await first.stop()

        let second = try await SyncServer.embedded(configuration: .init(store: store))
        let reader = try await TestClient.welcomed(to: second)
        let downloads = try await reader.bind(clientFileID: 2)
        #expect(entries(of: downloads).map(\.serverVersion) == [1, 2])
        let writerAgain = try await TestClient.welcomed(to: second)
        _ = try await writerAgain.bind(clientFileID: 1, downloadedVersion: 2)
        writerAgain.upload(from: 1, [bytes(1), bytes(2), bytes(3)])
        #expect(try await writerAgain.nextDownload().entries == [.acknowledged(serverVersion: 3, clientVersion: 3)])
    }
}
