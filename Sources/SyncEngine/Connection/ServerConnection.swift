import SyncStreams
import SyncWire

/// One logical connection to the server, shared by the sessions registered with it: connects while any
/// session is registered, handshakes, binds each session, keeps the connection alive with pings, and after
/// a failure reconnects with backoff.
///
/// ```
/// idle ──register──▶ connecting ──welcome──▶ connected ──failure──▶ waiting ──backoff elapsed──▶ connecting
///                        │ connect timeout / refused / lost                ▲  reconnect(): at once
///                        └─────────────────────────────────────────────────┘
/// any ──last session unregisters──▶ idle        any ──fatal connection error──▶ failed (final)
/// ```
///
/// Timers run on the configured executor and come back into the actor tagged with the attempt they belong
/// to (`attempt`), so a stale timer or a stale transport event does nothing.
actor ServerConnection {
    private enum Phase {
        case idle
        case connecting
        case connected
        case waitingToReconnect
        case failed(SyncError)
    }

    private enum Timer: Hashable {
        case connectTimeout
        case reconnect
        case ping
        case pongTimeout
    }

    struct Settings: Sendable {
        var endpoint: SyncEndpoint
        var transport: any SyncTransport
        var credential: WireCredential
        var backoff: ReconnectBackoff
        var connectTimeout: Duration
        var pingInterval: Duration
        var pongTimeout: Duration
        var executor: any StreamExecutor
        var random: @Sendable () -> Double
        /// Where connection-level failures are reported (with no session).
        var reportError: @Sendable (SyncError) -> Void
    }

    private let settings: Settings
    private var phase: Phase = .idle
    private var sessions: [UInt32: SessionEngine] = [:]
    private var bound: Set<UInt32> = []
    private var nextSessionID: UInt32 = 1
    private var connection: (any SyncClientConnection)?
    /// Increases with each connection attempt; events and timers of older attempts are ignored.
    private var attempt = 0
    private var backoff = BackoffState()
    private var timers: [Timer: ScheduledWork] = [:]
    private var nextPingID: UInt64 = 1
    private var awaitedPong: UInt64?
    /// Round trips under way (`roundTrip()`), by ping number.
    private var marks: [UInt64: CheckedContinuation<Bool, Never>] = [:]

    init(settings: Settings) { self.settings = settings }

    // MARK: Sessions

    /// Adds `session`; it is bound as soon as (or once) the connection is up. Returns its session number.
    func register(_ session: SessionEngine) async -> UInt32 {
        let id = nextSessionID
        nextSessionID += 1
        sessions[id] = session
        switch phase {
        case .idle:
            startConnecting()
        case .connecting:
            session.connectionStateChanged(.connecting)
        case .waitingToReconnect:
            session.connectionStateChanged(.disconnected)
        case .connected:
            await bind(id)
            session.connectionStateChanged(.connected)
        case .failed(let error):
            sessions.removeValue(forKey: id)
            await session.failedFatally(error)
        }
        return id
    }

    /// Removes a session: unbinds it on the live connection, and closes the connection when it was the last.
    func unregister(_ id: UInt32) {
        guard sessions.removeValue(forKey: id) != nil else { return }
        if bound.remove(id) != nil { connection?.send(.unbind(sessionID: id)) }
        if sessions.isEmpty, case .failed = phase {
            return
        }
        if sessions.isEmpty { goIdle() }
    }

    /// Connects at once with a fresh backoff if waiting to reconnect; otherwise does nothing.
    func reconnect() {
        guard case .waitingToReconnect = phase else { return }
        backoff.reset()
        startConnecting()
    }

    /// Sends a ping and returns `true` once its pong arrives: by then every message the server sent
    /// before it has been handled (events are handled in order). Returns `false` at once when not
    /// connected, or when the connection ends first.
    func roundTrip() async -> Bool {
        guard case .connected = phase, let connection else { return false }
        let id = nextPingID
        nextPingID += 1
        return await withCheckedContinuation { continuation in
            marks[id] = continuation
            connection.send(.ping(id: id))
        }
    }

    // MARK: Connecting

    private func startConnecting() {
        cancelTimers()
        attempt += 1
        let current = attempt
        phase = .connecting
        bound.removeAll()
        let connection = settings.transport.connect(to: settings.endpoint)
        self.connection = connection
        schedule(.connectTimeout, after: settings.connectTimeout)
        Task { [weak self] in
            for await event in connection.events {
                guard let self else { return }
                await self.handle(event, attempt: current)
            }
        }
        broadcast(.connecting)
    }

    private func handle(_ event: SyncTransportEvent, attempt eventAttempt: Int) async {
        guard eventAttempt == attempt else { return }
        switch event {
        case .opened:
            connection?.send(.hello(Hello(credential: settings.credential)))
        case .message(let message):
            await handle(message)
        case .closed(let error):
            await fail(.connectionFailed(error.map { "\($0)" } ?? "the connection closed"))
        }
    }

    private func handle(_ message: ServerMessage) async {
        switch message {
        case .welcome:
            guard case .connecting = phase else { return }
            phase = .connected
            cancel(.connectTimeout)
            schedulePing()
            let current = attempt
            for id in sessions.keys.sorted() {
                guard current == attempt else { return }
                await bind(id)
            }
            broadcast(.connected)
        case .download(let download):
            guard bound.contains(download.sessionID), let session = sessions[download.sessionID] else { return }
            await session.receive(download)
        case .unbound:
            break
        case .pong(let id):
            if let mark = marks.removeValue(forKey: id) {
                mark.resume(returning: true)
                return
            }
            guard id == awaitedPong else { return }
            awaitedPong = nil
            cancel(.pongTimeout)
            schedulePing()
        case .error(let error):
            await handle(error)
        }
    }

    private func handle(_ error: ProtocolError) async {
        let syncError = SyncError(error)
        if let id = error.sessionID {
            guard let session = sessions[id] else { return }
            if syncError.isFatal {
                bound.remove(id)
                sessions.removeValue(forKey: id)
                if sessions.isEmpty { goIdle() }
                await session.failedFatally(syncError)
            } else {
                // A session-level hiccup (e.g. the server's storage failed): start the connection over, which
                // rebinds every session after the backoff.
                await session.report(syncError)
                await fail(syncError, retryAfter: error.retryAfterMilliseconds, alreadyReported: true)
            }
        } else {
            await fail(syncError, retryAfter: error.retryAfterMilliseconds)
        }
    }

    private func bind(_ id: UInt32) async {
        guard let connection, let session = sessions[id] else { return }
        bound.insert(id)
        await session.bound(to: BoundChannel(connection: connection, sessionID: id, attempt: attempt))
    }

    // MARK: Failure and backoff

    /// Ends the current attempt after `error`; reconnects after the backoff unless the error is fatal.
    ///
    /// The actor's own state is settled before the first `await`, so whatever runs in between (a new
    /// attempt after `reconnect()`) sees it; sessions ignore an unbind for an attempt that is not theirs.
    private func fail(_ error: SyncError, retryAfter: UInt32? = nil, alreadyReported: Bool = false) async {
        let failedAttempt = attempt
        cancelTimers()
        attempt += 1
        connection?.close()
        connection = nil
        let wereBound = bound.compactMap { sessions[$0] }
        bound.removeAll()
        if error.isFatal {
            phase = .failed(error)
            let all = Array(sessions.values)
            sessions.removeAll()
            for session in all { await session.failedFatally(error) }
            return
        }
        if !alreadyReported { settings.reportError(error) }
        if sessions.isEmpty {
            phase = .idle
        } else {
            let random = settings.random()
            var delay = backoff.delay(afterFailureOf: error.backoffKind, policy: settings.backoff, random: random)
            if let retryAfter { delay = max(delay, .milliseconds(retryAfter)) }
            phase = .waitingToReconnect
            schedule(.reconnect, after: delay)
            broadcast(.disconnected)
        }
        for session in wereBound { await session.unbound(attempt: failedAttempt) }
    }

    private func goIdle() {
        cancelTimers()
        attempt += 1
        connection?.close()
        connection = nil
        bound.removeAll()
        phase = .idle
    }

    // MARK: Timers

    private func schedulePing() {
        let shortening = min(max(settings.random(), 0), 1) * 0.1
        schedule(.ping, after: settings.pingInterval - settings.pingInterval * shortening)
    }

    private func schedule(_ timer: Timer, after delay: Duration) {
        timers[timer]?.cancel()
        let current = attempt
        timers[timer] = settings.executor.schedule(after: delay) { [weak self] in
            Task { await self?.fire(timer, attempt: current) }
        }
    }

    private func fire(_ timer: Timer, attempt timerAttempt: Int) async {
        guard timerAttempt == attempt else { return }
        timers[timer] = nil
        switch timer {
        case .connectTimeout:
            await fail(.connectTimedOut)
        case .reconnect:
            startConnecting()
        case .ping:
            let id = nextPingID
            nextPingID += 1
            awaitedPong = id
            connection?.send(.ping(id: id))
            schedule(.pongTimeout, after: settings.pongTimeout)
        case .pongTimeout:
            await fail(.pongTimedOut)
        }
    }

    private func cancel(_ timer: Timer) { timers.removeValue(forKey: timer)?.cancel() }

    /// Cancels the timers and ends the round trips of the attempt that is ending.
    private func cancelTimers() {
        for work in timers.values { work.cancel() }
        timers.removeAll()
        awaitedPong = nil
        let pending = marks.values
        marks.removeAll()
        for mark in pending { mark.resume(returning: false) }
    }

    /// Tells every registered session the connection's state (without waiting for them).
    private func broadcast(_ state: ConnectionState) {
        for session in sessions.values { session.connectionStateChanged(state) }
    }
}

extension SyncError {
    /// The engine's view of an error the server reported.
    init(_ error: ProtocolError) {
        let text = error.message.isEmpty ? "\(error.code)" : error.message
        switch error.code {
        case .authenticationFailed: self = .authenticationFailed(text)
        case .permissionDenied: self = .permissionDenied(text)
        case .serverBusy, .internalError: self = .serverError(text)
        case .malformedMessage, .unsupportedProtocolVersion, .messageTooLarge, .unknownSession,
            .sessionAlreadyBound, .badClientVersion:
            self = .protocolViolation(text, isFatal: error.code.isFatal)
        }
    }
}
