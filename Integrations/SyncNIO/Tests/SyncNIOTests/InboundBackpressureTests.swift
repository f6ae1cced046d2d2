import Foundation
import NIOConcurrencyHelpers
import SyncServer
import TestSupport
import Testing

@testable import SyncNIO

/// Takes the connections of a `NIOSyncServer`, welcomes each at once and reads nothing: a core that
/// falls behind its client.
final class HoldingAcceptor: SyncConnectionAcceptor, Sendable {
    private let connections = NIOLockedValueBox<[NIOServerConnection]>([])

    var first: NIOServerConnection? { connections.withLockedValue { $0.first } }

    func accept(_ connection: any SyncServerConnection) -> Bool {
        guard let connection = connection as? NIOServerConnection else { return false }
        connections.withLockedValue { $0.append(connection) }
        connection.send(.welcome(protocolVersion: WireProtocol.version, maximumMessageBytes: nil))
        return true
    }
}

/// What `NIOSyncServer` reads from a client ahead of the core: bounded, as `sync-server`'s
/// `inboundHighWater`.
@Suite(.timeLimit(.minutes(5)))
struct InboundBackpressureTests {
    @Test func aClientSendingFasterThanTheCoreTakesIsNotReadPastTheInboundHighWater() async throws {
        let acceptor = HoldingAcceptor()
        let highWater = 256 << 10
        let server = try await NIOSyncServer.start(
            serving: try await SyncServer.embedded(), acceptor: acceptor, inboundHighWater: highWater)
        let client = try await ServerLimitsTests.upgraded(server)
        // `hello`, then 512 uploads of 16 KiB (8 MiB) in one write, queued by the client's end.
        let count = 512
        var bytes = clientFrame(opcode: 2, payload: ClientMessage.hello(Hello(credential: .anonymous)).encoded())
        for version in 1...count {
            let upload = Upload(
                sessionID: 1,
                changesets: [
                    UploadChangeset(clientVersion: UInt64(version), data: Array(repeating: 1, count: 16 << 10))
                ])
            bytes += clientFrame(opcode: 2, payload: ClientMessage.upload(upload).encoded())
        }
        client.write(bytes)
        do {
            try await eventually("the server to accept the connection", limit: .seconds(20)) { acceptor.first != nil }
            let connection = try #require(acceptor.first)
            // Until the server stops reading (the fix), or has read everything (the bug).
            try await eventually("the server to stop reading, or to read all 8 MiB", limit: .seconds(20)) {
                connection.readsWithheld > 0 || connection.peakInboundBytes >= count * (16 << 10)
            }
            // Above the mark the socket is not read: at most the rest of the read burst in progress (NIO
            // reads up to 4 × 64 KiB per wake-up) and the message that crossed the mark may follow.
            let peak = connection.peakInboundBytes
            #expect(peak <= highWater + ((4 * 64 + 32) << 10), "peak \(peak) bytes waited for the core (8 MiB sent)")
            #expect(peak > highWater)
            #expect(connection.isBacklogged)
            // Now the core takes every message: all arrive, in order.
            var versions: [UInt64] = []
            for await message in connection.incoming {
                if case .upload(let upload) = message { versions += upload.changesets.map(\.clientVersion) }
                if versions.count == count { break }
            }
            // Reading resumed as the core took messages (else they would not all have come).
            #expect(versions == (1...count).map(UInt64.init))
            #expect(!connection.isBacklogged)
        } catch {
            Issue.record("\(error)")
        }
        await client.close()
        await server.stop()
    }
}
