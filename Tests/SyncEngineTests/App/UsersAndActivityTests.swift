import Foundation
import SyncServer
import SyncWire
import TestSupport
import Testing

@testable import SyncEngine

@Suite("Users, reconnect all, sync activity, asyncOpen", .timeLimit(.minutes(5)))
struct UsersAndActivityTests {
    @Test("app.reconnect(): every waiting connection of every user connects at once with a fresh backoff")
    func reconnectAll() async throws {
        let fixture = try await EngineFixture(faults: .init(refuse: true))
        defer { fixture.directory.remove() }
        let first = try await fixture.open("a", credentials: .anonymous)
        let second = try await fixture.open("b", credentials: .apiKey("other"))
        // Both users' connections wait: grow their backoff to 2 s.
        try await eventually("both wait 1 s") { fixture.timers.scheduledDelays.filter { $0 == .seconds(1) }.count == 2 }
        fixture.timers.advance(by: .seconds(1))
        try await eventually("both wait 2 s") { fixture.timers.scheduledDelays.filter { $0 == .seconds(2) }.count == 2 }
        fixture.transport.faults = .init()
        let attempts = fixture.transport.attempts
        fixture.app.reconnect()
        try await eventually("both connected without advancing time") {
            first.connectionState.value == .connected && second.connectionState.value == .connected
        }
        #expect(fixture.transport.attempts == attempts + 2)
        // A fresh backoff: the next failure waits 1 s again.
        fixture.transport.faults = .init(refuse: true)
        fixture.transport.dropConnections()
        try await eventually("1 s again") { fixture.timers.nextDueTime == fixture.timers.now + .seconds(1) }
    }

    @Test("app.reconnect() has no effect on connected sessions")
    func reconnectAllLeavesConnectedAlone() async throws {
        let fixture = try await EngineFixture()
        defer { fixture.directory.remove() }
        let session = try await fixture.open()
        try await session.wait(for: .download)
        let states = Collected(session.connectionState)
        // reconnect() only starts a task: await what it runs (reconnectAll), so the checks below come after
        // the connection acted on it, then a round trip through the server.
        fixture.app.reconnect()
        await fixture.app.reconnectAll()
        try await session.wait(for: .download)
        #expect(fixture.transport.attempts == 1)
        #expect(fixture.server.connectionCount == 1)
        #expect(states.values == [.connected], "\(states.values)")
    }

    @Test("app.reconnect() has no effect while connecting: the attempt and its connect timeout stand")
    func reconnectAllWhileConnecting() async throws {
        let fixture = try await EngineFixture(faults: .init(hold: true))
        defer { fixture.directory.remove() }
        let session = try await fixture.open()
        try await eventually("connecting") { session.connectionState.value == .connecting }
        try await eventually("connect timeout armed") { fixture.timers.nextDueTime == .zero + .seconds(120) }
        await fixture.app.reconnectAll()
        #expect(fixture.transport.attempts == 1)
        #expect(fixture.timers.nextDueTime == .zero + .seconds(120))
        #expect(fixture.timers.pendingCount == 1)
        #expect(session.connectionState.value == .connecting)
    }

    @Test("app.reconnect() has no effect on sessions in a fatal state: no new attempt, no new bind")
    func reconnectAllLeavesFatalAlone() async throws {
        let server = try await SyncServer.embedded(
            configuration: .init(authentication: .apiKeys(["good": ["a"]])))
        let fixture = try await EngineFixture(server: server)
        defer { fixture.directory.remove() }
        // A refused credential: the connection failed for good.
        let refused = try await fixture.open("a", credentials: .apiKey("bad"))
        try await eventually("invalid") { refused.state.value == .invalid }
        // A partition the key may not sync, beside one it may: that session alone is invalid.
        let allowed = try await fixture.open("a", credentials: .apiKey("good"))
        let forbidden = try await fixture.open("b", credentials: .apiKey("good"))
        try await eventually("forbidden is invalid") { forbidden.state.value == .invalid }
        try await allowed.wait(for: .download)
        let attempts = fixture.transport.attempts
        let errors = fixture.errors.values.count
        await fixture.app.reconnectAll()
        try await allowed.wait(for: .download)  // a round trip: a bind sent before it was answered first
        #expect(fixture.transport.attempts == attempts)
        #expect(fixture.errors.values.count == errors)
        #expect(refused.state.value == .invalid && forbidden.state.value == .invalid)
        #expect(refused.connectionState.value == .disconnected && forbidden.connectionState.value == .disconnected)
    }

    @Test("currentUser, allUsers and user.state follow logins, log-outs and removal")
    func users() async throws {
        let fixture = try await EngineFixture()
        defer { fixture.directory.remove() }
        #expect(fixture.app.currentUser == nil)
        let anonymous = try await fixture.app.login(.anonymous)
        let keyed = try await fixture.app.login(.apiKey("k"))
        #expect(fixture.app.allUsers == [anonymous, keyed])
        #expect(fixture.app.currentUser === keyed)
        let states = Collected(keyed.state)
        let session = try await keyed.openSession(partition: "p")
        try await session.write(Data("local".utf8))
        let userDirectory = keyed.directory
        #expect(FileManager.default.fileExists(atPath: userDirectory.path))

        await keyed.logOut()
        #expect(fixture.app.allUsers == [anonymous])
        #expect(fixture.app.currentUser === anonymous)
        #expect(keyed.state.value == .loggedOut)
        #expect(FileManager.default.fileExists(atPath: userDirectory.path))

        let again = try await fixture.app.login(.apiKey("k"))
        try await again.remove()
        #expect(again.state.value == .removed)
        #expect(!FileManager.default.fileExists(atPath: userDirectory.path))
        #expect(fixture.app.allUsers == [anonymous])
        #expect(states.values == [.loggedIn, .loggedOut])
    }

    @Test("syncActivity: offline, syncing, synced, across sessions opening, suspending and closing, and logging out")
    func syncActivity() async throws {
        let fixture = try await EngineFixture(stopPolicy: .immediately, faults: .init(hold: true))
        defer { fixture.directory.remove() }
        let user = try await fixture.app.login(.anonymous)
        let activity = Collected(user.syncActivity)
        #expect(user.syncActivity.value == .offline)  // no session

        let a = try await user.openSession(partition: "a")
        try await a.write(Data(repeating: 1, count: 100))
        #expect(user.syncActivity.value == .offline)  // not connected yet
        fixture.transport.faults = .init()
        try await fixture.connectAfterTheHeldAttemptTimesOut()
        try await a.wait(for: .upload)
        try await a.wait(for: .download)
        try await eventually("synced") { user.syncActivity.value == .synced }
        #expect(activity.values.contains { if case .syncing = $0 { true } else { false } })

        // A second session with work to do: syncing again, with its bytes counted.
        let b = try await user.openSession(partition: "b")
        b.suspend()
        try await b.write(Data(repeating: 2, count: 50))
        try await eventually("b is offline, a keeps it synced") { user.syncActivity.value == .synced }
        fixture.transport.faults.delayMessages = true
        b.resume()
        try await eventually("syncing b's 50 bytes") {
            if case .syncing(let upload, _) = user.syncActivity.value {
                return upload.transferrableBytes == 150 && upload.transferredBytes == 100
            }
            return false
        }
        fixture.transport.deliverDelayedMessages()
        try await b.wait(for: .upload)
        try await eventually("synced again") { user.syncActivity.value == .synced }

        // b closed with work pending (stop policy .immediately): it no longer counts, a keeps it synced.
        fixture.transport.faults.delayMessages = true
        try await b.write(Data(repeating: 3, count: 30))
        try await eventually("syncing b's 30 bytes") {
            if case .syncing(let upload, _) = user.syncActivity.value { return upload.transferrableBytes == 180 }
            return false
        }
        b.close()
        try await eventually("b closed: only a counts, synced") { user.syncActivity.value == .synced }
        fixture.transport.faults = .init()
        fixture.transport.deliverDelayedMessages()

        // Every session suspended: offline.
        a.suspend()
        try await eventually("offline") { user.syncActivity.value == .offline }
        #expect(fixture.app.syncActivity.value == .offline)
        a.resume()
        try await eventually("the app sees it too") { fixture.app.syncActivity.value == .synced }

        // Logging out mid-stream: offline, for the user and the app, and it stays so.
        await user.logOut()
        #expect(user.syncActivity.value == .offline)
        try await eventually("the app is offline") { fixture.app.syncActivity.value == .offline }
        #expect(activity.values.last == .offline)
    }

    @Test("logOut and close make syncActivity .offline at once, whatever callbacks are still queued")
    func offlineAtLogOut() async throws {
        let server = try await SyncServer.embedded()
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let callbacks = TestExecutor()
        let app = makeApp(
            server: server.endpoint, directory: directory.url, configure: { $0.callbackExecutor = callbacks })
        let user = try await app.login(.anonymous)
        let session = try await user.openSession(partition: "p")
        try await session.write(Data("x".utf8))
        try await session.wait(for: .upload)
        try await eventually("synced") {
            callbacks.run()
            return user.syncActivity.value == .synced && app.syncActivity.value == .synced
        }
        await user.logOut()
        #expect(user.syncActivity.value == .offline)
        let other = try await app.login(.apiKey("other"))
        _ = try await other.openSession(partition: "q").wait(for: .download)
        try await eventually("the app synced again") {
            callbacks.run()
            return app.syncActivity.value == .synced
        }
        try await app.close()
        #expect(app.syncActivity.value == .offline)
        #expect(other.syncActivity.value == .offline)
    }

    @Test(
        "app.syncActivity adds up several users: syncing while any is, synced when all connected are, as users log out")
    func severalUsers() async throws {
        let fixture = try await EngineFixture()
        defer { fixture.directory.remove() }
        let first = try await fixture.app.login(.anonymous)
        let second = try await fixture.app.login(.apiKey("second"))
        let a = try await first.openSession(partition: "a")
        let b = try await second.openSession(partition: "b")
        try await a.wait(for: .download)
        try await b.wait(for: .download)
        try await eventually("both synced") { fixture.app.syncActivity.value == .synced }

        fixture.transport.faults.delayMessages = true
        try await a.write(Data(repeating: 1, count: 40))
        try await b.write(Data(repeating: 2, count: 60))
        try await eventually("syncing both users' 100 bytes") {
            if case .syncing(let upload, _) = fixture.app.syncActivity.value {
                return upload.transferrableBytes == 100 && upload.transferredBytes == 0
            }
            return false
        }
        if case .syncing(let upload, _) = first.syncActivity.value {
            #expect(upload.transferrableBytes == 40)
        } else {
            Issue.record("the first user should be syncing: \(first.syncActivity.value)")
        }

        // The second user logs out with its bytes pending: the app counts only the first user's.
        await second.logOut()
        #expect(second.syncActivity.value == .offline)
        try await eventually("syncing the first user's 40 bytes") {
            if case .syncing(let upload, _) = fixture.app.syncActivity.value { return upload.transferrableBytes == 40 }
            return false
        }
        fixture.transport.deliverDelayedMessages()
        try await a.wait(for: .upload)
        try await eventually("synced") { fixture.app.syncActivity.value == .synced }
        await first.logOut()
        try await eventually("nobody: offline") { fixture.app.syncActivity.value == .offline }
    }

    @Test("asyncOpen: .waitingForUser while the credential is checked, and a typed timeout when offline")
    func asyncOpenWaitingAndTimeout() async throws {
        let fixture = try await EngineFixture(faults: .init(delayMessages: true))
        defer { fixture.directory.remove() }
        let user = try await fixture.app.login(.anonymous)
        let states = Collected(user.asyncOpen(partition: "p", timeout: .seconds(30)))
        try await eventually("waiting for the user") {
            states.values.contains { if case .waitingForUser = $0 { true } else { false } }
        }
        guard case .connecting = states.values.first else {
            Issue.record("expected .connecting first: \(states.values)")
            return
        }
        // The welcome is held in transit: the download never completes within the timeout.
        try await eventually("the timeout is armed") { fixture.timers.scheduledDelays.contains(.seconds(30)) }
        fixture.timers.advance(by: .seconds(30))
        try await eventually("finished") { states.isFinished }
        guard case .error(.timedOut) = states.values.last else {
            Issue.record("expected a timeout last: \(states.values)")
            return
        }
        #expect(user.session(for: "p") != nil)  // the session stays open and keeps trying
    }

    @Test("asyncOpen on a refused credential ends with the error")
    func asyncOpenFailure() async throws {
        let server = try await SyncServer.embedded(configuration: .init(authentication: .apiKeys(["good": ["p"]])))
        let fixture = try await EngineFixture(server: server)
        defer { fixture.directory.remove() }
        let states = Collected(try await fixture.app.login(.apiKey("bad")).asyncOpen(partition: "p"))
        try await eventually("finished") { states.isFinished }
        guard case .error(let error) = states.values.last, case .authenticationFailed = error else {
            Issue.record("expected authenticationFailed last: \(states.values)")
            return
        }
    }
}
