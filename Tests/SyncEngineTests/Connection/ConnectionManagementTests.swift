import Foundation
import SyncServer
import SyncWire
import TestSupport
import Testing

@testable import SyncEngine

/// Connection behaviour in virtual time: every engine timer runs on a `TestExecutor`, and faults come from
/// `FaultInjectingTransport` over the real embedded server.
@Suite("Connection management", .timeLimit(.minutes(5)))
struct ConnectionManagementTests {
    @Test("connects, handshakes and binds: .connecting then .connected")
    func connects() async throws {
        // The server's answers are held, so the session is still connecting when the test subscribes.
        let fixture = try await EngineFixture(faults: .init(delayMessages: true))
        defer { fixture.directory.remove() }
        let session = try await fixture.open()
        try await eventually("connecting") { session.connectionState.value == .connecting }
        let states = Collected(session.connectionState)
        #expect(states.values == [.connecting])
        try await eventually("the welcome is held") {
            fixture.transport.held.contains { if case .welcome = $0 { true } else { false } }
        }
        #expect(session.connectionState.value == .connecting)
        fixture.transport.deliverDelayedMessages()
        try await eventually("connected") { session.connectionState.value == .connected }
        // The value changes when the state is decided; the subscriber hears of it on the callback executor.
        try await eventually("the subscriber to hear of it") { states.values.count == 2 }
        #expect(states.values == [.connecting, .connected])
        // Bound: an upload round trip through the server succeeds.
        try await session.write(Data([1]))
        try await session.wait(for: .upload)
        #expect(try await fixture.server.changesets(in: "p").map(\.data) == [[1]])
    }

    @Test("refused attempts back off 1 s, 2 s, 4 s, 8 s in virtual time")
    func backoffGrows() async throws {
        let fixture = try await EngineFixture(faults: .init(refuse: true))
        defer { fixture.directory.remove() }
        let session = try await fixture.open()
        var expected: [Duration] = []
        for step in 0..<4 {
            let delay = Duration.seconds(1 << step)
            expected.append(delay)
            try await fixture.waitForTimer(in: delay, "reconnect \(step) scheduled")
            // Published just after the timer is armed (so a test that sees `.disconnected` may move the clock).
            try await eventually("disconnected \(step)") { session.connectionState.value == .disconnected }
            #expect(fixture.transport.attempts == step + 1)
            fixture.timers.advance(by: delay)
            try await eventually("attempt \(step + 2)") { fixture.transport.attempts == step + 2 }
        }
        #expect(
            fixture.errors.values.allSatisfy {
                $0.error == .connectionFailed("\(SyncTransportError.refused("refused by the test"))")
            })
        #expect(fixture.errors.values.allSatisfy { $0.session == nil })
    }

    @Test("a rejected certificate is fatal: the session becomes .invalid and no reconnect is scheduled")
    func rejectedCertificateIsFatal() async throws {
        let fixture = try await EngineFixture(faults: .init(rejectCertificate: true))
        defer { fixture.directory.remove() }
        let session = try await fixture.open()
        try await eventually("the session to be invalid") { session.state.value == .invalid }
        try await eventually("the error to be reported") { !fixture.errors.values.isEmpty }
        #expect(fixture.errors.values.map(\.error) == [.certificateRejected("rejected by the test")])
        #expect(SyncError.certificateRejected("x").isFatal)
        // No reconnect timer: however far virtual time goes, no second attempt.
        #expect(fixture.timers.nextDueTime == nil)
        fixture.timers.advance(by: .seconds(600))
        #expect(fixture.transport.attempts == 1)
        #expect(session.connectionState.value == .disconnected)
    }

    @Test(
        "a session is .disconnected before it is .invalid: values, and callbacks on one executor, never show an invalid session still connecting"
    )
    func disconnectedBeforeInvalid() async throws {
        // Callbacks wait on a virtual-time executor until the test runs them, in the order they were queued.
        let callbacks = TestExecutor()
        let fixture = try await EngineFixture(faults: .init(hold: true)) { $0.callbackExecutor = callbacks }
        defer { fixture.directory.remove() }
        let session = try await fixture.open()
        try await eventually("the attempt to be held") {
            fixture.transport.attempts == 1 && session.connectionState.value == .connecting
        }
        callbacks.run()  // what was published so far reaches the streams, so a subscriber starts from it
        let delivered = Locked<[String]>([])
        let stateToken = session.state.subscribe { state in delivered.withLock { $0.append("state \(state)") } }
        let connectionToken = session.connectionState.subscribe { state in
            delivered.withLock { $0.append("connection \(state)") }
        }
        defer {
            stateToken.invalidate()
            connectionToken.invalidate()
        }
        callbacks.run()
        #expect(delivered.withLock { $0 } == ["state active", "connection connecting"])

        fixture.transport.rejectCertificates()
        try await eventually("the session to be invalid") { session.state.value == .invalid }
        // Whoever reads the values sees the connection's end no later than the session's.
        #expect(session.connectionState.value == .disconnected)
        // The callbacks run in the order they were queued, until the subscriber hears the session is invalid:
        // by then it has heard that the connection ended.
        try await eventually("the subscriber to hear the session is invalid") {
            callbacks.run()
            return delivered.withLock { $0.contains("state invalid") }
        }
        #expect(
            delivered.withLock { $0 } == [
                "state active", "connection connecting", "connection disconnected", "state invalid",
            ])
    }

    @Test("jitter shortens each delay by the random share of a quarter")
    func jitter() async throws {
        let fixture = try await EngineFixture(random: { 0.5 }, faults: .init(refuse: true))
        defer { fixture.directory.remove() }
        _ = try await fixture.open()
        let first = Duration.milliseconds(875)  // 1 s − 0.5 × 1 s / 4
        try await fixture.waitForTimer(in: first, "first reconnect scheduled")
        fixture.timers.advance(by: first)
        let second = Duration.milliseconds(1750)
        try await fixture.waitForTimer(in: second, "second reconnect scheduled")
    }

    @Test("a different error resets the backoff (the default, as Realm's client)")
    func differentErrorResets() async throws {
        let fixture = try await EngineFixture(faults: .init(refuse: true))
        defer { fixture.directory.remove() }
        _ = try await fixture.open()
        try await fixture.waitForTimer(in: .seconds(1), "1 s")
        fixture.timers.advance(by: .seconds(1))
        try await fixture.waitForTimer(in: .seconds(2), "2 s")
        // The next attempt hangs instead: it fails by connect timeout, a different error.
        try await fixture.nextAttemptTimesOut(after: .seconds(2), attempt: 3)
        try await fixture.waitForTimer(in: .seconds(1), "reset to 1 s")
        #expect(fixture.errors.values.map(\.error).contains(.connectTimedOut))
    }

    @Test(
        "with ReconnectBackoff.fleet a different kind of error still grows the backoff (alternating failures never retry at 1 s forever)"
    )
    func differentErrorStillBacksOffWithFleet() async throws {
        let fixture = try await EngineFixture(
            random: { 0 }, faults: .init(refuse: true), timing: EngineTiming(backoff: .fleet))
        defer { fixture.directory.remove() }
        _ = try await fixture.open()
        try await fixture.waitForTimer(in: .seconds(1), "1 s")
        fixture.timers.advance(by: .seconds(1))
        try await fixture.waitForTimer(in: .seconds(2), "2 s")
        // The next attempt hangs instead: it fails by connect timeout, a different error.
        try await fixture.nextAttemptTimesOut(after: .seconds(2), attempt: 3)
        try await fixture.waitForTimer(in: .seconds(4), "grown to 4 s")
        #expect(fixture.errors.values.map(\.error).contains(.connectTimedOut))
    }

    @Test("reconnect() while waiting resets the backoff and connects at once")
    func reconnectWhileWaiting() async throws {
        let fixture = try await EngineFixture(faults: .init(refuse: true))
        defer { fixture.directory.remove() }
        let session = try await fixture.open()
        try await fixture.waitForTimer(in: .seconds(1), "1 s")
        fixture.timers.advance(by: .seconds(1))
        try await fixture.waitForTimer(in: .seconds(2), "2 s")
        fixture.transport.faults = .init()
        session.reconnect()
        try await eventually("connected without advancing time") { session.connectionState.value == .connected }
        #expect(fixture.transport.attempts == 3)
        // The backoff was reset: the next failure waits 1 s again.
        fixture.transport.faults = .init(refuse: true)
        fixture.transport.dropConnections()
        try await fixture.waitForTimer(in: .seconds(1), "1 s again")
    }

    @Test("reconnect() has no effect when connected")
    func reconnectWhenConnected() async throws {
        let fixture = try await EngineFixture()
        defer { fixture.directory.remove() }
        let session = try await fixture.openConnected()
        session.reconnect()
        session.reconnect()
        try await session.wait(for: .download)
        #expect(fixture.transport.attempts == 1)
        #expect(session.connectionState.value == .connected)
    }

    @Test("a lost connection reconnects after the backoff and resumes syncing")
    func lostConnectionReconnects() async throws {
        let fixture = try await EngineFixture()
        defer { fixture.directory.remove() }
        let session = try await fixture.openConnected()
        fixture.transport.dropConnections()
        try await eventually("disconnected") { session.connectionState.value == .disconnected }
        try await session.write(Data("offline".utf8))
        try await fixture.waitForTimer(in: .seconds(1), "reconnect scheduled")
        fixture.timers.advance(by: .seconds(1))
        try await session.wait(for: .upload)
        #expect(try await fixture.serverLog() == [Array("offline".utf8)])
        #expect(fixture.transport.attempts == 2)
    }

    @Test("the connect timeout is 120 s from the attempt")
    func connectTimeout() async throws {
        let fixture = try await EngineFixture(faults: .init(hold: true))
        defer { fixture.directory.remove() }
        let session = try await fixture.open()
        try await eventually("timeout armed") { fixture.timers.pendingCount == 1 }
        #expect(fixture.timers.nextDueTime == .zero + .seconds(120))
        #expect(session.connectionState.value == .connecting)
        fixture.timers.advance(by: .seconds(119))
        #expect(fixture.errors.values.isEmpty)
        fixture.timers.advance(by: .seconds(1))
        try await eventually("timed out") { fixture.errors.values.map(\.error) == [.connectTimedOut] }
        try await eventually("disconnected") { session.connectionState.value == .disconnected }
    }

    @Test("keepalive: a ping every 60 s minus up to 10 %, answered pongs keep the connection")
    func keepalive() async throws {
        let fixture = try await EngineFixture(random: { 0.5 })
        defer { fixture.directory.remove() }
        let session = try await fixture.openConnected()
        let interval = Duration.seconds(57)  // 60 s − 0.5 × 10 %
        #expect(fixture.timers.nextDueTime == fixture.timers.now + interval)
        for _ in 0..<3 {
            fixture.timers.advance(by: interval)
            try await fixture.waitForTimer(in: interval, "pong, next ping armed")
        }
        #expect(session.connectionState.value == .connected)
        #expect(fixture.transport.attempts == 1)
    }

    @Test("keepalive: no pong within 120 s counts as a lost connection")
    func pongTimeout() async throws {
        let fixture = try await EngineFixture()
        defer { fixture.directory.remove() }
        let session = try await fixture.openConnected()
        fixture.transport.faults.swallowPongs = true
        fixture.timers.advance(by: .seconds(60))
        try await fixture.waitForTimer(in: .seconds(120), "pong timeout armed")
        fixture.timers.advance(by: .seconds(120))
        try await eventually("pong timed out") { fixture.errors.values.map(\.error) == [.pongTimedOut] }
        try await eventually("disconnected") { session.connectionState.value == .disconnected }
        fixture.transport.faults.swallowPongs = false
        fixture.timers.advance(by: .seconds(1))
        try await eventually("connected again") { session.connectionState.value == .connected }
    }

    @Test("messages delayed in transit arrive in order; a delay longer than the pong timeout drops the connection")
    func delayedMessages() async throws {
        let fixture = try await EngineFixture()
        defer { fixture.directory.remove() }
        let session = try await fixture.open()
        let other = TemporaryDirectory()
        defer { other.remove() }
        let writer = try await makeApp(server: fixture.server.endpoint, directory: other.url)
            .login(.anonymous).openSession(partition: "p")
        try await session.wait(for: .download)
        let seen = Collected(session.changesets)

        fixture.transport.faults.delayMessages = true
        for index in 0..<5 { try await writer.write(Data([UInt8(index)])) }
        try await writer.wait(for: .upload)
        // All five reached the client's transport and are held there, so none can arrive before the release.
        try await eventually("the five changesets are held in transit") { fixture.transport.heldChangesetCount == 5 }
        #expect(seen.values.isEmpty)
        fixture.transport.deliverDelayedMessages()
        try await eventually("all five, in order") { seen.values.count == 5 }
        #expect(seen.values.map(\.data) == (0..<5).map { Data([UInt8($0)]) })

        // Held past the pong timeout, the pong is as good as lost.
        fixture.transport.faults.delayMessages = true
        fixture.timers.advance(by: .seconds(60))
        try await fixture.waitForTimer(in: .seconds(120), "pong timeout armed")
        fixture.timers.advance(by: .seconds(120))
        try await eventually("pong timed out") { fixture.errors.values.map(\.error) == [.pongTimedOut] }
    }

    @Test("a server storage failure is reported, and the upload is retried after the server's hint")
    func serverStorageFailureIsRetried() async throws {
        let store = FlakyStore(failingAppends: 1)
        var configuration = SyncServer.Configuration()
        configuration.store = store
        // The backoff alone would retry after 100 ms; the server's hint (1 s) is longer and wins.
        var timing = EngineTiming()
        timing.backoff.initialDelay = .milliseconds(100)
        let fixture = try await EngineFixture(
            server: try await SyncServer.embedded(configuration: configuration), timing: timing)
        defer { fixture.directory.remove() }
        let session = try await fixture.open()
        try await session.write(Data("persist me".utf8))
        try await eventually("the failure is reported") { !fixture.errors.values.isEmpty }
        guard case .serverError = fixture.errors.values.first?.error else {
            Issue.record("expected a server error, got \(fixture.errors.values.map(\.error))")
            return
        }
        #expect(fixture.errors.values.first?.session === session)
        #expect(session.state.value == .active)
        try await eventually("retry scheduled") { fixture.timers.pendingCount == 2 }  // the ping and the retry
        #expect(fixture.timers.nextDueTime == fixture.timers.now + .seconds(1))
        fixture.timers.advance(by: .milliseconds(999))
        #expect(session.connectionState.value == .disconnected)
        fixture.timers.advance(by: .milliseconds(1))
        try await session.wait(for: .upload)
        #expect(try await fixture.serverLog() == [Array("persist me".utf8)])
    }

    @Test("one connection per user is shared by the user's sessions")
    func sharedConnection() async throws {
        let fixture = try await EngineFixture()
        defer { fixture.directory.remove() }
        _ = try await fixture.openSynced("one", "two")
        #expect(fixture.transport.attempts == 1)
        #expect(fixture.server.connectionCount == 1)
    }

    @Test("one connection per session when configured")
    func connectionPerSession() async throws {
        let fixture = try await EngineFixture(sharing: .perSession)
        defer { fixture.directory.remove() }
        _ = try await fixture.openSynced("one", "two")
        #expect(fixture.transport.attempts == 2)
        #expect(fixture.server.connectionCount == 2)
    }

    @Test("the last session going inactive closes the connection; resuming opens a new one")
    func idleClosesConnection() async throws {
        let fixture = try await EngineFixture()
        defer { fixture.directory.remove() }
        let session = try await fixture.open()
        try await session.wait(for: .download)
        session.suspend()
        try await eventually("server sees the close") { fixture.server.connectionCount == 0 }
        #expect(session.connectionState.value == .disconnected)
        session.resume()
        try await eventually("connected again") { session.connectionState.value == .connected }
        #expect(fixture.transport.attempts == 2)
    }
}
