import Foundation
import SyncStreams
import Testing

@testable import SyncStorage

/// The real file system, whose `flock` reports the file locked (`EWOULDBLOCK`) a given number of times
/// before it asks the kernel: a lock that is being released, as a forked child's copy of a closed
/// descriptor holds one until the child execs.
private final class BrieflyLockedFileSystem: FileSystem {
    let real = SystemFileSystem()
    let refusalsLeft: Locked<Int>
    let lockCalls = Locked(0)

    init(refusals: Int) { refusalsLeft = Locked(refusals) }

    func open(_ path: String, flags: Int32, mode: mode_t) -> Result<Int32, FileSystemError> {
        real.open(path, flags: flags, mode: mode)
    }
    func read(
        _ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64
    ) -> Result<Int, FileSystemError> { real.read(descriptor, into: buffer, at: offset) }
    func write(_ descriptor: Int32, _ buffer: UnsafeRawBufferPointer, at offset: Int64) -> Result<Int, FileSystemError>
    {
        real.write(descriptor, buffer, at: offset)
    }
    func sync(_ descriptor: Int32) -> FileSystemError? { real.sync(descriptor) }
    func truncate(_ descriptor: Int32, to length: Int64) -> FileSystemError? { real.truncate(descriptor, to: length) }
    func lockExclusively(_ descriptor: Int32) -> FileSystemError? {
        lockCalls.withLock { $0 += 1 }
        let refuse = refusalsLeft.withLock { left in
            defer { left = max(0, left - 1) }
            return left > 0
        }
        return refuse ? FileSystemError(EWOULDBLOCK) : real.lockExclusively(descriptor)
    }
    func size(_ descriptor: Int32) -> Result<Int64, FileSystemError> { real.size(descriptor) }
    func close(_ descriptor: Int32) { real.close(descriptor) }
}

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
