import Foundation
import SyncServer
import SyncWire
import TestSupport
import Testing

@testable import SyncEngine

/// Download progress is re-based when the session binds again (issue 21, item 9): a
/// `.forCurrentlyOutstandingWork` registration made while offline waits for the server's next report
/// instead of completing at once from the stale one.
@Suite("Progress after time offline", .timeLimit(.minutes(5)))
struct RebindProgressTests {
    @Test(
        "a download registration made while offline does not complete from the stale report: it captures the server's next report and finishes after that download"
    )
    func registrationWhileOffline() async throws {
        let fixture = try await EngineFixture()
        defer { fixture.directory.remove() }
        let session = try await fixture.open()
        try await session.wait(for: .download)
        try await eventually("download complete") {
            session.engine.notifier.current(.download)?.isTransferComplete == true
        }
        session.suspend()
        // Another client writes while this one is offline.
        let other = TemporaryDirectory()
        defer { other.remove() }
        let writerApp = makeApp(server: fixture.server.endpoint, directory: other.url)
        let writer = try await writerApp.login(.anonymous).openSession(partition: "p")
        try await writer.write(payload(7, count: 1 << 10))
        try await writer.wait(for: .upload)
        try await writerApp.close()

        let registration = Collected(session.progress(for: .download, mode: .forCurrentlyOutstandingWork))
        #expect(!registration.isFinished, "completed from the report made before going offline")
        #expect(registration.values.isEmpty)
        session.resume()
        try await session.wait(for: .download)
        try await eventually("the registration finished") { registration.isFinished }
        #expect(registration.values.last?.transferredBytes == 1 << 10)
        #expect(registration.values.last?.isTransferComplete == true)
    }

    /// Finding 11 of docs/RELIABILITY.md (seeds 2012, 2903, …): the simulation saw a registration made while
    /// suspended "never finish" after the heal. The sessions were still resetting or waiting to bind again
    /// when it checked (the simulation now waits for them); this pins what the engine does: the registration
    /// captures the report of the binding after the reset, and finishes at 1.0.
    @Test(
        "a download registration made while suspended finishes at 1.0 after resuming runs a client reset (client expired)"
    )
    func registrationWhileSuspendedAcrossAReset() async throws {
        let scenario = try await ExpiredReaderScenario.start(firstBytes: 300, secondBytes: 500)
        defer { scenario.remove() }
        let session = scenario.session

        let resets = Collected(session.clientResets)
        let registration = Collected(session.progress(for: .download, mode: .forCurrentlyOutstandingWork))
        #expect(registration.values.isEmpty && !registration.isFinished, "captures the next binding's report")
        session.resume()
        try await eventually("reset") { resets.values.count == 2 }
        try await eventually("the registration finished") { registration.isFinished }
        let last = try #require(registration.values.last)
        #expect(last.isTransferComplete && last.progressEstimate == 1)
        #expect(registration.values.map(\.progressEstimate) == registration.values.map(\.progressEstimate).sorted())
        try await scenario.close()
    }
}
