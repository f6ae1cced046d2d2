import Foundation
import SyncServer
import SyncWire
import TestSupport
import Testing

@testable import SyncEngine

/// The first estimate after a launch counts from what the store already held (issue 21, item 9): a store
/// that downloaded 64 KiB before and has 2 KiB to catch up is half way after 1 KiB, not at 65/66 ≈ 0.98.
@Suite("Progress after a launch", .timeLimit(.minutes(5)))
struct LaunchEstimateTests {
    @Test("download: the first estimate after reopening a long-lived store starts from what it held")
    func downloadStartsFromWhatIsHeld() async throws {
        // Downloads of at most 1 KiB of changesets: the catch-up below takes two messages.
        let server = try await SyncServer.embedded(configuration: .init(maximumDownloadMessageBytes: 1 << 10))
        let writerDirectory = TemporaryDirectory()
        let directory = TemporaryDirectory()
        defer {
            writerDirectory.remove()
            directory.remove()
        }
        let writerApp = makeApp(server: server.endpoint, directory: writerDirectory.url)
        let writer = try await writerApp.login(.anonymous).openSession(partition: "p")
        for value in 0..<8 { try await writer.write(payload(UInt8(value), count: 8 << 10)) }
        try await writer.wait(for: .upload)
        do {
            let app = makeApp(server: server.endpoint, directory: directory.url)
            let session = try await app.login(.anonymous).openSession(partition: "p")
            try await session.wait(for: .download)  // holds 64 KiB
            try await app.close()
        }
        for value: UInt8 in [9, 10] { try await writer.write(payload(value, count: 1 << 10)) }
        try await writer.wait(for: .upload)
        try await writerApp.close()

        let fixture = try await EngineFixture(server: server, faults: .init(refuse: true), directory: directory)
        let session = try await fixture.open()
        let reports = Collected(session.progress(for: .download, mode: .reportIndefinitely))
        try await eventually("the reconnect scheduled") {
            fixture.timers.nextDueTime == fixture.timers.now + .seconds(1)
        }
        fixture.transport.faults.refuse = false
        fixture.timers.advance(by: .seconds(1))
        try await session.wait(for: .download)
        try await eventually("complete") { reports.values.last?.isTransferComplete == true }
        let first = try #require(reports.values.first)
        // 64 KiB held, 1 KiB of 2 caught up: half way, not 65/66.
        #expect(first.transferredBytes == 65 << 10)
        #expect(first.transferrableBytes == 66 << 10)
        #expect(first.progressEstimate == 0.5, "first estimate \(first.progressEstimate) after a launch")
    }
}
