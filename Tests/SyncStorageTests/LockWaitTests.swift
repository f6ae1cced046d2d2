import Foundation
import SyncStreams
import TestSupport
import Testing

@testable import SyncStorage

@Suite("Opening waits briefly for a lock being released")
struct LockWaitTests {
    let directory = TemporaryDirectory()
    var path: String { directory.file("log") }

    @Test("a lock released after a few refusals is waited for: the open succeeds (full suite saw .locked)")
    func lockBeingReleasedIsWaitedFor() throws {
        let fileSystem = BrieflyLockedFileSystem(refusals: 5)
        let log = try RecordLog(path: path, fileSystem: fileSystem)
        try log.append([1])
        #expect(fileSystem.lockCalls.withLock { $0 } == 6)
        log.close()
    }

    @Test("a lock still held after every attempt is .locked, and the descriptor is closed")
    func lockHeldLongerIsLocked() throws {
        let fileSystem = BrieflyLockedFileSystem(refusals: RecordLog.lockAttempts)
        #expect(throws: RecordLogError.locked(path: path)) { _ = try RecordLog(path: path, fileSystem: fileSystem) }
        #expect(fileSystem.lockCalls.withLock { $0 } == RecordLog.lockAttempts)
        // Nothing was left open and locked: a plain open takes the lock at once.
        _ = try RecordLog(path: path)
    }
}
