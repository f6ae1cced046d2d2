import Foundation
import SyncServer
import SyncStreams
import SyncWire
import Testing

@testable import SyncNetwork

/// Issue 23: a networked `SyncServer` against clients that are hostile or broken, over real loopback
/// sockets (blocking socket work on threads of its own, every wait with a deadline).
@Suite(.timeLimit(.minutes(3))) struct HostileClientTests {
    func frame(_ message: ClientMessage) -> [UInt8] { clientFrame(opcode: 2, payload: message.encoded()) }

    @Test(
        "a reader bound to six partitions with large backlogs is never dropped: its sessions' sends are serialized"
    )
    func manySessionsOneReader() async throws {
        let limits = WebSocketLimits(outboundLowWater: 64 << 10, outboundHardLimit: 512 << 10)
        let configuration = SyncServer.Configuration(maximumDownloadMessageBytes: 256 << 10)
        let server = try await SyncServer.listening(configuration: configuration, limits: limits)
        let endpoint = try #require(server.webSocketEndpoint)
        let port = try #require(SyncEndpoint.port(of: endpoint))

        // A writer fills "big" with 32 changesets of 200 KiB, and p1…p5 with one each.
        let partitions = ["big", "p1", "p2", "p3", "p4", "p5"]
        let writer = Peer(endpoint)
        try await writer.welcome()
        for (index, partition) in partitions.enumerated() {
            writer.connection.send(
                .bind(Bind(sessionID: UInt32(index + 1), partition: partition, clientFileID: 1, downloadedVersion: 0)))
            _ = try await writer.nextDownload()
        }
        func data(_ index: Int) -> [UInt8] { [UInt8](repeating: UInt8(truncatingIfNeeded: index), count: 200 << 10) }
        var expected = 0
        for (index, partition) in partitions.enumerated() {
            let count = partition == "big" ? 32 : 1
            for first in stride(from: 0, to: count, by: 8) {
                let changesets = (first..<min(count, first + 8)).map {
                    UploadChangeset(clientVersion: UInt64($0 + 1), data: data($0))
                }
                writer.connection.send(.upload(Upload(sessionID: UInt32(index + 1), changesets: changesets)))
                var acknowledged = 0
                while acknowledged < changesets.count { acknowledged += try await writer.nextDownload().entries.count }
            }
            expected += count
        }

        // The reader binds all six, and reads nothing until its queue on the server has built up (its
        // receive buffer is small): every pump then waits for the connection to become writable.
        let binds = partitions.enumerated().flatMap { index, partition in
            frame(
                .bind(Bind(sessionID: UInt32(index + 1), partition: partition, clientFileID: 2, downloadedVersion: 0)))
        }
        let hello = frame(.hello(Hello(credential: .anonymous)))
        let sendableSocket = try await offPool { () -> UncheckedBox<RawSocket> in
            let socket = try RawSocket(port: port, receiveBufferBytes: 4096)
            try socket.upgrade()
            try socket.send(hello)
            _ = try socket.readFrame()  // welcome
            try socket.send(binds)
            return UncheckedBox(socket)
        }
        try await eventually("the reader's queue to build up") {
            server.peakOutboundQueueBytes > limits.outboundLowWater
        }
        let total = expected
        let received = try await offPool { () -> (entries: Int, closed: UInt16?) in
            usleep(300_000)  // lets the other sessions' pumps reach their wait for writability
            var entries = 0
            while entries < total {
                guard let frame = try sendableSocket.value.readFrame() else { return (entries, 1006) }
                if frame.opcode == .close { return (entries, UInt16(frame.payload[0]) << 8 | UInt16(frame.payload[1])) }
                guard frame.opcode == .binary else { continue }
                if case .download(let download) = try ServerMessage(decoding: frame.payload) {
                    entries += download.entries.count
                }
            }
            return (entries, nil)
        }
        #expect(received.closed == nil, "the reader was dropped after \(received.entries) of \(expected) entries")
        #expect(received.entries == expected)
        let peak = server.peakOutboundQueueBytes
        let bound = limits.outboundLowWater + configuration.maximumDownloadMessageBytes + 4096
        #expect(peak <= bound, "peak \(peak), bound \(bound)")
        await server.stop()
    }
}

/// Hands a non-Sendable value to one thread at a time (the test's steps run one after another).
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
