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
    let a: EngineFixture
    let b: EngineFixture
    /// A's session, suspended.
    let session: SyncSession
    /// The receipts of A's writes 1…4.
    let receipts: [WriteReceipt]
    let resets: Collected<ClientResetEvent>

    static func start(mode: ClientResetMode) async throws -> ReceiptResetScenario {
        let clock = ServerClock()
        let server = try await forgetfulServer(clock)
        let a = try await EngineFixture(server: server, configure: { $0.clientResetMode = mode })
        let b = try await EngineFixture(server: server)
        do {
            let session = try await a.open()
            let other = try await b.open()
            var receipts = [try await session.write(payload(1)), try await session.write(payload(2))]
            try await session.wait(for: .upload)
            session.suspend()
            try await serverNoticed(server, connections: 1)
            receipts += [try await session.write(payload(3)), try await session.write(payload(4))]
            clock.advance(days: 31)
            try await other.write(payload(12))
            try await other.wait(for: .upload)
            return ReceiptResetScenario(
                a: a, b: b, session: session, receipts: receipts, resets: Collected(session.clientResets))
        } catch {
            a.directory.remove()
            b.directory.remove()
            throw error
        }
    }

    /// Closes both apps.
    func close() async throws {
        try await a.app.close()
        try await b.app.close()
    }

    /// Removes both apps' directories.
    func remove() {
        a.directory.remove()
        b.directory.remove()
    }
}
