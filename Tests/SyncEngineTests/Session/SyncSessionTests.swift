import Foundation
import SyncServer
import SyncStorage
import SyncWire
import TestSupport
import Testing

@testable import SyncEngine

@Suite("Sessions", .timeLimit(.minutes(5)))
struct SyncSessionTests {
    @Test("write is durable and uploaded; wait(for: .upload) returns once the server has it")
    func writeAndUpload() async throws {
        let fixture = try await EngineFixture(faults: .init(hold: true))
        defer { fixture.directory.remove() }
        let session = try await fixture.open()
        try await session.write(Data("one".utf8))
        try await session.write(Data("two".utf8))
        // Durable when `write` returned: a copy of the files taken at that moment, opened by a new app that
        // cannot connect, reads both back from disk.
        let copy = TemporaryDirectory()
        defer { copy.remove() }
        try FileManager.default.removeItem(at: copy.url)
        try FileManager.default.copyItem(at: fixture.directory.url, to: copy.url)
        let refusing = FaultInjectingTransport()
        refusing.faults.refuse = true
        let reopened = makeApp(server: fixture.server.endpoint, directory: copy.url, transport: refusing)
        let readBack = try await reopened.login(.anonymous).openSession(partition: "p")
        #expect(try await readBack.engine.localChangesetsForTests() == [Array("one".utf8), Array("two".utf8)])
        try await reopened.close()

        fixture.transport.faults = .init()
        try await fixture.connectAfterTheHeldAttemptTimesOut()
        try await session.wait(for: .upload)
        #expect(try await fixture.serverLog() == [Array("one".utf8), Array("two".utf8)])
    }

    @Test("concurrent writes share fsyncs but all land, uploaded in client-version order, none lost")
    func concurrentWrites() async throws {
        let fileSystem = ControlledFileSystem()
        // No connection until the writes are durable: no acknowledgement records share the count.
        let fixture = try await EngineFixture(faults: .init(hold: true), fileSystem: fileSystem)
        defer { fixture.directory.remove() }
        let session = try await fixture.open()
        let syncsBefore = fileSystem.syncCount(of: "p.synclog")
        let firstSync = fileSystem.hold(.sync, of: "p.synclog")
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<50 {
                group.addTask { try await session.write(Data("write \(index)".utf8)) }
            }
            // The first fsync is held until every write reached the store: those behind it gather.
            try await eventually("all 50 writes queued behind the held fsync") {
                let queued = await session.engine.pendingRecordCount + session.engine.committingRecordCount
                return firstSync.isBlocked && queued == 50
            }
            firstSync.release()
            try await group.waitForAll()
        }
        // One fsync for the writes that came first, one for all those that gathered behind it.
        #expect(fileSystem.syncCount(of: "p.synclog") - syncsBefore == 2)
        fixture.transport.faults = .init()
        try await fixture.connectAfterTheHeldAttemptTimesOut()
        try await session.wait(for: .upload)
        let log = try await fixture.server.changesets(in: "p")
        #expect(log.map(\.clientVersion) == Array(1...50))
        #expect(Set(log.map(\.data)) == Set((0..<50).map { Array("write \($0)".utf8) }))
        #expect(session.engine.notifier.current(.upload)?.transferredBytes == log.reduce(0) { $0 + $1.data.count })
    }

    @Test("opening the same partition twice returns the same session; sessions lists each once")
    func sessionRegistry() async throws {
        let fixture = try await EngineFixture()
        defer { fixture.directory.remove() }
        let user = try await fixture.app.login(.anonymous)
        let list = Collected(user.sessions)
        let a = try await user.openSession(partition: "a")
        let again = try await user.openSession(partition: "a")
        let b = try await user.openSession(partition: "b")
        #expect(a === again)
        #expect(user.allSessions == [a, b])
        #expect(user.session(for: "b") === b)
        #expect(user.session(for: "c") == nil)
        #expect(list.values == [[], [a], [a, b]])
        #expect(try await fixture.app.login(.anonymous) === user)
    }

    @Test("an empty partition name is a typed error")
    func emptyPartition() async throws {
        let fixture = try await EngineFixture()
        defer { fixture.directory.remove() }
        await #expect(throws: SyncError.invalidArgument("a partition name must not be empty")) {
            try await fixture.open("")
        }
    }

    @Test("suspend keeps unuploaded changes; resume uploads them")
    func suspendResume() async throws {
        let fixture = try await EngineFixture()
        defer { fixture.directory.remove() }
        let session = try await fixture.open()
        try await session.wait(for: .download)
        session.suspend()
        #expect(session.state.value == .inactive)
        try await session.write(Data("while suspended".utf8))
        try await eventually("disconnected") { session.connectionState.value == .disconnected }
        #expect(try await fixture.serverLog().isEmpty)
        session.resume()
        #expect(session.state.value == .active)
        try await session.wait(for: .upload)
        #expect(try await fixture.serverLog() == [Array("while suspended".utf8)])
    }

    @Test("opened suspended: inactive from the start, never connects, writes offline; resume connects and uploads")
    func openSuspended() async throws {
        let fixture = try await EngineFixture()
        defer { fixture.directory.remove() }
        let user = try await fixture.app.login(.anonymous)
        let session = try await user.openSession(partition: "p", suspended: true)
        let states = Collected(session.state)
        let connectionStates = Collected(session.connectionState)
        #expect(session.state.value == .inactive)
        try await session.write(Data("offline".utf8))
        // Nothing asked the transport for a connection: not even briefly.
        #expect(fixture.transport.attempts == 0)
        #expect(connectionStates.values == [.disconnected])
        // Opening it again returns it as it is.
        #expect(try await user.openSession(partition: "p", suspended: true) === session)
        #expect(session.state.value == .inactive)

        session.resume()
        try await session.wait(for: .upload)
        #expect(fixture.transport.attempts == 1)
        #expect(try await fixture.serverLog() == [Array("offline".utf8)])
        #expect(states.values == [.inactive, .active])
        #expect(connectionStates.values == [.disconnected, .connecting, .connected])
    }

    @Test("wait(for:) throws at once on an inactive session")
    func waitOnInactive() async throws {
        let fixture = try await EngineFixture()
        defer { fixture.directory.remove() }
        let session = try await fixture.open()
        session.suspend()
        await #expect(throws: SyncError.sessionInactive) { try await session.wait(for: .upload) }
        await #expect(throws: SyncError.sessionInactive) { try await session.wait(for: .download) }
    }

    @Test(
        "wait(for:) throws when the session becomes inactive while waiting; it never hangs",
        arguments: [ProgressDirection.upload, .download])
    func waitBecomesInactive(direction: ProgressDirection) async throws {
        let fixture = try await EngineFixture(faults: .init(hold: true))
        defer { fixture.directory.remove() }
        let session = try await fixture.open()
        try await session.write(Data("x".utf8))
        let waiting = Task { try await session.wait(for: direction) }
        // The wait is registered (watching the state) before the session stops: the waiting path runs.
        try await eventually("the wait is registered") { session.activeWaitCount == 1 }
        session.suspend()
        try await eventually("the wait ended") { session.activeWaitCount == 0 }
        await #expect(throws: SyncError.sessionInactive) { try await waiting.value }
    }

    @Test("wait(for:) is cancellable: a task cancelled before it waits throws at once")
    func waitCancelled() async throws {
        let fixture = try await EngineFixture(faults: .init(hold: true))
        defer { fixture.directory.remove() }
        let session = try await fixture.open()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await session.wait(for: .download)
        }
        await #expect(throws: SyncError.cancelled) { try await task.value }
    }

    @Test(
        "wait(for:) is cancellable while it waits: it throws .cancelled and lets go of its registrations",
        arguments: [ProgressDirection.upload, .download])
    func waitCancelledWhileRegistered(direction: ProgressDirection) async throws {
        let fixture = try await EngineFixture(faults: .init(hold: true))
        defer { fixture.directory.remove() }
        let session = try await fixture.open()
        try await session.write(Data("x".utf8))
        let task = Task { try await session.wait(for: direction) }
        try await eventually("the wait is registered") { session.activeWaitCount == 1 }
        if direction == .download {
            try await eventually("waiting for a binding") { await session.engine.isWaitingForBinding }
        }
        task.cancel()
        try await eventually("the wait ended") { session.activeWaitCount == 0 }
        await #expect(throws: SyncError.cancelled) { try await task.value }
        try await eventually("the binding waiter is gone") { await !session.engine.isWaitingForBinding }
        #expect(session.state.value == .active)
    }

    @Test("wait(for:on:completion:) calls back with nil when done, or the error")
    func waitCallback() async throws {
        let fixture = try await EngineFixture()
        defer { fixture.directory.remove() }
        let session = try await fixture.open()
        try await session.write(Data("x".utf8))
        let outcome: SyncError?? = await withCheckedContinuation { continuation in
            session.wait(for: .upload, on: ImmediateExecutor()) { continuation.resume(returning: $0) }
        }
        #expect(outcome == .some(nil))
        session.suspend()
        let failure: SyncError?? = await withCheckedContinuation { continuation in
            session.wait(for: .upload) { continuation.resume(returning: $0) }
        }
        #expect(failure == .some(.sessionInactive))
    }

    @Test("stop policy .afterChangesUploaded: .dying until uploaded, then .inactive")
    func stopAfterChangesUploaded() async throws {
        let fixture = try await EngineFixture(faults: .init(hold: true))
        defer { fixture.directory.remove() }
        let session = try await fixture.open()
        let states = Collected(session.state)
        try await session.write(Data("last words".utf8))
        session.close()
        #expect(session.state.value == .dying)
        fixture.transport.faults = .init()
        try await fixture.connectAfterTheHeldAttemptTimesOut()
        try await eventually("inactive") { session.state.value == .inactive }
        #expect(states.values == [.active, .dying, .inactive])
        #expect(try await fixture.serverLog() == [Array("last words".utf8)])
    }

    @Test("stop policy .immediately: inactive at once, changes kept for next time")
    func stopImmediately() async throws {
        let fixture = try await EngineFixture(stopPolicy: .immediately, faults: .init(hold: true))
        defer { fixture.directory.remove() }
        let session = try await fixture.open()
        try await session.write(Data("kept".utf8))
        session.close()
        #expect(session.state.value == .inactive)
        try await eventually("the held attempt is given up") { session.connectionState.value == .disconnected }
        fixture.transport.faults = .init()
        session.resume()
        try await session.wait(for: .upload)
        #expect(try await fixture.serverLog() == [Array("kept".utf8)])
    }

    @Test("stop policy .liveIndefinitely: close has no effect")
    func stopLiveIndefinitely() async throws {
        let fixture = try await EngineFixture(stopPolicy: .liveIndefinitely)
        defer { fixture.directory.remove() }
        let session = try await fixture.open()
        session.close()
        #expect(session.state.value == .active)
        try await session.write(Data("x".utf8))
        try await session.wait(for: .upload)
    }

    @Test("a refused credential is fatal: the session becomes invalid and the error is reported")
    func authenticationFailure() async throws {
        var configuration = SyncServer.Configuration()
        configuration.authentication = .apiKeys(["good": ["p"]])
        let fixture = try await EngineFixture(server: try await SyncServer.embedded(configuration: configuration))
        defer { fixture.directory.remove() }
        let session = try await fixture.open(credentials: .apiKey("bad"))
        try await eventually("invalid") { session.state.value == .invalid }
        #expect(fixture.errors.values.count == 1)
        #expect(fixture.errors.values.first?.session === session)
        if case .authenticationFailed = fixture.errors.values.first?.error {
        } else {
            Issue.record("expected .authenticationFailed, got \(String(describing: fixture.errors.values.first))")
        }
        await #expect(throws: SyncError.sessionInvalid) { try await session.wait(for: .upload) }
        await #expect(throws: SyncError.sessionInvalid) { try await session.write(Data()) }
        #expect(session.addProgressNotification(for: .upload, mode: .reportIndefinitely) { _ in } == nil)
        session.resume()
        #expect(session.state.value == .invalid)
    }

    @Test("a partition the key may not sync is fatal for that session only")
    func permissionDenied() async throws {
        var configuration = SyncServer.Configuration()
        configuration.authentication = .apiKeys(["key": ["allowed"]])
        let fixture = try await EngineFixture(server: try await SyncServer.embedded(configuration: configuration))
        defer { fixture.directory.remove() }
        let allowed = try await fixture.open("allowed", credentials: .apiKey("key"))
        let denied = try await fixture.open("secret", credentials: .apiKey("key"))
        try await eventually("denied is invalid") { denied.state.value == .invalid }
        try await allowed.write(Data("fine".utf8))
        try await allowed.wait(for: .upload)
        #expect(allowed.state.value == .active)
        #expect(try await fixture.serverLog("allowed") == [Array("fine".utf8)])
        // Exactly one error: the denial, with the denied session; nothing for the allowed one.
        let errors = fixture.errors.values
        #expect(errors.count == 1, "\(errors.map(\.error))")
        if case .permissionDenied = errors.first?.error {
        } else {
            Issue.record("expected .permissionDenied, got \(errors.map(\.error))")
        }
        #expect(errors.first?.error.isFatal == true)
        #expect(errors.first?.session === denied)
        #expect(!errors.contains { $0.session === allowed })
    }

    @Test("reopening the app resumes uploading what was not acknowledged, exactly once")
    func reopenResumesUpload() async throws {
        let server = try await SyncServer.embedded()
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        do {
            let transport = FaultInjectingTransport()
            let app = makeApp(server: server.endpoint, directory: directory.url, transport: transport)
            let session = try await app.login(.anonymous).openSession(partition: "p")
            try await session.wait(for: .download)
            // The upload reaches the server, which stores it; its acknowledgement is lost on the way back.
            transport.faults.delayMessages = true
            try await session.write(Data("reached the server".utf8))
            try await eventually("the acknowledgement is held in transit") {
                transport.held.contains { message in
                    guard case .download(let download) = message else { return false }
                    return download.entries.contains { if case .acknowledged = $0 { true } else { false } }
                }
            }
            #expect(try await server.changesets(in: "p").map(\.data) == [Array("reached the server".utf8)])
            // Then a write that never leaves the device.
            session.suspend()
            try await session.write(Data("written offline".utf8))
            try await app.close()  // the app goes away with both unacknowledged on disk
        }
        let app = makeApp(server: server.endpoint, directory: directory.url)
        let session = try await app.login(.anonymous).openSession(partition: "p")
        let seen = Collected(session.changesets)
        try await session.wait(for: .upload)
        try await session.wait(for: .download)
        // The server holds each exactly once, and the client ends with both acknowledged.
        let expected = [Array("reached the server".utf8), Array("written offline".utf8)]
        #expect(try await server.changesets(in: "p").map(\.data) == expected)
        #expect(seen.values.map { Array($0.data) } == expected)
        #expect(seen.values.map(\.serverVersion) == [1, 2])
        let upload = try #require(session.engine.notifier.current(.upload))
        #expect(upload.isTransferComplete && upload.transferredBytes == expected.joined().count)
        try await app.close()
    }

    @Test("reopening the app does not download again what it has")
    func reopenDoesNotDownloadAgain() async throws {
        let server = try await SyncServer.embedded()
        let writerDirectory = TemporaryDirectory()
        let readerDirectory = TemporaryDirectory()
        defer {
            writerDirectory.remove()
            readerDirectory.remove()
        }
        let writer = try await makeApp(server: server.endpoint, directory: writerDirectory.url)
            .login(.anonymous).openSession(partition: "p")
        for index in 0..<3 { try await writer.write(Data(repeating: UInt8(index), count: 10)) }
        try await writer.wait(for: .upload)
        do {
            let app = makeApp(server: server.endpoint, directory: readerDirectory.url)
            let reader = try await app.login(.anonymous).openSession(partition: "p")
            try await reader.wait(for: .download)
            #expect(reader.engine.notifier.current(.download)?.transferredBytes == 30)
            try await app.close()
        }
        let transport = RecordingTransport()
        let app = makeApp(server: server.endpoint, directory: readerDirectory.url, transport: transport)
        let reader = try await app.login(.anonymous).openSession(partition: "p")
        let seen = Collected(reader.changesets)
        #expect(seen.values.count == 3)
        try await reader.wait(for: .download)
        // The bind asked only for what comes after what the store holds…
        let binds = transport.sent.compactMap { message -> Bind? in
            if case .bind(let bind) = message { return bind }
            return nil
        }
        #expect(binds.map(\.downloadedVersion) == [3])
        // …and the server sent no changeset again.
        let resent = transport.received.flatMap { message -> [DownloadEntry] in
            guard case .download(let download) = message else { return [] }
            return download.entries.filter { if case .changeset = $0 { true } else { false } }
        }
        #expect(resent.isEmpty, "\(resent)")
        #expect(
            reader.engine.notifier.current(.download)
                == SyncProgress(transferredBytes: 30, transferrableBytes: 30, progressEstimate: 1))
        #expect(seen.values.map(\.serverVersion) == [1, 2, 3])
        try await app.close()
    }

    @Test("addProgressNotification: nothing outstanding → one complete event and nil")
    func addProgressNotificationNothingOutstanding() async throws {
        let fixture = try await EngineFixture()
        defer { fixture.directory.remove() }
        let session = try await fixture.open()
        let received = Locked<[SyncProgress]>([])
        let token = session.addProgressNotification(
            for: .upload, mode: .forCurrentlyOutstandingWork, on: ImmediateExecutor()
        ) {
            progress in received.withLock { $0.append(progress) }
        }
        #expect(token == nil)
        #expect(received.withLock { $0 }.count == 1)
        #expect(received.withLock { $0 }.first?.isTransferComplete == true)
    }

    @Test("addProgressNotification: outstanding upload → values, one final 1.0, then it unregisters itself")
    func addProgressNotificationOutstanding() async throws {
        let fixture = try await EngineFixture(faults: .init(hold: true))
        defer { fixture.directory.remove() }
        let session = try await fixture.open()
        try await session.write(Data(repeating: 1, count: 100))
        let received = Locked<[SyncProgress]>([])
        // The block holds the only reference to `captured`: once the registration lets go of the block,
        // `captured` is gone.
        let released = WeakReference<Captured>()
        let token: SubscriptionToken? = {
            let captured = Captured()
            released.object = captured
            return session.addProgressNotification(
                for: .upload, mode: .forCurrentlyOutstandingWork, on: ImmediateExecutor()
            ) { progress in
                withExtendedLifetime(captured) { received.withLock { $0.append(progress) } }
            }
        }()
        #expect(token != nil)
        #expect(released.object != nil)
        try await session.write(Data(repeating: 2, count: 100))  // after registration: not counted
        fixture.transport.faults = .init()
        try await fixture.connectAfterTheHeldAttemptTimesOut()
        try await session.wait(for: .upload)
        let values = received.withLock { $0 }
        #expect(values.first == SyncProgress(transferredBytes: 0, transferrableBytes: 100, progressEstimate: 0))
        #expect(values.last == SyncProgress(transferredBytes: 100, transferrableBytes: 100, progressEstimate: 1))
        #expect(values.filter(\.isTransferComplete).count == 1)
        // Unregistered although the token is still held: the block is released, and more upload activity
        // does not reach it.
        try await eventually("the block is released") { released.object == nil }
        try await session.write(Data(repeating: 3, count: 100))
        try await session.wait(for: .upload)
        #expect(received.withLock { $0 } == values)
        withExtendedLifetime(token) {}
    }

    @Test("progress callbacks run on the executor given at registration, and never after invalidate()")
    func callbacksOnTheGivenExecutor() async throws {
        let fixture = try await EngineFixture(faults: .init(hold: true))
        defer { fixture.directory.remove() }
        let session = try await fixture.open()
        let callbacks = TestExecutor()
        let received = Locked<[SyncProgress]>([])
        let token = session.addProgressNotification(for: .upload, mode: .reportIndefinitely, on: callbacks) {
            progress in received.withLock { $0.append(progress) }
        }
        try await session.write(Data(repeating: 0, count: 10))
        #expect(received.withLock { $0 }.isEmpty)  // nothing runs until the executor does
        callbacks.advance(by: .zero)
        #expect(received.withLock { $0.map(\.transferrableBytes) } == [0, 10])
        try await session.write(Data(repeating: 0, count: 10))
        token?.invalidate()
        callbacks.advance(by: .zero)
        #expect(received.withLock { $0.count } == 2)
    }

    @Test("asyncOpen reports connecting, download progress, then the open session")
    func asyncOpen() async throws {
        let fixture = try await EngineFixture()
        defer { fixture.directory.remove() }
        let writer = try await fixture.open("shared")
        try await writer.write(Data(repeating: 9, count: 500))
        try await writer.wait(for: .upload)

        let other = TemporaryDirectory()
        defer { other.remove() }
        let user = try await makeApp(server: fixture.server.endpoint, directory: other.url).login(.anonymous)
        let states = Collected(user.asyncOpen(partition: "shared"))
        try await eventually("finished") { states.isFinished }
        let values = states.values
        guard case .connecting = values.first else { Issue.record("expected .connecting first: \(values)"); return }
        guard case .open(let session) = values.last else { Issue.record("expected .open last: \(values)"); return }
        #expect(session === user.session(for: "shared"))
        let progress = values.compactMap { state -> SyncProgress? in
            if case .progress(let progress) = state { return progress }
            return nil
        }
        #expect(progress.last == SyncProgress(transferredBytes: 500, transferrableBytes: 500, progressEstimate: 1))
    }
}

/// An object whose lifetime tells whether a callback that captured it was released.
private final class Captured: Sendable {}
