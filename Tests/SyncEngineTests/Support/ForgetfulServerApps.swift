import Foundation
import SyncServer
import TestSupport

@testable import SyncEngine

/// Two apps, A and B, on one embedded server that forgets client files unseen for 30 days
/// (`forgetfulServer`), with the clock that server reads: the start of the client-reset scenarios.
struct ForgetfulServerApps {
    let clock: ServerClock
    let server: SyncServer
    let a: EngineFixture
    let b: EngineFixture

    /// Starts the server and both apps; A's configuration passes through `configureA`.
    init(configureA: (inout SyncApp.Configuration) -> Void = { _ in }) async throws {
        clock = ServerClock()
        server = try await forgetfulServer(clock)
        a = try await EngineFixture(server: server, configure: configureA)
        b = try await EngineFixture(server: server)
    }

    /// Runs a scenario's set-up on the apps; if it throws, both apps' directories are removed first.
    func setUp<Scenario>(_ body: (Self) async throws -> Scenario) async throws -> Scenario {
        do { return try await body(self) } catch {
            remove()
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
