import Foundation
import SyncServer
import SyncWire
import TestSupport
import Testing

@testable import SyncEngine

/// A client store restored from a backup taken before a recovering client reset (finding 13 of
/// docs/RELIABILITY.md, simulation seed 5709): reset again, it recovers the same changeset again, under a
/// new client file. The recovered changeset keeps its origin (where it was first written) in the new store
/// and in its upload, and the server integrates each origin once.
extension ResetRecorder {
    /// Whether `.didReset` was recorded.
    fileprivate var didReset: Bool {
        events.contains {
            if case .didReset = $0 { true } else { false }
        }
    }
}

@Suite("Recovered changesets' origins", .timeLimit(.minutes(5)))
struct RecoveredOriginTests {
    /// The start of the backup scenarios: payload 9 in the log; `client` (a new client file F1, mode
    /// `.recoverUnsyncedChanges`) downloads it, then writes payload 5 while suspended, which the server never
    /// receives; once the server noticed the app closed, `backup` is a copy of `client` (payload 5
    /// unacknowledged in F1).
    private func backUpAnUnsyncedWrite(
        _ client: TemporaryDirectory, to backup: TemporaryDirectory, on server: SyncServer
    ) async throws {
        try await writeThroughNewApp([9], to: server)
        let app = makeApp(
            server: server.endpoint, directory: client.url,
            configure: { $0.clientResetMode = .recoverUnsyncedChanges })
        let session = try await app.login(.anonymous).openSession(partition: "p")
        try await session.wait(for: .download)
        session.suspend()
        try await session.write(payload(5))
        try await app.close()
        try await serverNoticed(server, connections: 0)
        try restore(backup, from: client)
    }

    /// Replaces `directory`'s contents with a copy of `backup`'s.
    private func restore(_ directory: TemporaryDirectory, from backup: TemporaryDirectory) throws {
        try FileManager.default.removeItem(at: directory.url)
        try FileManager.default.copyItem(at: backup.url, to: directory.url)
    }

    /// Opens the app on `directory` (`.recoverUnsyncedChanges`), lets it be reset when it connects, and
    /// waits until the reset is done and everything is uploaded and downloaded; returns the reset's report
    /// and what the session's changesets feed delivered, and closes the app.
    private func resetAndSync(
        _ directory: TemporaryDirectory, on server: SyncServer, then writes: [UInt8] = []
    ) async throws -> (ClientReset?, [[UInt8]]) {
        let recorder = ResetRecorder()
        let fixture = try await EngineFixture(
            server: server, faults: .init(refuse: true), directory: directory,
            configure: { $0.clientResetMode = .recoverUnsyncedChanges })
        let session = try await fixture.open()
        let token = recorder.watch(session)  // before it connects: it sees both events
        defer { token.invalidate() }
        let delivered = Collected(session.changesets)
        try await fixture.connectAfterTheRefusedAttempt()
        // A retried reset waits for its backoff in virtual time: move the engine's timers on between checks.
        try await eventually("the reset done") {
            fixture.timers.advance(by: .milliseconds(500))
            return recorder.didReset || session.state.value == .invalid
        }
        #expect(session.state.value == .active)
        for value in writes { try await session.write(payload(value)) }
        try await session.wait(for: .upload)
        try await session.wait(for: .download)
        try await fixture.app.close()
        #expect(recorder.events.count == 2, "\(recorder.log)")
        return (recorder.events.first?.reset, delivered.bytes)
    }

    @Test(
        "a store restored from a backup taken before a recovering client reset is reset again and recovers the same changeset: the server's log integrates it once, others never receive it twice"
    )
    func restoredBeforeARecoveringReset() async throws {
        let clock = ServerClock()
        let server = try await forgetfulServer(clock)
        let client = TemporaryDirectory()
        let backup = TemporaryDirectory()
        defer {
            client.remove()
            backup.remove()
        }
        try await backUpAnUnsyncedWrite(client, to: backup, on: server)
        clock.advance(days: 31)  // the server forgets F1
        // F1's reset recovers payload 5 as F2's client version 1 and uploads it.
        let (first, _) = try await resetAndSync(client, on: server)
        #expect(first?.reason == .clientExpired)
        #expect(first?.unsyncedChanges.map(\.data) == [payload(5)])
        #expect(try await server.changesets(in: "p").map(\.data) == [Array(payload(9)), Array(payload(5))])
        // Restored from the backup, F1 is reset again and recovers payload 5 again, as F3's client version 1;
        // F3 then writes payload 6 as its client version 2.
        try restore(client, from: backup)
        let (second, uploaderFeed) = try await resetAndSync(client, on: server, then: [6])
        #expect(second?.reason == .clientExpired)
        #expect(second?.unsyncedChanges.map(\.data) == [payload(5)])
        // The uploader, too, receives payload 5 once: its own duplicate is acknowledged as such and reaches
        // its changesets feed empty, as it reaches everyone else's.
        #expect(uploaderFeed == [Array(payload(9)), Array(payload(5)), [], Array(payload(6))])
        let log = try await server.changesets(in: "p")
        #expect(log.filter { $0.duplicateOf == nil }.map(\.data) == [9, 5, 6].map { Array(payload($0)) })
        #expect(log.map(\.duplicateOf) == [nil, nil, 2, nil])
        #expect(log[2].origin == log[1].origin && log[1].origin != nil)
        // A reader receives payload 5 once (the duplicate entry is empty).
        let reader = TemporaryDirectory()
        defer { reader.remove() }
        let app = makeApp(server: server.endpoint, directory: reader.url)
        let session = try await app.login(.anonymous).openSession(partition: "p")
        try await session.wait(for: .download)
        #expect(Collected(session.changesets).bytes == [Array(payload(9)), Array(payload(5)), [], Array(payload(6))])
        try await app.close()
    }

    @Test(
        "a changeset recovered twice (a reset of the store that recovered it) keeps its first origin, and the server integrates it once when a backup of the first store recovers it too"
    )
    func recoveredTwiceKeepsTheFirstOrigin() async throws {
        let clock = ServerClock()
        let server = try await forgetfulServer(clock)
        let client = TemporaryDirectory()
        let backup = TemporaryDirectory()
        defer {
            client.remove()
            backup.remove()
        }
        try await backUpAnUnsyncedWrite(client, to: backup, on: server)
        clock.advance(days: 31)
        // F1's reset recovers payload 5 into F2, but F2 goes offline before uploading it: the reset is done
        // while the connection drops every upload.
        do {
            let recorder = ResetRecorder()
            let fixture = try await EngineFixture(
                server: server, faults: .init(refuse: true, dropUploads: true), directory: client,
                configure: { $0.clientResetMode = .recoverUnsyncedChanges })
            let session = try await fixture.open()
            let token = recorder.watch(session)
            defer { token.invalidate() }
            try await fixture.connectAfterTheRefusedAttempt()
            try await eventually("the reset of the store that does not upload done") {
                fixture.timers.advance(by: .milliseconds(500))
                return recorder.didReset
            }
            // F2 is bound (seen now, before the clock moves on), then unbound.
            try await eventually("F2 bound") { await server.boundSessionCount(in: "p") == 1 }
            session.suspend()
            try await eventually("F2 unbound") { await server.boundSessionCount(in: "p") == 0 }
            try await fixture.app.close()
        }
        try await serverNoticed(server, connections: 0)
        #expect(try await server.changesets(in: "p").map(\.data) == [Array(payload(9))])
        // F2 is forgotten too; its reset recovers payload 5 again, into F3, which uploads it (origin: F1's).
        clock.advance(days: 31)
        let (second, _) = try await resetAndSync(client, on: server)
        #expect(second?.reason == .clientExpired)
        #expect(second?.unsyncedChanges.map(\.data) == [payload(5)])
        // The backup of F1 is reset and recovers it once more, into F4.
        try restore(client, from: backup)
        let (third, _) = try await resetAndSync(client, on: server)
        #expect(third?.unsyncedChanges.map(\.data) == [payload(5)])
        let log = try await server.changesets(in: "p")
        #expect(log.filter { $0.duplicateOf == nil }.map(\.data) == [9, 5].map { Array(payload($0)) })
        #expect(log.map(\.duplicateOf) == [nil, nil, 2])
        #expect(log[1].origin == log[2].origin)
        #expect(log[1].origin.map { $0.clientVersion } == 1)
    }

    @Test(
        "a changeset a client file uploaded itself, recovered by a reset of one copy of the store and uploaded again directly by an older copy (restored from a backup, where it was unacknowledged), is integrated once"
    )
    func uploadedItselfAndRecovered() async throws {
        let client = TemporaryDirectory()
        let clientBackup = TemporaryDirectory()
        let data = TemporaryDirectory()
        let serverBackup = TemporaryDirectory()
        defer {
            for directory in [client, clientBackup, data, serverBackup] { directory.remove() }
        }
        let original = try await SyncServer.embedded(
            configuration: .init(store: try FilePartitionStore(directory: data.url.path)))
        try await writeThroughNewApp([9], to: original)
        do {
            let app = makeApp(
                server: original.endpoint, directory: client.url,
                configure: { $0.clientResetMode = .recoverUnsyncedChanges })
            let session = try await app.login(.anonymous).openSession(partition: "p")
            try await session.wait(for: .download)  // client file F1 holds version 1
            // The server's backup: its log holds version 1.
            try copyServerFiles(of: data, to: serverBackup)
            session.suspend()
            try await session.write(payload(5))  // F1's client version 1, not uploaded yet
            try await app.close()
        }
        try restore(clientBackup, from: client)  // the client's backup: payload 5 unacknowledged
        // F1 uploads payload 5 itself, and holds the log up to version 3.
        do {
            let app = makeApp(server: original.endpoint, directory: client.url)
            let session = try await app.login(.anonymous).openSession(partition: "p")
            try await session.wait(for: .upload)
            try await writeThroughNewApp([21], to: original)
            try await session.wait(for: .download)
            try await app.close()
        }
        #expect(try await original.changesets(in: "p").map(\.data) == [9, 5, 21].map { Array(payload($0)) })
        await original.stop()
        // The server is restored from its backup (the same history) and grows past F1's version 3.
        let restored = try await SyncServer.embedded(
            configuration: .init(store: try FilePartitionStore(directory: serverBackup.url.path)))
        try await writeThroughNewApp([22, 23], to: restored)
        // F1 holds other bytes at version 3 (historyLost); its reset recovers payload 5 (the log lost it) as F2's
        // client version 1, with F1's origin.
        let (reset, _) = try await resetAndSync(client, on: restored)
        #expect(reset?.reason == .historyLost)
        #expect(reset?.unsyncedChanges.map(\.data) == [payload(5)])
        #expect(
            try await restored.changesets(in: "p").map(\.data) == [9, 22, 23, 5].map { Array(payload($0)) })
        // The client's backup (F1, payload 5 unacknowledged) binds without a reset and uploads it directly.
        do {
            let fixture = try await EngineFixture(server: restored, directory: clientBackup)
            let session = try await fixture.open()
            try await session.wait(for: .upload)
            try await session.write(payload(6))
            try await session.wait(for: .upload)
            try await session.wait(for: .download)
            #expect(session.state.value == .active)
            try await fixture.app.close()
        }
        let log = try await restored.changesets(in: "p")
        #expect(log.filter { $0.duplicateOf == nil }.map(\.data) == [9, 22, 23, 5, 6].map { Array(payload($0)) })
        #expect(log.map(\.duplicateOf) == [nil, nil, nil, nil, 4, nil])
        #expect(log[3].origin == ChangesetOrigin(clientFileID: log[4].clientFileID, clientVersion: 1))
        await restored.stop()
    }
}
