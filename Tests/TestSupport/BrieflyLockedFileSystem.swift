import Foundation
import SyncStorage
import SyncStreams

/// The real file system, whose `flock` reports the file locked (`EWOULDBLOCK`) a given number of times
/// before it asks the kernel: a lock that is being released, as a forked child's copy of a closed
/// descriptor holds one until the child execs.
package final class BrieflyLockedFileSystem: FileSystem {
    let real = SystemFileSystem()
    let refusalsLeft: Locked<Int>
    /// How many times a lock was asked for.
    package let lockCalls = Locked(0)

    package init(refusals: Int) { refusalsLeft = Locked(refusals) }

    package func open(_ path: String, flags: Int32, mode: mode_t) -> Result<Int32, FileSystemError> {
        real.open(path, flags: flags, mode: mode)
    }
    package func read(
        _ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64
    ) -> Result<Int, FileSystemError> { real.read(descriptor, into: buffer, at: offset) }
    package func write(
        _ descriptor: Int32, _ buffer: UnsafeRawBufferPointer, at offset: Int64
    ) -> Result<Int, FileSystemError> {
        real.write(descriptor, buffer, at: offset)
    }
    package func sync(_ descriptor: Int32) -> FileSystemError? { real.sync(descriptor) }
    package func truncate(_ descriptor: Int32, to length: Int64) -> FileSystemError? {
        real.truncate(descriptor, to: length)
    }
    package func lockExclusively(_ descriptor: Int32) -> FileSystemError? {
        lockCalls.withLock { $0 += 1 }
        let refuse = refusalsLeft.withLock { left in
            defer { left = max(0, left - 1) }
            return left > 0
        }
        return refuse ? FileSystemError(EWOULDBLOCK) : real.lockExclusively(descriptor)
    }
    package func size(_ descriptor: Int32) -> Result<Int64, FileSystemError> { real.size(descriptor) }
    package func close(_ descriptor: Int32) { real.close(descriptor) }
}
