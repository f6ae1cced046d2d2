import Foundation
import SyncServer
import SyncStreams
import SyncWire
import TestSupport
import Testing

@testable import SyncNetwork

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 23 item 11, sized for CI: a networked server under hostile load — idle sockets, handshakes
/// sent a byte per segment, clients that ping and never say hello, one client that never reads — while
/// well-behaved clients sync and finish. Hostile sockets are driven by threads of their own; every
/// wait has a deadline. Figures are printed (connections held, resident memory, the real clients' time
/// beside an unloaded run); only correctness is asserted, never a duration.
@Suite(.timeLimit(.minutes(5))) struct HostileLoadTests {
    static let idleSockets = 900  // with the 50 slow handshakes, below the 1,024 handshaking cap
    static let slowHandshakes = 50
    static let pingers = 50
    static let changesets = 400

    /// The process's resident memory in KiB (`VmRSS`), 0 where unknown.
    static func residentKiB() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
        else { return 0 }
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }

    /// Two writer/reader pairs on their own partitions: each writer uploads `changesets` changesets of
    /// 4 KiB, each reader receives them all. Returns how long that took.
    static func syncPairs(_ endpoint: SyncEndpoint, tag: String) async throws -> Duration {
        var pairs: [(writer: Peer, reader: Peer, partition: String)] = []
        for index in 0..<2 {
            let writer = try await Peer.welcomed(endpoint)
            let reader = try await Peer.welcomed(endpoint)
            let partition = "\(tag)-\(index)"
            writer.connection.send(
                .bind(Bind(sessionID: 1, partition: partition, clientFileID: 1, downloadedVersion: 0)))
            reader.connection.send(
                .bind(Bind(sessionID: 1, partition: partition, clientFileID: 2, downloadedVersion: 0)))
            _ = try await writer.nextDownload()
            _ = try await reader.nextDownload()
            pairs.append((writer, reader, partition))
        }
        let start = ContinuousClock.now
        for pair in pairs {
            for first in stride(from: 1, through: changesets, by: 10) {
                let batch = (first..<first + 10).map {
                    UploadChangeset(clientVersion: UInt64($0), data: [UInt8](repeating: UInt8($0 % 251), count: 4096))
                }
                pair.writer.connection.send(.upload(Upload(sessionID: 1, changesets: batch)))
            }
        }
        for pair in pairs {
            var received = 0
            while received < changesets {
                let download = try await pair.reader.nextDownload()
                for case .changeset(let version, let data) in download.entries {
                    #expect(data == [UInt8](repeating: UInt8(Int(version) % 251), count: 4096))
                    received += 1
                }
            }
            var acknowledged = 0
            while acknowledged < changesets { acknowledged += try await pair.writer.nextDownload().entries.count }
        }
        let took = ContinuousClock.now - start
        for pair in pairs {
            pair.writer.connection.close()
            pair.reader.connection.close()
        }
        return took
    }

    @Test("idle sockets, byte-per-segment handshakes, pingers without hello and a non-reader: real clients sync")
    func realClientsFinishUnderLoad() async throws {
        let limits = WebSocketLimits(handshakeTimeout: .seconds(60), helloTimeout: .seconds(60))
        let server = try await SyncServer.listeningForTests(limits: limits)
        let endpoint = try #require(server.webSocketEndpoint)
        let port = try #require(SyncEndpoint.port(of: endpoint))
        let baselineKiB = Self.residentKiB()
        let unloaded = try await Self.syncPairs(endpoint, tag: "unloaded")

        // The non-reader: welcomed, bound to a partition with a 4 MiB backlog, and never reads again.
        let writer = try await Peer.welcomed(endpoint)
        writer.connection.send(.bind(Bind(sessionID: 1, partition: "backlog", clientFileID: 1, downloadedVersion: 0)))
        _ = try await writer.nextDownload()
        let big = (1...16).map {
            UploadChangeset(clientVersion: UInt64($0), data: [UInt8](repeating: 9, count: 256 << 10))
        }
        writer.connection.send(.upload(Upload(sessionID: 1, changesets: big)))
        _ = try await writer.nextDownload()
        let hello = clientFrame(opcode: 2, payload: ClientMessage.hello(Hello(credential: .anonymous)).encoded())
        let bind = clientFrame(
            opcode: 2,
            payload: ClientMessage.bind(Bind(sessionID: 1, partition: "backlog", clientFileID: 3, downloadedVersion: 0))
                .encoded())
        let nonReader = try await offPool { () -> UncheckedBox<RawSocket> in
            let socket = try RawSocket(port: port, timeout: .seconds(20), receiveBufferBytes: 4096)
            try socket.upgrade()
            try socket.send(hello)
            _ = try socket.readFrame()
            try socket.send(bind)
            return UncheckedBox(socket)
        }

        // Idle sockets: connected, never a byte.
        let idle = try await offPool { () -> UncheckedBox<[RawSocket]> in
            UncheckedBox(try (0..<Self.idleSockets).map { _ in try RawSocket(port: port, timeout: .seconds(20)) })
        }
        // Byte-per-segment handshakes and pingers, on threads of their own until `stop`.
        let stop = Locked(false)
        let request = WebSocketHandshake.request(host: "127.0.0.1", port: port, key: "dGhlIHNhbXBsZSBub25jZQ==")
        let slow = try await offPool { () -> UncheckedBox<[RawSocket]> in
            UncheckedBox(
                try (0..<Self.slowHandshakes).map { _ in
                    let socket = try RawSocket(port: port, timeout: .seconds(20))
                    var noDelay: Int32 = 1
                    setsockopt(
                        socket.descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay,
                        socklen_t(MemoryLayout<Int32>.size))
                    return socket
                })
        }
        let slowDone = Locked(false)
        startThread(named: "slow handshakes") {
            // One byte to each socket per round, never the last two (the head never completes).
            var offset = 0
            while !stop.withLock({ $0 }), offset < request.count - 2 {
                for socket in slow.value { try? socket.send([request[offset]]) }
                offset += 1
                usleep(2_000)  // a slow peer: one segment every few milliseconds
            }
            slowDone.withLock { $0 = true }
        }
        let pingers = try await offPool { () -> UncheckedBox<[RawSocket]> in
            UncheckedBox(
                try (0..<Self.pingers).map { _ in
                    let socket = try RawSocket(port: port, timeout: .seconds(20))
                    try socket.upgrade()
                    return socket
                })
        }
        let pingsSent = Locked(0)
        startThread(named: "pingers") {
            let ping = clientFrame(opcode: 9, payload: [1, 2, 3])
            while !stop.withLock({ $0 }) {
                for socket in pingers.value {
                    try? socket.send(ping)
                    _ = try? socket.readFrame()
                }
                pingsSent.withLock { $0 += pingers.value.count }
                usleep(5_000)  // a slow peer: pings every few milliseconds
            }
        }
        try await eventually("every hostile socket accepted") {
            await server.openConnectionCount
                >= Self.idleSockets + Self.slowHandshakes + Self.pingers + 1 + 1
        }
        let held = await server.openConnectionCount
        let loadedKiB = Self.residentKiB()

        let loaded = try await Self.syncPairs(endpoint, tag: "loaded")
        let peakKiB = Self.residentKiB()
        stop.withLock { $0 = true }
        try await eventually("the slow handshakes to stop") { slowDone.withLock { $0 } }

        // The server still holds the hostile sockets (none of their limits passed), and the non-reader's
        // queue stayed bounded by the flow control (its pump waits for writability).
        #expect(await server.handshakingConnectionCount >= Self.idleSockets + Self.slowHandshakes)
        // Low water plus one download message: at least one changeset (256 KiB here) however small the
        // download limit, plus 64 KiB for framing and the small answers sent outside the pumps.
        let largestDownload = max(SyncServer.Configuration().maximumDownloadMessageBytes, 256 << 10)
        let bound = WebSocketLimits().outboundLowWater + largestDownload + 64 << 10
        #expect(server.peakOutboundQueueBytes <= bound, "peak \(server.peakOutboundQueueBytes), bound \(bound)")
        print(
            "HostileLoadTests: \(held) connections held (\(Self.idleSockets) idle, \(Self.slowHandshakes) "
                + "byte-per-segment handshakes, \(Self.pingers) pingers without hello, 1 non-reader, 1 writer); "
                + "resident \(baselineKiB) KiB before, \(loadedKiB) KiB loaded, \(peakKiB) KiB after the sync; "
                + "\(pingsSent.withLock { $0 }) pings; 2 pairs × \(Self.changesets) changesets of 4 KiB: "
                + "unloaded \(unloaded), loaded \(loaded)")
        withExtendedLifetime((idle, nonReader, writer)) {}
        await server.stop()
    }
}
