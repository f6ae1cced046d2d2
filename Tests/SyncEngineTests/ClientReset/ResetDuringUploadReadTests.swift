import Foundation
import SyncServer
import SyncWire
import TestSupport
import Testing

@testable import SyncEngine

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A client reset replaces the store while an upload is reading changesets from it (simulation seed 3922:
/// the old store was closed under the upload's read, which failed with `EBADF`, and the session became
/// `.invalid` for good). A read of a store the reset replaced tells nothing about the new one: the upload
/// starts again from the new store, and nothing is lost.
@Suite("A client reset during an upload's read", .timeLimit(.minutes(5)))
struct ResetDuringUploadReadTests {
    @Test(
        "an upload's read of the store that a client reset replaced meanwhile fails: the session stays usable and uploads the recovered write once"
    )
    func failedReadOfAReplacedStoreIsNotFatal() async throws {
        let fileSystem = ControlledFileSystem()
        let fixture = try await EngineFixture(
            fileSystem: fileSystem, configure: { $0.clientResetMode = .recoverUnsyncedChanges })
        defer { fixture.directory.remove() }
        let session = try await fixture.open()
        let recorder = ResetRecorder()
        let token = recorder.watch(session)
        defer { token.invalidate() }
        try await session.wait(for: .download)
        // The upload of write 5 reads it back from the store: that read waits in the file system.
        let gate = fileSystem.hold(.read, of: "p.synclog")
        try await session.write(payload(5))
        try await eventually("the upload's read is held") { gate.isBlocked }
        // The server asks for a reset meanwhile (its client file forgotten): the reset recovers write 5 into a
        // new store and closes the old one.
        await session.engine.clientResetRequired(
            .clientResetRequired("the test forgot the client file"),
            details: ClientResetDetails(reason: .clientExpired, serverVersion: 0, lastIntegratedClientVersion: 0))
        try await eventually("the reset done") {
            recorder.events.contains {
                if case .didReset = $0 { true } else { false }
            }
        }
        // The held read of the replaced store then fails (as reading a closed store would).
        fileSystem.failNextRead(of: "p.synclog", with: EIO)
        gate.release()
        try await session.wait(for: .upload)
        #expect(session.state.value == .active)
        #expect(fixture.errors.values.isEmpty, "\(fixture.errors.values.map(\.error))")
        #expect(try await fixture.serverLog() == [Array(payload(5))])
        try await fixture.app.close()
    }
}
