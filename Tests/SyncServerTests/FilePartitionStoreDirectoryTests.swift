import Foundation
import SyncStorage
import SyncStreams
import Testing

@testable import SyncServer

/// The real file system whose directory fsyncs fail (counting them), for the store's directory creation.
private final class FailingDirectorySync: FileSystem {
    let syncs = Locked(0)
    private let real = SystemFileSystem()

    func open(_ path: String, flags: Int32, mode: mode_t) -> Result<Int32, FileSystemError> {
        real.open(path, flags: flags, mode: mode)
    }
    func read(
        _ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64
    ) -> Result<Int, FileSystemError> { real.read(descriptor, into: buffer, at: offset) }
    func write(_ descriptor: Int32, _ buffer: UnsafeRawBufferPointer, at offset: Int64) -> Result<Int, FileSystemError>
    { real.write(descriptor, buffer, at: offset) }
    func sync(_ descriptor: Int32) -> FileSystemError? {
        syncs.withLock { $0 += 1 }
        return FileSystemError(EIO)
    }
    func truncate(_ descriptor: Int32, to length: Int64) -> FileSystemError? { real.truncate(descriptor, to: length) }
    func lockExclusively(_ descriptor: Int32) -> FileSystemError? { real.lockExclusively(descriptor) }
    func size(_ descriptor: Int32) -> Result<Int64, FileSystemError> { real.size(descriptor) }
    func close(_ descriptor: Int32) { real.close(descriptor) }
}

@Suite struct FilePartitionStoreDirectoryTests {
    @Test("a new data directory is fsynced into its parent; a failed fsync refuses to open the store")
    func newDirectoryIsSynced() throws {
        let parent = FileManager.default.temporaryDirectory.appendingPathComponent(
            "FilePartitionStoreDirectory-\(UUID())"
        )
        .path
        defer { try? FileManager.default.removeItem(atPath: parent) }
        try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
        let fileSystem = FailingDirectorySync()
        #expect(throws: FilePartitionStoreError.cannotOpen(path: parent, errno: EIO)) {
            _ = try FilePartitionStore(
                directory: parent + "/data", logLevel: .warn, logger: nil, fileSystem: fileSystem)
        }
        #expect(fileSystem.syncs.withLock { $0 } == 1)
    }
}
