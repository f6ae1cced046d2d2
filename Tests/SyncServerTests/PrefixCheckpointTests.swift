import Foundation
import SyncServer
import SyncStorage
import SyncWire
import Testing

/// A prefix checkpoint (`LogCheckpoint.coversPrefix`, protocol version 8): the digest of every version up to
/// the checkpoint, so that a server restored from an older copy of its log is noticed by a reader whose
/// changeset at the checkpoint happens to be the same on both histories but an earlier one is not (issue 21,
/// simulation seed 4019).
@Suite("Prefix checkpoint", .timeLimit(.minutes(5)))
struct PrefixCheckpointTests {
    /// The prefix digest of `changesets` (versions 1, 2, …).
    private func digest(_ changesets: [[UInt8]]) -> UInt32 {
        changesets.reduce(0) { CRC32.prefixDigest(after: $0, checksum: CRC32.checksum($1)) }
    }

    /// What a bind of `clientFileID` holding versions 1…`version` with `checkpoint` gets (after a hello of
    /// `protocolVersion`); a bound session is unbound again.
    private func bind(
        _ server: SyncServer, _ clientFileID: UInt64, at version: UInt64, _ checkpoint: LogCheckpoint,
        protocolVersion: UInt16 = WireProtocol.version
    ) async throws -> ServerMessage {
        let client = try await TestClient(server)
        client.send(.hello(Hello(protocolVersion: protocolVersion, credential: .anonymous)))
        _ = try await client.next()
        client.send(
            .bind(
                Bind(
                    sessionID: 1, partition: "p", clientFileID: clientFileID, downloadedVersion: version,
                    checkpoint: checkpoint)))
        let answer = try await client.next()
        if case .download = answer {
            client.send(.unbind(sessionID: 1))
            #expect(try await client.next() == .unbound(sessionID: 1))
        }
        return answer
    }

    private func resetReason(_ message: ServerMessage) -> ClientResetReason? {
        if case .error(let error) = message { error.clientReset?.reason } else { nil }
    }

    private func isBound(_ message: ServerMessage) -> Bool {
        if case .download = message { true } else { false }
    }

    /// Client file 1 uploads `log` in uploads of at most 100 changesets.
    private func write(_ log: [[UInt8]], to server: SyncServer) async throws {
        let client = try await TestClient.welcomed(to: server)
        _ = try await client.bind(clientFileID: 1)
        var next = 0
        while next < log.count {
            let part = Array(log[next..<min(log.count, next + 100)])
            client.upload(from: UInt64(next + 1), part)
            #expect(try await client.nextEntries(part.count).count == part.count)
            next += part.count
        }
    }

    @Test(
        "a prefix checkpoint whose changeset at its version matches but an earlier one differs is refused with historyLost; the log's own prefix binds, also past the digests' first batch"
    )
    func earlierVersionDiffers() async throws {
        let server = try await SyncServer.embedded()
        let log = (0..<300).map { bytes(UInt8($0 % 200), count: 4 + $0 % 3) }
        try await write(log, to: server)
        for version in [1, 3, 256, 257, 300] {
            let held = digest(Array(log.prefix(version)))
            let checkpoint = LogCheckpoint(serverVersion: UInt64(version), digest: held, coversPrefix: true)
            #expect(isBound(try await bind(server, 2, at: UInt64(version), checkpoint)), "version \(version)")
        }
        // The reader holds other bytes at version 2 only; versions 3 and 300 are the log's.
        var other = log
        other[1] = bytes(99)
        for version in [3, 300] {
            let checkpoint = LogCheckpoint(
                serverVersion: UInt64(version), digest: digest(Array(other.prefix(version))), coversPrefix: true)
            let answer = try await bind(server, 2, at: UInt64(version), checkpoint)
            #expect(resetReason(answer) == .historyLost, "version \(version)")
        }
    }

    @Test(
        "an older client's one-changeset checkpoint (bind type 0x07, protocol version 7) is still checked on that changeset alone"
    )
    func oneChangesetCheckpoint() async throws {
        let server = try await SyncServer.embedded()
        let log = [bytes(1), bytes(2), bytes(3)]
        try await write(log, to: server)
        let same = LogCheckpoint(serverVersion: 3, digest: CRC32.checksum(bytes(3)))
        // What the one changeset can tell: nothing about versions 1 and 2 (the limit version 8 lifts).
        #expect(isBound(try await bind(server, 2, at: 3, same, protocolVersion: 7)))
        #expect(isBound(try await bind(server, 2, at: 3, same)))
        let other = LogCheckpoint(serverVersion: 3, digest: CRC32.checksum(bytes(33)))
        let answer = try await bind(server, 2, at: 3, other, protocolVersion: 7)
        #expect(resetReason(answer) == .historyLost)
        // The prefix digest read as one changeset's CRC does not match: the two kinds are never mixed up.
        let prefix = LogCheckpoint(serverVersion: 3, digest: digest(log))
        #expect(resetReason(try await bind(server, 2, at: 3, prefix)) == .historyLost)
    }

    @Test(
        "a duplicate entry enters the prefix digest as the empty changeset other clients receive, and as its bytes for its uploader (or a store carrying the uploader's checkpoint)"
    )
    func duplicateEntries() async throws {
        let server = try await SyncServer.embedded()
        try await write([bytes(1)], to: server)  // version 1: client file 1's client version 1
        let recovered = try await TestClient.welcomed(to: server)
        _ = try await recovered.bind(clientFileID: 3)
        recovered.send(
            .upload(
                Upload(
                    sessionID: 1,
                    changesets: [
                        UploadChangeset(
                            clientVersion: 1, data: bytes(1), origin: ChangesetOrigin(clientFileID: 1, clientVersion: 1)
                        ),
                        UploadChangeset(clientVersion: 2, data: bytes(2)),
                    ])))
        #expect(try await recovered.nextEntries(2).count == 2)
        #expect(try await server.changesets(in: "p").map(\.duplicateOf) == [nil, 1, nil])
        func checkpoint(_ held: [[UInt8]]) -> LogCheckpoint {
            LogCheckpoint(serverVersion: 3, digest: digest(held), coversPrefix: true)
        }
        let delivered = checkpoint([bytes(1), [], bytes(2)])
        let uploaded = checkpoint([bytes(1), bytes(1), bytes(2)])
        // A reader holds the duplicate as the empty changeset it received.
        #expect(isBound(try await bind(server, 2, at: 3, delivered)))
        // Its uploader holds its own bytes there (acknowledged); so does a store that carries its checkpoint.
        #expect(isBound(try await bind(server, 3, at: 3, uploaded)))
        #expect(isBound(try await bind(server, 4, at: 3, uploaded)))
        // Other bytes anywhere are still refused, for the uploader too.
        for held in [[bytes(1), bytes(9), bytes(2)], [bytes(9), [], bytes(2)], [bytes(9), bytes(1), bytes(2)]] {
            for clientFileID: UInt64 in [2, 3] {
                let answer = try await bind(server, clientFileID, at: 3, checkpoint(held))
                #expect(resetReason(answer) == .historyLost)
            }
        }
    }
}
