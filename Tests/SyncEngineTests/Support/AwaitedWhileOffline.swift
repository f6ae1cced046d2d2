import Foundation
import TestSupport

@testable import SyncEngine

/// A session whose connection attempts never open (`faults.hold`), with payload 1 written and its receipt
/// awaited (`AwaitedUpload`) by a wait already in place (`activeWaitCount == 1`): the await can end only
/// by what the test does next.
struct AwaitedWhileOffline {
    let fixture: EngineFixture
    let session: SyncSession
    let receipt: WriteReceipt
    let awaited: AwaitedUpload

    static func start(stopPolicy: StopPolicy = .afterChangesUploaded) async throws -> AwaitedWhileOffline {
        let fixture = try await EngineFixture(stopPolicy: stopPolicy, faults: .init(hold: true))
        do {
            let session = try await fixture.open()
            let receipt = try await session.write(payload(1))
            let awaited = AwaitedUpload(receipt)
            try await eventually("waiting") { session.activeWaitCount == 1 }
            return AwaitedWhileOffline(fixture: fixture, session: session, receipt: receipt, awaited: awaited)
        } catch {
            fixture.directory.remove()
            throw error
        }
    }
}
