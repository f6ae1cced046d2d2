import NIOCore
import SyncServer

/// Counts a client socket's bytes in the server's metrics (`SyncServer.count(_:)`:
/// `sync_received_bytes_total` and `sync_sent_bytes_total`), as the root listener counts its own: the
/// first handler of a connection's pipeline, so TLS records and HTTP heads count as they cross the socket.
///
/// A read counts when it arrives; a write when it is handed to the socket's queue (one atomic add, no
/// promise of its own on the write path), so the bytes of a connection closed before its queue drained
/// count too.
final class SocketByteCounter: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let server: SyncServer

    init(server: SyncServer) {
        self.server = server
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        server.count(.received(bytes: unwrapInboundIn(data).readableBytes))
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        server.count(.sent(bytes: unwrapOutboundIn(data).readableBytes))
        context.write(data, promise: promise)
    }
}
