import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A TCP client that writes the bytes a test gives it and collects every byte the server sends: for
/// requests and frames no well-behaved client would send.
final class RawClient: Sendable {
    private let channel: any Channel
    private let collector: Collector

    private init(channel: any Channel, collector: Collector) {
        self.channel = channel
        self.collector = collector
    }

    static func connect(port: Int) async throws -> RawClient {
        let collector = Collector()
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(collector) }
            }
            .connect(host: "127.0.0.1", port: port).get()
        return RawClient(channel: channel, collector: collector)
    }

    /// Sends `bytes`; a connection the server closed takes them silently.
    func send(_ bytes: [UInt8]) async {
        try? await channel.writeAndFlush(ByteBuffer(bytes: bytes)).get()
    }

    /// Queues `bytes` without waiting for them to be written (a server that stops reading never takes
    /// them all).
    func write(_ bytes: [UInt8]) {
        channel.writeAndFlush(ByteBuffer(bytes: bytes), promise: nil)
    }

    /// An HTTP/1.1 WebSocket upgrade request for `/`, with `headers` added.
    func sendUpgrade(headers: [String] = []) async {
        let lines =
            [
                "GET / HTTP/1.1", "Host: 127.0.0.1", "Upgrade: websocket", "Connection: Upgrade",
                "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version: 13",
            ] + headers
        await send(Array((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8))
    }

    /// Everything received so far.
    var received: [UInt8] { collector.bytes.withLockedValue { $0 } }
    /// The received bytes as text (for the HTTP response).
    var receivedText: String { String(decoding: received, as: UTF8.self) }
    /// Whether the server closed the connection.
    var isClosed: Bool { !channel.isActive }

    /// The bytes of the HTTP response's head (through its blank line), once it is complete; what follows
    /// are WebSocket frames.
    var responseHeadCount: Int? {
        let bytes = received
        return bytes.indices.first { bytes[$0...].starts(with: Array("\r\n\r\n".utf8)) }.map { $0 + 4 }
    }

    /// The code of the close frame the server sent after its `101` response, if one came.
    var closeCode: UInt16? {
        let bytes = received
        guard var index = responseHeadCount else { return nil }
        // Server frames are unmasked; skip them up to the close frame (opcode 8).
        while index + 2 <= bytes.count {
            let opcode = bytes[index] & 0x0F
            var length = Int(bytes[index + 1] & 0x7F)
            var header = 2
            if length == 126, index + 4 <= bytes.count {
                length = Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
                header = 4
            } else if length == 127 {
                return nil
            }
            if opcode == 8 {
                guard length >= 2, index + header + 2 <= bytes.count else { return nil }
                return UInt16(bytes[index + header]) << 8 | UInt16(bytes[index + header + 1])
            }
            index += header + length
        }
        return nil
    }

    func close() async { try? await channel.close() }

    private final class Collector: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        let bytes = NIOLockedValueBox<[UInt8]>([])

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let buffer = unwrapInboundIn(data)
            bytes.withLockedValue { $0 += buffer.readableBytesView }
        }
    }
}

/// A masked client frame: `opcode` (2: binary, 9: ping), with `payload`; `claimedLength` (when given)
/// is announced in the header instead of the payload's length (a header for a frame not sent in full).
func clientFrame(opcode: UInt8, payload: [UInt8], claimedLength: Int? = nil) -> [UInt8] {
    let length = claimedLength ?? payload.count
    var frame: [UInt8] = [0x80 | opcode]
    if length < 126 {
        frame.append(0x80 | UInt8(length))
    } else if length < 65_536 {
        frame += [0x80 | 126, UInt8(length >> 8), UInt8(length & 0xFF)]
    } else {
        frame.append(0x80 | 127)
        frame += (0..<8).reversed().map { UInt8(truncatingIfNeeded: length >> ($0 * 8)) }
    }
    let mask: [UInt8] = [1, 2, 3, 4]
    frame += mask
    frame += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
    return frame
}
