import SyncStreams
import SyncWire

/// The server's end of one WebSocket connection, handed to a `SyncConnectionAcceptor` once upgraded.
///
/// - `incoming`: the client's messages; a binary message that is not a valid sync message gets a
///   `.malformedMessage` error and the connection is failed with 1007. Past `limits.inboundHighWater`
///   unread bytes, the socket is not read (the client's TCP window fills; it slows down).
/// - `send` encodes on the caller's thread and hands the frame to the loop; `writable()` waits until the
///   queue is below `limits.outboundLowWater`. A client that lets `limits.outboundHardLimit` bytes pile up
///   is dropped (it sees a lost connection), so a reader that stalls never holds the server's memory.
/// - `close()` runs the close handshake with 1000, or 1001 once the server is shutting down.
final class WebSocketServerConnection: SyncServerConnection, PeerAddressed, WebSocketChannelDelegate,
    @unchecked Sendable
{
    // @unchecked Sendable: `channel` and the delegate methods are used on the loop's thread only; the
    // rest is locked, immutable, or Sendable.

    let incoming: AsyncStream<ClientMessage>
    private let loop: EventLoop
    private let limits: WebSocketLimits
    private let queue: MessageQueue<ClientMessage>
    /// The messages queued for the client and not yet written.
    let budget: OutboundBudget
    private let goingAway: @Sendable () -> Bool
    private var channel: WebSocketChannel?
    private var onEnd: ((WebSocketServerConnection) -> Void)?
    let peerAddress: String?

    init(
        channel: WebSocketChannel, limits: WebSocketLimits, goingAway: @escaping @Sendable () -> Bool,
        onEnd: @escaping (WebSocketServerConnection) -> Void
    ) {
        loop = channel.loop
        peerAddress = Socket.peerAddress(channel.descriptor)
        self.limits = limits
        self.goingAway = goingAway
        self.onEnd = onEnd
        budget = OutboundBudget(lowWater: limits.outboundLowWater)
        let resume = Locked<(@Sendable () -> Void)?>(nil)
        queue = MessageQueue(
            highWater: limits.inboundHighWater, lowWater: limits.inboundHighWater / 2,
            onDrained: { resume.withLock { $0 }?() })
        incoming = queue.stream
        self.channel = channel
        resume.withLock {
            $0 = { [weak self] in
                guard let self else { return }
                self.loop.execute { self.channel?.resumeReading() }
            }
        }
    }

    func send(_ message: ServerMessage) {
        if case .welcome = message {
            // The client is authenticated: its channel lifts the limits that applied until now.
            loop.execute { [self] in channel?.authenticated() }
        }
        // A download's large changesets stay the server's own buffers (see `encodedChunks()`): a changeset
        // sent to many subscribers is encoded once, not copied into each one's frame.
        let chunks = message.encodedChunks()
        let length = chunks.reduce(0) { $0 + $1.count }
        let header = WebSocketFrame.header(opcode: .binary, length: length, maskingKey: nil)
        let size = header.count + length
        guard let queued = budget.add(size) else { return }
        if queued > limits.outboundHardLimit {
            // Nothing more is queued for it from now on (sends racing with the abort are dropped).
            budget.finish()
            let limit = limits.outboundHardLimit
            loop.execute { [self] in
                channel?.abort("the client did not read: \(queued) bytes were queued, the limit is \(limit)")
            }
            return
        }
        loop.execute { [self] in
            if let channel { channel.sendMessage(header: header, chunks: chunks) } else { budget.release(size) }
        }
    }

    func writable() async {
        await budget.waitUntilBelowLowWater()
    }

    func close() {
        let code: WebSocketCloseCode = goingAway() ? .goingAway : .normalClosure
        loop.execute { [self] in channel?.close(code, reason: code == .goingAway ? "the server is shutting down" : "") }
    }

    // MARK: WebSocketChannelDelegate (on the loop)

    func channelOpened(_ channel: WebSocketChannel) {}

    func channel(_ channel: WebSocketChannel, received message: [UInt8]) -> Bool {
        let decoded: ClientMessage
        do {
            decoded = try ClientMessage(decoding: message, maximumSize: limits.maximumMessageBytes)
        } catch {
            let answer = ServerMessage.error(
                ProtocolError(code: .malformedMessage, message: "a malformed message: \(error)"))
            channel.send(
                WebSocketFrame.encode(opcode: .binary, payload: answer.encoded(), maskingKey: nil), counted: false)
            channel.fail(WebSocketViolation(code: .invalidPayload, reason: "a malformed sync message"))
            return true
        }
        let queued = queue.push(decoded, cost: message.count) ?? 0
        return queued <= limits.inboundHighWater
    }

    func channel(_ channel: WebSocketChannel, wrote count: Int) {
        budget.release(count)
    }

    func channelEnded(_ channel: WebSocketChannel, _ end: WebSocketChannelEnd) {
        self.channel = nil
        queue.finish()
        budget.finish()
        onEnd?(self)
        onEnd = nil
    }
}
