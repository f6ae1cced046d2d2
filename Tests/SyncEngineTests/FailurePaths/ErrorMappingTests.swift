import Foundation
import SyncServer
import SyncStorage
import SyncWire
import TestSupport
import Testing

@testable import SyncEngine

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `SyncError.isFatal` as the engine applies it: what the server reports and what the local store
/// meets, each either ending the session (`.invalid`) or retried.
@Suite("Error mapping", .timeLimit(.minutes(5)))
struct ErrorMappingTests {
    @Test(
        "a fatal protocol error the server reports for a session is fatal: the session becomes invalid, no rebind",
        arguments: [ProtocolErrorCode.badClientVersion, .messageTooLarge])
    func serverFatalProtocolError(code: ProtocolErrorCode) async throws {
        let binds = Locked(0)
        let server = ScriptedServer { bind in
            binds.withLock { $0 += 1 }
            return [.error(ProtocolError(sessionID: bind.sessionID, code: code, message: "refused by the script"))]
        }
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let timers = TestExecutor()
        let app = makeApp(server: .inProcess(server), directory: directory.url, timers: timers)
        let errors = Collected(app.errors)
        let session = try await app.login(.anonymous).openSession(partition: "p")
        try await eventually("invalid") { session.state.value == .invalid }
        #expect(errors.values.map(\.error) == [.protocolViolation("refused by the script", isFatal: true)])
        #expect(errors.values.first?.error.isFatal == true)
        #expect(errors.values.first?.session === session)
        await #expect(throws: SyncError.sessionInvalid) { try await session.write(Data([1])) }
        // Nothing is retried, however long one waits.
        timers.advance(by: .seconds(600))
        #expect(binds.withLock { $0 } == 1)
        #expect(session.state.value == .invalid)
        try await app.close()
    }

    @Test(
        "a non-fatal error the server reports for a session is not fatal: the session stays active and binds again",
        arguments: [ProtocolErrorCode.internalError, .unknownSession, .malformedMessage, .serverBusy])
    func serverNonFatalProtocolError(code: ProtocolErrorCode) async throws {
        let binds = Locked(0)
        let server = ScriptedServer { bind in
            let count = binds.withLock { count in
                count += 1
                return count
            }
            guard count == 1 else {
                return [.download(Download(sessionID: bind.sessionID, entries: [], remainingBytes: 0))]
            }
            return [
                .error(
                    ProtocolError(
                        sessionID: bind.sessionID, code: code, message: "try again", retryAfterMilliseconds: 500))
            ]
        }
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let timers = TestExecutor()
        let app = makeApp(server: .inProcess(server), directory: directory.url, timers: timers)
        let errors = Collected(app.errors)
        let session = try await app.login(.anonymous).openSession(partition: "p")
        try await eventually("reported") { !errors.values.isEmpty }
        let error = try #require(errors.values.first?.error)
        #expect(!error.isFatal, "\(error)")
        #expect(errors.values.first?.session === session)
        #expect(session.state.value == .active)
        // Bound again after the backoff (1 s, longer than the hint), then synced.
        try await eventually("rebind scheduled") { timers.nextDueTime == timers.now + .seconds(1) }
        timers.advance(by: .seconds(1))
        try await eventually("bound again") { binds.withLock { $0 } == 2 }
        try await session.wait(for: .download)
        #expect(session.state.value == .active)
        #expect(errors.values.count == 1)
        try await app.close()
    }

    @Test(
        "a local write that fails mid-session (a failed fsync, a full disk) fails that write only: the session stays active and later writes sync",
        arguments: ["fsync", "ENOSPC"])
    func localStorageFailureIsTransient(fault: String) async throws {
        let fileSystem = ControlledFileSystem()
        let fixture = try await EngineFixture(fileSystem: fileSystem)
        defer { fixture.directory.remove() }
        let session = try await fixture.open()
        try await session.write(Data("durable".utf8))
        try await session.wait(for: .upload)
        if fault == "fsync" {
            fileSystem.failNextSync(of: "p.synclog", with: EIO)
        } else {
            fileSystem.failNextWrite(of: "p.synclog", with: ENOSPC)
        }
        do {
            try await session.write(Data("lost to the disk".utf8))
            Issue.record("the write whose append failed returned")
        } catch {
            guard case .storageFailure(let reason) = error else {
                Issue.record("expected .storageFailure, got \(error)")
                return
            }
            #expect(reason.contains(fault == "fsync" ? "errno \(EIO)" : "errno \(ENOSPC)"), "\(reason)")
        }
        #expect(session.state.value == .active)
        try await session.write(Data("after".utf8))
        try await session.wait(for: .upload)
        #expect(session.state.value == .active)
        #expect(fixture.errors.values.isEmpty, "\(fixture.errors.values.map(\.error))")
        // The server got what was durable, and only that, in order, without a gap in client versions.
        #expect(try await fixture.serverLog() == [Array("durable".utf8), Array("after".utf8)])
        try await fixture.app.close()
        // And the store holds exactly that after a reopen.
        let reopened = makeApp(server: fixture.server.endpoint, directory: fixture.directory.url)
        let again = try await reopened.login(.anonymous).openSession(partition: "p")
        #expect(try await again.engine.localChangesetsForTests() == [Array("durable".utf8), Array("after".utf8)])
        try await reopened.close()
    }

    @Test("a download whose fsync fails is reported and fetched again after a rebind; the session stays active")
    func failedDownloadIsFetchedAgain() async throws {
        let fileSystem = ControlledFileSystem()
        let fixture = try await EngineFixture(fileSystem: fileSystem)
        defer { fixture.directory.remove() }
        let session = try await fixture.open()
        try await session.wait(for: .download)
        let writerDirectory = TemporaryDirectory()
        defer { writerDirectory.remove() }
        let writer = makeApp(server: fixture.server.endpoint, directory: writerDirectory.url)
        fileSystem.failNextSync(of: "p.synclog", with: EIO)
        let writing = try await writer.login(.anonymous).openSession(partition: "p")
        try await writing.write(Data("from elsewhere".utf8))
        try await writing.wait(for: .upload)
        try await eventually("the failed download was reported") { !fixture.errors.values.isEmpty }
        guard case .storageFailure = fixture.errors.values.first?.error else {
            Issue.record("expected .storageFailure, got \(fixture.errors.values.map(\.error))")
            return
        }
        try await eventually("downloaded again after the rebind") {
            fixture.timers.advance(by: .seconds(1))
            return await session.engine.downloadedVersionForTests == 1
        }
        #expect(session.state.value == .active)
        try await writer.close()
        try await fixture.app.close()
    }

    @Test("two users logged in at once sync one partition over separate connections; one logging out leaves the other")
    func twoUsers() async throws {
        var configuration = SyncServer.Configuration()
        configuration.authentication = .apiKeys(["alice-key": ["shared"], "bob-key": ["shared"]])
        let fixture = try await EngineFixture(server: try await SyncServer.embedded(configuration: configuration))
        defer { fixture.directory.remove() }
        let alice = try await fixture.app.login(.apiKey("alice-key"))
        let bob = try await fixture.app.login(.apiKey("bob-key"))
        #expect(alice !== bob)
        #expect(fixture.app.allUsers == [alice, bob])
        let aliceSession = try await alice.openSession(partition: "shared")
        let bobSession = try await bob.openSession(partition: "shared")
        #expect(aliceSession !== bobSession)
        try await aliceSession.wait(for: .download)
        try await bobSession.wait(for: .download)
        #expect(fixture.transport.attempts == 2)
        #expect(fixture.server.connectionCount == 2)

        let aliceSeen = Collected(aliceSession.changesets)
        let bobSeen = Collected(bobSession.changesets)
        try await aliceSession.write(Data("from alice".utf8))
        try await bobSession.write(Data("from bob".utf8))
        try await eventually("each sees both") { aliceSeen.values.count == 2 && bobSeen.values.count == 2 }
        #expect(Set(bobSeen.values.map(\.data)) == [Data("from alice".utf8), Data("from bob".utf8)])
        #expect(aliceSeen.values == bobSeen.values)

        await alice.logOut()
        #expect(fixture.app.allUsers == [bob])
        try await eventually("alice's connection closed") { fixture.server.connectionCount == 1 }
        try await bobSession.write(Data("bob alone".utf8))
        try await bobSession.wait(for: .upload)
        #expect(bobSession.connectionState.value == .connected)
        #expect(bobSeen.values.map(\.data).last == Data("bob alone".utf8))
        #expect(try await fixture.serverLog("shared").count == 3)
        #expect(fixture.errors.values.isEmpty, "\(fixture.errors.values.map(\.error))")
    }
}
