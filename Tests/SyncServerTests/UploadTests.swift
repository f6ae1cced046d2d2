import SyncServer
import SyncStorage
import SyncWire
import Testing

@Suite("Upload", .timeLimit(.minutes(5)))
struct UploadTests {
    @Test func uploaderGetsAcknowledgementsAndOthersGetTheBytes() async throws {
        let server = try await SyncServer.embedded()
        let a = try await TestClient.welcomed(to: server)
        let b = try await TestClient.welcomed(to: server)
        _ = try await a.bind(1, clientFileID: 10)
        _ = try await b.bind(5, clientFileID: 20)

        a.upload(1, from: 1, [bytes(1), bytes(2, count: 6)])
        #expect(
            try await a.nextDownload()
                == Download(
                    sessionID: 1,
                    entries: [
                        .acknowledged(serverVersion: 1, clientVersion: 1),
                        .acknowledged(serverVersion: 2, clientVersion: 2),
                    ],
                    remainingBytes: 0,
                    acknowledgedDigests: [CRC32.checksum(bytes(1)), CRC32.checksum(bytes(2, count: 6))]
                )
        )
        #expect(
            try await b.nextDownload()
                == Download(
                    sessionID: 5,
                    entries: [
                        .changeset(serverVersion: 1, data: bytes(1)),
                        .changeset(serverVersion: 2, data: bytes(2, count: 6)),
                    ],
                    remainingBytes: 0
                )
        )

        b.upload(5, from: 1, [bytes(3)])
        #expect(try await b.nextDownload().entries == [.acknowledged(serverVersion: 3, clientVersion: 1)])
        #expect(try await a.nextDownload().entries == [.changeset(serverVersion: 3, data: bytes(3))])

        #expect(
            try await server.changesets(in: "p") == [
                StoredChangeset(
                    serverVersion: 1, clientFileID: 10, clientVersion: 1, data: bytes(1), owner: "anonymous"),
                StoredChangeset(
                    serverVersion: 2, clientFileID: 10, clientVersion: 2, data: bytes(2, count: 6), owner: "anonymous"),
                StoredChangeset(
                    serverVersion: 3, clientFileID: 20, clientVersion: 1, data: bytes(3), owner: "anonymous"),
            ]
        )
    }

    @Test func aBigUploadIsForwardedInChunks() async throws {
        let server = try await SyncServer.embedded(configuration: .init(maximumDownloadMessageBytes: 8))
        let a = try await TestClient.welcomed(to: server)
        let b = try await TestClient.welcomed(to: server)
        _ = try await a.bind(clientFileID: 1)
        _ = try await b.bind(clientFileID: 2)
        a.upload(from: 1, [bytes(1), bytes(2), bytes(3)])
        #expect(try await a.nextDownload().entries.count == 3)
        let first = try await b.nextDownload()
        let second = try await b.nextDownload()
        #expect(first.entries.map(\.serverVersion) == [1, 2])
        #expect(first.remainingBytes == 4)
        #expect(second.entries.map(\.serverVersion) == [3])
        #expect(second.remainingBytes == 0)
    }

    @Test func reuploadedChangesetsAreDroppedSilently() async throws {
        let server = try await SyncServer.embedded()
        let a = try await TestClient.welcomed(to: server)
        let b = try await TestClient.welcomed(to: server)
        _ = try await a.bind(clientFileID: 1)
        _ = try await b.bind(clientFileID: 2)
        a.upload(from: 1, [bytes(1), bytes(2)])
        _ = try await a.nextDownload()
        _ = try await b.nextDownload()

        a.upload(from: 1, [bytes(1), bytes(2), bytes(3)])
        #expect(try await a.nextDownload().entries == [.acknowledged(serverVersion: 3, clientVersion: 3)])
        #expect(try await b.nextDownload().entries == [.changeset(serverVersion: 3, data: bytes(3))])

        a.upload(from: 2, [bytes(2), bytes(3)])
        try await a.expectNothingPending()
        try await b.expectNothingPending()
        #expect(try await server.changesets(in: "p").map(\.clientVersion) == [1, 2, 3])
    }

    @Test func reuploadAfterALostAcknowledgementIsRecognisedOnRebind() async throws {
        let server = try await SyncServer.embedded()
        let a = try await TestClient.welcomed(to: server)
        _ = try await a.bind(clientFileID: 1)
        a.upload(from: 1, [bytes(1)])
        _ = try await a.nextDownload()  // the client "loses" this acknowledgement: it never records it
        a.close()

        let again = try await TestClient.welcomed(to: server)
        #expect(
            entries(of: try await again.bind(clientFileID: 1))
                == [.acknowledged(serverVersion: 1, clientVersion: 1)]
        )
        again.upload(from: 1, [bytes(1)])
        try await again.expectNothingPending()
        #expect(try await server.changesets(in: "p").count == 1)
    }

    @Test(arguments: [[UInt64(1), 1], [2, 1], [1, 3, 2]])
    func nonIncreasingClientVersionsAreRejected(versions: [UInt64]) async throws {
        let server = try await SyncServer.embedded()
        let a = try await TestClient.welcomed(to: server)
        _ = try await a.bind(4, clientFileID: 1)
        a.send(
            .upload(Upload(sessionID: 4, changesets: versions.map { UploadChangeset(clientVersion: $0, data: [1]) })))
        let error = try await a.nextError()
        #expect(error.code == .badClientVersion)
        #expect(error.sessionID == 4)
        #expect(try await server.changesets(in: "p").isEmpty)

        a.upload(4, from: 1, [bytes(1)])
        #expect(try await a.nextError().code == .unknownSession)
    }

    @Test func oversizedChangesetIsRejected() async throws {
        let server = try await SyncServer.embedded(configuration: .init(maximumChangesetBytes: 10))
        let a = try await TestClient.welcomed(to: server)
        _ = try await a.bind(2, clientFileID: 1)
        a.upload(2, from: 1, [bytes(1, count: 10), bytes(2, count: 11)])
        let error = try await a.nextError()
        #expect(error.code == .messageTooLarge)
        #expect(error.sessionID == 2)
        #expect(try await server.changesets(in: "p").isEmpty)
        try await a.expectNothingPending()
    }

    @Test func unknownSessionIsReportedForUploadAndUnbind() async throws {
        let server = try await SyncServer.embedded()
        let a = try await TestClient.welcomed(to: server)
        a.upload(8, from: 1, [bytes(1)])
        #expect(
            try await a.nextError()
                == ProtocolError(sessionID: 8, code: .unknownSession, message: "session 8 is not bound"))
        a.send(.unbind(sessionID: 9))
        let error = try await a.nextError()
        #expect(error.code == .unknownSession)
        #expect(error.sessionID == 9)
    }

    @Test func unbindStopsStreaming() async throws {
        let server = try await SyncServer.embedded()
        let a = try await TestClient.welcomed(to: server)
        let b = try await TestClient.welcomed(to: server)
        _ = try await a.bind(clientFileID: 1)
        _ = try await b.bind(3, clientFileID: 2)
        b.send(.unbind(sessionID: 3))
        #expect(try await b.next() == .unbound(sessionID: 3))
        a.upload(from: 1, [bytes(1)])
        _ = try await a.nextDownload()
        try await b.expectNothingPending()

        #expect(try await b.bind(3, clientFileID: 2, downloadedVersion: 0).count == 1)
    }

    @Test func storeAppendFailureIsAnInternalErrorAndNothingIsSent() async throws {
        let store = ControllableStore()
        let server = try await SyncServer.embedded(configuration: .init(store: store))
        let a = try await TestClient.welcomed(to: server)
        let b = try await TestClient.welcomed(to: server)
        _ = try await a.bind(6, clientFileID: 1)
        _ = try await b.bind(clientFileID: 2)
        await store.setFailures(loads: false, appends: true)
        a.upload(6, from: 1, [bytes(1)])
        let error = try await a.nextError()
        #expect(error.code == .internalError)
        #expect(error.sessionID == 6)
        #expect(error.retryAfterMilliseconds == 1000)
        try await b.expectNothingPending()
        #expect(try await server.changesets(in: "p").isEmpty)

        await store.setFailures(loads: false, appends: false)
        _ = try await a.bind(6, clientFileID: 1)
        a.upload(6, from: 1, [bytes(1)])
        #expect(try await a.nextDownload().entries == [.acknowledged(serverVersion: 1, clientVersion: 1)])
        #expect(try await b.nextDownload().entries == [.changeset(serverVersion: 1, data: bytes(1))])
    }

    @Test func everySessionOfTheUploadingClientFileGetsAcknowledgements() async throws {
        let server = try await SyncServer.embedded()
        let a = try await TestClient.welcomed(to: server)
        let sameFile = try await TestClient.welcomed(to: server)
        _ = try await a.bind(clientFileID: 1)
        _ = try await sameFile.bind(clientFileID: 1)
        a.upload(from: 1, [bytes(1)])
        #expect(try await a.nextDownload().entries == [.acknowledged(serverVersion: 1, clientVersion: 1)])
        #expect(try await sameFile.nextDownload().entries == [.acknowledged(serverVersion: 1, clientVersion: 1)])
    }

    @Test func partitionsAreIndependent() async throws {
        let server = try await SyncServer.embedded()
        let a = try await TestClient.welcomed(to: server)
        _ = try await a.bind(1, partition: "x", clientFileID: 1)
        _ = try await a.bind(2, partition: "y", clientFileID: 1)
        a.upload(1, from: 1, [bytes(1)])
        a.upload(2, from: 1, [bytes(2)])
        #expect(
            try await a.nextDownload()
                == Download(
                    sessionID: 1, entries: [.acknowledged(serverVersion: 1, clientVersion: 1)], remainingBytes: 0,
                    acknowledgedDigests: [CRC32.checksum(bytes(1))]))
        #expect(
            try await a.nextDownload()
                == Download(
                    sessionID: 2, entries: [.acknowledged(serverVersion: 1, clientVersion: 1)], remainingBytes: 0,
                    acknowledgedDigests: [CRC32.checksum(bytes(2))]))
        #expect(try await server.changesets(in: "x").map(\.data) == [bytes(1)])
        #expect(try await server.changesets(in: "y").map(\.data) == [bytes(2)])
    }
}
