import Dispatch
import SyncStreams
import SyncWire
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A WebSocket server socket: accepts TCP connections on its own event loop thread, runs each one's
/// opening handshake, and hands the upgraded connections to `acceptor`.
///
/// Connections the acceptor refuses (the server is stopping or at its connection limit) are answered
/// `503 Service Unavailable` instead of `101`. Past `limits.maximumHandshakingConnections` connections
/// in their handshake, or with fewer than `limits.reservedDescriptors` descriptors left below
/// `RLIMIT_NOFILE`, a new connection is closed as soon as it is accepted. An open connection that sends nothing for `limits.idleTimeout` is dropped
/// (checked every quarter of it). When `accept` fails for lack of descriptors or memory (any error but a
/// connection aborted in the queue, see `backsOff(afterAcceptError:)`) the listener stops accepting for
/// 100 ms instead of spinning; open connections are not affected.
/// `shutDown()` stops accepting, closes every connection with 1001 (going away) — waiting for each close
/// handshake at most `limits.closeTimeout` — and stops the loop.
package final class WebSocketListener: EventLoopHandler, @unchecked Sendable {
    // @unchecked Sendable: `channels`, `descriptor` and the handler method are confined to the loop's
    // thread; `goingAway` is locked.

    /// The host and port it listens on (the port the system picked for port 0).
    package let host: String
    package let port: Int
    /// The `ws://host:port` URL clients connect to.
    package var url: String { host.contains(":") ? "ws://[\(host)]:\(port)" : "ws://\(host):\(port)" }

    private let loop: EventLoop
    private let limits: WebSocketLimits
    private let acceptor: any SyncConnectionAcceptor
    /// What it counts for metrics (see `ListenerCounters`).
    package let counters: ListenerCounters
    /// Answers plain HTTP `GET`s before any upgrade (`nil`: they get `400`).
    private let plainHTTP: PlainHTTPResponder?
    private var descriptor: Int32
    private var connections: [ObjectIdentifier: WebSocketServerConnection] = [:]
    private var channels: [ObjectIdentifier: WebSocketChannel] = [:]
    private let goingAway = Locked(false)
    private var drained: [CheckedContinuation<Void, Never>] = []
    /// The outbound queues of open connections, and the largest of those that ended (any thread).
    private let outbound = Locked<(open: [ObjectIdentifier: OutboundBudget], endedPeak: Int)>(([:], 0))
    /// Connections accepted and still in their opening handshake (on the loop).
    private var handshaking = 0
    /// The input all connections hold, against `limits.maximumBufferedInputBytes` (on the loop).
    private let inputBudget: InputBudget
    /// The soft `RLIMIT_NOFILE` when the listener started: descriptors at or above it minus
    /// `limits.reservedDescriptors` are closed at once.
    private let descriptorLimit: Int = {
        var limit = rlimit()
        #if canImport(Glibc)
            guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return .max }
        #else
            guard getrlimit(RLIMIT_NOFILE, &limit) == 0 else { return .max }
        #endif
        return Int(clamping: limit.rlim_cur)  // RLIM_INFINITY is the largest value: clamped to .max
    }()

    private init(
        host: String, port: Int, descriptor: Int32, limits: WebSocketLimits, acceptor: any SyncConnectionAcceptor,
        loop: EventLoop, counters: ListenerCounters, plainHTTP: PlainHTTPResponder?
    ) {
        self.counters = counters
        self.plainHTTP = plainHTTP
        self.host = host
        self.port = port
        self.descriptor = descriptor
        self.limits = limits
        self.acceptor = acceptor
        self.loop = loop
        inputBudget = InputBudget(limits: limits)
    }

    /// Listens on `host:port` (port 0: any free port) and starts accepting. `plainHTTP` answers plain
    /// HTTP `GET` requests (no `Upgrade` header) before any upgrade; `counters` counts bytes and refusals.
    ///
    /// - Throws: `NetworkError` when the host cannot be resolved, the port cannot be bound, or the loop
    ///   cannot be started (out of descriptors).
    package static func start(
        host: String, port: Int, limits: WebSocketLimits, acceptor: any SyncConnectionAcceptor,
        counters: ListenerCounters = ListenerCounters(), plainHTTP: PlainHTTPResponder? = nil
    ) async throws(NetworkError) -> WebSocketListener {
        let bound: Result<(Int32, Int), NetworkError> = await withCheckedContinuation { continuation in
            // getaddrinfo and bind block: a dispatch thread, not the cooperative pool.
            DispatchQueue.global().async {
                switch Socket.resolve(host: host, port: port, passive: true) {
                case .failure(let error): continuation.resume(returning: .failure(error))
                case .success(let addresses):
                    guard let address = addresses.sorted(by: { $0.isIPv4 && !$1.isIPv4 }).first else {
                        continuation.resume(returning: .failure(.cannotResolve(host: host, reason: "no address")))
                        return
                    }
                    continuation.resume(returning: Socket.listen(on: address, backlog: 1024))
                }
            }
        }
        let (descriptor, actualPort) = try bound.get()
        let loop: EventLoop
        do {
            loop = try EventLoop(name: "SyncNetwork.server-loop")
        } catch {
            Socket.close(descriptor)
            throw error
        }
        let listener = WebSocketListener(
            host: host, port: actualPort, descriptor: descriptor, limits: limits, acceptor: acceptor, loop: loop,
            counters: counters, plainHTTP: plainHTTP)
        listener.loop.execute {
            listener.loop.register(descriptor, listener, readable: true, writable: false)
            listener.scheduleIdleCheck()
        }
        return listener
    }

    // MARK: Idle connections (on the loop)

    private func scheduleIdleCheck() {
        let interval = max(limits.idleTimeout / 4, .milliseconds(10))
        loop.schedule(after: interval) { [weak self] in self?.dropIdleConnections() }
    }

    private func dropIdleConnections() {
        let now = ContinuousClock.now
        let timeout = limits.idleTimeout
        for channel in channels.values where channel.isOpen && now - channel.lastReceived >= timeout {
            channel.abort("nothing was received for \(timeout)")
        }
        scheduleIdleCheck()
    }

    // MARK: Accepting (on the loop)

    /// Whether `accept` failing with `code` pauses accepting for a moment: every error but those that
    /// concern only the connection being accepted (it was reset or aborted while queued, or the call was
    /// interrupted). A level-triggered listener that returned on a persistent error (`EMFILE`, `ENFILE`,
    /// `ENOBUFS`, `ENOMEM`…) would be reported ready again at once: the loop would spin.
    static func backsOff(afterAcceptError code: Int32) -> Bool {
        code != ECONNABORTED && code != EINTR && code != EPROTO && code != EPERM
    }

    func handle(_ readiness: Readiness) {
        // At most 64 per wakeup, so a flood of connections does not starve the open ones.
        for _ in 0..<64 {
            guard descriptor >= 0 else { return }
            switch Socket.accept(descriptor) {
            case .transferred(let accepted):
                guard handshaking < limits.maximumHandshakingConnections,
                    accepted < descriptorLimit - limits.reservedDescriptors
                else {
                    if handshaking < limits.maximumHandshakingConnections {
                        counters.refusedDescriptors.add(1, ordering: .relaxed)
                    } else {
                        counters.refusedHandshaking.add(1, ordering: .relaxed)
                    }
                    // Too many half-open handshakes, or the descriptors left are kept for the store.
                    Socket.close(Int32(accepted))
                    continue
                }
                adopt(Int32(accepted))
            case .failed(let code) where Self.backsOff(afterAcceptError: code):
                // Out of descriptors or memory: stop accepting for a moment rather than spin on a ready
                // listener.
                loop.setInterest(descriptor, readable: false, writable: false)
                loop.schedule(after: .milliseconds(100)) { [weak self] in
                    guard let self, self.descriptor >= 0 else { return }
                    self.loop.setInterest(self.descriptor, readable: true, writable: false)
                }
                return
            case .failed:
                continue  // that connection is gone; the next one may be fine
            case .wouldBlock, .endOfFile:
                return
            }
        }
    }

    private func adopt(_ accepted: Int32) {
        let channel = WebSocketChannel(loop: loop, descriptor: accepted, role: .server, limits: limits)
        channel.counters = counters
        channel.inputBudget = inputBudget
        let goingAway = self.goingAway
        let connection = WebSocketServerConnection(
            channel: channel, limits: limits, goingAway: { goingAway.withLock { $0 } },
            onEnd: { [weak self] connection in self?.forget(connection) })
        let adopter = Adopter(listener: self, connection: connection)
        channel.delegate = adopter
        let id = ObjectIdentifier(connection)
        connections[id] = connection
        channels[id] = channel
        outbound.withLock { $0.open[id] = connection.budget }
        handshaking += 1
        channel.start()
    }

    /// Forwards a channel's events to its connection, and hands the connection to the acceptor once
    /// the handshake completed.
    private final class Adopter: WebSocketChannelDelegate {
        weak var listener: WebSocketListener?
        let connection: WebSocketServerConnection
        /// Until the handshake request was answered (or the channel ended before).
        private var isHandshaking = true
        init(listener: WebSocketListener, connection: WebSocketServerConnection) {
            self.listener = listener
            self.connection = connection
        }
        private func handshakeEnded() {
            guard isHandshaking else { return }
            isHandshaking = false
            listener?.handshaking -= 1
        }
        func channelShouldOpen(_ channel: WebSocketChannel) -> Bool {
            handshakeEnded()
            guard let listener else { return false }
            guard !listener.goingAway.withLock({ $0 }) else {
                listener.counters.refusedStopping.add(1, ordering: .relaxed)
                return false
            }
            return listener.acceptor.accept(connection)
        }
        func channelPlainHTTPResponse(_ channel: WebSocketChannel, target: String) -> [UInt8]? {
            guard let listener, let response = listener.plainHTTP?(target) else { return nil }
            handshakeEnded()
            listener.counters.plainHTTPRequests.add(1, ordering: .relaxed)
            return response.bytes
        }
        func channelOpened(_ channel: WebSocketChannel) {}
        func channel(_ channel: WebSocketChannel, received message: [UInt8]) -> Bool {
            connection.channel(channel, received: message)
        }
        func channel(_ channel: WebSocketChannel, wrote count: Int) { connection.channel(channel, wrote: count) }
        func channelEnded(_ channel: WebSocketChannel, _ end: WebSocketChannelEnd) {
            if isHandshaking, case .handshakeFailed = end {
                listener?.counters.refusedHandshake.add(1, ordering: .relaxed)
            }
            handshakeEnded()
            connection.channelEnded(channel, end)
        }
    }

    private func forget(_ connection: WebSocketServerConnection) {
        let id = ObjectIdentifier(connection)
        outbound.withLock { outbound in
            if let budget = outbound.open.removeValue(forKey: id) {
                outbound.endedPeak = max(outbound.endedPeak, budget.peak)
            }
        }
        connections[id] = nil
        channels[id] = nil
        if channels.isEmpty {
            let waiters = drained
            drained = []
            for waiter in waiters { waiter.resume() }
        }
    }

    // MARK: Stopping

    /// From now on, closes use 1001 and new connections are refused; the listening socket is closed.
    package func stopAccepting() async {
        goingAway.withLock { $0 = true }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            loop.execute { [self] in
                if descriptor >= 0 {
                    loop.unregister(descriptor)
                    Socket.close(descriptor)
                    descriptor = -1
                }
                continuation.resume()
            }
        }
    }

    /// Closes every connection still open with 1001 and waits until each has ended (each close handshake
    /// is bounded by `limits.closeTimeout`), then stops the loop's thread.
    package func shutDown() async {
        await stopAccepting()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            loop.execute { [self] in
                if channels.isEmpty {
                    continuation.resume()
                    return
                }
                drained.append(continuation)
                for channel in channels.values { channel.close(.goingAway, reason: "the server is shutting down") }
            }
        }
        await loop.stop()
    }

    /// The most bytes of messages ever queued at once for one connection, over every connection so far
    /// (open or ended): what a slow reader cost the server at worst.
    package var peakOutboundQueueBytes: Int {
        outbound.withLock { outbound in max(outbound.endedPeak, outbound.open.values.map(\.peak).max() ?? 0) }
    }

    /// How many accepted connections are in their opening handshake (the count
    /// `limits.maximumHandshakingConnections` bounds).
    package var handshakingCount: Int {
        get async {
            await withCheckedContinuation { continuation in
                loop.execute { [self] in continuation.resume(returning: handshaking) }
            }
        }
    }

    /// The bytes of input the connections hold now (frames received in part, messages being assembled).
    package var bufferedInputBytes: Int {
        get async {
            await withCheckedContinuation { continuation in
                loop.execute { [self] in continuation.resume(returning: inputBudget.total) }
            }
        }
    }

    /// How many connections are open (handshaking ones included).
    package var openConnectionCount: Int {
        get async {
            await withCheckedContinuation { continuation in
                loop.execute { [self] in continuation.resume(returning: channels.count) }
            }
        }
    }
}
