import Foundation
import SyncServer
import SyncWire
import TestSupport
import Testing

@testable import SyncEngine

/// Client reset in virtual time: the client's timers on a `TestExecutor`, an embedded server whose wall
/// clock the test sets, a client that goes offline longer than the server's maximum and comes back.
@Suite("Client reset", .timeLimit(.minutes(5)))
struct ClientResetTests {
    /// A writes a1 a2 (uploaded), B writes b1 (uploaded); A goes offline and writes a3 a4; 31 days later
    /// B writes b2 and A comes back. Returns the fixtures, A's session and what A's reset recorder saw.
    private struct Scenario {
        let clock: ServerClock
        let server: SyncServer
        let a: EngineFixture
        let b: EngineFixture
        let sessionA: SyncSession
        let sessionB: SyncSession
        let recorder: ResetRecorder
        let tokens: [SubscriptionToken]
        let previousClientFileID: UInt64

        func remove() {
            a.directory.remove()
            b.directory.remove()
        }
    }

    private func offlineTooLong(mode: ClientResetMode) async throws -> Scenario {
        let clock = ServerClock()
        let server = try await forgetfulServer(clock)
        let recorder = ResetRecorder()
        let a = try await EngineFixture(
            server: server,
            configure: {
                $0.clientResetMode = mode
                $0.clientResetHandler = recorder.handler
            })
        let b = try await EngineFixture(server: server)
        let sessionA = try await a.open()
        let token = recorder.watch(sessionA)
        let sessionB = try await b.open()
        for value: UInt8 in [1, 2] { try await sessionA.write(payload(value)) }
        try await sessionA.wait(for: .upload)
        try await sessionB.write(payload(11))
        try await sessionB.wait(for: .upload)
        try await sessionA.wait(for: .download)
        sessionA.suspend()
        try await serverNoticed(server, connections: 1)  // A was last seen now
        for value: UInt8 in [3, 4] { try await sessionA.write(payload(value)) }
        clock.advance(days: 31)
        try await sessionB.write(payload(12))  // B stayed bound: seen, not forgotten
        try await sessionB.wait(for: .upload)
        let previous = await sessionA.engine.clientFileIDForTests
        sessionA.resume()
        return Scenario(
            clock: clock, server: server, a: a, b: b, sessionA: sessionA, sessionB: sessionB, recorder: recorder,
            tokens: [token], previousClientFileID: previous)
    }

    @Test(
        ".discardUnsyncedChanges: the unsynced changesets are reported, then dropped; the store holds the server's log")
    func discard() async throws {
        let scenario = try await offlineTooLong(mode: .discardUnsyncedChanges)
        defer { scenario.remove() }
        let (a, server) = (scenario.sessionA, scenario.server)
        try await eventually("reset") { scenario.recorder.events.count == 2 }
        try await a.wait(for: .download)
        try await a.wait(for: .upload)
        let serverLog = try await server.changesets(in: "p").map(\.data)
        #expect(serverLog == [payload(1), payload(2), payload(11), payload(12)].map { Array($0) })
        guard case .willReset(let report) = scenario.recorder.events.first else {
            Issue.record("expected willReset first: \(scenario.recorder.events)")
            return
        }
        #expect(report.mode == .discardUnsyncedChanges)
        #expect(report.reason == .clientExpired)
        #expect(report.serverVersion == 4)
        #expect(report.previousDownloadedVersion == 3)
        #expect(report.previousClientFileID == scenario.previousClientFileID)
        #expect(report.clientFileID != scenario.previousClientFileID)
        #expect(
            report.unsyncedChanges == [
                UnsyncedChange(clientVersion: 3, data: payload(3), wasAcknowledged: false),
                UnsyncedChange(clientVersion: 4, data: payload(4), wasAcknowledged: false),
            ])
        #expect(await a.engine.clientFileIDForTests == report.clientFileID)
        #expect(a.state.value == .active)
        #expect(scenario.a.errors.values.isEmpty)
        // Reopened from disk, the store holds exactly the server's log and nothing to upload.
        try await scenario.a.app.close()
        let again = makeApp(server: server.endpoint, directory: scenario.a.directory.url)
        let reopened = try await again.login(.anonymous).openSession(partition: "p")
        reopened.suspend()
        #expect(Collected(reopened.changesets).bytes == serverLog)
        #expect(await reopened.engine.clientFileIDForTests == report.clientFileID)
        #expect(reopened.engine.notifier.current(.upload)?.transferrableBytes == 0)
        try await again.close()
    }

    @Test(
        ".recoverUnsyncedChanges: the unsynced changesets are uploaded again exactly once, after the server's state; others receive them"
    )
    func recover() async throws {
        let scenario = try await offlineTooLong(mode: .recoverUnsyncedChanges)
        defer { scenario.remove() }
        let (a, b, server) = (scenario.sessionA, scenario.sessionB, scenario.server)
        let seenByB = Collected(b.changesets)
        try await eventually("reset") { scenario.recorder.events.count == 2 }
        try await a.wait(for: .upload)
        try await a.wait(for: .download)
        let expected = [payload(1), payload(2), payload(11), payload(12), payload(3), payload(4)].map { Array($0) }
        #expect(try await server.changesets(in: "p").map(\.data) == expected)
        try await eventually("B has them") { seenByB.values.count == 6 }
        #expect(seenByB.bytes == expected)
        #expect(Collected(a.changesets).bytes == expected)
        #expect(scenario.recorder.events.map(\.reset.unsyncedChanges.count) == [2, 2])
        #expect(scenario.recorder.events.first?.reset.mode == .recoverUnsyncedChanges)
        #expect(scenario.a.errors.values.isEmpty)
    }

    @Test("before → after, the handler before the stream, each once, with the same report")
    func eventsAndHandler() async throws {
        let scenario = try await offlineTooLong(mode: .recoverUnsyncedChanges)
        defer { scenario.remove() }
        try await eventually("reset") { scenario.recorder.events.count == 2 }
        #expect(
            scenario.recorder.log == [
                "handler willReset p", "stream willReset", "handler didReset p", "stream didReset",
            ])
        let events = scenario.recorder.events
        guard case .willReset(let before) = events[0], case .didReset(let after) = events[1] else {
            Issue.record("expected willReset, didReset: \(events)")
            return
        }
        #expect(before == after)
    }

    @Test(".manual: the session becomes invalid, clientResetRequired reaches app.errors, nothing is replaced")
    func manual() async throws {
        let scenario = try await offlineTooLong(mode: .manual)
        defer { scenario.remove() }
        let a = scenario.sessionA
        try await eventually("invalid") { a.state.value == .invalid }
        try await eventually("reported") { !scenario.a.errors.values.isEmpty }
        guard case .clientResetRequired = scenario.a.errors.values.first?.error else {
            Issue.record("expected clientResetRequired: \(scenario.a.errors.values.map(\.error))")
            return
        }
        #expect(scenario.recorder.events.isEmpty)
        #expect(await a.engine.clientFileIDForTests == scenario.previousClientFileID)
        #expect(try await scenario.server.changesets(in: "p").count == 4)
        // Nothing replaced on disk: the store file still holds every local changeset, the unsynced 3 and 4
        // included, and no reset was begun beside it.
        #expect(try await a.engine.localChangesetsForTests() == [1, 2, 3, 4].map { Array(payload($0)) })
        let storePath = scenario.a.directory.url.appendingPathComponent("anonymous")
            .appendingPathComponent(SyncUser.fileName(for: "p")).path
        #expect(FileManager.default.fileExists(atPath: storePath))
        #expect(!FileManager.default.fileExists(atPath: SessionEngine.resetPath(for: storePath)))
    }

    @Test("an unacknowledged changeset the server did integrate is not uploaded twice: it comes back with the download")
    func integratedButUnacknowledged() async throws {
        let scenario = try await offlineTooLong(mode: .recoverUnsyncedChanges)
        defer { scenario.remove() }
        let (a, server) = (scenario.sessionA, scenario.server)
        try await eventually("first reset") { scenario.recorder.events.count == 2 }
        try await a.wait(for: .upload)
        #expect(try await server.changesets(in: "p").count == 6)
        // a5 is integrated, but its acknowledgement is held in transit and lost with the connection.
        scenario.a.transport.faults.delayMessages = true
        try await a.write(payload(5))
        try await eventually("a5 integrated") { (try? await server.changesets(in: "p").count) == 7 }
        a.suspend()
        try await serverNoticed(server, connections: 1)
        scenario.a.transport.faults = .init()
        try await a.write(payload(6))
        scenario.clock.advance(days: 31)
        try await scenario.sessionB.write(payload(13))
        try await scenario.sessionB.wait(for: .upload)
        a.resume()
        try await eventually("second reset") { scenario.recorder.events.count == 4 }
        #expect(
            scenario.recorder.events[2].reset.unsyncedChanges == [
                UnsyncedChange(clientVersion: 4, data: payload(6), wasAcknowledged: false)
            ])
        try await a.wait(for: .upload)
        try await a.wait(for: .download)
        let expected = [1, 2, 11, 12, 3, 4, 5, 13, 6].map { Array(payload(UInt8($0))) }
        #expect(try await server.changesets(in: "p").map(\.data) == expected)
        #expect(Collected(a.changesets).bytes == expected)
    }

    @Test(
        "a server that lost history, .recoverUnsyncedChanges: acknowledged changesets it lost are reported and uploaded again"
    )
    func lostHistoryRecovered() async throws {
        let directory = TemporaryDirectory()
        let other = TemporaryDirectory()
        defer {
            directory.remove()
            other.remove()
        }
        let original = try await SyncServer.embedded()
        do {
            let app = makeApp(server: original.endpoint, directory: directory.url)
            let session = try await app.login(.anonymous).openSession(partition: "p")
            let writer = try await makeApp(server: original.endpoint, directory: other.url)
                .login(.anonymous).openSession(partition: "p")
            try await writer.write(payload(9))
            try await writer.wait(for: .upload)
            for value: UInt8 in [1, 2] { try await session.write(payload(value)) }
            try await session.wait(for: .upload)
            try await session.wait(for: .download)
            session.suspend()
            try await session.write(payload(3))
            try await app.close()
        }
        // A new server that remembers nothing: the client holds versions 1…3 of a log that is empty.
        let fresh = try await SyncServer.embedded()
        let recorder = ResetRecorder()
        let fixture = try await EngineFixture(
            server: fresh, directory: directory,
            configure: {
                $0.clientResetHandler = recorder.handler
            })
        let session = try await fixture.open()
        let token = recorder.watch(session)
        defer { token.invalidate() }
        try await eventually("reset") { recorder.events.count == 2 }
        try await session.wait(for: .upload)
        let report = recorder.events[0].reset
        #expect(report.reason == .historyLost)
        #expect(report.serverVersion == 0)
        #expect(report.previousDownloadedVersion == 3)
        #expect(
            report.unsyncedChanges == [
                UnsyncedChange(clientVersion: 1, data: payload(1), wasAcknowledged: true),
                UnsyncedChange(clientVersion: 2, data: payload(2), wasAcknowledged: true),
                UnsyncedChange(clientVersion: 3, data: payload(3), wasAcknowledged: false),
            ])
        let expected = [1, 2, 3].map { Array(payload(UInt8($0))) }
        #expect(try await fresh.changesets(in: "p").map(\.data) == expected)
        #expect(Collected(session.changesets).bytes == expected)
        #expect(fixture.errors.values.isEmpty)
        #expect(session.state.value == .active)
    }

    @Test(
        "a crash mid-swap leaves the old store and the new one at its temporary path; the next open removes it and resets once"
    )
    func crashMidSwap() async throws {
        let clock = ServerClock()
        let server = try await forgetfulServer(clock)
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let crashing = makeApp(
            server: server.endpoint, directory: directory.url,
            configure: {
                $0.testHooks.beforeClientResetSwap = { () throws(SyncError) in throw .storageFailure("simulated crash")
                }
            })
        let session = try await crashing.login(.anonymous).openSession(partition: "p")
        try await session.write(payload(1))
        try await session.wait(for: .upload)
        session.suspend()
        try await serverNoticed(server, connections: 0)
        try await session.write(payload(2))
        let previous = await session.engine.clientFileIDForTests
        let storePath = directory.url.appendingPathComponent("anonymous")
            .appendingPathComponent(SyncUser.fileName(for: "p")).path
        let leftover = SessionEngine.resetPath(for: storePath)
        clock.advance(days: 31)
        session.resume()
        try await eventually("the simulated crash") { session.state.value == .invalid }
        #expect(FileManager.default.fileExists(atPath: leftover))
        #expect(await session.engine.clientFileIDForTests == previous)
        try await crashing.close()

        let recorder = ResetRecorder()
        let app = makeApp(
            server: server.endpoint, directory: directory.url, configure: { $0.clientResetHandler = recorder.handler })
        let reopened = try await app.login(.anonymous).openSession(partition: "p")
        try await eventually("reset") { recorder.log.count == 2 }
        try await reopened.wait(for: .upload)
        #expect(!FileManager.default.fileExists(atPath: leftover))
        #expect(try await server.changesets(in: "p").map(\.data) == [Array(payload(1)), Array(payload(2))])
        #expect(await reopened.engine.clientFileIDForTests != previous)
        try await app.close()
    }

    @Test("a leftover of an interrupted reset is removed when the store opens, and the store is untouched")
    func leftoverRemovedAtOpen() async throws {
        let fixture = try await EngineFixture()
        defer { fixture.directory.remove() }
        let storePath = fixture.directory.url.appendingPathComponent("anonymous")
            .appendingPathComponent(SyncUser.fileName(for: "p")).path
        try FileManager.default.createDirectory(
            atPath: (storePath as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let leftover = SessionEngine.resetPath(for: storePath)
        try Data("half-written".utf8).write(to: URL(fileURLWithPath: leftover))
        let session = try await fixture.open()
        #expect(!FileManager.default.fileExists(atPath: leftover))
        try await session.write(payload(7))
        try await session.wait(for: .upload)
        #expect(try await fixture.serverLog() == [Array(payload(7))])
    }

    @Test("a write during a reset waits for it and lands in the new store, after the recovered changesets")
    func writeDuringReset() async throws {
        let clock = ServerClock()
        let server = try await forgetfulServer(clock)
        let written = Locked<Task<Void, any Error>?>(nil)
        let waitedForTheReset = Locked<Bool?>(nil)
        let fixture = try await EngineFixture(
            server: server,
            configure: {
                // The handler runs on a queue of its own, off the cooperative pool and off the engine's actor
                // (which waits for it): it holds the reset until the write is seen waiting for it, so the
                // write surely lands during the reset, not after.
                $0.callbackExecutor = DispatchQueue(label: "ClientResetTests.writeDuringReset")
                $0.clientResetHandler = { event, session in
                    guard case .willReset = event else { return }
                    written.withLock { $0 = Task { try await session.write(payload(9)) } }
                    let seen = DispatchSemaphore(value: 0)
                    let watcher = Task {
                        let waits: Bool
                        do {
                            try await eventually("the write waits for the reset") {
                                await session.engine.resetWaiterCountForTests == 1
                            }
                            waits = true
                        } catch {
                            waits = false
                        }
                        waitedForTheReset.withLock { $0 = waits }
                        seen.signal()
                    }
                    if seen.wait(timeout: .now() + 60) == .timedOut { watcher.cancel() }
                }
            })
        defer { fixture.directory.remove() }
        let session = try await fixture.open()
        try await session.write(payload(1))
        try await session.wait(for: .upload)
        session.suspend()
        try await serverNoticed(server, connections: 0)
        try await session.write(payload(2))
        clock.advance(days: 31)
        session.resume()
        try await eventually("the write started") { written.withLock { $0 } != nil }
        try await written.withLock { $0 }!.value
        #expect(waitedForTheReset.withLock { $0 } == true, "the write did not wait for the reset")
        try await session.wait(for: .upload)
        #expect(try await server.changesets(in: "p").map(\.data) == [1, 2, 9].map { Array(payload($0)) })
        // The write is in the new store, after the recovered changeset (the old store's 1 was integrated).
        #expect(try await session.engine.localChangesetsForTests() == [2, 9].map { Array(payload($0)) })
    }

    @Test("progress counts never go backwards across a reset, and the re-download is reported")
    func progressAcrossAReset() async throws {
        let scenario = try await offlineTooLong(mode: .recoverUnsyncedChanges)
        defer { scenario.remove() }
        let a = scenario.sessionA
        let uploads = Collected(a.progress(for: .upload, mode: .reportIndefinitely))
        let downloads = Collected(a.progress(for: .download, mode: .reportIndefinitely))
        try await eventually("reset") { scenario.recorder.events.count == 2 }
        try await a.wait(for: .upload)
        try await a.wait(for: .download)
        for values in [uploads.values, downloads.values] {
            #expect(zip(values, values.dropFirst()).allSatisfy { $0.transferredBytes <= $1.transferredBytes })
            #expect(values.last?.isTransferComplete == true)
        }
        // Before: 8 bytes downloaded (b1), 16 uploaded of 32. After: b1 and b2 and a1, a2 downloaded again
        // (32 more), a3 and a4 uploaded again.
        #expect(downloads.values.last?.transferredBytes == 8 + 32)
        #expect(uploads.values.last?.transferredBytes == 16 + 16)
    }
}
