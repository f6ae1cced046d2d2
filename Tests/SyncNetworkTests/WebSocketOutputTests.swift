import Foundation
import SyncServer
import SyncWire
import TestSupport
import Testing

@testable import SyncNetwork

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A frame's header and payload go out in one gathering write, and so do runs of small frames
/// (`WebSocketOutput`, issue 23 item 5): counted with a fake socket that records each write, and checked
/// end to end over real loopback sockets.
@Suite(.timeLimit(.minutes(5))) struct WebSocketOutputTests {
    /// A socket that takes at most `accepting` bytes per write (nil: all), recording each write's buffers.
    final class FakeSocket {
        var writes: [[Int]] = []
        var bytes: [UInt8] = []
        var accepting: Int?
        var failAfter: Int?

        func write(_ buffers: UnsafeBufferPointer<iovec>) -> Socket.IOResult {
            if let failAfter, writes.count >= failAfter { return .failed(EPIPE) }
            writes.append(buffers.map { $0.iov_len })
            var budget = accepting ?? .max
            var taken = 0
            for buffer in buffers where budget > 0 {
                let count = min(budget, buffer.iov_len)
                bytes += UnsafeRawBufferPointer(start: buffer.iov_base, count: count)
                budget -= count
                taken += count
            }
            return taken == 0 ? .wouldBlock : .transferred(taken)
        }
    }

    @Test("a message's header and its 1 MiB payload are written with one system call")
    func headerAndPayloadInOneWrite() {
        var output = WebSocketOutput()
        let payload = [UInt8](repeating: 7, count: 1 << 20)
        let header = WebSocketFrame.header(opcode: .binary, length: payload.count, maskingKey: nil)
        output.append(header, counted: true)
        output.append(payload, counted: true)
        let socket = FakeSocket()
        let flushed = output.flush(socket.write)
        #expect(socket.writes == [[header.count, payload.count]])
        #expect(socket.bytes == header + payload)
        #expect(flushed == .init(bytes: header.count + payload.count, counted: header.count + payload.count))
        #expect(output.isEmpty)
    }

    @Test("200 small frames (400 chunks) take 7 writes of at most 64 buffers, not 400")
    func smallFramesGathered() {
        var output = WebSocketOutput()
        var expected: [UInt8] = []
        for index in 0..<200 {
            let payload = [UInt8](repeating: UInt8(index), count: 10 + index % 7)
            let header = WebSocketFrame.header(opcode: .pong, length: payload.count, maskingKey: nil)
            output.append(header, counted: false)
            output.append(payload, counted: false)
            expected += header + payload
        }
        #expect(output.uncountedQueued == expected.count)
        let socket = FakeSocket()
        let flushed = output.flush(socket.write)
        #expect(socket.writes.count == 7)
        #expect(socket.writes.allSatisfy { $0.count <= WebSocketOutput.maximumBuffersPerWrite })
        #expect(socket.bytes == expected)
        #expect(flushed == .init(bytes: expected.count, counted: 0))
        #expect(output.uncountedQueued == 0)
    }

    @Test("partial writes resume inside their chunk: random chunks and write sizes give the same bytes, counted right")
    func partialWrites() {
        let seed = UInt64.random(in: 0...UInt64.max)
        print("WebSocketOutputTests.partialWrites seed: \(seed)")
        var random = SeededGenerator(seed: seed)
        for _ in 0..<50 {
            var output = WebSocketOutput()
            var expected: [UInt8] = []
            var counted = 0
            for _ in 0..<Int.random(in: 1...150, using: &random) {
                let chunk = (0..<Int.random(in: 0...300, using: &random)).map { _ in
                    UInt8.random(in: 0...255, using: &random)
                }
                let isCounted = Bool.random(using: &random)
                output.append(chunk, counted: isCounted)
                expected += chunk
                if isCounted { counted += chunk.count }
            }
            let socket = FakeSocket()
            var total = WebSocketOutput.Flushed()
            // The socket takes a few bytes per call, then is "full" (wouldBlock) every other flush.
            while !output.isEmpty {
                socket.accepting = Int.random(in: 1...97, using: &random)
                let flushed = output.flush { buffers in
                    defer { socket.accepting = 0 }
                    return socket.write(buffers)
                }
                total.bytes += flushed.bytes
                total.counted += flushed.counted
                #expect(flushed.stop == (output.isEmpty ? .drained : .wouldBlock))
            }
            #expect(socket.bytes == expected, "seed \(seed)")
            #expect(total.bytes == expected.count, "seed \(seed)")
            #expect(total.counted == counted, "seed \(seed)")
            #expect(output.uncountedQueued == 0, "seed \(seed)")
        }
    }

    @Test("a failed write stops the flush; removeAll reports the counted bytes never written")
    func failureAndRemoval() {
        var output = WebSocketOutput()
        output.append([1, 2, 3, 4], counted: true)
        output.append([5, 6], counted: false)
        output.append([7, 8, 9], counted: true)
        let socket = FakeSocket()
        socket.accepting = 2
        socket.failAfter = 1
        let flushed = output.flush(socket.write)
        #expect(flushed == .init(bytes: 2, counted: 2, stop: .failed(EPIPE)))
        #expect(output.uncountedQueued == 2)
        #expect(output.removeAll() == 2 + 3)
        #expect(output.isEmpty)
        #expect(output.uncountedQueued == 0)
    }

    @Test(
        "over real sockets, a 4 MiB changeset and 300 small ones, each its own frame, arrive intact and in order both ways"
    )
    func largeAndSmallFramesOverSockets() async throws {
        let server = try await SyncServer.listeningForTests()
        let endpoint = try #require(server.webSocketEndpoint)
        // Each peer connects only when it is about to say hello: a peer opened early could wait out the
        // server's hello deadline while the other one binds (a loaded TSan run saw it closed before `welcome`).
        var peers: [Peer] = []
        for clientFileID in [UInt64(1), 2] {
            let peer = try await Peer.welcomed(endpoint)
            peer.connection.send(
                .bind(Bind(sessionID: 1, partition: "p", clientFileID: clientFileID, downloadedVersion: 0)))
            _ = try await peer.nextDownload()
            peers.append(peer)
        }
        let (writer, reader) = (peers[0], peers[1])
        var random = SeededGenerator(seed: 23)
        let large = (0..<(4 << 20)).map { _ in UInt8.random(in: 0...255, using: &random) }
        let small = (0..<300).map { index in
            (0..<(1 + index % 40)).map { _ in UInt8.random(in: 0...255, using: &random) }
        }
        let changesets = [large] + small
        for (index, data) in changesets.enumerated() {
            writer.connection.send(
                .upload(
                    Upload(sessionID: 1, changesets: [UploadChangeset(clientVersion: UInt64(index + 1), data: data)])))
        }
        var received: [DownloadEntry] = []
        while received.count < changesets.count { received += try await reader.nextDownload().entries }
        #expect(received.count == changesets.count)
        for (index, entry) in received.enumerated() {
            #expect(entry == .changeset(serverVersion: UInt64(index + 1), data: changesets[index]), "entry \(index)")
        }
        var acknowledged = 0
        while acknowledged < changesets.count { acknowledged += try await writer.nextDownload().entries.count }
        #expect(try await writer.pings(id: 1))
        await server.stop()
    }
}
