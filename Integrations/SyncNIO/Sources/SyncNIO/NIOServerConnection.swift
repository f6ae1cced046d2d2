import NIOConcurrencyHelpers
import NIOCore
import NIOWebSocket
import SyncServer

/// The server's end of one WebSocket connection of `NIOSyncServer`, handed to `SyncServer`'s core.
final class NIOServerConnection: SyncServerConnection, PeerAddressed, Sendable {
    /// The client's address, `host:port` (`[v6]:port`): the server's log lines about this connection carry
    /// it (`sync-server-nio --log-format json`).
    let peerAddress: String?
    /// The client's messages, taken one at a time from the inbox (so the bytes waiting are known).
    let incoming: AsyncStream<ClientMessage>
    private let channel: any Channel
    /// Past this many bytes of received messages not yet taken by the core, the connection is backlogged.
    private let inboundHighWater: Int
    /// Past this many bytes sent and not yet written to the socket, the client is too slow: closed.
    private let highWater: Int
    /// `writable()` returns once the bytes not yet written are at most this many.
    private let lowWater: Int

    private struct State {
        var queuedBytes = 0
        var closed = false
        var waiters: [CheckedContinuation<Void, Never>] = []
        /// Received messages (with their sizes) the core has not taken yet.
        var inbox: [(message: ClientMessage, bytes: Int)] = []
        var inboxHead = 0
        var inboundBytes = 0
        var peakInboundBytes = 0
        var backlogged = false
        var readsWithheld = 0
        /// The core waiting for the next message.
        var receiver: CheckedContinuation<ClientMessage?, Never>?
    }

    private let state: NIOLockedValueBox<State>
    /// Called when the connection becomes backlogged or stops being so, with a function that tells
    /// which it is now.
    private let backlogChanged: @Sendable (_ isBacklogged: @escaping @Sendable () -> Bool) -> Void
    /// Called once `welcome` is sent (the client authenticated).
    private let welcomed: @Sendable () -> Void

    init(
        channel: any Channel, highWater: Int, lowWater: Int, inboundHighWater: Int = 4 << 20,
        welcomed: @escaping @Sendable () -> Void = {},
        backlogChanged: @escaping @Sendable (_ isBacklogged: @escaping @Sendable () -> Bool) -> Void = { _ in }
    ) {
        self.channel = channel
        peerAddress = channel.remoteAddress.flatMap(Self.text(of:))
        self.welcomed = welcomed
        self.highWater = highWater
        self.lowWater = lowWater
        self.inboundHighWater = inboundHighWater
        self.backlogChanged = backlogChanged
        let state = NIOLockedValueBox(State())
        self.state = state
        // The core's reads resume the socket's once the backlog is half taken.
        incoming = AsyncStream(
            unfolding: {
                let (message, resume) = await Self.next(state, inboundHighWater: inboundHighWater)
                if resume { backlogChanged { state.withLockedValue { $0.backlogged } } }
                return message
            },
            onCancel: { Self.cancelNext(state) })
    }

    /// `address` as `host:port`, an IPv6 host in brackets; `nil` for an address without a port (a Unix
    /// socket).
    static func text(of address: SocketAddress) -> String? {
        guard let host = address.ipAddress, let port = address.port else { return nil }
        return host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// Whether more than `inboundHighWater` bytes of messages wait for the core.
    var isBacklogged: Bool { state.withLockedValue { $0.backlogged } }
    /// How often the socket was not read because the connection was backlogged (tests).
    var readsWithheld: Int { state.withLockedValue { $0.readsWithheld } }
    /// Counts a read withheld for the backlog (`HelloGate`).
    func readWithheld() { state.withLockedValue { $0.readsWithheld += 1 } }
    /// The most bytes of messages that waited for the core at once (tests).
    var peakInboundBytes: Int { state.withLockedValue { $0.peakInboundBytes } }

    /// The next message for the core: a waiting one, or the next received; `nil` once closed and empty.
    /// Also whether that take ended the backlog.
    private static func next(
        _ state: NIOLockedValueBox<State>, inboundHighWater: Int
    ) async -> (ClientMessage?, resume: Bool) {
        var resume = false
        let message = await withCheckedContinuation { (receiver: CheckedContinuation<ClientMessage?, Never>) in
            let taken = state.withLockedValue { state -> (message: ClientMessage?, done: Bool) in
                if state.inboxHead < state.inbox.count {
                    let (message, bytes) = state.inbox[state.inboxHead]
                    state.inboxHead += 1
                    if state.inboxHead == state.inbox.count {
                        state.inbox.removeAll(keepingCapacity: true)
                        state.inboxHead = 0
                    }
                    state.inboundBytes -= bytes
                    // Reading resumes once half of the high-water mark was taken.
                    if state.backlogged && state.inboundBytes <= inboundHighWater / 2 {
                        state.backlogged = false
                        resume = true
                    }
                    return (message, true)
                }
                if state.closed { return (nil, true) }
                state.receiver = receiver
                return (nil, false)
            }
            if taken.done { receiver.resume(returning: taken.message) }
        }
        return (message, resume)
    }

    private static func cancelNext(_ state: NIOLockedValueBox<State>) {
        let receiver = state.withLockedValue { state in
            defer { state.receiver = nil }
            return state.receiver
        }
        receiver?.resume(returning: nil)
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
        Self.cancelNext(state)
        for waiter in waiters { waiter.resume() }
        return true
    }

    /// A message of `bytes` bytes from the client, for the core. Returns whether the connection just
    /// became backlogged.
    fileprivate func received(_ message: ClientMessage, bytes: Int) -> Bool {
        let (receiver, nowBacklogged) = state.withLockedValue {
            state -> (CheckedContinuation<ClientMessage?, Never>?, Bool) in
            guard !state.closed else { return (nil, false) }
            if let receiver = state.receiver {
                state.receiver = nil
                return (receiver, false)
            }
            state.inbox.append((message, bytes))
            state.inboundBytes += bytes
            state.peakInboundBytes = max(state.peakInboundBytes, state.inboundBytes)
            guard !state.backlogged, state.inboundBytes > inboundHighWater else { return (nil, false) }
            state.backlogged = true
            return (nil, true)
        }
        receiver?.resume(returning: message)
        if nowBacklogged { backlogChanged { [state] in state.withLockedValue { $0.backlogged } } }
        return nowBacklogged
    }
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
                let message = try ClientMessage(decoding: bytes, maximumSize: maximumMessageBytes)
                _ = connection.received(message, bytes: bytes.count)
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
