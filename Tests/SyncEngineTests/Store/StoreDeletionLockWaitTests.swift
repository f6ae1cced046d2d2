import Foundation
import SyncStorage
import TestSupport
import Testing

@testable import SyncEngine

/// Deleting a store takes its lock like opening one: a lock being released (a child being spawned still
/// holds a copy of the descriptor the app just closed) is waited for; one held longer is `.storeInUse`.
@Suite("Deleting a store waits briefly for its lock being released")
struct StoreDeletionLockWaitTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("StoreDeletionLockWait-\(UUID())")

    private func makeStore(_ name: String) throws -> URL {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let url = directory.appendingPathComponent(name)
        #expect(FileManager.default.createFile(atPath: url.path, contents: Data([1, 2, 3])))
        return url
    }

    @Test("a store lock released after a few refusals is waited for: the store is deleted, not .storeInUse")
    func storeLockBeingReleasedIsWaitedFor() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try makeStore("p.synclog")
        let fileSystem = BrieflyLockedFileSystem(refusals: 5)
        try LocalFiles.removeStore(store, fileSystem: fileSystem)
        #expect(!FileManager.default.fileExists(atPath: store.path))
        #expect(fileSystem.lockCalls.withLock { $0 } == 6)
    }

    @Test("a user directory whose store lock is being released is deleted")
    func directoryLockBeingReleasedIsWaitedFor() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        _ = try makeStore("p.synclog")
        let fileSystem = BrieflyLockedFileSystem(refusals: 5)
        try LocalFiles.removeDirectory(directory, fileSystem: fileSystem)
        #expect(!FileManager.default.fileExists(atPath: directory.path))
        #expect(fileSystem.lockCalls.withLock { $0 } == 6)
    }

    @Test("a store lock still held after every attempt is .storeInUse, and the store stays")
    func storeLockHeldLongerIsInUse() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try makeStore("p.synclog")
        let fileSystem = BrieflyLockedFileSystem(refusals: FileLockWait.attempts)
        #expect(throws: SyncError.storeInUse(path: store.path)) {
            try LocalFiles.removeStore(store, fileSystem: fileSystem)
        }
        #expect(FileManager.default.fileExists(atPath: store.path))
    }
}
