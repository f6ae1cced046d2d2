import Dispatch
import Foundation
import SyncServer
import TestSupport
import Testing

@testable import SyncEngine

@Suite("Deleting local files", .timeLimit(.minutes(5)))
struct DeleteLocalFilesTests {
    @Test(
        "while deleteLocalFiles runs, opening the store fails with storeInUse — in this app and in another — and never opens the store being deleted"
    )
    func openingDuringADeletion() async throws {
        let server = try await SyncServer.embedded()
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let reached = Locked(false)
        let proceed = DispatchSemaphore(value: 0)
        let app = makeApp(
            server: server.endpoint, directory: directory.url,
            configure: {
                $0.testHooks.deleteLocalFilesWillRename = {
                    reached.withLock { $0 = true }
                    _ = proceed.wait(timeout: .now() + 60)
                }
            })
        let first = try await app.login(.anonymous)
        let session = try await first.openSession(partition: "p")
        session.suspend()
        try await session.write(Data("unsynced".utf8))
        let deletedFileID = await session.engine.clientFileIDForTests
        await first.logOut()

        let user = try await app.login(.anonymous)
        let path = directory.url.appendingPathComponent("anonymous/p.synclog").path
        let deletion = Task { try await app.deleteLocalFiles(for: user, partition: "p") }
        try await eventually("the deletion holds the store") { reached.withLock { $0 } }
        await #expect(throws: SyncError.storeInUse(path: path)) { try await user.openSession(partition: "p") }
        let other = makeApp(server: server.endpoint, directory: directory.url)
        await #expect(throws: SyncError.storeInUse(path: path)) {
            try await other.login(.anonymous).openSession(partition: "p")
        }
        await #expect(throws: SyncError.storeInUse(path: path)) {
            try await app.deleteLocalFiles(for: user, partition: "p")
        }
        proceed.signal()
        try await deletion.value

        let fresh = try await user.openSession(partition: "p")
        #expect(await fresh.engine.clientFileIDForTests != deletedFileID)
        #expect(fresh.engine.notifier.current(.upload)?.transferrableBytes == 0)
        try await app.close()
        try await other.close()
    }

    @Test("what a crash left of a deletion (.deleted-… files and directories) is swept when the user logs in")
    func leftoversSweptAtLogin() async throws {
        let server = try await SyncServer.embedded()
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let userDirectory = directory.url.appendingPathComponent("anonymous")
        try FileManager.default.createDirectory(
            at: userDirectory.appendingPathComponent(".deleted-directory/inside"), withIntermediateDirectories: true)
        try Data("half".utf8).write(to: userDirectory.appendingPathComponent(".deleted-1234"))
        try Data("keep".utf8).write(to: userDirectory.appendingPathComponent("p.synclog.note"))
        let app = makeApp(server: server.endpoint, directory: directory.url)
        _ = try await app.login(.anonymous)
        #expect(try FileManager.default.contentsOfDirectory(atPath: userDirectory.path) == ["p.synclog.note"])
        try await app.close()
    }
}
