import Foundation
import SyncServer
import SyncWire
import TestSupport
import Testing

@testable import SyncEngine

/// `Configuration.uploadWindowBytes`: a session keeps at most that many bytes sent and not acknowledged.
@Suite("Upload window", .timeLimit(.minutes(5)))
struct UploadWindowTests {
    @Test(
        "with the acknowledgements held, a 2,500-byte window sends two 1,000-byte changesets and no third; the rest go as they are acknowledged"
    )
    func theWindowCapsUnacknowledgedBytes() async throws {
        let fixture = try await EngineFixture(configure: { $0.uploadWindowBytes = 2500 })
        defer { fixture.directory.remove() }
        let session = try await fixture.open()
        try await session.wait(for: .download)
        // The server's answers (its acknowledgements among them) are held in transit from now on.
        fixture.transport.faults.delayMessages = true
        let written = (0..<6).map { Data(repeating: UInt8($0), count: 1000) }
        for data in written { try await session.write(data) }
        try await eventually("two changesets reached the server") {
            (try? await fixture.server.changesets(in: "p").count) ?? 0 >= 2
        }
        // Every upload pass the writes started has run (they were queued on the engine before this wait)
        // and none runs now: the session sends nothing more until an acknowledgement arrives.
        try await eventually("the uploads stopped") { await !session.engine.uploadsForTests.isUploading }
        let inFlight = await session.engine.uploadsForTests.inFlightBytes
        #expect(inFlight == 2000, "\(inFlight) bytes in flight with a 2,500-byte window")
        #expect(try await fixture.serverLog().count == 2)

        // The acknowledgements arrive: the rest follow, nothing lost or doubled.
        fixture.transport.deliverDelayedMessages()
        try await session.wait(for: .upload)
        #expect(try await fixture.serverLog() == written.map { Array($0) })
    }

    @Test("a changeset larger than the window still goes, alone")
    func aChangesetLargerThanTheWindowGoesAlone() async throws {
        let fixture = try await EngineFixture(configure: { $0.uploadWindowBytes = 500 })
        defer { fixture.directory.remove() }
        let session = try await fixture.open()
        try await session.wait(for: .download)
        fixture.transport.faults.delayMessages = true
        let written = (0..<3).map { Data(repeating: UInt8($0), count: 1000) }
        for data in written { try await session.write(data) }
        try await eventually("the first changeset reached the server") {
            (try? await fixture.server.changesets(in: "p").count) ?? 0 >= 1
        }
        try await eventually("the uploads stopped") { await !session.engine.uploadsForTests.isUploading }
        #expect(await session.engine.uploadsForTests.inFlightBytes == 1000)
        #expect(try await fixture.serverLog().count == 1)
        fixture.transport.deliverDelayedMessages()
        try await session.wait(for: .upload)
        #expect(try await fixture.serverLog() == written.map { Array($0) })
    }
}
