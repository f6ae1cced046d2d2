import Foundation
import SyncServer
import SyncWire
import TestSupport
import Testing

@testable import SyncEngine

/// One `try await receipt.uploaded` running in a task of its own, so a test can look at its outcome while it
/// waits and bound the wait with a deadline (a regression fails, never hangs).
final class AwaitedUpload: Sendable {
    private let outcome = Locked<Result<Void, SyncError>?>(nil)
    private let task: Task<Void, Never>

    init(_ receipt: WriteReceipt) {
        let outcome = outcome
        task = Task {
            do throws(SyncError) {
                try await receipt.uploaded
                outcome.withLock { $0 = .success(()) }
            } catch {
                outcome.withLock { $0 = .failure(error) }
            }
        }
    }

    /// `nil` while waiting; then `.success` or the error thrown.
    var result: Result<Void, SyncError>? { outcome.withLock { $0 } }

    func cancel() { task.cancel() }

    /// Waits (with the suite's deadline) until the await returned or threw; `nil` when it returned.
    func finished(_ what: String) async throws -> SyncError? {
        try await eventually(what) { result != nil }
        if case .failure(let error)? = result { return error }
        return nil
    }

    deinit { task.cancel() }
}

@Suite("Write receipts", .timeLimit(.minutes(5)))
struct WriteReceiptTests {
    @Test("write returns its client version; pending until the server acknowledged it, then uploaded returns")
    func pendingUntilAcknowledged() async throws {
        let fixture = try await EngineFixture()
        defer { fixture.directory.remove() }
        let session = try await fixture.app.login(.anonymous).openSession(partition: "p", suspended: true)
        let pendingSets = Collected(session.pendingWrites)
        let first = try await session.write(payload(1))
        let second = try await session.write(payload(2))
        #expect(first.clientVersion == 1)
        #expect(second.clientVersion == 2)
        #expect(first != second)
        #expect(session.isPending(first) && session.isPending(second))
        #expect(session.pendingWrites.value.count == 2)
        #expect(session.pendingWrites.value.contains(first) && session.pendingWrites.value.contains(second))
        session.resume()
        let awaited = AwaitedUpload(second)
        #expect(try await awaited.finished("the second write uploaded") == nil)
        #expect(!session.isPending(first) && !session.isPending(second))
        #expect(session.pendingWrites.value.isEmpty)
        #expect(await session.engine.acknowledgedClientVersionForTests >= 2, "acknowledged, durably")
        #expect(try await fixture.serverLog() == [1, 2].map { Array(payload($0)) })
        // An acknowledged receipt's `uploaded` returns at once; the pending set went 0 → 1 → 2 → … → 0.
        #expect(try await AwaitedUpload(first).finished("already uploaded") == nil)
        try await eventually("the stream heard it empty") { pendingSets.values.last?.isEmpty == true }
        #expect(pendingSets.values.first?.isEmpty == true)
        #expect(pendingSets.values.map(\.count).max() == 2)
        try await fixture.app.close()
        try await eventually("the pending set's stream finished with the app") { pendingSets.isFinished }
    }

    @Test("another session's receipt is not pending here; a receipt naming a store the session does not know throws")
    func foreignReceipts() async throws {
        let fixture = try await EngineFixture()
        defer { fixture.directory.remove() }
        let user = try await fixture.app.login(.anonymous)
        let first = try await user.openSession(partition: "a", suspended: true)
        let second = try await user.openSession(partition: "b", suspended: true)
        let receipt = try await first.write(payload(1))
        let its = try await second.write(payload(2))
        #expect(its.clientVersion == receipt.clientVersion, "the same client version, in another store")
        #expect(its != receipt)
        #expect(first.isPending(receipt) && second.isPending(its))
        #expect(!second.isPending(receipt) && !first.isPending(its))
        first.resume()
        let unknown = WriteReceipt(clientVersion: 1, clientFileID: receipt.clientFileID &+ 1, session: first)
        guard case .invalidArgument? = try await AwaitedUpload(unknown).finished("the await ended") else {
            Issue.record("expected .invalidArgument for a store the session does not know")
            return
        }
        try await fixture.app.close()
    }

    @Test("an upload lost with its connection: still pending; uploaded returns after the reconnect re-sends it")
    func acrossReconnect() async throws {
        let fixture = try await EngineFixture()
        defer { fixture.directory.remove() }
        let session = try await fixture.open()
        try await session.wait(for: .download)
        fixture.transport.faults.dropUploads = true
        let receipt = try await session.write(payload(5))
        let awaited = AwaitedUpload(receipt)
        try await eventually("the upload went out (and was lost)") {
            await session.engine.uploadsForTests.inFlightBytes == 8
        }
        #expect(session.isPending(receipt))
        #expect(awaited.result == nil, "not acknowledged: the server never received it")
        fixture.transport.faults.dropUploads = false
        fixture.transport.dropConnections()
        try await eventually("disconnected") { session.connectionState.value == .disconnected }
        session.reconnect()
        #expect(try await awaited.finished("uploaded after the reconnect") == nil)
        #expect(!session.isPending(receipt))
        #expect(try await fixture.serverLog() == [Array(payload(5))])
        try await fixture.app.close()
    }

    @Test("relaunch: a receipt is recreated from the store by its client version, pending, and completes once uploaded")
    func relaunch() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let server = try await SyncServer.embedded()
        let first = try await EngineFixture(server: server, directory: directory)
        let session = try await first.app.login(.anonymous).openSession(partition: "p", suspended: true)
        let written = [try await session.write(payload(1)), try await session.write(payload(2))]
        try await first.app.close()

        let second = try await EngineFixture(server: server, directory: directory)
        let reopened = try await second.app.login(.anonymous).openSession(partition: "p", suspended: true)
        let recreated = try #require(reopened.receipt(for: 2))
        #expect(recreated == written[1], "the same write: same client file, same client version")
        #expect(reopened.receipt(for: 3) == nil, "never written")
        #expect(reopened.receipt(for: 0) == nil)
        #expect(reopened.isPending(recreated))
        #expect(reopened.isPending(written[0]), "a receipt from before the relaunch is answered from the store")
        #expect(reopened.pendingWrites.value.count == 2)
        reopened.resume()
        #expect(try await AwaitedUpload(recreated).finished("uploaded after the relaunch") == nil)
        #expect(!reopened.isPending(written[0]) && !reopened.isPending(recreated))
        try await second.app.close()
    }

    @Test("closing the app while a receipt is awaited: the await throws .appClosed")
    func appCloseFinishesWaiters() async throws {
        let offline = try await AwaitedWhileOffline.start()
        defer { offline.fixture.directory.remove() }
        let (fixture, awaited) = (offline.fixture, offline.awaited)
        #expect(awaited.result == nil)
        try await fixture.app.close()
        #expect(try await awaited.finished("the await ended") == .appClosed)
    }

    @Test("session.close() (stop policy .immediately) while a receipt is awaited: it throws .sessionInactive")
    func sessionCloseFinishesWaiters() async throws {
        let offline = try await AwaitedWhileOffline.start(stopPolicy: .immediately)
        defer { offline.fixture.directory.remove() }
        let (fixture, session, receipt, awaited) = (offline.fixture, offline.session, offline.receipt, offline.awaited)
        session.close()
        #expect(try await awaited.finished("the await ended") == .sessionInactive)
        #expect(session.isPending(receipt), "still written and unacknowledged")
        try await fixture.app.close()
    }

    @Test("cancelling the awaiting task: the await throws .cancelled, and the receipt stays pending")
    func cancellation() async throws {
        let offline = try await AwaitedWhileOffline.start()
        defer { offline.fixture.directory.remove() }
        let (fixture, session, receipt, awaited) = (offline.fixture, offline.session, offline.receipt, offline.awaited)
        awaited.cancel()
        #expect(try await awaited.finished("the await ended") == .cancelled)
        #expect(session.isPending(receipt))
        try await eventually("the waiter let go") { session.engine.receipts.waiterCount == 0 }
        try await fixture.app.close()
    }

    @Test(".discardUnsyncedChanges: a discarded write's await throws the reset error; an uploaded one's returns")
    func resetDiscards() async throws {
        let scenario = try await ReceiptResetScenario.start(mode: .discardUnsyncedChanges)
        defer { scenario.remove() }
        let (session, receipts, resets) = (scenario.session, scenario.receipts, scenario.resets)
        #expect(session.isPending(receipts[3]))
        session.resume()
        // Awaited as soon as the session syncs (a suspended session's await throws `.sessionInactive`).
        let discarded = AwaitedUpload(receipts[3])
        let error = try await discarded.finished("the discarded write's await ended")
        guard case .clientResetRequired? = error else {
            Issue.record("expected the reset error, got \(String(describing: error))")
            return
        }
        try await eventually("reset") { resets.values.count == 2 }
        #expect(!session.isPending(receipts[2]) && !session.isPending(receipts[3]), "gone: not pending")
        guard case .clientResetRequired? = try await AwaitedUpload(receipts[2]).finished("after the reset") else {
            Issue.record("a discarded write's receipt awaited after the reset must throw the reset error too")
            return
        }
        #expect(try await AwaitedUpload(receipts[0]).finished("uploaded before the reset") == nil)
        #expect(session.pendingWrites.value.isEmpty)
        try await scenario.close()
    }

    @Test(".recoverUnsyncedChanges: a recovered write's await returns once it is uploaded again")
    func resetRecovers() async throws {
        let scenario = try await ReceiptResetScenario.start(mode: .recoverUnsyncedChanges)
        defer { scenario.remove() }
        let (a, session, receipts, resets) = (scenario.a, scenario.session, scenario.receipts, scenario.resets)
        #expect(session.isPending(receipts[3]))
        session.resume()
        let recovered = AwaitedUpload(receipts[3])
        #expect(try await recovered.finished("the recovered write uploaded again") == nil)
        try await eventually("reset") { resets.values.count == 2 }
        #expect(try await a.serverLog() == [1, 2, 12, 3, 4].map { Array(payload(UInt8($0))) })
        #expect(!session.isPending(receipts[2]) && !session.isPending(receipts[3]))
        #expect(try await AwaitedUpload(receipts[2]).finished("the other recovered write") == nil)
        // The pending set speaks of the new store's client versions.
        let next = try await session.write(payload(5))
        #expect(next.clientFileID != receipts[0].clientFileID, "the reset gave the store a new client file")
        #expect(next.clientVersion == 3, "after the two recovered changesets")
        try await scenario.close()
    }

    @Test("a write recovered by a reset is pending under its old receipt until it is uploaded again")
    func recoveredIsPendingUnderTheOldReceipt() async throws {
        let scenario = try await ReceiptResetScenario.start(mode: .recoverUnsyncedChanges)
        defer { scenario.remove() }
        let (a, session, receipts, resets) = (scenario.a, scenario.session, scenario.receipts, scenario.resets)
        a.transport.faults.dropUploads = true
        session.resume()
        try await eventually("reset") { resets.values.count == 2 }
        #expect(session.isPending(receipts[3]), "recovered, not yet uploaded again")
        #expect(!session.isPending(receipts[0]))
        #expect(session.pendingWrites.value.count == 2)
        let awaited = AwaitedUpload(receipts[3])
        try await eventually("waiting") { session.engine.receipts.waiterCount == 1 }
        #expect(awaited.result == nil, "its upload was lost: not acknowledged")
        a.transport.faults.dropUploads = false
        a.transport.dropConnections()
        try await eventually("disconnected") { session.connectionState.value == .disconnected }
        session.reconnect()
        #expect(try await awaited.finished("uploaded again") == nil)
        #expect(!session.isPending(receipts[3]))
        try await scenario.close()
    }

    /// Closes `fixture`'s app and opens a new one on the same directory (a relaunch), with `mode`.
    private func relaunch(
        _ fixture: EngineFixture, mode: ClientResetMode, suspended: Bool = false
    ) async throws -> (EngineFixture, SyncSession) {
        try await fixture.app.close()
        let again = try await EngineFixture(
            server: fixture.server, directory: fixture.directory, configure: { $0.clientResetMode = mode })
        let session = try await again.app.login(.anonymous).openSession(partition: "p", suspended: suspended)
        return (again, session)
    }

    @Test(
        "relaunch after a discarding reset: a discarded write's receipt throws the reset error, an uploaded one's returns"
    )
    func discardingResetIsRememberedAcrossARelaunch() async throws {
        let scenario = try await ReceiptResetScenario.start(mode: .discardUnsyncedChanges)
        let (a, b, session, receipts) = (scenario.a, scenario.b, scenario.session, scenario.receipts)
        defer {
            a.directory.remove()
            b.directory.remove()
        }
        let resets = Collected(session.clientResets)
        session.resume()
        try await eventually("reset") { resets.values.count == 2 }
        let (relaunched, reopened) = try await relaunch(a, mode: .discardUnsyncedChanges, suspended: true)
        // What the app kept of each write (its client file id and client version), made a receipt again.
        let kept = try receipts.map {
            try #require(reopened.receipt(for: $0.clientVersion, clientFileID: $0.clientFileID))
        }
        #expect(kept == receipts)
        #expect(!reopened.isPending(kept[2]) && !reopened.isPending(kept[3]), "gone: not pending")
        reopened.resume()
        guard case .clientResetRequired? = try await AwaitedUpload(kept[3]).finished("the discarded write") else {
            Issue.record("a write a reset discarded before the relaunch must throw the reset error")
            return
        }
        #expect(try await AwaitedUpload(kept[0]).finished("uploaded before the reset") == nil)
        #expect(try await AwaitedUpload(kept[1]).finished("uploaded before the reset") == nil)
        try await relaunched.app.close()
        try await b.app.close()
    }

    @Test(
        "relaunch after a recovering reset, before the recovered writes were uploaded again: pending under their old receipts, complete once uploaded"
    )
    func recoveringResetIsRememberedAcrossARelaunch() async throws {
        let scenario = try await ReceiptResetScenario.start(mode: .recoverUnsyncedChanges)
        let (a, b, session, receipts) = (scenario.a, scenario.b, scenario.session, scenario.receipts)
        defer {
            a.directory.remove()
            b.directory.remove()
        }
        let resets = Collected(session.clientResets)
        a.transport.faults.dropUploads = true
        session.resume()
        try await eventually("reset") { resets.values.count == 2 }
        #expect(session.isPending(receipts[3]))
        let (relaunched, reopened) = try await relaunch(a, mode: .recoverUnsyncedChanges, suspended: true)
        let kept = try receipts.map {
            try #require(reopened.receipt(for: $0.clientVersion, clientFileID: $0.clientFileID))
        }
        #expect(reopened.isPending(kept[2]) && reopened.isPending(kept[3]), "recovered, not uploaded again")
        #expect(!reopened.isPending(kept[0]))
        reopened.resume()
        #expect(try await AwaitedUpload(kept[3]).finished("uploaded again after the relaunch") == nil)
        #expect(!reopened.isPending(kept[2]) && !reopened.isPending(kept[3]))
        #expect(try await AwaitedUpload(kept[0]).finished("uploaded before the reset") == nil)
        #expect(try await relaunched.serverLog() == [1, 2, 12, 3, 4].map { Array(payload(UInt8($0))) })
        // A second relaunch still knows them (the lineage is carried, not only the last reset's).
        let (third, again) = try await relaunch(relaunched, mode: .recoverUnsyncedChanges, suspended: true)
        let last = try #require(again.receipt(for: receipts[3].clientVersion, clientFileID: receipts[3].clientFileID))
        #expect(!again.isPending(last))
        again.resume()
        #expect(try await AwaitedUpload(last).finished("known after a second relaunch") == nil)
        try await third.app.close()
        try await b.app.close()
    }
}
