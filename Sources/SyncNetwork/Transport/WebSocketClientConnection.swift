import SyncStreams
import SyncWire

/// The client's end of one WebSocket connection (see `WebSocketTransport`).
final class WebSocketClientConnection: SyncClientConnection, WebSocketChannelDelegate, @unchecked Sendable {
    // @unchecked Sendable: `channel` and the delegate methods are used on the loop's thread only; the
    // rest is locked or immutable.

    let events: AsyncStream<SyncTransportEvent>
    private let loop: EventLoop
    private let limits: WebSocketLimits
    private let queue: MessageQueue<SyncTransportEvent>
    /// Whether `.closed` was reported (by `close()` or by the channel's end), and whether `close()` was called.
    private let state = Locked((reported: false, closeCalled: false))
    private var channel: WebSocketChannel?

    init(loop: EventLoop, limits: WebSocketLimits) {
        self.loop = loop
        self.limits = limits
        let resume = Locked<(@Sendable () -> Void)?>(nil)
        queue = MessageQueue(
            highWater: limits.inboundHighWater, lowWater: limits.inboundHighWater / 2,
            onDrained: { resume.withLock { $0 }?() })
        events = queue.stream
        resume.withLock {
            $0 = { [weak self] in
                guard let self else { return }
                self.loop.execute { self.channel?.resumeReading() }
            }
        }
    }

    /// Resolves and connects (blocking DNS: runs on a dispatch thread), then hands the socket to the loop.
    func start(host: String, port: Int, limits: WebSocketLimits) {
        let addresses: [Socket.Address]
        switch Socket.resolve(host: host, port: port) {
        case .success(let resolved):
            // IPv4 first: servers listen on 127.0.0.1 by default, and "localhost" may resolve to ::1 first.
            addresses = resolved.sorted { $0.isIPv4 && !$1.isIPv4 }
        case .failure(let error):
            report(.closed(.refused("\(error)")))
            return
        }
        guard let address = addresses.first else {
            report(.closed(.refused("\(host) has no address")))
            return
        }
        let descriptor: Int32
        switch Socket.startConnect(to: address) {
        case .success(let connected): descriptor = connected
        case .failure(let error):
            report(.closed(.refused("cannot connect to ws://\(host):\(port): \(error)")))
            return
        }
        let keyBytes = (0..<16).map { _ in UInt8.random(in: 0...255) }
        let key = Base64.encode(keyBytes)
        let request = WebSocketHandshake.request(host: host, port: port, key: key)
        loop.execute { [self] in
            let channel = WebSocketChannel(
                loop: loop, descriptor: descriptor, role: .client(key: key, request: request), limits: limits,
                connecting: true)
            channel.delegate = self
            self.channel = channel
            channel.start()
            if state.withLock({ $0.closeCalled }) { channel.close(.normalClosure) }
        }
    }

    func send(_ message: ClientMessage) {
        guard !state.withLock({ $0.reported }) else { return }
        let key = WebSocketChannel.randomMask()
        var masked = message.encoded()
        masked.withUnsafeMutableBytes { WebSocketMask.apply(key, to: $0) }
        let payload = masked
        let header = WebSocketFrame.header(opcode: .binary, length: payload.count, maskingKey: key)
        loop.execute { [self] in channel?.sendMessage(header: header, payload: payload) }
    }

    func close() {
        state.withLock { $0.closeCalled = true }
        report(.closed(nil))
        loop.execute { [self] in channel?.close(.normalClosure) }
    }

    private func report(_ event: SyncTransportEvent) {
        if case .closed = event {
            let first = state.withLock { state in
                defer { state.reported = true }
                return !state.reported
            }
            guard first else { return }
            queue.push(event)
            queue.finish()
        } else {
            queue.push(event)
        }
    }

    // MARK: WebSocketChannelDelegate (on the loop)

    func channelOpened(_ channel: WebSocketChannel) {
        if !state.withLock({ $0.reported }) { queue.push(.opened) }
    }

    func channel(_ channel: WebSocketChannel, received message: [UInt8]) -> Bool {
        let decoded: ServerMessage
        do {
            decoded = try ServerMessage(decoding: message, maximumSize: limits.maximumMessageBytes)
        } catch {
            channel.fail(WebSocketViolation(code: .invalidPayload, reason: "a malformed sync message: \(error)"))
            return true
        }
        let queued = queue.push(.message(decoded), cost: message.count) ?? 0
        return queued <= limits.inboundHighWater
    }

    func channel(_ channel: WebSocketChannel, wrote count: Int) {}

    func channelEnded(_ channel: WebSocketChannel, _ end: WebSocketChannelEnd) {
        self.channel = nil
        switch end {
        case .closedHere: report(.closed(nil))
        case .closedByPeer(let code, let reason):
            let detail = reason.isEmpty ? "" : ": \(reason)"
            report(
                .closed(
                    .connectionLost("the server closed the connection (\(code.map { "\($0)" } ?? "no code")\(detail))"))
            )
        case .violation(let violation):
            report(.closed(.malformedFrame("\(violation.reason) (closed with \(violation.code))")))
        case .handshakeFailed(let reason): report(.closed(.refused(reason)))
        case .lost(let reason): report(.closed(.connectionLost(reason)))
        }
    }
}
