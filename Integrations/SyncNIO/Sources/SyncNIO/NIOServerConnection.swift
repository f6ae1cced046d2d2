import NIOConcurrencyHelpers
import NIOCore
import NIOWebSocket
import SyncServer

/// The server's end of one WebSocket connection of `NIOSyncServer`, handed to `SyncServer`'s core.
final class NIOServerConnection: SyncServerConnection, Sendable {
    let incoming: AsyncStream<ClientMessage>
    private let continuation: AsyncStream<ClientMessage>.Continuation
    private let channel: any Channel
    /// Past this many bytes sent and not yet written to the socket, the client is too slow: closed.
    private let highWater: Int
    /// `writable()` returns once the bytes not yet written are at most this many.
    private let lowWater: Int

    private struct State {
        var queuedBytes = 0
        var closed = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = NIOLockedValueBox(State())
    /// Called once `welcome` is sent (the client authenticated).
    private let welcomed: @Sendable () -> Void

    init(channel: any Channel, highWater: Int, lowWater: Int, welcomed: @escaping @Sendable () -> Void = {}) {
        self.channel = channel
        self.welcomed = welcomed
        self.highWater = highWater
        self.lowWater = lowWater
        (incoming, continuation) = AsyncStream<ClientMessage>.makeStream()
    }

    func send(_ message: ServerMessage) {
        let bytes = message.encoded()
        let count = bytes.count
        let accepted = state.withLockedValue { state -> Bool? in
            guard !state.closed else { return nil }
            state.queuedBytes += count
            return state.queuedBytes <= highWater
        }
        guard let accepted else { return }
        guard accepted else {
            // A client that does not read never holds more of the server's memory than this.
            close(code: .policyViolation)
            return
        }
        let frame = WebSocketFrame(fin: true, opcode: .binary, data: ByteBuffer(bytes: bytes))
        channel.writeAndFlush(frame).whenComplete { [self] _ in wrote(count) }
        if case .welcome = message { welcomed() }
    }

    private func wrote(_ count: Int) {
        let waiters = state.withLockedValue { state -> [CheckedContinuation<Void, Never>] in
            state.queuedBytes -= count
            guard state.queuedBytes <= lowWater else { return [] }
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func writable() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let now = state.withLockedValue { state in
                if state.closed || state.queuedBytes <= lowWater { return true }
                state.waiters.append(waiter)
                return false
            }
            if now { waiter.resume() }
        }
    }

    func close() { close(code: .goingAway) }

    /// Closes with a close frame carrying `code`, then the TCP connection.
    func close(code: WebSocketErrorCode) {
        guard ended() else { return }
        var data = channel.allocator.buffer(capacity: 2)
        data.write(webSocketErrorCode: code)
        let frame = WebSocketFrame(fin: true, opcode: .connectionClose, data: data)
        let channel = channel
        channel.writeAndFlush(frame).whenComplete { _ in channel.close(promise: nil) }
    }

    /// Marks the connection closed, ends `incoming` and wakes `writable()`'s waiters; `false` if it
    /// already was.
    @discardableResult
    func ended() -> Bool {
        let (first, waiters) = state.withLockedValue { state -> (Bool, [CheckedContinuation<Void, Never>]) in
            guard !state.closed else { return (false, []) }
            state.closed = true
            defer { state.waiters = [] }
            return (true, state.waiters)
        }
        guard first else { return false }
        continuation.finish()
        for waiter in waiters { waiter.resume() }
        return true
    }

    fileprivate func received(_ message: ClientMessage) { continuation.yield(message) }
}

/// The last handler of a server connection after the upgrade: client messages to the core, pings and
/// closes answered.
final class ServerFrameHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame

    private let connection: NIOServerConnection
    private let maximumMessageBytes: Int

    init(connection: NIOServerConnection, maximumMessageBytes: Int) {
        self.connection = connection
        self.maximumMessageBytes = maximumMessageBytes
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .binary:
            let bytes = Array(frame.unmaskedData.readableBytesView)
            do {
                connection.received(try ClientMessage(decoding: bytes, maximumSize: maximumMessageBytes))
            } catch {
                connection.close(code: .dataInconsistentWithMessage)
            }
        case .ping:
            context.writeAndFlush(
                NIOAny(WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData)), promise: nil)
        case .pong:
            break
        case .connectionClose:
            // The client closes: echo its code, then close.
            guard connection.ended() else { return }
            var data = frame.unmaskedData
            var echo = context.channel.allocator.buffer(capacity: 2)
            if let code = data.readInteger(as: UInt16.self) { echo.writeInteger(code) }
            let answer = WebSocketFrame(fin: true, opcode: .connectionClose, data: echo)
            context.writeAndFlush(NIOAny(answer)).whenComplete { [channel = context.channel] _ in
                channel.close(promise: nil)
            }
        default:
            connection.close(code: .unacceptableData)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is IdleStateHandler.IdleStateEvent {
            connection.close(code: .goingAway)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        connection.ended()
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        connection.ended()
        context.fireChannelInactive()
    }
}
