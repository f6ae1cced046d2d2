import Foundation
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
/// any ──close()──▶ closed (final)
/// ```
///
/// A session-level error the server reports (say its storage failed for one partition) ends only that
/// session's binding: the session is bound again after its own backoff (or the server's hint, if longer),
/// while the connection and the other sessions carry on. A connection or binding that lasted
/// `ReconnectBackoff.resetAfter` before it failed starts its next backoff from the initial delay.
///
/// Timers run on the configured executor and come back into the actor tagged with the attempt they belong
/// to (`attempt`), so a stale timer or a stale transport event does nothing. Every `await` of a session is
/// followed by a check that the attempt is still the current one, so a connection that fails while a
/// session binds never leaves a stale `.connected` behind.
actor ServerConnection {
    private enum Phase {
        case idle
        case connecting
        case connected
        case waitingToReconnect
        case failed(SyncError)
        case closed
    }

    private enum Timer: Hashable {
        case connectTimeout
        case reconnect
        case ping
        case pongTimeout
        case rebind(UInt32)
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
        var logger: SyncLogger = .off
        /// The wall clock for the next attempt's time in `SyncStatus`.
        var wallClock: @Sendable () -> Date = { Date() }
        /// Where connection-level failures are reported (with no session).
        var reportError: @Sendable (SyncError) -> Void
    }

    private var logger: SyncLogger { settings.logger }
    /// When the current attempt started (for the connect timing in the log).
    private var attemptStartedAt: StreamInstant?

    /// A registered session's binding bookkeeping.
    private struct Registration {
        let session: SessionEngine
        /// Set while bound on the current attempt, with the time it was bound.
        var boundAt: StreamInstant?
        /// The session's own backoff for rebinding after session-level errors.
        var backoff = BackoffState()
        /// Set after the client unbound the session itself (`rebindAfterStoreFailure`) until the server's
        /// `unbound` arrives on this attempt: it is bound again only then, so no download of the old
        /// binding reaches the new one.
        var awaitingUnbound = false
        /// Set when the session was unbound after a session-level error on this attempt, until a download
        /// of its next binding arrives: the server answers the messages that were in flight for it with
        /// `unknownSession`, which is then expected, not a protocol violation.
        var unboundByError = false
    }

    private let settings: Settings
    private var phase: Phase = .idle
    private var sessions: [UInt32: Registration] = [:]
    private var nextSessionID: UInt32 = 1
    private var connection: (any SyncClientConnection)?
    /// Increases with each connection attempt; events and timers of older attempts are ignored.
    private var attempt = 0
    private var backoff = BackoffState()
    /// When the current attempt was welcomed.
    private var connectedAt: StreamInstant?
    /// The largest message the server of the current connection accepts (from its `welcome`).
    private var serverMaximumMessageBytes: Int?
    private var timers: [Timer: ScheduledWork] = [:]
    private var nextPingID: UInt64 = 1
    private var awaitedPong: UInt64?
    /// Download marks under way, by mark number: the session they concern and who waits.
    private var marks: [UInt64: (sessionID: UInt32, waiter: CheckedContinuation<Bool, Never>)] = [:]
    private var nextMarkID: UInt64 = 1
    /// While waiting to reconnect: when the next attempt is, and the error that ended the last one.
    private var nextAttempt: (next: Date, error: SyncError)?

    init(settings: Settings) { self.settings = settings }

    /// The timers' executor, the backoff policy and the jitter source, for a session that waits before it
    /// tries again on its own (a client reset that failed transiently).
    nonisolated var retryTiming:
        (executor: any StreamExecutor, backoff: ReconnectBackoff, random: @Sendable () -> Double)
    {
        (settings.executor, settings.backoff, settings.random)
    }

    // MARK: Sessions

    /// Adds `session`; it is bound as soon as (or once) the connection is up. Returns its session number,
    /// or `nil` when the connection is closed for good (the session is then told why).
    func register(_ session: SessionEngine) async -> UInt32? {
        let id = nextSessionID
        nextSessionID += 1
        sessions[id] = Registration(session: session)
        switch phase {
        case .idle:
            startConnecting()
        case .connecting:
            session.connectionStateChanged(.connecting)
        case .waitingToReconnect:
            session.connectionStateChanged(.disconnected)
            if let nextAttempt { session.reconnectScheduled(next: nextAttempt.next, lastError: nextAttempt.error) }
        case .connected:
            await bind(id)
        case .failed(let error):
            sessions.removeValue(forKey: id)
            await session.failedFatally(error)
            return nil
        case .closed:
            sessions.removeValue(forKey: id)
            return nil
        }
        return id
    }

    /// Removes a session: unbinds it on the live connection, and closes the connection when it was the last.
    func unregister(_ id: UInt32) {
        guard let registration = sessions.removeValue(forKey: id) else { return }
        cancel(.rebind(id))
        endMarks(of: id)
        if registration.boundAt != nil { connection?.send(.unbind(sessionID: id)) }
        switch phase {
        case .failed, .closed: return
        case .idle, .connecting, .connected, .waitingToReconnect: break
        }
        if sessions.isEmpty { goIdle() }
    }

    /// Connects at once with a fresh backoff if waiting to reconnect; when connected, binds at once (with a
    /// fresh backoff) session `id` — or, for `nil`, every session — that waits to be bound again after a
    /// session error. Otherwise (connecting, or bound) does nothing.
    func reconnect(session id: UInt32? = nil) async {
        switch phase {
        case .waitingToReconnect:
            backoff.reset()
            startConnecting()
        case .connected:
            let waiting = sessions.keys.filter { key in
                (id == nil || key == id) && timers[.rebind(key)] != nil && sessions[key]?.boundAt == nil
            }
            for key in waiting.sorted() {
                cancel(.rebind(key))
                sessions[key]?.backoff.reset()
                await bind(key)
            }
        case .idle, .connecting, .failed, .closed:
            break
        }
    }

    /// Closes the connection for good: every later `register` is refused, waiting marks end.
    func close() {
        logger.log(.detail, LogCategory.connection, "closing the connection to \(settings.endpoint)")
        cancelTimers()
        attempt += 1
        connection?.close()
        connection = nil
        sessions.removeAll()
        phase = .closed
    }

    /// Asks the server for a mark on session `id` and returns `true` once it answers: by then every entry
    /// the partition held when the mark arrived has been received and handed to the session (messages are
    /// handled in order). Returns `false` at once when the session is not bound, or when its binding ends
    /// first.
    func mark(_ id: UInt32) async -> Bool {
        guard case .connected = phase, sessions[id]?.boundAt != nil, let connection else { return false }
        let markID = nextMarkID
        nextMarkID += 1
        return await withCheckedContinuation { continuation in
            marks[markID] = (id, continuation)
            connection.send(.mark(sessionID: id, id: markID))
        }
    }

    // MARK: Connecting

    private func startConnecting() {
        cancelTimers()
        attempt += 1
        let current = attempt
        phase = .connecting
        nextAttempt = nil
        connectedAt = nil
        for id in sessions.keys {
            sessions[id]?.boundAt = nil
            sessions[id]?.awaitingUnbound = false
        }
        attemptStartedAt = settings.executor.now
        logger.log(.info, LogCategory.connection, "connecting to \(settings.endpoint) (attempt \(current))")
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
            logger.log(.detail, LogCategory.connection, "transport open; handshaking with \(settings.endpoint)")
            for registration in sessions.values { registration.session.credentialCheckChanged(true) }
            connection?.send(.hello(Hello(credential: settings.credential)))
        case .message(let message):
            await handle(message)
        case .closed(.certificateRejected(let reason)):
            // A wrong certificate stays wrong: fatal, never a reconnect loop.
            await fail(.certificateRejected(reason))
        case .closed(let error):
            await fail(.connectionFailed(error.map { "\($0)" } ?? "the connection closed"))
        }
    }

    private func handle(_ message: ServerMessage) async {
        if logger.isEnabled(.debug) { logger.log(.debug, LogCategory.connection, "received \(message.logSummary)") }
        switch message {
        case .welcome(_, let maximumMessageBytes):
            guard case .connecting = phase else { return }
            phase = .connected
            serverMaximumMessageBytes = maximumMessageBytes.map { Int($0) }
            for registration in sessions.values { registration.session.credentialCheckChanged(false) }
            connectedAt = settings.executor.now
            if let started = attemptStartedAt, let connectedAt {
                logger.log(
                    .info, LogCategory.connection, "connected to \(settings.endpoint) in \(connectedAt - started)")
            }
            cancel(.connectTimeout)
            schedulePing()
            for id in sessions.keys.sorted() {
                await bind(id)
            }
        case .download(let download):
            guard let registration = sessions[download.sessionID], registration.boundAt != nil else { return }
            sessions[download.sessionID]?.unboundByError = false
            await registration.session.receive(download)
        case .unbound(let sessionID):
            guard sessions[sessionID]?.awaitingUnbound == true else { return }
            sessions[sessionID]?.awaitingUnbound = false
            // Bind now if its backoff already ended (the rebind waited for this).
            if timers[.rebind(sessionID)] == nil { await bind(sessionID) }
        case .pong(let id):
            guard id == awaitedPong else { return }
            awaitedPong = nil
            cancel(.pongTimeout)
            schedulePing()
        case .marked(let sessionID, let id):
            guard let mark = marks[id], mark.sessionID == sessionID else { return }
            marks.removeValue(forKey: id)
            mark.waiter.resume(returning: true)
        case .error(let error):
            await handle(error)
        }
    }

    private func handle(_ error: ProtocolError) async {
        let syncError = SyncError(error)
        guard let id = error.sessionID else {
            return await fail(syncError, retryAfter: error.retryAfterMilliseconds)
        }
        guard let registration = sessions[id] else { return }
        if error.code == .unknownSession, registration.unboundByError {
            logger.log(.detail, LogCategory.connection, "session \(id) was unbound: \(error.message)")
            if registration.awaitingUnbound {
                // The server holds no binding for the session (it ended the binding itself, a storage failure
                // on its side): it answers the client's unbind, or a message sent before it, with
                // `unknownSession` instead of `unbound`. Either way no download of the old binding can follow,
                // so this answers the unbind; waiting for an `unbound` that never comes would leave the session
                // unbound for as long as the connection lasts.
                sessions[id]?.awaitingUnbound = false
                if timers[.rebind(id)] == nil { await bind(id) }
            }
            return
        }
        if syncError.isFatal {
            sessions.removeValue(forKey: id)
            cancel(.rebind(id))
            endMarks(of: id)
            if sessions.isEmpty { goIdle() }
            if case .clientResetRequired = syncError {
                await registration.session.clientResetRequired(syncError, details: error.clientReset)
            } else {
                await registration.session.failedFatally(syncError)
            }
        } else {
            // A session-level hiccup: the server unbound this session only. Bind it again after its own
            // backoff (at least the server's hint); the connection and the other sessions carry on.
            let current = attempt
            await unbindAfterError(id, error: syncError, retryAfter: error.retryAfterMilliseconds)
            guard current == attempt else { return }
            await registration.session.report(syncError)
        }
    }

    /// The session's store could not take what was sent (a failed append): unbind it on the server, and
    /// bind it again after its backoff — once the server confirmed the unbind — so that the server sends
    /// again from what the store holds. The connection and the other sessions carry on.
    func rebindAfterStoreFailure(_ id: UInt32, error: SyncError) async {
        guard case .connected = phase, let connection, sessions[id]?.boundAt != nil else { return }
        connection.send(.unbind(sessionID: id))
        sessions[id]?.awaitingUnbound = true
        await unbindAfterError(id, error: error, retryAfter: nil)
    }

    private func unbindAfterError(_ id: UInt32, error: SyncError, retryAfter: UInt32?) async {
        guard var registration = sessions[id] else { return }
        let now = settings.executor.now
        if let boundAt = registration.boundAt, now - boundAt >= settings.backoff.resetAfter {
            registration.backoff.reset()
        }
        registration.boundAt = nil
        registration.unboundByError = true
        var delay = registration.backoff.delay(
            afterFailureOf: error.backoffKind, policy: settings.backoff, random: settings.random())
        if let retryAfter { delay = max(delay, .milliseconds(retryAfter)) }
        logger.log(.detail, LogCategory.connection, "session \(id) unbound after \(error); binding again in \(delay)")
        sessions[id] = registration
        endMarks(of: id)
        schedule(.rebind(id), after: delay)
        registration.session.connectionStateChanged(.disconnected)
        registration.session.reconnectScheduled(
            next: settings.wallClock().addingTimeInterval(delay.timeInterval), lastError: error)
        await registration.session.unbound(attempt: attempt)
    }

    /// Binds session `id` on the live connection and tells it it is connected, unless the attempt changed
    /// meanwhile.
    private func bind(_ id: UInt32) async {
        guard case .connected = phase, let connection, let registration = sessions[id], registration.boundAt == nil,
            !registration.awaitingUnbound
        else { return }
        let current = attempt
        sessions[id]?.boundAt = settings.executor.now
        await registration.session.bound(
            to: BoundChannel(
                connection: connection, sessionID: id, attempt: current,
                serverMaximumMessageBytes: serverMaximumMessageBytes))
        guard current == attempt, case .connected = phase, sessions[id]?.boundAt != nil else { return }
        registration.session.connectionStateChanged(.connected)
    }

    // MARK: Failure and backoff

    /// Ends the current attempt after `error`; reconnects after the backoff unless the error is fatal.
    ///
    /// The actor's own state is settled before the first `await`, so whatever runs in between (a new
    /// attempt after `reconnect()`) sees it; sessions ignore an unbind for an attempt that is not theirs.
    private func fail(_ error: SyncError, retryAfter: UInt32? = nil) async {
        let failedAttempt = attempt
        if let connectedAt, settings.executor.now - connectedAt >= settings.backoff.resetAfter {
            backoff.reset()
        }
        cancelTimers()
        attempt += 1
        connection?.close()
        connection = nil
        connectedAt = nil
        let wereBound = sessions.values.filter { $0.boundAt != nil }.map(\.session)
        for id in sessions.keys {
            sessions[id]?.boundAt = nil
            sessions[id]?.unboundByError = false
        }
        for registration in sessions.values { registration.session.credentialCheckChanged(false) }
        if error.isFatal {
            phase = .failed(error)
            let all = sessions.values.map(\.session)
            sessions.removeAll()
            for session in all { await session.failedFatally(error) }
            return
        }
        settings.reportError(error)
        if sessions.isEmpty {
            phase = .idle
        } else {
            var delay = backoff.delay(
                afterFailureOf: error.backoffKind, policy: settings.backoff, random: settings.random())
            if let retryAfter { delay = max(delay, .milliseconds(retryAfter)) }
            phase = .waitingToReconnect
            schedule(.reconnect, after: delay)
            let next = (settings.wallClock().addingTimeInterval(delay.timeInterval), error)
            nextAttempt = next
            logger.log(
                .info, LogCategory.connection, "disconnected from \(settings.endpoint); reconnecting in \(delay)")
            broadcast(.disconnected)
            for registration in sessions.values {
                registration.session.reconnectScheduled(next: next.0, lastError: next.1)
            }
        }
        for session in wereBound { await session.unbound(attempt: failedAttempt) }
    }

    private func goIdle() {
        cancelTimers()
        attempt += 1
        connection?.close()
        connection = nil
        connectedAt = nil
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
            logger.log(.trace, LogCategory.connection, "keepalive ping")
            let id = nextPingID
            nextPingID += 1
            awaitedPong = id
            connection?.send(.ping(id: id))
            schedule(.pongTimeout, after: settings.pongTimeout)
        case .pongTimeout:
            await fail(.pongTimedOut)
        case .rebind(let id):
            await bind(id)
        }
    }

    private func cancel(_ timer: Timer) { timers.removeValue(forKey: timer)?.cancel() }

    /// Cancels the timers and ends the marks of the attempt that is ending.
    private func cancelTimers() {
        for work in timers.values { work.cancel() }
        timers.removeAll()
        awaitedPong = nil
        let pending = marks.values
        marks.removeAll()
        for mark in pending { mark.waiter.resume(returning: false) }
    }

    /// Ends the marks waiting on session `id` (its binding ended).
    private func endMarks(of id: UInt32) {
        let ended = marks.filter { $0.value.sessionID == id }
        for (markID, mark) in ended {
            marks.removeValue(forKey: markID)
            mark.waiter.resume(returning: false)
        }
    }

    /// Tells every registered session the connection's state (without waiting for them).
    private func broadcast(_ state: ConnectionState) {
        for registration in sessions.values { registration.session.connectionStateChanged(state) }
    }
}

extension ServerMessage {
    /// The message's kind and size, for the log (never the changesets' bytes).
    var logSummary: String {
        switch self {
        case .welcome(let version, let limit):
            "welcome (protocol \(version)\(limit.map { ", messages up to \($0) bytes" } ?? ""))"
        case .download(let download):
            "download for session \(download.sessionID): \(download.entries.count) entries, \(encodedSize) bytes, "
                + "\(download.remainingBytes) bytes to come"
        case .unbound(let sessionID): "unbound session \(sessionID)"
        case .pong(let id): "pong \(id)"
        case .marked(let sessionID, let id): "marked \(id) for session \(sessionID)"
        case .error(let error):
            "error \(error.code) for session \(error.sessionID.map(String.init) ?? "-"): \(error.message)"
        }
    }
}

extension SyncError {
    /// The engine's view of an error the server reported.
    init(_ error: ProtocolError) {
        let text = error.message.isEmpty ? "\(error.code)" : error.message
        switch error.code {
        case .authenticationFailed: self = .authenticationFailed(text)
        case .permissionDenied, .foreignClientFile: self = .permissionDenied(text)
        case .serverBusy, .internalError: self = .serverError(text)
        case .clientResetRequired: self = .clientResetRequired(text)
        case .malformedMessage, .unsupportedProtocolVersion, .messageTooLarge, .unknownSession,
            .sessionAlreadyBound, .badClientVersion:
            self = .protocolViolation(text, isFatal: error.code.isFatal)
        }
    }
}

extension Duration {
    /// The duration in seconds, as Foundation counts time.
    var timeInterval: TimeInterval {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
