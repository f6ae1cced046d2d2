import Foundation
import SyncServer
import SyncStorage
import SyncWire
import TestSupport
import Testing

@testable import SyncEngine

/// `Configuration.uploadWindowBytes`: a session keeps at most that many bytes sent and not acknowledged.
@Suite("Upload window", .timeLimit(.minutes(5)))
struct UploadWindowTests {
    /// A session with a `window`-byte upload window whose server's answers (its acknowledgements among
    /// them) are held in transit, after it wrote `count` changesets of 1,000 bytes and sent `sent` of them;
    /// no upload pass runs any more (every pass the writes started has run: they were queued on the engine
    /// before the wait), so it sends nothing more until an acknowledgement arrives.
    private func sessionWithItsWindowFull(
        window: Int, count: Int, sent: Int, fileSystem: any FileSystem = SystemFileSystem()
    ) async throws -> (fixture: EngineFixture, session: SyncSession, written: [Data]) {
        let fixture = try await EngineFixture(fileSystem: fileSystem, configure: { $0.uploadWindowBytes = window })
        let session = try await fixture.open()
        try await session.wait(for: .download)
        fixture.transport.faults.delayMessages = true
        let written = (0..<count).map { Data(repeating: UInt8($0), count: 1000) }
        for data in written { try await session.write(data) }
        try await eventually("\(sent) changesets reached the server") {
            (try? await fixture.server.changesets(in: "p").count) ?? 0 >= sent
        }
        try await eventually("the uploads stopped") { await !session.engine.uploadsForTests.isUploading }
        return (fixture, session, written)
    }

    @Test(
        "with the acknowledgements held, a 2,500-byte window sends two 1,000-byte changesets and no third; the rest go as they are acknowledged"
    )
    func theWindowCapsUnacknowledgedBytes() async throws {
        let (fixture, session, written) = try await sessionWithItsWindowFull(window: 2500, count: 6, sent: 2)
        defer { fixture.directory.remove() }
        let inFlight = await session.engine.uploadsForTests.inFlightBytes
        #expect(inFlight == 2000, "\(inFlight) bytes in flight with a 2,500-byte window")
        #expect(try await fixture.serverLog().count == 2)

        // The acknowledgements arrive: the rest follow, nothing lost or doubled.
        fixture.transport.deliverDelayedMessages()
        try await session.wait(for: .upload)
        #expect(try await fixture.serverLog() == written.map { Array($0) })
    }

    @Test(
        "an acknowledgement reopens the window when it arrives: the next changeset goes while the acknowledgement's own fsync is held"
    )
    func anAcknowledgementReopensTheWindowOnArrival() async throws {
        let fileSystem = ControlledFileSystem()
        let (fixture, session, written) = try await sessionWithItsWindowFull(
            window: 2500, count: 3, sent: 2, fileSystem: fileSystem)
        defer { fixture.directory.remove() }
        #expect(await session.engine.uploadsForTests.inFlightBytes == 2000)

        // The store's next fsync — the one that would make the acknowledgements durable — is held. The server
        // holds the two changesets durably already: the third goes as soon as the acknowledgements arrive.
        let fsync = fileSystem.hold(.sync, of: "p.synclog")
        defer { fsync.release() }
        fixture.transport.deliverDelayedMessages()
        try await eventually("the acknowledgements' fsync is held") { fsync.isBlocked }
        try await eventually("the third changeset reached the server while that fsync is held") {
            (try? await fixture.server.changesets(in: "p").count) ?? 0 == 3
        }
        #expect(fsync.isBlocked)
        fsync.release()
        try await session.wait(for: .upload)
        #expect(try await fixture.serverLog() == written.map { Array($0) })
    }

    @Test("a changeset larger than the window still goes, alone")
    func aChangesetLargerThanTheWindowGoesAlone() async throws {
        let (fixture, session, written) = try await sessionWithItsWindowFull(window: 500, count: 3, sent: 1)
        defer { fixture.directory.remove() }
        #expect(await session.engine.uploadsForTests.inFlightBytes == 1000)
        #expect(try await fixture.serverLog().count == 1)
        fixture.transport.deliverDelayedMessages()
        try await session.wait(for: .upload)
        #expect(try await fixture.serverLog() == written.map { Array($0) })
    }
}
