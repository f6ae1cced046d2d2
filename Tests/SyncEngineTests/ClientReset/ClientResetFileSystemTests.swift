import Foundation
import SyncServer
import TestSupport
import Testing

@testable import SyncEngine

/// The store a client reset writes is a store like any other: its system calls go through the app's
/// configured `FileSystem` (found by the simulation: a crashed app's reset store kept its lock, because
/// the reset opened it with the real system calls behind the configured file system's back).
@Suite("Client reset file system", .timeLimit(.minutes(5)))
struct ClientResetFileSystemTests {
    @Test("the store a client reset writes, and every later write to it, goes through the configured file system")
    func resetStoreUsesTheConfiguredFileSystem() async throws {
        let forgotten = try await ForgottenClientFileFixture.start()
        defer { forgotten.remove() }
        let (session, fileSystem) = (forgotten.session, forgotten.fileSystem)
        try await session.write(payload(2))
        forgotten.clock.advance(days: 31)
        session.resume()
        try await eventually("reset") { forgotten.recorder.events.count == 2 }
        // The replacement was written at `.reset-p.synclog` and fsynced there: through the file system.
        #expect(fileSystem.syncCount(of: ".reset-p.synclog") > 0)
        try await session.write(payload(3))
        #expect(fileSystem.syncCount(of: ".reset-p.synclog") > 1)
        try await forgotten.engine.app.close()
    }
}
