import Foundation
import SyncStorage
import SyncStreams
import TestSupport
import Testing

@testable import SyncServer

/// The directory's `LOCK` is taken like a record log's: a lock being released (a child being spawned
/// still holds a copy of a just-closed descriptor) is waited for; one held longer is `.locked`.
@Suite("The server's directory lock waits briefly for a lock being released")
struct DirectoryLockWaitTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("DirectoryLockWait-\(UUID())").path

    @Test("a LOCK released after a few refusals is waited for: the store opens (a loaded run saw .locked)")
    func lockBeingReleasedIsWaitedFor() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let fileSystem = BrieflyLockedFileSystem(refusals: 5)
        let store = try FilePartitionStore(directory: directory, logLevel: .warn, logger: nil, fileSystem: fileSystem)
        #expect(fileSystem.lockCalls.withLock { $0 } == 6)
        await store.close()
    }

    @Test("a LOCK still held after every attempt is .locked, and nothing stays locked")
    func lockHeldLongerIsLocked() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let fileSystem = BrieflyLockedFileSystem(refusals: FileLockWait.attempts)
        #expect(throws: FilePartitionStoreError.locked(path: directory)) {
            _ = try FilePartitionStore(directory: directory, logLevel: .warn, logger: nil, fileSystem: fileSystem)
        }
        #expect(fileSystem.lockCalls.withLock { $0 } == FileLockWait.attempts)
        let store = try FilePartitionStore(directory: directory)
        await store.close()
    }
}
