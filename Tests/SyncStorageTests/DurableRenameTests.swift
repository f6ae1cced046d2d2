import Foundation
import SyncStreams
import Testing

@testable import SyncStorage

@Suite("Durable rename and directories", .timeLimit(.minutes(5)))
struct DurableRenameTests {
    let directory = TemporaryDirectory()

    @Test("a rename whose directory fsync fails reports the error (the rename is not durable), not success")
    func failedDirectorySyncIsReported() throws {
        let source = directory.file("new")
        let destination = directory.file("old")
        try RawFile.write([1], to: source)
        try RawFile.write([2], to: destination)
        let fileSystem = FaultyFileSystem()
        fileSystem.faults.withLock { $0.syncErrors = [EIO] }
        #expect(DurableRename.rename(source, over: destination, fileSystem: fileSystem) == EIO)
        #expect(fileSystem.faults.withLock { $0.syncs } == 1)
        #expect(RawFile.read(destination) == [1])  // renamed all the same
        try RawFile.write([3], to: source)
        #expect(DurableRename.rename(source, over: destination, fileSystem: fileSystem) == nil)
        #expect(fileSystem.faults.withLock { $0.syncs } == 2)
        #expect(DurableRename.rename(directory.file("missing"), over: destination, fileSystem: fileSystem) == ENOENT)
    }

    @Test("creating directories fsyncs the parent of each one created; a failed fsync is an error naming the parent")
    func createdDirectoriesAreSyncedIntoTheirParents() throws {
        let fileSystem = FaultyFileSystem()
        let nested = directory.file("a/b/c")
        #expect(DurableRename.createDirectories(nested, fileSystem: fileSystem) == nil)
        #expect(FileManager.default.fileExists(atPath: nested))
        #expect(fileSystem.faults.withLock { $0.syncs } == 3)  // the parents of a, b and c
        #expect(DurableRename.createDirectories(nested, fileSystem: fileSystem) == nil)
        #expect(fileSystem.faults.withLock { $0.syncs } == 3)  // nothing new: nothing to sync
        fileSystem.faults.withLock { $0.syncErrors = [EIO] }
        let failing = DurableRename.createDirectories(directory.file("d"), fileSystem: fileSystem)
        #expect(failing?.path == directory.path)
        #expect(failing?.errno == EIO)
    }
}
