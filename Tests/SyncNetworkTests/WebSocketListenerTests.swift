import Foundation
import SyncStreams
import SyncWire
import TestSupport
import Testing

@testable import SyncNetwork

/// The server side over real loopback sockets, driven byte by byte: each broken rule gets the close code
/// RFC 6455 prescribes, and nothing a bad client does disturbs the others.
@Suite(.timeLimit(.minutes(5))) struct WebSocketListenerTests {
    static let violations: [(String, [UInt8], UInt16)] = [
        ("an unmasked client frame", clientFrame(opcode: 2, payload: [1, 2, 3], masked: false), 1002),
        ("reserved bits", clientFrame(rsv: 2, opcode: 2, payload: [1]), 1002),
        ("an unknown opcode", clientFrame(opcode: 0xB, payload: []), 1002),
        ("a fragmented ping", clientFrame(fin: false, opcode: 9, payload: [1]), 1002),
        ("an oversized ping", clientFrame(opcode: 9, payload: [UInt8](repeating: 7, count: 126)), 1002),
        ("a close frame with code 1005", clientFrame(opcode: 8, payload: [0x03, 0xED]), 1002),
        ("a close frame with code 999", clientFrame(opcode: 8, payload: [0x03, 0xE7]), 1002),
        ("a continuation with nothing to continue", clientFrame(opcode: 0, payload: [1]), 1002),
        (
            "a frame longer than the message limit",
            Array(clientFrame(opcode: 2, payload: [], declaredLength: 1 << 24 + 1).prefix(14)), 1009
        ),
        // Any text frame is refused from its first byte (issue 23), before its UTF-8 could be checked.
        ("a text message (not UTF-8)", clientFrame(opcode: 1, payload: [0xFF, 0xFE]), 1003),
        ("a text message (the protocol is binary)", clientFrame(opcode: 1, payload: Array("hello".utf8)), 1003),
        ("a binary message that is not a sync message", clientFrame(opcode: 2, payload: [0xEE, 1, 2]), 1007),
    ]

    @Test("each broken rule closes the connection with its RFC 6455 code", arguments: violations)
    func violation(name: String, bytes: [UInt8], code: UInt16) async throws {
        let listener = try await startListener(limits: WebSocketLimits(maximumMessageBytes: 1 << 24))
        let port = listener.port
        let received = try await offPool { () -> UInt16? in
            let socket = try RawSocket(port: port)
            try socket.upgrade()
            try socket.send(bytes)
            let code = try socket.readCloseCode()
            _ = try socket.readUntilClosed()  // and then the server closes TCP
            return code
        }
        #expect(received == code, "\(name)")
        await listener.shutDown()
    }

    @Test("a ping is answered with a pong carrying its payload; a close is echoed with its code")
    func pingAndClose() async throws {
        let listener = try await startListener()
        let port = listener.port
        let (pong, echoed) = try await offPool { () -> ([UInt8]?, UInt16?) in
            let socket = try RawSocket(port: port)
            try socket.upgrade()
            try socket.send(clientFrame(opcode: 9, payload: [4, 5, 6]))
            let pong = try socket.readFrame()
            try socket.send(clientFrame(opcode: 8, payload: [0x0F, 0xA0]))  // 4000
            let echoed = try socket.readCloseCode()
            _ = try socket.readUntilClosed()
            return (pong?.opcode == .pong ? pong?.payload : nil, echoed)
        }
        #expect(pong == [4, 5, 6])
        #expect(echoed == 4000)
        await listener.shutDown()
    }

    @Test("malformed and oversized handshakes get 400 and 431, and the connection is closed")
    func badHandshakes() async throws {
        let listener = try await startListener(limits: WebSocketLimits(maximumHandshakeBytes: 1024))
        let port = listener.port
        let heads = try await offPool { () -> [String] in
            var heads: [String] = []
            let garbage = try RawSocket(port: port)
            try garbage.send("HELLO\r\n\r\n")
            heads.append(try garbage.readHead())
            _ = try garbage.readUntilClosed()
            let huge = try RawSocket(port: port)
            try huge.send("GET / HTTP/1.1\r\nX-Padding: " + String(repeating: "a", count: 4096))
            heads.append(try huge.readHead())
            _ = try huge.readUntilClosed()
            return heads
        }
        #expect(heads[0].hasPrefix("HTTP/1.1 400 "))
        #expect(heads[1].hasPrefix("HTTP/1.1 431 "))
        await listener.shutDown()
    }

    @Test("a client that sends half a handshake and stalls is dropped after the handshake timeout")
    func stalledHandshake() async throws {
        let listener = try await startListener(limits: WebSocketLimits(handshakeTimeout: .milliseconds(200)))
        let port = listener.port
        let closed = try await offPool { () -> Bool in
            let socket = try RawSocket(port: port)
            try socket.send("GET / HTTP/1.1\r\nHost: x\r\n")
            return try socket.readUntilClosed()
        }
        #expect(closed)
        #expect(await listener.openConnectionCount == 0)
        await listener.shutDown()
    }

    @Test("garbage from one client does not disturb another")
    func isolation() async throws {
        let acceptor = EchoAcceptor()
        let listener = try await startListener(acceptor: acceptor)
        let connection = WebSocketTransport.forTests().connect(to: .webSocket(host: "127.0.0.1", port: listener.port))
        var events = connection.events.makeAsyncIterator()
        #expect(await events.next() == .opened)
        let port = listener.port
        _ = try await offPool { () -> UInt16? in
            let socket = try RawSocket(port: port)
            try socket.upgrade()
            try socket.send([0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
            return try socket.readCloseCode()
        }
        connection.send(.ping(id: 42))
        #expect(await events.next() == .message(.pong(id: 42)))
        connection.close()
        #expect(await events.next() == .closed(nil))
        await listener.shutDown()
    }

    @Test(
        "a client that sends pings and never reads the pongs is dropped once they pass the hard limit; others carry on")
    func pingFlood() async throws {
        let limits = WebSocketLimits(outboundHardLimit: 256 << 10)
        let listener = try await startListener(limits: limits)
        let connection = WebSocketTransport.forTests().connect(to: .webSocket(host: "127.0.0.1", port: listener.port))
        var events = connection.events.makeAsyncIterator()
        #expect(await events.next() == .opened)
        let port = listener.port
        // Each batch: a large sync message (which the acceptor ignores) and then pings, so that the pongs that
        // cross the limit are often answered in the same pass over the input as a large message.
        let large = ClientMessage.upload(
            Upload(
                sessionID: 1,
                changesets: [UploadChangeset(clientVersion: 1, data: [UInt8](repeating: 1, count: 80_000))]))
        let pings =
            clientFrame(opcode: 2, payload: large.encoded())
            + (0..<100).flatMap { _ in clientFrame(opcode: 9, payload: [UInt8](repeating: 7, count: 125)) }
        let dropped = try await offPool("the flooding client to be dropped", seconds: 35) { () -> Bool in
            let socket = try RawSocket(port: port, receiveBufferBytes: 4096)
            try socket.upgrade()
            let deadline = ContinuousClock.now + .seconds(30)
            while ContinuousClock.now < deadline {
                do { try socket.send(pings) } catch RawSocketError.failed { return true }
            }
            return false
        }
        #expect(dropped)
        try await eventually("the listener to forget it") { await listener.openConnectionCount == 1 }
        connection.send(.ping(id: 5))
        #expect(await events.next() == .message(.pong(id: 5)))
        connection.close()
        await listener.shutDown()
    }

    @Test("shutting down closes open connections with 1001 (going away)")
    func goingAway() async throws {
        let listener = try await startListener()
        let connection = WebSocketTransport.forTests().connect(to: .webSocket(host: "127.0.0.1", port: listener.port))
        var events = connection.events.makeAsyncIterator()
        #expect(await events.next() == .opened)
        await listener.shutDown()
        let last = await events.next()
        guard case .closed(.connectionLost(let reason)) = last else {
            Issue.record("expected a lost connection, got \(String(describing: last))")
            return
        }
        #expect(reason.contains("1001"), "\(reason)")
    }

    @Test("a refused connection is answered 503 before any upgrade (issue 23: it was 101, then 1013)")
    func refused() async throws {
        let listener = try await startListener(acceptor: EchoAcceptor(refuse: true))
        let port = listener.port
        let head = try await offPool { () -> String in
            let socket = try RawSocket(port: port)
            try socket.send(WebSocketHandshake.request(host: "127.0.0.1", port: port, key: "dGhlIHNhbXBsZSBub25jZQ=="))
            return try socket.readHead()
        }
        #expect(head.hasPrefix("HTTP/1.1 503"), "\(head)")
        await listener.shutDown()
    }

    @Test("connecting to a port nobody listens on reports .refused, never .opened")
    func unreachable() async throws {
        // A port held bound but not listening: nothing listens there, and no other process can take it.
        let reserved = try ReservedPort()
        let connection = WebSocketTransport.forTests().connect(to: .webSocket(host: "127.0.0.1", port: reserved.port))
        var events = connection.events.makeAsyncIterator()
        let first = await events.next()
        guard case .closed(.refused) = first else {
            Issue.record("expected .refused, got \(String(describing: first))")
            return
        }
        #expect(await events.next() == nil)
        withExtendedLifetime(reserved) {}
    }

    @Test("a host that does not resolve reports .refused")
    func unresolvable() async throws {
        let connection = WebSocketTransport.forTests().connect(to: .webSocket(host: "no-such-host.invalid", port: 1))
        var events = connection.events.makeAsyncIterator()
        let first = await events.next()
        guard case .closed(.refused) = first else {
            Issue.record("expected .refused, got \(String(describing: first))")
            return
        }
    }
}
