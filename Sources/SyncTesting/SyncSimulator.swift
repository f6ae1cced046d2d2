import Foundation
@_exported import SyncEngine
import SyncServer

/// An in-process sync server, a controllable network and a virtual clock, for testing an app's sync
/// logic and sync UI deterministically.
///
/// Apps made with ``makeApp(clientResetMode:configure:)`` reach the simulator's server through the
/// simulator's network, and run every engine timer (reconnect backoff, keepalive, connect timeout) on
/// its ``executor``, a `TestExecutor`: nothing time-based happens until the test moves the clock with
/// ``advance(by:)`` or ``run(until:timeout:realTimeLimit:)``. The test then breaks things on purpose:
///
/// - ``dropConnection()``: every connection is lost now;
/// - ``delay(by:)`` / ``stall(for:)``: messages arrive later, or not at all for a while (then in order);
/// - ``takeServerDown()`` / ``bringServerUp()``: the server goes away (connections are refused) and
///   comes back with its data;
/// - ``forceClientReset(_:)``: every client of a partition must reset its local copy;
/// - ``Flakiness``: seeded random cuts and delays.
///
/// ```swift
/// let simulator = try await SyncSimulator(seed: 42)
/// let app = simulator.makeApp()
/// let session = try await app.login(.anonymous).openSession(partition: "tasks")
/// try await session.write(Data("buy milk".utf8))
/// try await simulator.run(until: { session.status.value.pending.uploadChangesets == 0 })
///
/// simulator.dropConnection()
/// try await simulator.run(until: { session.status.value.offlineReason != nil })
/// try await simulator.run(until: { session.status.value.connection == .connected })  // backoff, virtual
/// await simulator.close()
/// ```
///
/// **What is deterministic.** The clock moves only when the test says so, and the seed decides every
/// random choice (flaky faults, the engines' reconnect jitter, the server's log identities). The engine's
/// and server's own work (actors, tasks) runs in real time between clock moves: the simulator lets it
/// settle — until nothing visible moved for a while — before it moves the clock again. So each timer
/// fires at its exact virtual time and an event that depends only on the clock (a reconnect after the
/// backoff) happens at the same virtual time in every run; with ``Flakiness``, which message a random
/// fault hits can differ between runs when messages race each other.
///
/// The server stores in memory, apps store under a temporary directory; ``close()`` closes the apps it
/// made, stops the server and deletes the directory.
public final class SyncSimulator: Sendable {
    /// Random faults of the simulated network, drawn from the simulator's seed.
    public struct Flakiness: Sendable, Hashable {
        /// The probability that a message cuts its connection instead of arriving (0…1).
        public var dropProbability: Double
        /// Each message arrives up to this much later (uniformly drawn), besides ``SyncSimulator/delay(by:)``;
        /// messages of one connection and direction still arrive in order.
        public var maximumExtraDelay: Duration

        /// Faults at the given rates.
        public init(dropProbability: Double = 0, maximumExtraDelay: Duration = .zero) {
            self.dropProbability = min(max(dropProbability, 0), 1)
            self.maximumExtraDelay = max(maximumExtraDelay, .zero)
        }

        /// A reliable network.
        public static let none = Flakiness()
    }

    /// Why ``SyncSimulator/run(until:timeout:realTimeLimit:)`` gave up.
    public struct TimeoutError: Error, Sendable, CustomStringConvertible {
        /// The virtual time that passed.
        public let virtualTime: Duration
        /// Whether the real-time limit ended it (the engine's own work did not finish), rather than the
        /// virtual timeout.
        public let realTimeLimitReached: Bool

        public var description: String {
            realTimeLimitReached
                ? "the condition did not hold within the real-time limit (after \(virtualTime) of virtual time)"
                : "the condition did not hold within \(virtualTime) of virtual time"
        }
    }

    private struct State {
        var server: SyncServer?
        var apps: [SyncApp] = []
        var appCount = 0
    }

    /// The seed every random choice comes from.
    public let seed: UInt64
    /// The virtual clock every app's timers run on. Advance it with ``advance(by:)`` or
    /// ``run(until:timeout:realTimeLimit:)``, which also let the engine's work settle.
    public let executor: TestExecutor
    /// Where the apps' local stores live (deleted by ``close()``).
    public let directory: URL

    private let random: SharedRandom
    private let store: SimulatorStore
    private let transport: SimulatorTransport
    private let state = Locked(State())
    private let serverConfiguration: SyncServer.Configuration

    /// The wall clock (the server's and the apps') at virtual time zero; the simulator's clock moves it.
    public static let startDate = Date(timeIntervalSince1970: 1_800_000_000)

    /// A simulator with its server running.
    ///
    /// - Parameters:
    ///   - seed: decides every random choice; print it in a failing test to replay the run.
    ///   - flakiness: random faults from the start (``setFlakiness(_:)`` changes them).
    ///   - configureServer: adjusts the server's configuration (authentication, limits, a maximum
    ///     offline time…); the simulator sets its store and clock.
    public init(
        seed: UInt64 = 0, flakiness: Flakiness = .none,
        configureServer: (inout SyncServer.Configuration) -> Void = { _ in }
    ) async throws {
        self.seed = seed
        let executor = TestExecutor()
        self.executor = executor
        random = SharedRandom(seed: seed)
        store = SimulatorStore(random: random)
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("SyncSimulator-\(seed)-\(UUID().uuidString)", isDirectory: true)
        var configuration = SyncServer.Configuration(logLevel: .off)
        configureServer(&configuration)
        configuration.store = store
        configuration.clock = { Self.startDate + executor.now.sinceOrigin.timeInterval }
        configuration.uptime = nil
        serverConfiguration = configuration
        let state = state
        transport = SimulatorTransport(
            executor: executor, random: random, currentEndpoint: { state.withLock { $0.server?.endpoint } })
        transport.conditions.flakiness = flakiness
        try await bringServerUp()
    }

    // MARK: Apps

    /// A new app (each with its own directory) connected to the simulator's server through its network,
    /// with its timers on ``executor``, its callbacks on an `ImmediateExecutor` (they run at once on the
    /// engine's thread, so a test reads what they did right after the event) and seeded reconnect jitter.
    ///
    /// - Parameters:
    ///   - clientResetMode: what the app's sessions do when the server requires a client reset.
    ///   - configure: adjusts the rest of the configuration (stop policy, backoff, limits, callbacks…);
    ///     keep its transport and timer executor to stay in the simulation.
    public func makeApp(
        clientResetMode: ClientResetMode = .recoverUnsyncedChanges,
        configure: (inout SyncApp.Configuration) -> Void = { _ in }
    ) -> SyncApp {
        let number = state.withLock { state -> Int in
            state.appCount += 1
            return state.appCount
        }
        let placeholder = state.withLock { $0.server?.endpoint } ?? .webSocket(host: "simulator.invalid", port: 1)
        var configuration = SyncApp.Configuration(
            server: placeholder,
            directory: directory.appendingPathComponent("app\(number)", isDirectory: true),
            transport: transport,
            timerExecutor: executor,
            callbackExecutor: ImmediateExecutor(),
            random: { [random] in random.unit() },
            logLevel: .off,
            clientResetMode: clientResetMode)
        // The engine's status dates (`lastSyncedAt`, the next reconnect attempt) on the virtual clock too.
        configuration.wallClock = { [executor] in Self.startDate + executor.now.sinceOrigin.timeInterval }
        configure(&configuration)
        let app = SyncApp(configuration: configuration)
        state.withLock { $0.apps.append(app) }
        return app
    }

    // MARK: Time

    /// The virtual time since the simulator started.
    public var elapsed: Duration { executor.now.sinceOrigin }

    /// The wall clock of the server and of every app now: ``startDate`` plus the virtual time. Status
    /// dates (`SyncStatus.lastSyncedAt`, the next reconnect attempt of `OfflineReason`) come from it.
    public var date: Date { Self.startDate + elapsed.timeInterval }

    /// Moves the virtual clock forward by `duration`, firing each timer due meanwhile at its time and
    /// letting what it started settle before the next one fires.
    public func advance(by duration: Duration) async {
        let target = executor.now + max(duration, .zero)
        await settle()
        while let next = executor.nextDueTime, next <= target {
            executor.advance(to: next)
            await settle()
        }
        executor.advance(to: target)
        await settle()
    }

    /// Runs the simulation until `condition` holds: lets the engine's work settle, and while the
    /// condition does not hold moves the virtual clock to the next timer (the only thing that can happen
    /// once the work settled), firing it.
    ///
    /// - Parameters:
    ///   - condition: what the test waits for, usually read from `session.status.value`; called on the
    ///     calling task, between steps.
    ///   - timeout: the most virtual time to run; default 10 minutes (the longest reconnect backoff is 5).
    ///   - realTimeLimit: the most real time to wait for the engine's own work; a regression fails
    ///     instead of hanging. Default 5 minutes: generous, because the engine's work runs on Swift's
    ///     cooperative pool, which in a test process is shared with every other test running at the same
    ///     time (and a sanitizer makes all of it several times slower). A call that takes 0.1 s alone
    ///     took more than 30 s in a loaded ThreadSanitizer run of this package's suite.
    /// - Throws: ``TimeoutError`` when either limit passes first.
    public func run(
        until condition: @Sendable () -> Bool, timeout: Duration = .seconds(600),
        realTimeLimit: Duration = .seconds(300)
    ) async throws(TimeoutError) {
        let start = executor.now
        let end = start + max(timeout, .zero)
        let deadline = ContinuousClock.now + realTimeLimit
        while true {
            if condition() { return }
            await settle()
            if condition() { return }
            let elapsed = executor.now - start
            if ContinuousClock.now > deadline {
                throw TimeoutError(virtualTime: elapsed, realTimeLimitReached: true)
            }
            if executor.now >= end { throw TimeoutError(virtualTime: elapsed, realTimeLimitReached: false) }
            executor.advance(to: min(executor.nextDueTime ?? end, end))
        }
    }

    /// Lets the engine's and server's work run without moving the clock, until nothing visible moved
    /// for a while: no message crossed the network, the server did not use its store, no session's
    /// `SyncStatus` changed, no timer was
    /// scheduled or due, over rounds of growing real-time pauses (about 30 ms in all). Bounded by a few
    /// seconds of real time.
    public func settle() async {
        let deadline = ContinuousClock.now + .seconds(5)
        var quiet = 0
        var last = activity()
        while quiet < 5, ContinuousClock.now < deadline {
            executor.advance(by: .zero)
            for _ in 0..<4 { await Task.yield() }
            try? await Task.sleep(for: .milliseconds(1 << quiet))
            let now = activity()
            quiet = now == last ? quiet + 1 : 0
            last = now
        }
    }

    /// What `settle()` watches: the messages that crossed the network, the server's store calls, the
    /// timers waiting, and every session's status.
    private func activity() -> Activity {
        let apps = state.withLock { $0.apps }
        let statuses = apps.flatMap { app in app.allUsers.flatMap { $0.allSessions.map(\.status.value) } }
        return Activity(
            messages: transport.messageCount, storeOperations: store.operations, timers: executor.pendingCount,
            statuses: statuses)
    }

    private struct Activity: Equatable {
        let messages: Int
        let storeOperations: Int
        let timers: Int
        let statuses: [SyncStatus]
    }

    // MARK: Faults

    /// Loses every open connection now: clients see their connection lost (and reconnect after their
    /// backoff); messages in flight are lost.
    public func dropConnection() {
        transport.dropAll(reason: "dropped by the simulator")
    }

    /// From now on every message arrives `duration` later in virtual time (`.zero`: at once again).
    /// Messages already in flight keep their time.
    public func delay(by duration: Duration) {
        transport.conditions.delay = max(duration, .zero)
    }

    /// Nothing passes through the network for `duration` of virtual time from now — connections stay
    /// open (a ping may time out) — then everything held arrives in order.
    public func stall(for duration: Duration) {
        transport.conditions.stalledUntil = executor.now + max(duration, .zero)
        transport.pumpAll()
    }

    /// Changes the random faults (``Flakiness/none`` for a reliable network again).
    public func setFlakiness(_ flakiness: Flakiness) {
        transport.conditions.flakiness = flakiness
    }

    /// How many connections were cut so far (by ``dropConnection()`` or by ``Flakiness``).
    public var droppedConnections: Int { transport.dropCount }

    /// Stops the server: open connections are lost and new ones refused until ``bringServerUp()``. Its
    /// data stays.
    public func takeServerDown() async {
        let server = state.withLock { state -> SyncServer? in
            defer { state.server = nil }
            return state.server
        }
        await server?.stop()
    }

    /// Takes the server away for `duration` of virtual time, then brings it back on the same data:
    /// ``takeServerDown()``, ``advance(by:)`` (timers due meanwhile fire: clients retry and are refused),
    /// ``bringServerUp()``.
    public func takeServerAway(for duration: Duration) async throws {
        await takeServerDown()
        await advance(by: duration)
        try await bringServerUp()
    }

    /// Starts the server again on the same data (does nothing while it runs). Clients connect at their
    /// next attempt (`app.reconnect()` to try at once).
    public func bringServerUp() async throws {
        guard state.withLock({ $0.server == nil }) else { return }
        let server = try await SyncServer.embedded(configuration: serverConfiguration)
        state.withLock { $0.server = server }
    }

    /// Makes every client that synced `partition` before reset its local copy (the server's log keeps
    /// its entries but gets another identity, as after a restore from a backup): their next bind is
    /// refused with `clientResetRequired`, and each session resets as its app's `ClientResetMode` says.
    /// The server restarts to load the partition again, so every connection is lost once.
    public func forceClientReset(_ partition: String) async throws {
        await store.replaceHistory(of: partition)
        await takeServerDown()
        try await bringServerUp()
    }

    /// The changesets the server holds for `partition`, in server-version order.
    public func changesets(in partition: String) async throws -> [StoredChangeset] {
        guard let server = state.withLock({ $0.server }) else { return [] }
        return try await server.changesets(in: partition)
    }

    /// Closes every app it made, stops the server and deletes the apps' directory.
    public func close() async {
        let apps = state.withLock { state -> [SyncApp] in
            defer { state.apps = [] }
            return state.apps
        }
        for app in apps { try? await app.close() }
        await takeServerDown()
        let directory = directory
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            // File work off the cooperative pool.
            Thread.detachNewThread {
                try? FileManager.default.removeItem(at: directory)
                continuation.resume()
            }
        }
    }
}

extension Duration {
    /// The duration in seconds, as a `TimeInterval`.
    fileprivate var timeInterval: TimeInterval {
        TimeInterval(components.seconds) + TimeInterval(components.attoseconds) / 1e18
    }
}
