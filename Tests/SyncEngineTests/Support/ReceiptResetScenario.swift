import Foundation
import SyncServer
import TestSupport

@testable import SyncEngine

/// Two apps, A and B, on a server that forgets client files unseen for 30 days (`forgetfulServer`): A
/// writes payloads 1 and 2 (uploaded), goes offline (suspended) and writes 3 and 4 (their receipts kept);
/// 31 days later B writes 12 (uploaded). When A's session resumes, the server asks it for a client reset
/// in the mode A was configured with. `resets` has collected A's session's client reset events from the
/// start.
struct ReceiptResetScenario {
    let apps: ForgetfulServerApps
    var a: EngineFixture { apps.a }
    var b: EngineFixture { apps.b }
    /// A's session, suspended.
    let session: SyncSession
    /// The receipts of A's writes 1…4.
    let receipts: [WriteReceipt]
    let resets: Collected<ClientResetEvent>

    static func start(mode: ClientResetMode) async throws -> ReceiptResetScenario {
        try await ForgetfulServerApps(configureA: { $0.clientResetMode = mode }).setUp { apps in
            let session = try await apps.a.open()
            let other = try await apps.b.open()
            var receipts = [try await session.write(payload(1)), try await session.write(payload(2))]
            try await session.wait(for: .upload)
            session.suspend()
            try await serverNoticed(apps.server, connections: 1)
            receipts += [try await session.write(payload(3)), try await session.write(payload(4))]
            apps.clock.advance(days: 31)
            try await other.write(payload(12))
            try await other.wait(for: .upload)
            return ReceiptResetScenario(
                apps: apps, session: session, receipts: receipts, resets: Collected(session.clientResets))
        }
    }

    /// Closes both apps.
    func close() async throws { try await apps.close() }

    /// Removes both apps' directories.
    func remove() { apps.remove() }
}
