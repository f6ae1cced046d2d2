import Foundation
import SyncServer
import SyncWire
import TestSupport
import Testing

@testable import SyncEngine

/// How connections and sessions recover: the backoff forgets old failures once a connection proved
/// healthy, one session's error leaves the others alone, a server that lost history stops the session
/// instead of looping, and no stale state is left behind.
@Suite("Connection recovery", .timeLimit(.minutes(5)))
struct ConnectionRecoveryTests {
    /// Grows the backoff with refused attempts (1 s, 2 s), then lets the third attempt (after 4 s) connect.
    private func connectAfterGrowingTheBackoff(_ fixture: EngineFixture, _ session: SyncSession) async throws {
        for delay in [1, 2] {
            try await eventually("\(delay) s scheduled") {
                fixture.timers.nextDueTime == fixture.timers.now + .seconds(delay)
            }
            fixture.timers.advance(by: .seconds(delay))
        }
        try await eventually("4 s scheduled") { fixture.timers.nextDueTime == fixture.timers.now + .seconds(4) }
        fixture.transport.faults = .init()
        fixture.timers.advance(by: .seconds(4))
        try await eventually("connected") { session.connectionState.value == .connected }
    }

    /// Keeps the connection up for `duration` of virtual time, answering each keepalive ping.
    private func stayConnected(_ fixture: EngineFixture, for duration: Duration) async throws {
        var elapsed = Duration.zero
        while elapsed < duration {
            let step = min(duration - elapsed, .seconds(30))
            fixture.timers.advance(by: step)
            elapsed += step
            // A ping may have gone out: wait for its pong to re-arm the next ping.
            try await eventually("keepalive settled") {
                fixture.timers.nextDueTime.map { $0 > fixture.timers.now } ?? false
                    && fixture.timers.pendingCount == 1
            }
        }
    }

    @Test("the backoff resets once a connection stayed up 60 s")
    func backoffResetsAfterAHealthyConnection() async throws {
        let fixture = try await EngineFixture(faults: .init(refuse: true))
        defer { fixture.directory.remove() }
        let session = try await fixture.open()
        try await connectAfterGrowingTheBackoff(fixture, session)
        try await stayConnected(fixture, for: .seconds(60))
        fixture.transport.faults = .init(refuse: true)
        fixture.transport.dropConnections()
        try await eventually("reconnect scheduled") { session.connectionState.value == .disconnected }
        #expect(fixture.timers.nextDueTime == fixture.timers.now + .seconds(1))
    }

    @Test("a connection that drops before 60 s keeps growing the backoff")
    func backoffKeepsGrowingAfterAShortConnection() async throws {
        let fixture = try await EngineFixture(faults: .init(refuse: true))
        defer { fixture.directory.remove() }
        let session = try await fixture.open()
        try await connectAfterGrowingTheBackoff(fixture, session)
        try await stayConnected(fixture, for: .seconds(30))
        fixture.transport.faults = .init(refuse: true)
        fixture.transport.dropConnections()
        try await eventually("reconnect scheduled") { session.connectionState.value == .disconnected }
        #expect(fixture.timers.nextDueTime == fixture.timers.now + .seconds(8))
    }

    @Test(
        "a non-default resetAfter (20 s): a connection up 20 s resets the backoff (next wait 1 s), one up 10 s keeps growing it (8 s)",
        arguments: zip([20, 10], [1, 8]))
    func nonDefaultResetAfter(upSeconds: Int, nextDelaySeconds: Int) async throws {
        var timing = EngineTiming()
        timing.backoff = ReconnectBackoff(resetAfter: .seconds(20))
        let fixture = try await EngineFixture(faults: .init(refuse: true), timing: timing)
        defer { fixture.directory.remove() }
        let session = try await fixture.open()
        try await connectAfterGrowingTheBackoff(fixture, session)
        try await stayConnected(fixture, for: .seconds(upSeconds))
        fixture.transport.faults = .init(refuse: true)
        fixture.transport.dropConnections()
        try await eventually("reconnect scheduled") { session.connectionState.value == .disconnected }
        #expect(fixture.timers.nextDueTime == fixture.timers.now + .seconds(nextDelaySeconds))
    }

    @Test("session.reconnect() while the session waits to rebind: it binds at once, without the rebind's wait")
    func reconnectWhileWaitingToRebind() async throws {
        var configuration = SyncServer.Configuration()
        configuration.store = PartitionFailingStore(partition: "a", failingAppends: 1)
        let fixture = try await EngineFixture(server: try await SyncServer.embedded(configuration: configuration))
        defer { fixture.directory.remove() }
        let a = try await fixture.open("a")
        try await a.wait(for: .download)
        try await a.write(Data("fails once".utf8))
        try await eventually("a waits for its rebind") {
            a.connectionState.value == .disconnected && fixture.timers.nextDueTime == fixture.timers.now + .seconds(1)
        }
        let now = fixture.timers.now
        a.reconnect()
        // Virtual time never moves here: only reconnect() can have bound it again.
        try await eventually("a bound again and uploaded") {
            (try? await fixture.serverLog("a")) == [Array("fails once".utf8)]
        }
        try await a.wait(for: .upload)
        #expect(fixture.timers.now == now)
        #expect(a.connectionState.value == .connected)
        #expect(fixture.transport.attempts == 1)
        #expect(fixture.timers.nextDueTime != now + .seconds(1), "the rebind's timer was left armed")
    }

    @Test("a session's error rebinds that session only: the shared connection and the other session stay connected")
    func sessionErrorRebindsOnlyThatSession() async throws {
        var configuration = SyncServer.Configuration()
        configuration.store = PartitionFailingStore(partition: "a", failingAppends: 1)
        let fixture = try await EngineFixture(server: try await SyncServer.embedded(configuration: configuration))
        defer { fixture.directory.remove() }
        let a = try await fixture.open("a")
        let b = try await fixture.open("b")
        try await a.wait(for: .download)
        try await b.wait(for: .download)
        let statesOfB = Collected(b.connectionState)

        try await a.write(Data("fails once".utf8))
        try await eventually("a's error is reported") { !fixture.errors.values.isEmpty }
        let reported = fixture.errors.values
        #expect(reported.count == 1)
        #expect(reported.first?.session === a)
        guard case .serverError = reported.first?.error else {
            Issue.record("expected a server error, got \(reported.map(\.error))")
            return
        }
        // While a waits for its rebind, b keeps syncing on the same connection.
        try await b.write(Data("b is unaffected".utf8))
        try await b.wait(for: .upload)
        #expect(try await fixture.serverLog("b") == [Array("b is unaffected".utf8)])
        try await eventually("a waits for its rebind") {
            fixture.timers.nextDueTime == fixture.timers.now + .seconds(1)
        }
        fixture.timers.advance(by: .seconds(1))
        try await a.wait(for: .upload)
        #expect(try await fixture.serverLog("a") == [Array("fails once".utf8)])

        #expect(fixture.transport.attempts == 1)
        #expect(fixture.server.connectionCount == 1)
        #expect(statesOfB.values == [.connected])
        #expect(a.connectionState.value == .connected)
    }

    @Test(
        "a server that lost history gets clientResetRequired: in .manual mode the session becomes invalid, no reconnect loop"
    )
    func lostHistoryInvalidatesTheSession() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let original = try await SyncServer.embedded()
        do {
            let writerDirectory = TemporaryDirectory()
            defer { writerDirectory.remove() }
            let writer = try await makeApp(server: original.endpoint, directory: writerDirectory.url)
                .login(.anonymous).openSession(partition: "p")
            for index in 0..<3 { try await writer.write(Data([UInt8(index)])) }
            try await writer.wait(for: .upload)
            let app = makeApp(server: original.endpoint, directory: directory.url)
            let reader = try await app.login(.anonymous).openSession(partition: "p")
            try await reader.wait(for: .download)
            try await app.close()
        }
        // A new server that remembers nothing: the client holds version 3 of a log that is empty.
        let forgetful = try await SyncServer.embedded()
        let fixture = try await EngineFixture(
            server: forgetful, directory: directory,
            configure: {
                $0.clientResetMode = .manual
            })
        let session = try await fixture.open()
        try await eventually("invalid") { session.state.value == .invalid }
        try await eventually("reported") { !fixture.errors.values.isEmpty }
        let reported = fixture.errors.values
        #expect(reported.count == 1)
        #expect(reported.first?.session === session)
        guard case .clientResetRequired = reported.first?.error else {
            Issue.record("expected clientResetRequired, got \(reported.map(\.error))")
            return
        }
        await #expect(throws: SyncError.sessionInvalid) { try await session.wait(for: .download) }
        fixture.timers.advance(by: .seconds(600))
        #expect(fixture.transport.attempts == 1)
        #expect(fixture.timers.pendingCount == 0)
        #expect(try await forgetful.changesets(in: "p").isEmpty)
    }

    @Test("connections failing while sessions bind never leave a stale .connected behind; some drops cut a bind off")
    func noStaleConnectedState() async throws {
        var cutOff = 0
        for round in 0..<20 {
            let fixture = try await EngineFixture()
            defer { fixture.directory.remove() }
            let first = try await fixture.open("first")
            try await eventually("connected") { first.connectionState.value == .connected }
            // Open more sessions (each binds on the live connection) while the connection is dropped and every
            // later attempt refused; the drop lands at a different point of the binding in each round.
            async let opened = [fixture.open("second"), fixture.open("third")]
            for _ in 0..<round { await Task.yield() }
            fixture.transport.faults = .init(refuse: true)
            fixture.transport.dropConnections()
            cutOff += fixture.transport.bindsCutOffByDrops
            let sessions = try await [first] + opened
            try await eventually("every session disconnected") {
                sessions.allSatisfy { $0.connectionState.value == .disconnected }
            }
            // A stale .connected would show up as a later change: one more event round trip through each
            // session's publisher (the callback executor is immediate here) settles the states.
            for session in sessions { try await session.engine.flushed() }
            #expect(sessions.allSatisfy { $0.connectionState.value == .disconnected }, "round \(round)")
        }
        // The rounds are only worth something if some drop landed in the binding window: a bind sent and not
        // answered yet.
        #expect(cutOff > 0, "no drop landed while a session was binding")
    }

    @Test("wait(for: .download) while the session waits for its rebind suspends; it does not spin")
    func downloadWaitSuspendsWhileUnbound() async throws {
        var configuration = SyncServer.Configuration()
        configuration.store = PartitionFailingStore(partition: "a", failingAppends: 1)
        let fixture = try await EngineFixture(server: try await SyncServer.embedded(configuration: configuration))
        defer { fixture.directory.remove() }
        let a = try await fixture.open("a")
        let b = try await fixture.open("b")
        try await a.wait(for: .download)
        try await a.write(Data("fails once".utf8))
        try await eventually("a unbound after its error") { a.connectionState.value == .disconnected }
        let waiting = Task { try await a.wait(for: .download) }
        try await eventually("the wait is waiting for a binding") { await a.engine.isWaitingForBinding }
        let rounds = await a.engine.downloadWaitRounds
        // Real time passes while other work goes on; a spinning wait would make round after round.
        for index in 0..<20 {
            try await b.write(Data([UInt8(index)]))
            try await b.wait(for: .upload)
        }
        #expect(await a.engine.downloadWaitRounds == rounds)
        fixture.timers.advance(by: .seconds(1))
        try await waiting.value
        #expect(await a.engine.downloadWaitRounds == rounds)
    }

    /// The streams whose subscribers run on a callback executor: a session's (`state`, `connectionState`)
    /// or the app's (`user.sessions`, `app.errors`, `asyncOpen`).
    enum CallbackStream: String, CaseIterable, CustomTestStringConvertible {
        case state, connectionState, sessions, errors, asyncOpen
        var testDescription: String { rawValue }
    }

    @Test(
        "a subscriber that blocks delays no other session, no keepalive and no upload",
        arguments: CallbackStream.allCases)
    func blockingSubscriberDelaysNobody(stream: CallbackStream) async throws {
        var serverConfiguration = SyncServer.Configuration()
        serverConfiguration.store = PartitionFailingStore(partition: "failing", failingAppends: 1)
        let server = try await SyncServer.embedded(configuration: serverConfiguration)
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let timers = TestExecutor()
        // Default callback executors: a serial queue for the app and one per session.
        let app = SyncApp(
            configuration: .init(
                server: server.endpoint, directory: directory.url, timerExecutor: timers, random: { 0 }))
        let user = try await app.login(.anonymous)
        let blocked = try await user.openSession(partition: "blocked")
        let other = try await user.openSession(partition: "other")
        try await blocked.wait(for: .download)
        try await other.wait(for: .download)
        let release = DispatchSemaphore(value: 0)
        // (armed, entered): the subscriber blocks on the first delivery after it is armed — on the callback
        // executor, not on the subscribing thread, which receives a state's current value at once.
        let flags = Locked((armed: false, entered: false))
        let blockOnce: @Sendable () -> Void = {
            let block = flags.withLock { flags in
                defer { if flags.armed { flags.entered = true } }
                return flags.armed && !flags.entered
            }
            // Longer than the time limit: blocking on the wrong thread fails the test.
            if block { _ = release.wait(timeout: .now() + 300) }
        }
        let tokens = Locked<[SubscriptionToken]>([])
        defer {
            release.signal()
            for token in tokens.withLock({ $0 }) { token.invalidate() }
        }
        let subscription: SubscriptionToken? =
            switch stream {
            case .state: blocked.state.subscribe { _ in blockOnce() }
            case .connectionState: blocked.connectionState.subscribe { _ in blockOnce() }
            case .sessions: user.sessions.subscribe { _ in blockOnce() }
            case .errors: app.errors.subscribe { _ in blockOnce() }
            case .asyncOpen: nil
            }
        if let subscription { tokens.withLock { $0.append(subscription) } }
        flags.withLock { $0.armed = true }
        switch stream {
        case .state:
            blocked.suspend()
            blocked.resume()
        case .connectionState:
            // Suspending unbinds: .disconnected is delivered (and blocks); resuming connects again.
            blocked.suspend()
            try await eventually("the subscriber blocks on .disconnected") { flags.withLock { $0.entered } }
            blocked.resume()
        case .sessions:
            _ = try await user.openSession(partition: "third")
        case .errors:
            // The server fails to store this upload once: the error reaches app.errors.
            try await user.openSession(partition: "failing").write(Data("fails once".utf8))
        case .asyncOpen:
            let token = user.asyncOpen(partition: "third").subscribe { _ in blockOnce() }
            tokens.withLock { $0.append(token) }
        }
        try await eventually("the subscriber blocks") { flags.withLock { $0.entered } }

        try await other.write(Data("uploaded meanwhile".utf8))
        try await other.wait(for: .upload)
        try await blocked.write(Data("its own upload too".utf8))
        try await blocked.wait(for: .upload)
        #expect(try await server.changesets(in: "other").map(\.data) == [Array("uploaded meanwhile".utf8)])
        #expect(try await server.changesets(in: "blocked").map(\.data) == [Array("its own upload too".utf8)])
        // Keepalive: the ping goes out and its pong comes back while the subscriber still blocks.
        timers.advance(by: .seconds(60))
        try await eventually("pong received, next ping armed") { timers.nextDueTime == timers.now + .seconds(60) }
        #expect(flags.withLock { $0.entered })
        #expect(blocked.connectionState.value == .connected)
        #expect(other.connectionState.value == .connected)
    }
}

/// A server store that fails its first `failingAppends` appends to one partition, then keeps changesets
/// in memory.
actor PartitionFailingStore: PartitionStore {
    private let failingPartition: String
    private var failuresLeft: Int
    private let inner = InMemoryPartitionStore()

    struct InjectedFailure: Error {}

    init(partition: String, failingAppends: Int) {
        failingPartition = partition
        failuresLeft = failingAppends
    }

    func summaries(of partition: String) async throws -> [StoredChangesetSummary] {
        await inner.summaries(of: partition)
    }

    func read(_ versions: ClosedRange<UInt64>, of partition: String) async throws -> [StoredChangeset] {
        await inner.read(versions, of: partition)
    }

    func append(_ changesets: [StoredChangeset], to partition: String) async throws {
        if partition == failingPartition, failuresLeft > 0 {
            failuresLeft -= 1
            throw InjectedFailure()
        }
        await inner.append(changesets, to: partition)
    }
}
