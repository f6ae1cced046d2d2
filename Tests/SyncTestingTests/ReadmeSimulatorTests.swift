import Foundation
import SyncTesting
import Testing

/// The README's "Testing your app's sync" example, verbatim: it must compile and pass.
@Suite struct ReadmeSimulatorTests {
    @Test func writesWhileTheServerIsDownAreUploadedWhenItComesBack() async throws {
        let simulator = try await SyncSimulator(seed: 42)
        let session = try await simulator.makeApp().login(.anonymous).openSession(partition: "tasks")
        await simulator.takeServerDown()
        _ = try await session.write(Data("buy milk".utf8))
        try await simulator.run(until: { session.status.value.offlineReason != nil })
        #expect(session.status.value.pending.uploadChangesets == 1)
        try await simulator.bringServerUp()
        try await simulator.run(until: { session.status.value.pending.uploadChangesets == 0 })
        #expect(try await simulator.changesets(in: "tasks").count == 1)
        await simulator.close()
    }
}
