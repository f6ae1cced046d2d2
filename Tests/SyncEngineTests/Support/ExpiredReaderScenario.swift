import Foundation
import SyncServer
import TestSupport

@testable import SyncEngine

/// Two apps on a server that forgets client files unseen for 30 days (`forgetfulServer`): B writes payload 1
/// (`firstBytes` long), A downloads it and goes offline (suspended) until the server noticed; 31 days later B
/// writes payload 2 (`secondBytes` long). When A's session resumes, the server asks it for a client reset
/// (`clientExpired`), with nothing of A's own to recover.
struct ExpiredReaderScenario {
    let a: EngineFixture
    let b: EngineFixture
    /// A's session, suspended.
    let session: SyncSession

    static func start(
        firstBytes: Int = 8, secondBytes: Int = 8, configureA: (inout SyncApp.Configuration) -> Void = { _ in }
    ) async throws -> ExpiredReaderScenario {
        let clock = ServerClock()
        let server = try await forgetfulServer(clock)
        let a = try await EngineFixture(server: server, configure: configureA)
        let b = try await EngineFixture(server: server)
        do {
            let session = try await a.open()
            let other = try await b.open()
            try await other.write(payload(1, count: firstBytes))
            try await other.wait(for: .upload)
            try await session.wait(for: .download)
            session.suspend()
            try await serverNoticed(server, connections: 1)
            clock.advance(days: 31)
            try await other.write(payload(2, count: secondBytes))
            try await other.wait(for: .upload)
            return ExpiredReaderScenario(a: a, b: b, session: session)
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
