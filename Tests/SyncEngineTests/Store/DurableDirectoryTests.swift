import Foundation
import SyncServer
import SyncStorage
import TestSupport
import Testing

@testable import SyncEngine

/// A directory fsync that fails is a typed error, never silent success: after a power loss the entry
/// (a new user directory, a store renamed aside to delete it) could be gone, or come back.
@Suite(.timeLimit(.minutes(5)))
struct DurableDirectoryTests {
    @Test("login creates the user's directory and fsyncs it into its parent; a failed fsync is a storageFailure")
    func loginSyncsTheNewDirectory() async throws {
        let fileSystem = ControlledFileSystem()
        let fixture = try await EngineFixture(fileSystem: fileSystem)
        defer { fixture.directory.remove() }
        let parent = fixture.directory.url.lastPathComponent
        fileSystem.failNextSync(of: parent, with: EIO)
        await #expect(throws: SyncError.self) { _ = try await fixture.app.login(.anonymous) }
        #expect(fileSystem.syncCount(of: parent) == 1)
        try await fixture.app.close()
    }

    @Test("deleteLocalFiles whose directory fsync fails throws a storageFailure instead of reporting success")
    func deleteLocalFilesReportsAFailedDirectorySync() async throws {
        let fileSystem = ControlledFileSystem()
        let fixture = try await EngineFixture(fileSystem: fileSystem)
        defer { fixture.directory.remove() }
        let user = try await fixture.app.login(.anonymous)
        let session = try await user.openSession(partition: "p")
        try await session.write(Data("one".utf8))
        await user.logOut()
        let userDirectory = fixture.directory.url.appendingPathComponent("anonymous")
        #expect(FileManager.default.fileExists(atPath: userDirectory.appendingPathComponent("p.synclog").path))
        fileSystem.failNextSync(of: "anonymous", with: EIO)
        await #expect {
            try await fixture.app.deleteLocalFiles(for: user, partition: "p")
        } throws: { error in
            guard case .storageFailure(let message) = error as? SyncError else { return false }
            return message.contains("errno \(EIO)")
        }
        #expect(fileSystem.syncCount(of: "anonymous") >= 1)
        try await fixture.app.close()
    }
}

@Suite(.timeLimit(.minutes(5)))
struct UserRemoveLockTests {
    @Test("user.remove() refuses with storeInUse while another app holds one of the user's stores, then removes")
    func removeTakesTheStoreLocks() async throws {
        let server = try await SyncServer.embedded()
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let holder = makeApp(server: server.endpoint, directory: directory.url)
        let session = try await holder.login(.anonymous).openSession(partition: "p")
        try await session.write(Data("kept".utf8))
        let path = directory.url.appendingPathComponent("anonymous/p.synclog").path

        let remover = makeApp(server: server.endpoint, directory: directory.url)
        let user = try await remover.login(.anonymous)
        await #expect(throws: SyncError.storeInUse(path: path)) { try await user.remove() }
        #expect(FileManager.default.fileExists(atPath: path))
        try await holder.close()

        let again = try await remover.login(.anonymous)
        try await again.remove()
        #expect(!FileManager.default.fileExists(atPath: path))
        try await remover.close()
    }
}
