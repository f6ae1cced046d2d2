import Foundation
import SyncEngine

#if os(Linux)
    import CEpoll
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The echo-style figure of the side-by-side run: RFC 6455 pings, each answered by the server with a
/// pong carrying the same payload. `connections` raw WebSocket connections (each upgraded and welcomed
/// after an anonymous `hello`, as a real client is), each keeping `window` pings in flight: every pong
/// received sends the next ping. One client thread with epoll; pongs per second over `seconds` after a
/// one-second warm-up, and the server's CPU time per pong over the same interval (from /proc).
enum PingEcho {
    struct Figure {
        var pongsPerSecond: Double
        var serverMicrosecondsPerPong: Double
    }

    struct Failed: Error, CustomStringConvertible { var description: String }

    static func run(server: ServerProcess, connections: Int, window: Int, seconds: Double) async throws -> Figure {
        let outcome = await onOwnThread(deadline: .seconds(300)) { () -> Result<Figure, Failed> in
            Result { try measure(server: server, connections: connections, window: window, seconds: seconds) }
                .mapError { $0 as? Failed ?? Failed(description: "\($0)") }
        }
        guard let outcome else { throw Failed(description: "no figure within 300 s") }
        return try outcome.get()
    }

    /// A masked ping with an 8-byte payload (the mask is zero, so the payload goes as it is).
    static let pingFrame: [UInt8] = [0x89, 0x80 | 8, 0, 0, 0, 0] + Array("ping-ech".utf8)

    #if os(Linux)
        private static func measure(
            server: ServerProcess, connections: Int, window: Int, seconds: Double
        ) throws -> Figure {
            var sockets: [Int32] = []
            defer { for socket in sockets { close(socket) } }
            for _ in 0..<connections { sockets.append(try openWelcomedConnection(port: server.port)) }

            let epoll = epoll_create1(0)
            guard epoll >= 0 else { throw Failed(description: "epoll_create1: errno \(errno)") }
            defer { close(epoll) }
            let highest = Int(sockets.max() ?? 0)
            var partial = [[UInt8]](repeating: [], count: highest + 1)  // a frame cut by a read, per socket
            var unsent = [[UInt8]](repeating: [], count: highest + 1)  // pings a short write left, per socket
            let windowOfPings = [UInt8]((0..<window).flatMap { _ in pingFrame })
            for socket in sockets {
                _ = fcntl(socket, F_SETFL, fcntl(socket, F_GETFL) | O_NONBLOCK)
                var event = epoll_event()
                event.events = EPOLLIN.rawValue
                event.data.fd = socket
                _ = epoll_ctl(epoll, EPOLL_CTL_ADD, socket, &event)
                unsent[Int(socket)] = windowOfPings
                flush(socket, &unsent[Int(socket)])
            }

            let clock = ContinuousClock()
            let measuringFrom = clock.now + .seconds(1)
            let measuringUntil = measuringFrom + .milliseconds(Int(seconds * 1000))
            var counting = false
            var pongs = 0
            var cpuAtStart = 0.0
            var events = [epoll_event](repeating: epoll_event(), count: 1024)
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            while true {
                let now = clock.now
                if !counting && now >= measuringFrom {
                    counting = true
                    cpuAtStart = server.cpuSeconds()
                }
                if now >= measuringUntil { break }
                let ready = events.withUnsafeMutableBufferPointer {
                    epoll_wait(epoll, $0.baseAddress, Int32($0.count), 100)
                }
                for index in 0..<max(0, Int(ready)) {
                    let socket = events[index].data.fd
                    var answered = 0
                    while true {
                        let count = buffer.withUnsafeMutableBytes { read(socket, $0.baseAddress, $0.count) }
                        if count == 0 { throw Failed(description: "the server closed a connection") }
                        if count < 0 {
                            if errno == EAGAIN || errno == EINTR { break }
                            throw Failed(description: "read: errno \(errno)")
                        }
                        partial[Int(socket)].append(contentsOf: buffer[0..<count])
                        answered += takePongs(from: &partial[Int(socket)])
                    }
                    if counting { pongs += answered }
                    for _ in 0..<answered { unsent[Int(socket)].append(contentsOf: pingFrame) }
                    flush(socket, &unsent[Int(socket)])
                }
            }
            let cpu = server.cpuSeconds() - cpuAtStart
            return Figure(
                pongsPerSecond: Double(pongs) / seconds, serverMicrosecondsPerPong: cpu * 1e6 / Double(max(pongs, 1)))
        }
    #else
        private static func measure(
            server: ServerProcess, connections: Int, window: Int, seconds: Double
        ) throws
            -> Figure
        {
            throw Failed(description: "Linux only (epoll)")
        }
    #endif

    /// Complete frames removed from the front of `bytes`; the number of pongs among them. A server's
    /// frames are not masked; a pong carries at most 125 bytes.
    private static func takePongs(from bytes: inout [UInt8]) -> Int {
        var offset = 0
        var pongs = 0
        while bytes.count - offset >= 2 {
            var length = Int(bytes[offset + 1] & 0x7F)
            var header = 2
            if length == 126 {
                guard bytes.count - offset >= 4 else { break }
                length = Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
                header = 4
            } else if length == 127 {
                guard bytes.count - offset >= 10 else { break }
                length = (0..<8).reduce(0) { $0 << 8 | Int(bytes[offset + 2 + $1]) }
                header = 10
            }
            guard bytes.count - offset >= header + length else { break }
            if bytes[offset] & 0x0F == 0xA { pongs += 1 }
            offset += header + length
        }
        bytes.removeFirst(offset)
        return pongs
    }

    /// Writes as much of `pending` as the socket takes now; the rest stays for the next wake-up.
    private static func flush(_ socket: Int32, _ pending: inout [UInt8]) {
        guard !pending.isEmpty else { return }
        let written = pending.withUnsafeBytes { write(socket, $0.baseAddress, $0.count) }
        if written > 0 { pending.removeFirst(written) }
    }

    /// A blocking connect, the upgrade, an anonymous `hello`, and the server's first message (`welcome`).
    #if os(Linux)
        private static func openWelcomedConnection(port: Int) throws -> Int32 {
            let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard socket >= 0 else { throw Failed(description: "socket: errno \(errno)") }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard connected == 0 else {
                close(socket)
                throw Failed(description: "connect: errno \(errno)")
            }
            var noDelay: Int32 = 1
            setsockopt(socket, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
            let hello = ClientMessage.hello(Hello(credential: .anonymous)).encoded()
            let request =
                Array(
                    ("GET / HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                        + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n").utf8)
                + [0x82, 0x80 | UInt8(hello.count), 0, 0, 0, 0] + hello
            _ = request.withUnsafeBytes { write(socket, $0.baseAddress, $0.count) }
            // The 101 answer, then one complete binary frame.
            var received: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                if let end = received.firstRange(of: Array("\r\n\r\n".utf8)) {
                    guard received.starts(with: Array("HTTP/1.1 101".utf8)) else {
                        close(socket)
                        throw Failed(
                            description: "no upgrade: \(String(decoding: received[..<end.lowerBound], as: UTF8.self))")
                    }
                    var frames = Array(received[end.upperBound...])
                    if frames.count >= 2, frames[0] & 0x0F == 0x2 {
                        let before = frames.count
                        _ = takePongs(from: &frames)
                        if frames.count < before { return socket }
                    }
                }
                let count = chunk.withUnsafeMutableBytes { read(socket, $0.baseAddress, $0.count) }
                guard count > 0 else {
                    close(socket)
                    throw Failed(description: "the server closed the connection before welcome")
                }
                received.append(contentsOf: chunk[0..<count])
            }
        }
    #endif
}
