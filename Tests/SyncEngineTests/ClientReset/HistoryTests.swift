import Foundation
import SyncServer
import SyncWire
import TestSupport
import Testing

@testable import SyncEngine

/// A server whose history regressed (issue 21, item 1): a fresh server whose log grew past the client, or
/// one restored from an older copy of the same log. The client gets a `historyLost` reset, never silence
/// and never a fatal `badClientVersion`.
@Suite("Server history", .timeLimit(.minutes(5)))
struct HistoryTests {
    /// The first attempt's refusal (see `connect(_:)`).
    private func isRefusal(_ error: SyncError) -> Bool {
        if case .connectionFailed = error { true } else { false }
    }

    @Test("a new server whose log grew past the client's version: historyLost reset, nothing skipped, nothing lost")
    func freshServerGrownPastTheClient() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let original = try await SyncServer.embedded()
        try await writeThroughNewApp([9], to: original)
        do {
            let app = makeApp(server: original.endpoint, directory: directory.url)
            let session = try await app.login(.anonymous).openSession(partition: "p")
            for value: UInt8 in [1, 2] { try await session.write(payload(value)) }
            try await session.wait(for: .upload)
            try await session.wait(for: .download)  // holds versions 1…3
            try await app.close()
        }
        // Another server, which never saw this log: others write five changesets, so its log is longer than
        // the client's version 3 and the old check (a bind past the end) does not fire.
        let fresh = try await SyncServer.embedded()
        try await writeThroughNewApp([21, 22, 23, 24, 25], to: fresh)
        let recorder = ResetRecorder()
        let fixture = try await EngineFixture(
            server: fresh, faults: .init(refuse: true), directory: directory,
            configure: { $0.clientResetHandler = recorder.handler })
        let session = try await fixture.open()
        let token = recorder.watch(session)  // before it connects: it sees both events
        defer { token.invalidate() }
        try await fixture.connectAfterTheRefusedAttempt()
        try await eventually("reset") { recorder.events.count == 2 }
        try await session.wait(for: .upload)
        try await session.wait(for: .download)
        let report = recorder.events[0].reset
        #expect(report.reason == .historyLost)
        #expect(report.unsyncedChanges.map(\.data) == [payload(1), payload(2)])
        let expected = [21, 22, 23, 24, 25, 1, 2].map { Array(payload(UInt8($0))) }
        #expect(try await fresh.changesets(in: "p").map(\.data) == expected)
        #expect(Collected(session.changesets).bytes == expected)
        #expect(fixture.errors.values.filter { !isRefusal($0.error) }.isEmpty)
        #expect(session.state.value == .active)
    }

    @Test(
        "a changesets subscriber across a historyLost reset receives the new log in full after the old one, none of it skipped (item 5)"
    )
    func feedAcrossAHistoryLostReset() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let original = try await SyncServer.embedded()
        try await writeThroughNewApp([9], to: original)
        do {
            let app = makeApp(server: original.endpoint, directory: directory.url)
            let session = try await app.login(.anonymous).openSession(partition: "p")
            for value: UInt8 in [1, 2] { try await session.write(payload(value)) }
            try await session.wait(for: .upload)
            try await session.wait(for: .download)
            try await app.close()
        }
        let fresh = try await SyncServer.embedded()
        try await writeThroughNewApp([21, 22, 23, 24, 25], to: fresh)
        let recorder = ResetRecorder()
        let fixture = try await EngineFixture(
            server: fresh, faults: .init(refuse: true), directory: directory,
            configure: { $0.clientResetHandler = recorder.handler })
        let session = try await fixture.open()
        let seen = Collected(session.changesets)  // subscribed before the reset: the old store's three
        try await eventually("the old log replayed") { seen.values.count == 3 }
        let token = recorder.watch(session)
        defer { token.invalidate() }
        try await fixture.connectAfterTheRefusedAttempt()
        try await eventually("reset") { recorder.events.count == 2 }
        try await session.wait(for: .upload)
        try await session.wait(for: .download)
        let newLog = [21, 22, 23, 24, 25, 1, 2].map { Array(payload(UInt8($0))) }
        try await eventually("the new log delivered") { seen.values.count >= 3 + newLog.count }
        #expect(seen.bytes == [9, 1, 2].map { Array(payload(UInt8($0))) } + newLog)
        #expect(seen.values.suffix(newLog.count).map(\.serverVersion) == Array(1...7))
    }

    @Test(
        "a server restored from an older copy of its log, grown past the client again: historyLost reset (not badClientVersion), lost changesets uploaded again"
    )
    func restoredFromAnOlderCopy() async throws {
        let directories = RestoreDirectories()
        defer { directories.remove() }
        let (directory, data, backup) = (directories.client, directories.data, directories.backup)
        let original = try await SyncServer.embedded(
            configuration: .init(store: try FilePartitionStore(directory: data.url.path)))
        do {
            let app = makeApp(server: original.endpoint, directory: directory.url)
            let session = try await app.login(.anonymous).openSession(partition: "p")
            try await session.write(payload(1))
            try await session.wait(for: .upload)
            // The backup: the server's files as they are now (the log holds version 1).
            try directories.backUpServerFiles()
            for value: UInt8 in [2, 3] { try await session.write(payload(value)) }
            try await session.wait(for: .upload)
            try await session.wait(for: .download)  // holds versions 1…3
            session.suspend()
            try await session.write(payload(4))  // not uploaded
            try await app.close()
        }
        await original.stop()
        let restored = try await SyncServer.embedded(
            configuration: .init(store: try FilePartitionStore(directory: backup.url.path)))
        try await writeThroughNewApp([21, 22, 23, 24], to: restored)  // the log: 1, 21…24 — past the client's version 3
        let recorder = ResetRecorder()
        let fixture = try await EngineFixture(
            server: restored, faults: .init(refuse: true), directory: directory,
            configure: { $0.clientResetHandler = recorder.handler })
        let session = try await fixture.open()
        let token = recorder.watch(session)  // before it connects: it sees both events
        defer { token.invalidate() }
        try await fixture.connectAfterTheRefusedAttempt()
        try await eventually("reset") { recorder.events.count == 2 || session.state.value == .invalid }
        #expect(fixture.errors.values.filter { !isRefusal($0.error) }.isEmpty, "\(fixture.errors.values.map(\.error))")
        #expect(session.state.value == .active)
        try await session.wait(for: .upload)
        try await session.wait(for: .download)
        let report = recorder.events.first?.reset
        #expect(report?.reason == .historyLost)
        #expect(report?.unsyncedChanges.map(\.data) == [payload(2), payload(3), payload(4)])
        let expected = [1, 21, 22, 23, 24, 2, 3, 4].map { Array(payload(UInt8($0))) }
        #expect(try await restored.changesets(in: "p").map(\.data) == expected)
        #expect(Collected(session.changesets).bytes == expected)
    }

    @Test(
        "a server restored from an older copy of the same history, grown past a client that holds only others' changesets, is noticed: the client is reset and holds the server's log"
    )
    func restoredCopyNoticedByAReader() async throws {
        // Found by the simulation (all-faults seeds 119, 139; bug 10 of docs/RELIABILITY.md). The restored copy
        // keeps its history id, and the reader has no acknowledgement of its own that the log lacks: only the
        // digest of what it holds at version 3 (`Bind.checkpoint`, protocol version 6) tells the server
        // that its version 3 is another changeset. Before that, versions 2 and 3 stayed the old ones.
        let directories = RestoreDirectories()
        defer { directories.remove() }
        let (reader, data, backup) = (directories.client, directories.data, directories.backup)
        let original = try await SyncServer.embedded(
            configuration: .init(store: try FilePartitionStore(directory: data.url.path)))
        try await writeThroughNewApp([1], to: original)
        try directories.backUpServerFiles()
        try await writeThroughNewApp([2, 3], to: original)
        do {
            let app = makeApp(server: original.endpoint, directory: reader.url)
            let session = try await app.login(.anonymous).openSession(partition: "p")
            try await session.wait(for: .download)  // holds versions 1…3, none its own
            try await app.close()
        }
        await original.stop()
        let restored = try await SyncServer.embedded(
            configuration: .init(store: try FilePartitionStore(directory: backup.url.path)))
        // The log: 1, 21, 22, 23 — past the reader's version 3.
        try await writeThroughNewApp([21, 22, 23], to: restored)
        let app = makeApp(server: restored.endpoint, directory: reader.url)
        let session = try await app.login(.anonymous).openSession(partition: "p")
        try await session.wait(for: .download)
        let expected = [1, 21, 22, 23].map { Array(payload(UInt8($0))) }
        #expect(try await restored.changesets(in: "p").map(\.data) == expected)
        #expect(Collected(session.changesets).bytes == expected)
        try await app.close()
    }

    @Test(
        "a reader whose changeset at its version is the same on a restored log but an earlier one is not, and whose client file the restored server forgot, gets historyLost and converges (prefix checkpoint)"
    )
    func restoredCopyWithTheSameLastChangeset() async throws {
        // Simulation seed 4019 (issue 21): the checkpoint named the CRC-32 of the one changeset at the reader's
        // version 3, which the restored log holds again (the same bytes re-uploaded); the expiry answered
        // clientExpired, whose reset carried the changesets feed on past version 3: it kept the old version 2.
        // The prefix checkpoint (protocol version 8) covers versions 1…3.
        let directories = RestoreDirectories()
        defer { directories.remove() }
        let (reader, data, backup) = (directories.client, directories.data, directories.backup)
        let clock = ServerClock()
        let original = try await forgetfulServer(clock, store: try FilePartitionStore(directory: data.url.path))
        do {
            // The reader's own version 1, in the backup too (so the restored server knows its client file).
            let app = makeApp(server: original.endpoint, directory: reader.url)
            let session = try await app.login(.anonymous).openSession(partition: "p")
            try await session.write(payload(1))
            try await session.wait(for: .upload)
            try await app.close()
        }
        try await serverNoticed(original, connections: 0)
        try directories.backUpServerFiles()
        try await writeThroughNewApp([2, 3], to: original)
        do {
            let app = makeApp(server: original.endpoint, directory: reader.url)
            let session = try await app.login(.anonymous).openSession(partition: "p")
            try await session.wait(for: .download)  // holds versions 1…3, only version 1 its own
            try await app.close()
        }
        await original.stop()
        let restored = try await forgetfulServer(clock, store: try FilePartitionStore(directory: backup.url.path))
        // The log: 1, 21, 3, 24 — version 3 as the reader holds it.
        try await writeThroughNewApp([21, 3, 24], to: restored)
        clock.advance(days: 31)  // the reader's client file is forgotten at its next bind
        // The reader's feed delivers what it holds (versions 1…3) before it connects.
        let fixture = try await EngineFixture(server: restored, faults: .init(refuse: true), directory: reader)
        let session = try await fixture.open()
        let collected = Collected(session.changesets)
        let held = [1, 2, 3].map { Array(payload(UInt8($0))) }
        try await eventually("the feed delivered what the reader holds") { collected.bytes == held }
        try await fixture.connectAfterTheRefusedAttempt()
        let expected = [1, 21, 3, 24].map { Array(payload(UInt8($0))) }
        // historyLost: the feed starts again from the restored log's first version (after clientExpired it
        // carried on after version 3, with the old version 2: 1, 2, 3, 24).
        try await eventually("the feed delivered the restored log") { collected.bytes == held + expected }
        try await session.wait(for: .download)
        #expect(try await restored.changesets(in: "p").map(\.data) == expected)
        #expect(Collected(session.changesets).bytes == expected)
        try await fixture.app.close()
        await restored.stop()
    }
}

/// A client store copied to a second device (or restored from a backup) writes new changesets under
/// client versions the server already integrated from the original (issue 21, item 2).
@Suite("Copied client store", .timeLimit(.minutes(5)))
struct CopiedStoreTests {
    @Test(
        "the copy's new writes, under client versions the original used, are not taken as re-uploads: the copy is reset and they reach the server"
    )
    func copiedStoreIsReset() async throws {
        let copied = try await CopiedClientStore.start()
        defer { copied.remove() }
        let (server, original, copy) = (copied.server, copied.original, copied.copy)
        do {
            let app = makeApp(server: server.endpoint, directory: original.url)
            let session = try await app.login(.anonymous).openSession(partition: "p")
            try await session.write(payload(2))  // client version 2 of the client file
            try await session.wait(for: .upload)
            try await app.close()
        }
        // The copy writes its own client version 2 while offline, then connects.
        let fixture = try await EngineFixture(server: server, faults: .init(refuse: true), directory: copy)
        let session = try await fixture.open()
        try await session.write(payload(22))
        try await fixture.connectAfterTheRefusedAttempt()
        let expected = [1, 2, 22].map { Array(payload(UInt8($0))) }
        try await eventually("the copy's write reached the server") {
            (try? await server.changesets(in: "p").map(\.data)) == expected
        }
        try await session.wait(for: .download)
        #expect(Collected(session.changesets).bytes == expected)
        #expect(session.state.value == .active)
    }

    @Test(
        "the copy's write under a client version the server acknowledged for the original is not marked acknowledged: the acknowledgement's digest differs, the copy is reset and its write reaches the server"
    )
    func acknowledgementOfTheOriginalsVersionResetsTheCopy() async throws {
        let copied = try await CopiedClientStore.start()
        defer { copied.remove() }
        let (server, original, copy) = (copied.server, copied.original, copied.copy)
        // The copy is bound and up to date; its upload of its own client version 2 is lost in transit.
        let fixture = try await EngineFixture(server: server, directory: copy)
        let session = try await fixture.open()
        try await session.wait(for: .download)
        fixture.transport.faults.dropUploads = true
        try await session.write(payload(22))
        // The original writes its client version 2 (other bytes); the server acknowledges it to both.
        do {
            let app = makeApp(server: server.endpoint, directory: original.url)
            let session = try await app.login(.anonymous).openSession(partition: "p")
            try await session.write(payload(2))
            try await session.wait(for: .upload)
            try await app.close()
        }
        fixture.transport.faults.dropUploads = false
        let expected = [1, 2, 22].map { Array(payload(UInt8($0))) }
        try await eventually("the copy's write reached the server") {
            (try? await server.changesets(in: "p").map(\.data)) == expected
        }
        try await session.wait(for: .download)
        #expect(Collected(session.changesets).bytes == expected)
        #expect(session.state.value == .active)
    }

    @Test(
        "a copy that has not written a client version the server acknowledged for the original is reset (historyLost), not failed with a protocol violation; its later write reaches the server"
    )
    func acknowledgementOfAVersionTheCopyNeverWroteResetsIt() async throws {
        // Found by the simulation (all-faults seeds 38, 175): a client store restored from a backup taken
        // before its write of client version 1; the server acknowledged the original's version 1, and the
        // acknowledgement reached the restored store before it wrote a version 1 of its own.
        let original = TemporaryDirectory()
        let copy = TemporaryDirectory()
        defer {
            original.remove()
            copy.remove()
        }
        let server = try await SyncServer.embedded()
        let other = TemporaryDirectory()
        defer { other.remove() }
        do {
            // Someone else's changeset, so that the original's client file is created by a download.
            let app = makeApp(server: server.endpoint, directory: other.url)
            let session = try await app.login(.anonymous).openSession(partition: "p")
            try await session.write(payload(9))
            try await session.wait(for: .upload)
            try await app.close()
        }
        do {
            let app = makeApp(server: server.endpoint, directory: original.url)
            let session = try await app.login(.anonymous).openSession(partition: "p")
            try await session.wait(for: .download)
            try await app.close()
        }
        // The backup: a bound client file, no local changeset.
        try FileManager.default.removeItem(at: copy.url)
        try FileManager.default.copyItem(at: original.url, to: copy.url)
        do {
            let app = makeApp(server: server.endpoint, directory: original.url)
            let session = try await app.login(.anonymous).openSession(partition: "p")
            try await session.write(payload(1))  // client version 1 of the client file
            try await session.wait(for: .upload)
            try await app.close()
        }
        let recorder = ResetRecorder()
        let fixture = try await EngineFixture(server: server, faults: .init(refuse: true), directory: copy)
        let session = try await fixture.open()
        let token = recorder.watch(session)  // before it connects: it sees both events
        defer { token.invalidate() }
        try await fixture.connectAfterTheRefusedAttempt()
        try await eventually("the copy is reset") { recorder.events.count == 2 || session.state.value == .invalid }
        #expect(session.state.value == .active)
        #expect(recorder.events.first?.reset.reason == .historyLost)
        #expect(recorder.events.first?.reset.unsyncedChanges.isEmpty == true)
        try await session.write(payload(2))
        try await session.wait(for: .upload)
        try await session.wait(for: .download)
        let expected = [9, 1, 2].map { Array(payload(UInt8($0))) }
        #expect(try await server.changesets(in: "p").map(\.data) == expected)
        #expect(Collected(session.changesets).bytes == expected)
        #expect(
            fixture.errors.values.allSatisfy {
                if case .protocolViolation = $0.error { false } else { true }
            })
        try await fixture.app.close()
    }
}

/// The directories of a scenario in which a server is restored from a backup: a client app's, the server's
/// data directory and the backup of it.
private struct RestoreDirectories {
    let client = TemporaryDirectory()
    let data = TemporaryDirectory()
    let backup = TemporaryDirectory()

    /// Copies the server's files as they are now to `backup`: what it is restored from later.
    func backUpServerFiles() throws { try copyServerFiles(of: data, to: backup) }

    func remove() {
        client.remove()
        data.remove()
        backup.remove()
    }
}
