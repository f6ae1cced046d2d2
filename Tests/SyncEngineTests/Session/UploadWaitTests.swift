import Foundation
import SyncServer
import SyncWire
import TestSupport
import Testing

@testable import SyncEngine

/// `wait(for: .upload)` waits for the changesets written before the call to be acknowledged, by client
/// version, not byte counts (issue 21, item 9).
@Suite("Upload wait", .timeLimit(.minutes(5)))
struct UploadWaitTests {
    @Test("a zero-byte changeset: wait(for: .upload) returns only once the server acknowledged it")
    func zeroByteWrite() async throws {
        let fixture = try await EngineFixture()
        defer { fixture.directory.remove() }
        let session = try await fixture.open()
        try await session.wait(for: .download)  // bound
        fixture.transport.faults.delayMessages = true  // the server's answers are held from now on
        try await session.write(Data())
        try await eventually("the server integrated it") { (try? await fixture.serverLog().count) == 1 }
        let returned = Locked(false)
        let waited = Task { () throws -> UInt64 in
            try await session.wait(for: .upload)
            let acknowledged = await session.engine.acknowledgedClientVersionForTests
            returned.withLock { $0 = true }
            return acknowledged
        }
        try await eventually("the wait waits (or returned)") {
            session.activeWaitCount == 1 || returned.withLock { $0 }
        }
        fixture.transport.deliverDelayedMessages()
        #expect(try await waited.value == 1, "wait(for: .upload) returned before the acknowledgement")
    }

    @Test(
        "a client reset that discards the changesets a wait(for: .upload) waits for makes it throw clientResetRequired, never report success"
    )
    func discardedByAReset() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let original = try await SyncServer.embedded()
        do {
            let app = makeApp(server: original.endpoint, directory: directory.url)
            let session = try await app.login(.anonymous).openSession(partition: "p")
            try await session.write(payload(1))
            try await session.wait(for: .upload)
            session.suspend()
            try await session.write(payload(2))  // never uploaded
            try await app.close()
        }
        // A server that lost the log; the first attempt is refused so that the wait starts before the reset.
        let fresh = try await SyncServer.embedded()
        let fixture = try await EngineFixture(
            server: fresh, faults: .init(refuse: true), directory: directory,
            configure: { $0.clientResetMode = .discardUnsyncedChanges })
        let session = try await fixture.open()
        let waited = Task { () async -> SyncError? in
            do throws(SyncError) {
                try await session.wait(for: .upload)
                return nil
            } catch {
                return error
            }
        }
        try await eventually("the wait waits") { session.activeWaitCount == 1 }
        try await eventually("the reconnect scheduled") {
            fixture.timers.nextDueTime == fixture.timers.now + .seconds(1)
        }
        fixture.transport.faults.refuse = false
        fixture.timers.advance(by: .seconds(1))
        let outcome = await waited.value
        guard case .clientResetRequired? = outcome else {
            Issue.record("wait(for: .upload) ended with \(String(describing: outcome)) for discarded changesets")
            return
        }
    }
}
