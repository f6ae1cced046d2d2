import Foundation
import SyncServer
import SyncWire
import TestSupport
import Testing

@testable import SyncEngine

@Suite("Logging", .timeLimit(.minutes(5)))
struct LoggingTests {
    private func app(
        _ server: SyncServer, _ directory: TemporaryDirectory, level: SyncLogLevel,
        into events: Locked<[SyncLogEvent]>, timers: TestExecutor = TestExecutor()
    ) -> SyncApp {
        SyncApp(
            configuration: .init(
                server: server.endpoint, directory: directory.url, timerExecutor: timers,
                callbackExecutor: ImmediateExecutor(), random: { 0 }, logLevel: level,
                logger: { event in events.withLock { $0.append(event) } }))
    }

    @Test("connection, session-state and error events are logged at Realm's levels, each with a category")
    func logsTheLifeOfASession() async throws {
        let server = try await SyncServer.embedded()
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let events = Locked<[SyncLogEvent]>([])
        let app = app(server, directory, level: .detail, into: events)
        let session = try await app.login(.anonymous).openSession(partition: "p")
        try await session.wait(for: .download)
        session.suspend()
        try await app.close()
        let logged = events.withLock { $0 }
        #expect(
            logged.contains {
                $0.level == .info && $0.category == "sync.client.connection" && $0.message.hasPrefix("connecting to")
            })
        #expect(logged.contains { $0.level == .info && $0.message.hasPrefix("connected to") })
        #expect(
            logged.contains {
                $0.level == .detail && $0.category == "sync.client.session" && $0.message.contains("bound as session")
            })
        #expect(
            logged.contains { $0.level == .info && $0.category == "sync.client.session" && $0.message == "p: inactive" }
        )
        #expect(logged.allSatisfy { $0.level <= .detail && $0.level != .off })
        #expect(!logged.contains { $0.level == .debug })
    }

    @Test("errors are logged with the session's partition; fatal ones at .fatal")
    func errorsAreLogged() async throws {
        let server = try await SyncServer.embedded(configuration: .init(authentication: .apiKeys(["good": ["p"]])))
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let events = Locked<[SyncLogEvent]>([])
        let app = app(server, directory, level: .error, into: events)
        let session = try await app.login(.apiKey("bad")).openSession(partition: "p")
        try await eventually("invalid") { session.state.value == .invalid }
        let logged = events.withLock { $0 }
        #expect(logged.count == 1)
        #expect(logged.first?.level == .fatal)
        #expect(logged.first?.category == "sync.client.error")
        #expect(logged.first?.message.hasPrefix("p: authentication failed") == true)

        // A session error that is not fatal (the server's store fails once; the session rebinds) is logged
        // at .error, not .fatal, with its own partition.
        var configuration = SyncServer.Configuration()
        configuration.store = PartitionFailingStore(partition: "q", failingAppends: 1)
        let failing = try await SyncServer.embedded(configuration: configuration)
        let other = TemporaryDirectory()
        defer { other.remove() }
        let recovering = Locked<[SyncLogEvent]>([])
        let session2 = try await self.app(failing, other, level: .error, into: recovering)
            .login(.anonymous).openSession(partition: "q")
        try await session2.write(Data([1]))
        try await eventually("the session error is logged") { !recovering.withLock { $0 }.isEmpty }
        let second = recovering.withLock { $0 }
        #expect(second.count == 1, "\(second)")
        #expect(second.first?.level == .error)
        #expect(second.first?.category == "sync.client.error")
        #expect(second.first?.message.hasPrefix("q: ") == true, "\(second)")
        #expect(session2.state.value != .invalid)
    }

    @Test(".off logs nothing, and app.logs streams exactly what the logger gets")
    func offAndTheStream() async throws {
        let server = try await SyncServer.embedded()
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let quiet = Locked<[SyncLogEvent]>([])
        let silent = app(server, directory, level: .off, into: quiet)
        let silentStream = Collected(silent.logs)
        _ = try await silent.login(.anonymous).openSession(partition: "p").wait(for: .download)
        try await silent.close()
        #expect(quiet.withLock { $0 }.isEmpty)
        #expect(silentStream.values.isEmpty)

        let loud = Locked<[SyncLogEvent]>([])
        let other = TemporaryDirectory()
        defer { other.remove() }
        let verbose = app(server, other, level: .trace, into: loud)
        let stream = Collected(verbose.logs)
        let session = try await verbose.login(.anonymous).openSession(partition: "p")
        try await session.write(Data("x".utf8))
        try await session.wait(for: .upload)
        try await verbose.close()
        #expect(stream.values == loud.withLock { $0 })
        #expect(stream.values.contains { $0.level == .debug && $0.category == "sync.client.store" })
        #expect(stream.values.contains { $0.level == .debug && $0.message.hasPrefix("received download") })
    }

    @Test("the connect timing is logged at .info: the time from the attempt to the welcome, in the timers' clock")
    func connectTiming() async throws {
        let server = try await SyncServer.embedded()
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let events = Locked<[SyncLogEvent]>([])
        let transport = FaultInjectingTransport()
        transport.faults = .init(delayMessages: true)
        let timers = TestExecutor()
        let app = makeApp(
            server: server.endpoint, directory: directory.url, transport: transport, timers: timers,
            configure: {
                $0.logLevel = .info
                $0.logger = { event in events.withLock { $0.append(event) } }
            })
        let session = try await app.login(.anonymous).openSession(partition: "p")
        try await eventually("the welcome is held") { session.engine.credentialCheck.current }
        timers.advance(by: .milliseconds(7_250))  // nothing is due before the 120 s connect timeout
        transport.deliverDelayedMessages()
        try await eventually("connected") { session.connectionState.value == .connected }
        let timing = events.withLock { $0 }.filter { $0.message.hasPrefix("connected to") }
        #expect(timing.count == 1)
        #expect(timing.first?.level == .info)
        #expect(timing.first?.category == "sync.client.connection")
        #expect(timing.first?.message.hasSuffix(" in \(Duration.milliseconds(7_250))") == true, "\(timing)")
        try await app.close()
    }

    @Test("levels parse from their names and order from .off to .trace")
    func levels() {
        #expect(
            SyncLogLevel.allCases.map(\.description) == [
                "off", "fatal", "error", "warn", "info", "detail", "debug", "trace",
            ])
        #expect(SyncLogLevel(name: "DEBUG") == .debug)
        #expect(SyncLogLevel(name: "verbose") == nil)
        #expect(SyncLogLevel.fatal < .trace)
    }

    @Test("the default line: ISO 8601 UTC timestamp with milliseconds, level, category, message")
    func lineFormat() {
        let event = SyncLogEvent(
            date: Date(timeIntervalSince1970: 1_795_000_000.123), level: .info, category: "sync.client.connection",
            message: "connected")
        #expect(event.description == "2026-11-18T11:06:40.123Z info sync.client.connection: connected")
    }

    @Test("the server logs at its configured level")
    func serverLogs() async throws {
        let events = Locked<[SyncLogEvent]>([])
        let server = try await SyncServer.embedded(
            configuration: .init(logLevel: .detail, logger: { event in events.withLock { $0.append(event) } }))
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let app = makeApp(server: server.endpoint, directory: directory.url)
        _ = try await app.login(.anonymous).openSession(partition: "p").wait(for: .download)
        let logged = events.withLock { $0 }
        #expect(logged.contains { $0.category == "sync.server" && $0.message.contains("welcomed as anonymous") })
        #expect(logged.contains { $0.category == "sync.server" && $0.message.contains("bound session") })
    }
}
