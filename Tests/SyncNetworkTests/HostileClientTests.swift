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

/// Issue 23: a networked `SyncServer` against clients that are hostile or broken, over real loopback
/// sockets (blocking socket work on threads of its own, every wait with a deadline).
@Suite(.timeLimit(.minutes(5))) struct HostileClientTests {
    func frame(_ message: ClientMessage) -> [UInt8] { clientFrame(opcode: 2, payload: message.encoded()) }

    @Test(
        "a reader bound to six partitions with large backlogs is never dropped: its sessions' sends are serialized"
    )
    func manySessionsOneReader() async throws {
        let limits = WebSocketLimits(outboundLowWater: 64 << 10, outboundHardLimit: 512 << 10)
        let configuration = SyncServer.Configuration(maximumDownloadMessageBytes: 256 << 10)
        let server = try await SyncServer.listeningForTests(configuration: configuration, limits: limits)
        let endpoint = try #require(server.webSocketEndpoint)
        let port = try #require(SyncEndpoint.port(of: endpoint))

        // A writer fills "big" with 32 changesets of 200 KiB, and p1…p5 with one each.
        let partitions = ["big", "p1", "p2", "p3", "p4", "p5"]
        let writer = try await Peer.welcomed(endpoint)
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
        // Every partition has both sessions bound, and every session's pump with something left to send
        // waits (for the send turn or writability).
        try await eventually("every running pump to wait") {
            for partition in partitions where await server.boundSessionCount(in: partition) < 2 { return false }
            let pumps = await server.pumpCounts
            return pumps.running > 0 && pumps.waiting == pumps.running
        }
        let total = expected
        let received = try await offPool { () -> (entries: Int, closed: UInt16?) in
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

    // MARK: Item 3: nothing before authentication is expensive

    @Test("a client that pings and never says hello is closed with 1008 once the hello timeout passes")
    func noHello() async throws {
        let server = try await SyncServer.listeningForTests(limits: WebSocketLimits(helloTimeout: .seconds(1)))
        let port = try #require(server.webSocketEndpoint.flatMap { SyncEndpoint.port(of: $0) })
        let outcome = try await offPool { () -> (code: UInt16?, pongs: Int) in
            let socket = try RawSocket(port: port, timeout: .seconds(5))
            try socket.upgrade()
            // WebSocket pings every 50 ms, each pong read, for at most 15 s: they must not keep it open.
            let deadline = ContinuousClock.now + .seconds(15)
            var pongs = 0
            while ContinuousClock.now < deadline {
                do { try socket.send(clientFrame(opcode: 9, payload: [1])) } catch { return (nil, pongs) }
                guard let frame = try socket.readFrame() else { return (nil, pongs) }
                if frame.opcode == .close {
                    return (UInt16(frame.payload[0]) << 8 | UInt16(frame.payload[1]), pongs)
                }
                pongs += 1
                usleep(50_000)
            }
            return (0, pongs)
        }
        #expect(outcome.code == 1008, "\(outcome.pongs) pongs")
        #expect(outcome.pongs > 0)
        await server.stop()
    }

    @Test("before hello, a frame above the unauthenticated limit is refused from its header with 1009")
    func largeFrameBeforeHello() async throws {
        let server = try await SyncServer.listeningForTests()
        let port = try #require(server.webSocketEndpoint.flatMap { SyncEndpoint.port(of: $0) })
        let code = try await offPool { () -> UInt16? in
            let socket = try RawSocket(port: port, timeout: .seconds(10))
            try socket.upgrade()
            // A header promising 1 MiB, and 16 bytes of it: the server must not wait for the rest.
            let frame = clientFrame(opcode: 2, payload: [UInt8](repeating: 7, count: 16), declaredLength: 1 << 20)
            try socket.send(frame)
            return try socket.readCloseCode()
        }
        #expect(code == 1009)
        await server.stop()
    }

    @Test("a hello with a 64 KiB API key is refused with 1009 before it is decoded")
    func hugeAPIKey() async throws {
        let server = try await SyncServer.listeningForTests()
        let port = try #require(server.webSocketEndpoint.flatMap { SyncEndpoint.port(of: $0) })
        let hello = frame(.hello(Hello(credential: .apiKey(String(repeating: "k", count: 64 << 10)))))
        let code = try await offPool { () -> UInt16? in
            let socket = try RawSocket(port: port, timeout: .seconds(10))
            try socket.upgrade()
            try socket.send(hello)
            return try socket.readCloseCode()
        }
        #expect(code == 1009)
        await server.stop()
    }

    @Test("hello, bind and a 1 MiB upload sent in one write: each is handled (the larger limit holds after welcome)")
    func pipelinedAfterHello() async throws {
        let server = try await SyncServer.listeningForTests()
        let port = try #require(server.webSocketEndpoint.flatMap { SyncEndpoint.port(of: $0) })
        let data = [UInt8](repeating: 3, count: 1 << 20)
        let bytes =
            frame(.hello(Hello(credential: .anonymous)))
            + frame(.bind(Bind(sessionID: 1, partition: "p", clientFileID: 1, downloadedVersion: 0)))
            + frame(.upload(Upload(sessionID: 1, changesets: [UploadChangeset(clientVersion: 1, data: data)])))
        let messages = try await offPool { () -> [ServerMessage] in
            let socket = try RawSocket(port: port, timeout: .seconds(10))
            try socket.upgrade()
            try socket.send(bytes)
            var messages: [ServerMessage] = []
            while messages.count < 3, let frame = try socket.readFrame(), frame.opcode == .binary {
                messages.append(try ServerMessage(decoding: frame.payload))
            }
            return messages
        }
        #expect(messages.count == 3)
        #expect(
            messages.first
                == .welcome(
                    protocolVersion: WireProtocol.version, maximumMessageBytes: UInt32(WireProtocol.maximumMessageSize))
        )
        // The upload's acknowledgement (its digest checked by the client, not here).
        guard case .download(let download)? = messages.last else {
            Issue.record("no download last: \(messages)")
            return
        }
        #expect(download.sessionID == 1)
        #expect(download.entries == [.acknowledged(serverVersion: 1, clientVersion: 1)])
        #expect(download.remainingBytes == 0)
        await server.stop()
    }

    @Test("a client that sends pings and never reads the pongs is dropped after a bounded amount (not 64 MiB)")
    func pingsNeverRead() async throws {
        let server = try await SyncServer.listeningForTests()
        let port = try #require(server.webSocketEndpoint.flatMap { SyncEndpoint.port(of: $0) })
        let pings = (0..<1000).flatMap { _ in clientFrame(opcode: 9, payload: [UInt8](repeating: 1, count: 125)) }
        let (dropped, sent) = try await offPool { () -> (Bool, Int) in
            let socket = try RawSocket(port: port, timeout: .seconds(20), receiveBufferBytes: 4096)
            try socket.upgrade()
            var sent = 0
            // At most 96 MiB of pings (beyond the old 64 MiB limit), until the server drops the connection.
            while sent < 96 << 20 {
                do { try socket.send(pings) } catch { return (true, sent) }
                sent += pings.count
            }
            return (false, sent)
        }
        #expect(dropped)
        #expect(sent < 8 << 20, "\(sent) bytes of pings were sent before the drop")
        await server.stop()
    }

    // MARK: Item 4: connection limits before the upgrade

    @Test("a server at its connection limit answers the upgrade with 503, never 101")
    func fullAnswers503() async throws {
        let server = try await SyncServer.listeningForTests(configuration: .init(maximumConnections: 1))
        let endpoint = try #require(server.webSocketEndpoint)
        let port = try #require(SyncEndpoint.port(of: endpoint))
        let first = try await Peer.welcomed(endpoint)
        let head = try await offPool { () -> String in
            let socket = try RawSocket(port: port, timeout: .seconds(10))
            try socket.send(WebSocketHandshake.request(host: "127.0.0.1", port: port, key: "dGhlIHNhbXBsZSBub25jZQ=="))
            return try socket.readHead()
        }
        #expect(head.hasPrefix("HTTP/1.1 503"), "\(head)")
        #expect(try await first.pings(id: 1))
        await server.stop()
    }

    @Test("past maximumHandshakingConnections a new socket is closed at once; the ones handshaking are kept")
    func handshakeCap() async throws {
        let limits = WebSocketLimits(handshakeTimeout: .seconds(60), maximumHandshakingConnections: 2)
        let server = try await SyncServer.listeningForTests(limits: limits)
        let port = try #require(server.webSocketEndpoint.flatMap { SyncEndpoint.port(of: $0) })
        // Two sockets that connect and send half a request, then nothing.
        let idle = try await offPool { () -> UncheckedBox<[RawSocket]> in
            let idle = try (0..<2).map { _ in try RawSocket(port: port, timeout: .seconds(5)) }
            for socket in idle { try socket.send("GET / HTTP/1.1\r\n") }
            return UncheckedBox(idle)
        }
        try await eventually("the listener to hold both in their handshake") {
            await server.handshakingConnectionCount == 2
        }
        let outcome = try await offPool { () -> (closed: Bool, firstStillOpen: Bool) in
            let idle = idle.value
            let third = try RawSocket(port: port, timeout: .seconds(5))
            let closed: Bool
            do { closed = try third.readUntilClosed() } catch RawSocketError.failed { closed = true }
            // The first is still handshaking: finishing its request upgrades it.
            try idle[0].send(
                "Host: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
                    + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n")
            return (closed, try idle[0].readHead().hasPrefix("HTTP/1.1 101"))
        }
        #expect(outcome.closed)
        #expect(outcome.firstStillOpen)
        await server.stop()
    }

    @Test("with too few descriptors left in reserve, a new socket is closed at once instead of upgraded")
    func descriptorReserve() async throws {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        // A reserve as large as the whole limit: every accepted descriptor falls into it.
        let limits = WebSocketLimits(reservedDescriptors: Int(clamping: limit.rlim_cur))
        let server = try await SyncServer.listeningForTests(limits: limits)
        let port = try #require(server.webSocketEndpoint.flatMap { SyncEndpoint.port(of: $0) })
        let closed = try await offPool { () -> Bool in
            let socket = try RawSocket(port: port, timeout: .seconds(5))
            try socket.send(WebSocketHandshake.request(host: "127.0.0.1", port: port, key: "dGhlIHNhbXBsZSBub25jZQ=="))
            do { return try socket.readUntilClosed() } catch RawSocketError.failed { return true }
        }
        #expect(closed)
        await server.stop()
    }

    /// A welcomed raw socket, then `bytes`; returns the close code the server sends.
    func closeCode(after bytes: [UInt8], port: Int) async throws -> UInt16? {
        let hello = frame(.hello(Hello(credential: .anonymous)))
        return try await offPool { () -> UInt16? in
            let socket = try RawSocket(port: port, timeout: .seconds(10))
            try socket.upgrade()
            try socket.send(hello)
            _ = try socket.readFrame()
            try socket.send(bytes)
            return try socket.readCloseCode()
        }
    }

    @Test("a text frame is refused with 1003 from its header, before its payload arrives")
    func textRefusedOnArrival() async throws {
        let server = try await SyncServer.listeningForTests()
        let port = try #require(server.webSocketEndpoint.flatMap { SyncEndpoint.port(of: $0) })
        let text = clientFrame(opcode: 1, payload: Array("abcd".utf8), declaredLength: 1 << 20)
        #expect(try await closeCode(after: text, port: port) == 1003)
        await server.stop()
    }

    @Test("a message in 1-byte fragments is refused with 1008")
    func tinyFragments() async throws {
        let server = try await SyncServer.listeningForTests()
        let port = try #require(server.webSocketEndpoint.flatMap { SyncEndpoint.port(of: $0) })
        let message = ClientMessage.ping(id: 7).encoded()
        var bytes = clientFrame(fin: false, opcode: 2, payload: [message[0]])
        for byte in message.dropFirst().dropLast() { bytes += clientFrame(fin: false, opcode: 0, payload: [byte]) }
        bytes += clientFrame(opcode: 0, payload: [message.last!])
        #expect(try await closeCode(after: bytes, port: port) == 1008)
        await server.stop()
    }

    @Test("a message in more than maximumFragmentsPerMessage fragments is refused with 1008")
    func tooManyFragments() async throws {
        let limits = WebSocketLimits(maximumFragmentsPerMessage: 4)
        let server = try await SyncServer.listeningForTests(limits: limits)
        let port = try #require(server.webSocketEndpoint.flatMap { SyncEndpoint.port(of: $0) })
        let chunk = [UInt8](repeating: 0, count: 4096)
        var bytes = clientFrame(fin: false, opcode: 2, payload: chunk)
        for _ in 0..<5 { bytes += clientFrame(fin: false, opcode: 0, payload: chunk) }
        bytes += clientFrame(opcode: 0, payload: chunk)
        #expect(try await closeCode(after: bytes, port: port) == 1008)
        await server.stop()
    }

    @Test("a handshake that arrives one byte per write is scanned as it comes and upgraded")
    func handshakeByteByByte() async throws {
        let server = try await SyncServer.listeningForTests()
        let port = try #require(server.webSocketEndpoint.flatMap { SyncEndpoint.port(of: $0) })
        let head = try await offPool { () -> String in
            let socket = try RawSocket(port: port, timeout: .seconds(10))
            var noDelay: Int32 = 1
            setsockopt(
                socket.descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
            let request = WebSocketHandshake.request(host: "127.0.0.1", port: port, key: "dGhlIHNhbXBsZSBub25jZQ==")
            for byte in request {
                try socket.send([byte])
                usleep(500)
            }
            return try socket.readHead()
        }
        #expect(head.hasPrefix("HTTP/1.1 101"), "\(head)")
        await server.stop()
    }
}

/// Hands a non-Sendable value to one thread at a time (the test's steps run one after another).
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// Issue 23 item 2: the server's message limit travels in `welcome` (protocol version 5), and a version 4
/// client still gets the welcome it can decode.
@Suite(.timeLimit(.minutes(5))) struct WelcomeLimitTests {
    func welcome(protocolVersion: UInt16, server: SyncServer) async throws -> [UInt8] {
        let port = try #require(server.webSocketEndpoint.flatMap { SyncEndpoint.port(of: $0) })
        let hello = clientFrame(
            opcode: 2,
            payload: ClientMessage.hello(Hello(protocolVersion: protocolVersion, credential: .anonymous)).encoded())
        return try await offPool { () -> [UInt8] in
            let socket = try RawSocket(port: port, timeout: .seconds(10))
            try socket.upgrade()
            try socket.send(hello)
            return try socket.readFrame()?.payload ?? []
        }
    }

    @Test(
        "a version 6 (or 5) hello is welcomed with the server's message limit; a version 4 hello with the 3-byte welcome"
    )
    func limitInWelcome() async throws {
        let server = try await SyncServer.listeningForTests(configuration: .init(maximumMessageBytes: 64 << 10))
        let current = try await welcome(protocolVersion: WireProtocol.version, server: server)
        #expect(
            try ServerMessage(decoding: current)
                == .welcome(protocolVersion: WireProtocol.version, maximumMessageBytes: 64 << 10))
        let five = try await welcome(protocolVersion: 5, server: server)
        #expect(try ServerMessage(decoding: five) == .welcome(protocolVersion: 5, maximumMessageBytes: 64 << 10))
        let old = try await welcome(protocolVersion: 4, server: server)
        #expect(old == [0x81, 0x04, 0x00], "a version 4 client rejects trailing bytes")
        let older = try await welcome(protocolVersion: 3, server: server)
        guard case .error(let error) = try ServerMessage(decoding: older) else {
            Issue.record("version 3 was not refused: \(older)")
            return
        }
        #expect(error.code == .unsupportedProtocolVersion)
        await server.stop()
    }

    @Test("limits smaller than the configuration's: the welcome announces the limit the transport enforces")
    func transportLimitAnnounced() async throws {
        let server = try await SyncServer.listeningForTests(limits: WebSocketLimits(maximumMessageBytes: 32 << 10))
        let payload = try await welcome(protocolVersion: WireProtocol.version, server: server)
        #expect(
            try ServerMessage(decoding: payload)
                == .welcome(protocolVersion: WireProtocol.version, maximumMessageBytes: 32 << 10))
        await server.stop()
    }
}

/// Issue 23 item 8: browser pages (requests carrying `Origin`) against the server, before the upgrade.
@Suite(.timeLimit(.minutes(5))) struct OriginTests {
    /// The status line the server answers an upgrade request carrying `origin` (none: no header) with.
    func status(origin: String?, server: SyncServer) async throws -> String {
        let port = try #require(server.webSocketEndpoint.flatMap { SyncEndpoint.port(of: $0) })
        return try await status(origin: origin, port: port)
    }

    func status(origin: String?, port: Int) async throws -> String {
        var request = String(
            decoding: WebSocketHandshake.request(host: "127.0.0.1", port: port, key: "dGhlIHNhbXBsZSBub25jZQ=="),
            as: UTF8.self)
        // "\r\n" is one Character: dropping the last leaves the head without its blank line.
        if let origin { request = String(request.dropLast()) + "Origin: \(origin)\r\n\r\n" }
        let bytes = Array(request.utf8)
        return try await offPool { () -> String in
            let socket = try RawSocket(port: port, timeout: .seconds(10))
            try socket.send(bytes)
            let head = try socket.readHead()
            return String(head.prefix { $0 != "\r" })
        }
    }

    @Test("an anonymous server refuses a request carrying Origin (a browser page) with 403 before the upgrade")
    func anonymousRefusesBrowsers() async throws {
        let server = try await SyncServer.listeningForTests()
        #expect(try await status(origin: "https://evil.example", server: server).hasPrefix("HTTP/1.1 403"))
        #expect(try await status(origin: "null", server: server).hasPrefix("HTTP/1.1 403"))
        #expect(try await status(origin: nil, server: server).hasPrefix("HTTP/1.1 101"))
        await server.stop()
    }

    @Test("a server with API keys accepts any Origin by default (the key authenticates the page)")
    func keysAcceptBrowsers() async throws {
        let server = try await SyncServer.listeningForTests(
            configuration: .init(authentication: .apiKeys(["k": ["*"]])))
        #expect(try await status(origin: "https://app.example", server: server).hasPrefix("HTTP/1.1 101"))
        await server.stop()
    }

    @Test("an allow-list upgrades its origins (any case) and requests without Origin; any other Origin gets 403")
    func allowList() async throws {
        let limits = WebSocketLimits(originPolicy: .allowList(["https://app.example", "http://localhost:8080"]))
        let server = try await SyncServer.listeningForTests(limits: limits)
        #expect(try await status(origin: "https://app.example", server: server).hasPrefix("HTTP/1.1 101"))
        #expect(try await status(origin: "HTTPS://App.Example", server: server).hasPrefix("HTTP/1.1 101"))
        #expect(try await status(origin: "http://localhost:8080", server: server).hasPrefix("HTTP/1.1 101"))
        #expect(try await status(origin: nil, server: server).hasPrefix("HTTP/1.1 101"))
        #expect(try await status(origin: "https://app.example.evil", server: server).hasPrefix("HTTP/1.1 403"))
        #expect(try await status(origin: "http://app.example", server: server).hasPrefix("HTTP/1.1 403"))
        await server.stop()
    }

    @Test("an anonymous server told to accept any origin upgrades browser pages")
    func anyOrigin() async throws {
        let server = try await SyncServer.listeningForTests(limits: WebSocketLimits(originPolicy: .anyOrigin))
        #expect(try await status(origin: "https://anywhere.example", server: server).hasPrefix("HTTP/1.1 101"))
        await server.stop()
    }

    @Test("sync-server: anonymous refuses pages by default; --allow-origin (repeatable) allows exactly its origins")
    func syncServerFlag() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("origin-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: data) }
        let plain = try ChildProcess(syncServer: ["--port", "0", "--data", data + "-a"])
        defer { try? FileManager.default.removeItem(atPath: data + "-a") }
        let plainPort = try await plain.port()
        #expect(try await status(origin: "https://app.example", port: plainPort).hasPrefix("HTTP/1.1 403"))
        #expect(try await status(origin: nil, port: plainPort).hasPrefix("HTTP/1.1 101"))
        #expect(try await plain.stop(SIGTERM) == 0)

        let allowing = try ChildProcess(
            syncServer: [
                "--port", "0", "--data", data, "--allow-origin", "https://app.example", "--allow-origin",
                "http://localhost:3000",
            ])
        let port = try await allowing.port()
        #expect(try await status(origin: "https://app.example", port: port).hasPrefix("HTTP/1.1 101"))
        #expect(try await status(origin: "http://localhost:3000", port: port).hasPrefix("HTTP/1.1 101"))
        #expect(try await status(origin: "https://evil.example", port: port).hasPrefix("HTTP/1.1 403"))
        #expect(try await allowing.stop(SIGTERM) == 0)
    }
}
