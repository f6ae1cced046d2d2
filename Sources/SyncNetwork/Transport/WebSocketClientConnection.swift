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
    /// The connection once one attempt opened (on the loop).
    private var channel: WebSocketChannel?
    /// The attempts still racing before one opened, with their address family (on the loop).
    private var attempts: [ObjectIdentifier: (channel: WebSocketChannel, family: String)] = [:]
    /// The resolved addresses not tried yet, and why the ones tried failed (on the loop).
    private var untried: ArraySlice<Socket.Address> = []
    private var connectFailures: [String] = []
    private var target = (host: "", port: 0)
    /// How long an attempt's TCP connect may stay pending before the next address is tried beside it
    /// (RFC 8305's "connection attempt delay").
    static let attemptDelay = Duration.milliseconds(250)

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

    /// Resolves (blocking DNS: runs on a dispatch thread), then connects on the loop: each resolved
    /// address in turn (`connectionOrder`) until one accepts the TCP connection.
    func start(host: String, port: Int, limits: WebSocketLimits) {
        switch Socket.resolve(host: host, port: port) {
        case .success(let resolved): start(addresses: Self.connectionOrder(resolved), host: host, port: port)
        case .failure(let error): report(.closed(.refused("\(error)")))
        }
    }

    /// Connects to `addresses` in order, Happy Eyeballs style (RFC 8305): the next address is tried as soon
    /// as the TCP connect to one fails, or beside it once that connect has been pending for
    /// `attemptDelay`; the first attempt to open wins and the others are dropped. Reports
    /// `.closed(.refused)` with every failure once none is left. (A handshake refused after the connect —
    /// a 503, a bad answer — ends that attempt only; the refusal is reported when no attempt is left.)
    func start(addresses: [Socket.Address], host: String, port: Int) {
        guard !addresses.isEmpty else {
            report(.closed(.refused("\(host) has no address")))
            return
        }
        loop.execute { [self] in
            target = (host, port)
            untried = addresses[...]
            connectNext()
        }
    }

    /// The order addresses are tried in: alternating families, IPv4 first (servers listen on
    /// 127.0.0.1 by default, and a name may resolve to ::1 first), each family in the resolver's order.
    static func connectionOrder(_ addresses: [Socket.Address]) -> [Socket.Address] {
        let v4 = addresses.filter(\.isIPv4)
        let v6 = addresses.filter { !$0.isIPv4 }
        var ordered: [Socket.Address] = []
        for index in 0..<max(v4.count, v6.count) {
            if index < v4.count { ordered.append(v4[index]) }
            if index < v6.count { ordered.append(v6[index]) }
        }
        return ordered
    }

    /// Starts connecting to the next untried address (on the loop); reports the refusal when none is left
    /// and no attempt is racing.
    private func connectNext() {
        guard channel == nil, !state.withLock({ $0.closeCalled }) else { return }
        let (host, port) = target
        while let address = untried.popFirst() {
            let family = address.isIPv4 ? "IPv4" : "IPv6"
            let descriptor: Int32
            switch Socket.startConnect(to: address) {
            case .success(let connected): descriptor = connected
            case .failure(let error):
                connectFailures.append("\(family): \(error)")
                continue
            }
            let keyBytes = (0..<16).map { _ in UInt8.random(in: 0...255) }
            let key = Base64.encode(keyBytes)
            let request = WebSocketHandshake.request(host: host, port: port, key: key)
            let channel = WebSocketChannel(
                loop: loop, descriptor: descriptor, role: .client(key: key, request: request), limits: limits,
                connecting: true)
            channel.delegate = self
            attempts[ObjectIdentifier(channel)] = (channel, family)
            channel.start()
            if !untried.isEmpty {
                // Still connecting after the attempt delay (a silent address): the next one races it.
                loop.schedule(after: Self.attemptDelay) { [weak self, weak channel] in
                    guard let self, let channel, self.channel == nil, channel.isConnecting,
                        self.attempts[ObjectIdentifier(channel)] != nil
                    else { return }
                    self.connectNext()
                }
            }
            return
        }
        guard attempts.isEmpty else { return }  // the racing attempts decide
        report(.closed(.refused("cannot connect to ws://\(host):\(port): \(connectFailures.joined(separator: "; "))")))
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
        loop.execute { [self] in
            channel?.close(.normalClosure)
            let racing = attempts.values.map(\.channel)
            attempts = [:]
            for attempt in racing { attempt.close(.normalClosure) }
        }
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
        guard self.channel == nil, attempts.removeValue(forKey: ObjectIdentifier(channel)) != nil else {
            channel.abort("another address connected first")
            return
        }
        self.channel = channel
        // The other attempts lose (their ends are ignored: they are no longer attempts).
        let losers = attempts.values.map(\.channel)
        attempts = [:]
        for loser in losers { loser.abort("another address connected first") }
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
        guard channel === self.channel else {
            // An attempt that had not opened: the next address, or the refusal once none is left.
            guard let attempt = attempts.removeValue(forKey: ObjectIdentifier(channel)) else { return }
            switch end {
            case .connectFailed(let reason), .handshakeFailed(let reason), .lost(let reason):
                connectFailures.append("\(attempt.family): \(reason)")
            case .closedHere, .closedByPeer, .violation:
                connectFailures.append("\(attempt.family): \(end)")
            }
            if case .connectFailed = end {
                connectNext()
            } else if attempts.isEmpty {
                // Refused after the TCP connect (a 503, a bad answer): another address of the same
                // server would not do better.
                if case .handshakeFailed(let reason) = end, connectFailures.count == 1 {
                    report(.closed(.refused(reason)))
                } else {
                    let (host, port) = target
                    let reasons = connectFailures.joined(separator: "; ")
                    report(.closed(.refused("cannot connect to ws://\(host):\(port): \(reasons)")))
                }
            }
            return
        }
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
        case .connectFailed(let reason), .handshakeFailed(let reason): report(.closed(.refused(reason)))
        case .lost(let reason): report(.closed(.connectionLost(reason)))
        }
    }
}
