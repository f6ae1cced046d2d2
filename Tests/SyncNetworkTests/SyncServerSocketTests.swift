import Foundation
import SyncServer
import SyncStreams
import SyncWire
import TestSupport
import Testing

@testable import SyncNetwork

/// A networked `SyncServer` against clients that misbehave at the socket level — a truncated frame, a
/// client that stalls, one that never reads, a reader far slower than the writer — over real loopback
/// sockets, while well-behaved clients keep syncing. Waits are for events, with generous deadlines.
@Suite(.timeLimit(.minutes(5))) struct SyncServerSocketTests {
    /// A masked binary frame carrying `message`.
    func frame(_ message: ClientMessage) -> [UInt8] { clientFrame(opcode: 2, payload: message.encoded()) }

    /// A writer and a reader bound to partition "p" on `endpoint`.
    func syncingPair(_ endpoint: SyncEndpoint) async throws -> (writer: Peer, reader: Peer) {
        var peers: [Peer] = []
        for clientFileID in [UInt64(1), 2] {
            let peer = try await Peer.welcomed(endpoint)
            peer.connection.send(
                .bind(Bind(sessionID: 1, partition: "p", clientFileID: clientFileID, downloadedVersion: 0)))
            _ = try await peer.nextDownload()
            peers.append(peer)
        }
        return (peers[0], peers[1])
    }

    /// The writer uploads one changeset as `clientVersion`; both see it (acknowledged, and downloaded).
    func syncOne(_ pair: (writer: Peer, reader: Peer), clientVersion: UInt64) async throws {
        let data = [UInt8](repeating: UInt8(truncatingIfNeeded: clientVersion), count: 100)
        pair.writer.connection.send(
            .upload(Upload(sessionID: 1, changesets: [UploadChangeset(clientVersion: clientVersion, data: data)])))
        #expect(
            try await pair.writer.nextDownload().entries == [
                .acknowledged(serverVersion: clientVersion, clientVersion: clientVersion)
            ])
        #expect(try await pair.reader.nextDownload().entries == [.changeset(serverVersion: clientVersion, data: data)])
    }

    @Test("a truncated frame, then the client closes: the server drops that connection; the others carry on")
    func truncatedThenClosed() async throws {
        let server = try await SyncServer.listeningForTests()
        let endpoint = try #require(server.webSocketEndpoint)
        let port = try #require(server.webSocketEndpoint.flatMap { SyncEndpoint.port(of: $0) })
        let pair = try await syncingPair(endpoint)
        try await offPool {
            let socket = try RawSocket(port: port)
            try socket.upgrade()
            try socket.send(self.frame(.hello(Hello(credential: .anonymous))))
            _ = try socket.readFrame()  // the welcome: nothing unread, so closing sends a plain FIN
            // A header promising 1,000 bytes, and 14 of them; then the socket closes (deinit).
            try socket.send(Array(clientFrame(opcode: 2, payload: [UInt8](repeating: 1, count: 1000)).prefix(22)))
        }
        try await eventually("the server to drop the truncated connection") { server.connectionCount == 2 }
        #expect(try await pair.writer.pings(id: 1))
        try await syncOne(pair, clientVersion: 1)
        await server.stop()
    }

    @Test("a client that stalls in the middle of a frame is dropped after the idle timeout; ones that talk are not")
    func truncatedThenStalled() async throws {
        // The idle timeout is 5 s (15 s under ThreadSanitizer): 100 times the talkers' 50 ms between pings,
        // so a talker is never idle that long even on a loaded machine, while the stalled client always is.
        let idle = 5 * BuildFlavor.deadlineScale
        // The talkers are raw WebSocket peers that never say `hello`: the hello deadline (10 s by default,
        // shorter than the 15 s idle timeout under TSan) must not end them first.
        let server = try await SyncServer.listeningForTests(
            limits: WebSocketLimits(idleTimeout: .milliseconds(Int(idle * 1000)), helloTimeout: .seconds(3600)))
        let port = try #require(server.webSocketEndpoint.flatMap { SyncEndpoint.port(of: $0) })
        // Two clients that keep talking — a ping every 50 ms, each pong read — on threads of their own, so
        // that no load on the cooperative pool can make them look idle.
        let stop = Locked(false)
        let talkers = (0..<2).map { _ in
            Task {
                try await offPool("a talker's pings until the stalled client is dropped", seconds: 40) { () -> Int in
                    let socket = try RawSocket(port: port)
                    try socket.upgrade()
                    var pongs = 0
                    while !stop.withLock({ $0 }) {
                        try socket.send(clientFrame(opcode: 9, payload: [UInt8(truncatingIfNeeded: pongs)]))
                        guard try socket.readFrame()?.opcode == .pong else { return -1 }
                        pongs += 1
                        usleep(50_000)
                    }
                    return pongs
                }
            }
        }
        try await eventually("the talkers to be connected") { server.connectionCount == 2 }
        let closed = try await offPool("the server to close the stalled connection", seconds: 30) { () -> Bool in
            let socket = try RawSocket(port: port, timeout: .seconds(Int(idle) * 4))
            try socket.upgrade()
            try socket.send(Array(clientFrame(opcode: 2, payload: [UInt8](repeating: 1, count: 1000)).prefix(22)))
            // Then nothing: the server must close (a read timeout here fails the test).
            return try socket.readUntilClosed()
        }
        #expect(closed)
        try await eventually("the server to forget the stalled connection") { server.connectionCount == 2 }
        stop.withLock { $0 = true }
        for talker in talkers { #expect(try await talker.value > 0, "a talker was dropped") }
        await server.stop()
    }

    @Test(
        "a client that sends and never reads is dropped once its queue passes the hard limit; the others keep syncing")
    func neverReads() async throws {
        let limits = WebSocketLimits(outboundLowWater: 64 << 10, outboundHardLimit: 256 << 10)
        let server = try await SyncServer.listeningForTests(limits: limits)
        let endpoint = try #require(server.webSocketEndpoint)
        let port = try #require(SyncEndpoint.port(of: endpoint))
        let pair = try await syncingPair(endpoint)
        let hello = frame(.hello(Hello(credential: .anonymous)))
        let pings = (0..<500).flatMap { self.frame(.ping(id: UInt64($0))) }
        let flood = Task {
            try await offPool("the flooding client to be dropped", seconds: 40) { () -> (dropped: Bool, sent: Int) in
                let socket = try RawSocket(port: port, receiveBufferBytes: 4096)
                try socket.upgrade()
                try socket.send(hello)
                // Pings, never reading the pongs, until the server drops the connection (or a generous
                // deadline passes: then it was not dropped).
                let deadline = ContinuousClock.now + .seconds(30)
                var rounds = 0
                while ContinuousClock.now < deadline {
                    do {
                        try socket.send(pings)
                    } catch RawSocketError.failed {
                        return (true, rounds * 500)
                    }
                    rounds += 1
                }
                return (false, rounds * 500)
            }
        }
        for version in 1...20 { try await syncOne(pair, clientVersion: UInt64(version)) }
        let (dropped, sent) = try await flood.value
        #expect(dropped, "\(sent) pings sent")
        try await eventually("the server to forget the dropped connection") { server.connectionCount == 2 }
        let peak = server.peakOutboundQueueBytes
        #expect(peak > limits.outboundHardLimit)
        #expect(peak <= limits.outboundHardLimit + 64, "\(peak)")
        try await syncOne(pair, clientVersion: 21)
        await server.stop()
    }

    @Test(
        "a fast writer and a reader that does not read: the server's queue for the reader stays bounded, and it gets everything later"
    )
    func backpressure() async throws {
        let limits = WebSocketLimits(outboundLowWater: 256 << 10)
        let configuration = SyncServer.Configuration(maximumDownloadMessageBytes: 64 << 10)
        let server = try await SyncServer.listeningForTests(configuration: configuration, limits: limits)
        let endpoint = try #require(server.webSocketEndpoint)
        let writer = try await Peer.welcomed(endpoint)
        writer.connection.send(.bind(Bind(sessionID: 1, partition: "p", clientFileID: 1, downloadedVersion: 0)))
        _ = try await writer.nextDownload()

        // The reader's transport stops reading the socket past 128 KiB of unread messages, and the test
        // does not read them until the writer is done: TCP fills, then the server must hold back.
        let reader = WebSocketTransport(limits: WebSocketLimits(inboundHighWater: 128 << 10)).connect(to: endpoint)
        var events = reader.events.makeAsyncIterator()
        #expect(await events.next() == .opened)
        reader.send(.hello(Hello(credential: .anonymous)))
        #expect(
            await events.next()
                == .message(
                    .welcome(
                        protocolVersion: WireProtocol.version,
                        maximumMessageBytes: UInt32(WireProtocol.maximumMessageSize))))
        reader.send(.bind(Bind(sessionID: 1, partition: "p", clientFileID: 2, downloadedVersion: 0)))

        // 32 MiB in 512 changesets of 64 KiB, 16 per upload.
        let count = 512
        func data(_ index: Int) -> [UInt8] {
            var bytes = [UInt8](repeating: UInt8(truncatingIfNeeded: index), count: 64 << 10)
            bytes[0] = UInt8(truncatingIfNeeded: index >> 8)
            return bytes
        }
        for first in stride(from: 0, to: count, by: 16) {
            let changesets = (first..<first + 16).map { UploadChangeset(clientVersion: UInt64($0 + 1), data: data($0)) }
            writer.connection.send(.upload(Upload(sessionID: 1, changesets: changesets)))
        }
        var acknowledged = 0
        while acknowledged < count { acknowledged += try await writer.nextDownload().entries.count }

        // The kernel's buffers hold some megabytes; the rest the server did not queue.
        let peak = server.peakOutboundQueueBytes
        let bound = limits.outboundLowWater + configuration.maximumDownloadMessageBytes + 4096
        #expect(peak <= bound, "peak \(peak), bound \(bound)")

        var received: [DownloadEntry] = []
        while received.count < count {
            guard case .message(.download(let download)) = await events.next() else {
                Issue.record("the reader's connection ended after \(received.count)")
                break
            }
            received += download.entries
        }
        #expect(received.count == count)
        #expect(received.first == .changeset(serverVersion: 1, data: data(0)))
        #expect(received.last == .changeset(serverVersion: UInt64(count), data: data(count - 1)))
        reader.close()
        await server.stop()
    }
}

extension SyncEndpoint {
    /// The port of a `.webSocket` endpoint.
    static func port(of endpoint: SyncEndpoint) -> Int? {
        guard case .webSocket(_, let port) = endpoint.kind else { return nil }
        return port
    }
}
