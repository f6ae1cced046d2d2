import Foundation
import SyncServer
import SyncWire
import Testing

@testable import SyncEngine

@Suite("Users, reconnect all, sync activity, asyncOpen", .timeLimit(.minutes(1)))
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
        fixture.app.reconnect()
        try await session.wait(for: .download)
        #expect(fixture.transport.attempts == 1)
        #expect(fixture.server.connectionCount == 1)
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

    @Test("syncActivity: offline, syncing, synced, across sessions opening, suspending and closing")
    func syncActivity() async throws {
        let fixture = try await EngineFixture(faults: .init(hold: true))
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

        // Every session suspended: offline.
        a.suspend()
        b.suspend()
        try await eventually("offline") { user.syncActivity.value == .offline }
        #expect(fixture.app.syncActivity.value == .offline)
        a.resume()
        try await eventually("the app sees it too") { fixture.app.syncActivity.value == .synced }
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
