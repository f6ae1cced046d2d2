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

/// Issue 23 item 9, the client side of the connection: which answers it accepts, and which addresses it
/// tries. Over real loopback sockets; blocking socket work on threads of its own, every wait bounded.
@Suite(.timeLimit(.minutes(5))) struct ClientHandshakeTests {
    /// A one-connection HTTP server on 127.0.0.1 that answers the upgrade with a correct 101 plus
    /// `extraHeaders`, then waits for the client to close (at most 10 s).
    final class FakeServer: Sendable {
        let port: Int
        private let descriptor: Int32

        init() throws {
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                    bind(descriptor, pointer, length) == 0 && listen(descriptor, 4) == 0
                        && getsockname(descriptor, pointer, &length) == 0
                }
            }
            guard descriptor >= 0, bound else { throw RawSocketError.failed("bind", errno) }
            var timeout = timeval(tv_sec: 10, tv_usec: 0)
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            self.descriptor = descriptor
            port = Int(UInt16(bigEndian: address.sin_port))
        }

        deinit { close(descriptor) }

        /// Blocking: accepts one connection, answers it, and returns once the client closed it.
        func serveOne(extraHeaders: [String]) throws {
            let client = accept(descriptor, nil, nil)
            guard client >= 0 else { throw RawSocketError.failed("accept", errno) }
            defer { close(client) }
            var timeout = timeval(tv_sec: 10, tv_usec: 0)
            setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while WebSocketHandshake.headEnd(in: received[...]) == nil {
                let count = recv(client, &buffer, buffer.count, 0)
                guard count > 0 else { throw RawSocketError.closed }
                received += buffer[0..<count]
            }
            let head = String(decoding: received, as: UTF8.self)
            guard let keyLine = head.split(separator: "\r\n").first(where: { $0.hasPrefix("Sec-WebSocket-Key: ") })
            else { throw RawSocketError.unexpected(head) }
            let key = String(keyLine.dropFirst("Sec-WebSocket-Key: ".count))
            let response = WebSocketHandshake.response(
                101, "Switching Protocols",
                headers: [
                    "Upgrade: websocket", "Connection: Upgrade",
                    "Sec-WebSocket-Accept: \(WebSocketHandshake.acceptValue(forKey: key))",
                ] + extraHeaders)
            _ = response.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            while recv(client, &buffer, buffer.count, 0) > 0 {}
        }
    }

    static let unoffered: [(String, String)] = [
        ("an extension", "Sec-WebSocket-Extensions: permessage-deflate"),
        ("a subprotocol", "Sec-WebSocket-Protocol: chat"),
    ]

    @Test("a 101 naming an extension or subprotocol the client did not offer fails the handshake", arguments: unoffered)
    func unofferedHeaderRefused(what: String, header: String) async throws {
        let server = try FakeServer()
        let port = server.port
        async let served: Void = offPool { try server.serveOne(extraHeaders: [header]) }
        let connection = WebSocketTransport.forTests().connect(to: .webSocket(host: "127.0.0.1", port: port))
        var events = connection.events.makeAsyncIterator()
        let first = await events.next()
        guard case .closed(.refused(let reason))? = first else {
            Issue.record("\(what): expected a refused handshake, got \(String(describing: first))")
            connection.close()
            try await served
            return
        }
        #expect(reason.contains("did not offer"), "\(reason)")
        connection.close()
        try await served
    }

    @Test("the same fake server's plain 101 opens the connection (the refusal above is for the header alone)")
    func plainUpgradeOpens() async throws {
        let server = try FakeServer()
        let port = server.port
        async let served: Void = offPool { try server.serveOne(extraHeaders: []) }
        let connection = WebSocketTransport.forTests().connect(to: .webSocket(host: "127.0.0.1", port: port))
        var events = connection.events.makeAsyncIterator()
        #expect(await events.next() == .opened)
        connection.close()
        try await served
    }

    /// The addresses of `hosts` (numeric) at `port`, resolved one by one.
    func addresses(_ hosts: [String], port: Int) throws -> [Socket.Address] {
        try hosts.flatMap { try Socket.resolve(host: $0, port: port).get() }
    }

    /// Connects to `addresses` (as if one name had resolved to them) and returns the first event, and
    /// whether a hello was then welcomed.
    func connect(_ addresses: [Socket.Address], port: Int) async throws -> (SyncTransportEvent?, Bool) {
        let connection = WebSocketClientConnection(loop: try EventLoop.shared(), limits: WebSocketLimits())
        connection.start(
            addresses: WebSocketClientConnection.connectionOrder(addresses), host: "localhost", port: port)
        var events = connection.events.makeAsyncIterator()
        let first = await events.next()
        guard first == .opened else { return (first, false) }
        connection.send(.hello(Hello(credential: .anonymous)))
        let answer = await events.next()
        connection.close()
        if case .message(.welcome)? = answer { return (first, true) }
        return (first, false)
    }

    @Test(
        "a name resolving to 127.0.0.1 and ::1 reaches a server listening only on ::1, and one listening only on 127.0.0.1"
    )
    func everyAddressTried() async throws {
        // ("localhost" resolves to 127.0.0.1 alone on some machines, this one included: the test gives the
        // client both loopback addresses as one name's resolution.)
        let v6 = try await SyncServer.listeningForTests(host: "::1")
        let v6Port = try #require(v6.webSocketEndpoint.flatMap { SyncEndpoint.port(of: $0) })
        let toV6 = try await connect(try addresses(["127.0.0.1", "::1"], port: v6Port), port: v6Port)
        #expect(toV6.0 == .opened, "\(String(describing: toV6.0))")
        #expect(toV6.1)
        await v6.stop()

        let v4 = try await SyncServer.listeningForTests(host: "127.0.0.1")
        let v4Port = try #require(v4.webSocketEndpoint.flatMap { SyncEndpoint.port(of: $0) })
        let toV4 = try await connect(try addresses(["::1", "127.0.0.1"], port: v4Port), port: v4Port)
        #expect(toV4.0 == .opened, "\(String(describing: toV4.0))")
        #expect(toV4.1)
        await v4.stop()
    }

    @Test("an address that never answers the TCP connect does not hold up the next: it is raced after 250 ms")
    func silentAddressRaced() async throws {
        // A listener on 127.0.0.1 whose accept queue is full (backlog 0, one connection never accepted):
        // the kernel drops further SYNs, so a connect to it stays pending.
        let silent = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { close(silent) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(silent, pointer, length) == 0 && listen(silent, 0) == 0
                    && getsockname(silent, pointer, &length) == 0
            }
        }
        try #require(bound)
        let silentPort = Int(UInt16(bigEndian: address.sin_port))
        let filler = try await offPool { UncheckedBox(try RawSocket(port: silentPort, timeout: .seconds(5))) }
        // The real server listens on ::1 only. The client's handshake timeout is a minute: only the race
        // can open the connection within the test's deadline.
        let server = try await SyncServer.listeningForTests(host: "::1")
        let port = try #require(server.webSocketEndpoint.flatMap { SyncEndpoint.port(of: $0) })
        let connection = WebSocketClientConnection(
            loop: try EventLoop.shared(), limits: WebSocketLimits(handshakeTimeout: .seconds(60)))
        connection.start(
            addresses: try addresses(["127.0.0.1"], port: silentPort) + addresses(["::1"], port: port),
            host: "localhost", port: port)
        let first = Locked<SyncTransportEvent?>(nil)
        let reader = Task {
            var events = connection.events.makeAsyncIterator()
            let event = await events.next()
            first.withLock { $0 = event }
        }
        try await eventually("the connection's first event") { first.withLock { $0 } != nil }
        reader.cancel()
        #expect(first.withLock { $0 } == .opened, "\(String(describing: first.withLock { $0 }))")
        connection.close()
        withExtendedLifetime(filler) {}
        await server.stop()
    }

    @Test("when no address accepts, the refusal names the failure of each family")
    func allAddressesFail() async throws {
        // A port nothing listens on: bound, then closed.
        let server = try await SyncServer.listeningForTests()
        let port = try #require(server.webSocketEndpoint.flatMap { SyncEndpoint.port(of: $0) })
        await server.stop()
        let (first, _) = try await connect(try addresses(["127.0.0.1", "::1"], port: port), port: port)
        guard case .closed(.refused(let reason))? = first else {
            Issue.record("expected a refusal, got \(String(describing: first))")
            return
        }
        #expect(reason.contains("IPv4") && reason.contains("IPv6"), "\(reason)")
    }

    @Test("addresses are tried alternating families, IPv4 first, each family in the resolver's order")
    func order() throws {
        let mixed = try addresses(["::1", "::1", "127.0.0.1"], port: 1)
        let ordered = WebSocketClientConnection.connectionOrder(mixed).map(\.isIPv4)
        #expect(ordered == [true, false, false])
    }
}
