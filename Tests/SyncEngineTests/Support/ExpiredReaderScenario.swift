import Foundation
import SyncServer
import TestSupport

@testable import SyncEngine

/// Two apps on a server that forgets client files unseen for 30 days (`forgetfulServer`): B writes payload 1
/// (`firstBytes` long), A downloads it and goes offline (suspended) until the server noticed; 31 days later B
/// writes payload 2 (`secondBytes` long). When A's session resumes, the server asks it for a client reset
/// (`clientExpired`), with nothing of A's own to recover.
struct ExpiredReaderScenario {
    let apps: ForgetfulServerApps
    var a: EngineFixture { apps.a }
    var b: EngineFixture { apps.b }
    /// A's session, suspended.
    let session: SyncSession

    static func start(
        firstBytes: Int = 8, secondBytes: Int = 8, configureA: (inout SyncApp.Configuration) -> Void = { _ in }
    ) async throws -> ExpiredReaderScenario {
        try await ForgetfulServerApps(configureA: configureA).setUp { apps in
            let session = try await apps.a.open()
            let other = try await apps.b.open()
            try await other.write(payload(1, count: firstBytes))
            try await other.wait(for: .upload)
            try await session.wait(for: .download)
            session.suspend()
            try await serverNoticed(apps.server, connections: 1)
            apps.clock.advance(days: 31)
            try await other.write(payload(2, count: secondBytes))
            try await other.wait(for: .upload)
            return ExpiredReaderScenario(apps: apps, session: session)
        }
    }

    /// Closes both apps.
    func close() async throws { try await apps.close() }

    /// Removes both apps' directories.
    func remove() { apps.remove() }
}
