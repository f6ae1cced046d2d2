import Dispatch
import Foundation
import SyncStreams
import TestSupport
import Testing

@testable import SyncStorage

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The real file system, which can hold the next read until the test releases it, and which records, in
/// order, every read's start and end and every close (simulation seed 3922: a client reset closed the
/// store a read was still using, which then read a closed descriptor: `EBADF`).
private final class HeldReadFileSystem: FileSystem {
    private let real = SystemFileSystem()
    private let state = Locked<(holdOn: String?, held: Bool, heldElsewhere: Bool, events: [String])>(
        (nil, false, false, []))
    private let release = DispatchSemaphore(value: 0)

    /// The next read on the test's own thread named `thread` (`offPool(thread)`) waits in the file system
    /// until `releaseRead()`. A read anywhere else, a cooperative-pool thread above all, is never held: it is
    /// noted (`heldElsewhere`) and goes on.
    func holdNextRead(on thread: String) { state.withLock { $0.holdOn = thread } }
    var isReadHeld: Bool { state.withLock { $0.held } }
    var wasHeldElsewhere: Bool { state.withLock { $0.heldElsewhere } }
    func releaseRead() { release.signal() }
    /// "read d", "read d done", "close d", in the order they happened.
    var events: [String] { state.withLock { $0.events } }

    func open(_ path: String, flags: Int32, mode: mode_t) -> Result<Int32, FileSystemError> {
        real.open(path, flags: flags, mode: mode)
    }

    func read(
        _ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64
    ) -> Result<Int, FileSystemError> {
        let here = DedicatedThread.current
        let hold = state.withLock { state -> Bool in
            state.events.append("read \(descriptor)")
            guard let thread = state.holdOn else { return false }
            guard thread == here else {
                state.heldElsewhere = true
                return false
            }
            state.holdOn = nil
            state.held = true
            return true
        }
        if hold {
            // A deadline, so that a regression fails the test instead of hanging it.
            _ = release.wait(timeout: .now() + .seconds(Int(60 * BuildFlavor.deadlineScale)))
            state.withLock { $0.held = false }
        }
        let result = real.read(descriptor, into: buffer, at: offset)
        state.withLock { $0.events.append("read \(descriptor) done") }
        return result
    }

    func write(_ descriptor: Int32, _ buffer: UnsafeRawBufferPointer, at offset: Int64) -> Result<Int, FileSystemError>
    {
        real.write(descriptor, buffer, at: offset)
    }

    func sync(_ descriptor: Int32) -> FileSystemError? { real.sync(descriptor) }
    func truncate(_ descriptor: Int32, to length: Int64) -> FileSystemError? { real.truncate(descriptor, to: length) }
    func lockExclusively(_ descriptor: Int32) -> FileSystemError? { real.lockExclusively(descriptor) }
    func size(_ descriptor: Int32) -> Result<Int64, FileSystemError> { real.size(descriptor) }

    func close(_ descriptor: Int32) {
        state.withLock { $0.events.append("close \(descriptor)") }
        real.close(descriptor)
    }
}

@Suite("A record reader closed while it reads", .timeLimit(.minutes(2)))
struct ReaderCloseTests {
    @Test(
        "close() while a read is in the system call leaves the descriptor to that read: it completes with its bytes, the descriptor is closed after it, and later reads throw .closed"
    )
    func closeDuringARead() async throws {
        let directory = TemporaryDirectory()
        let fileSystem = HeldReadFileSystem()
        let log = try RecordLog(path: directory.file("log"), fileSystem: fileSystem)
        defer { log.close() }
        let location = try log.append([7, 8, 9])
        let reader = try log.makeReader()
        let before = fileSystem.events.count
        fileSystem.holdNextRead(on: "the held read")
        async let read = offPool("the held read") { try reader.read(location) }
        try await eventually("the read waits in the file system") { fileSystem.isReadHeld }
        // The read's descriptor, as the file system saw it.
        guard let started = fileSystem.events[before...].first(where: { $0.hasPrefix("read ") }) else {
            Issue.record("no read reached the file system: \(fileSystem.events)")
            return
        }
        let descriptor = started.dropFirst("read ".count)
        reader.close()
        #expect(
            !fileSystem.events[before...].contains("close \(descriptor)"),
            "the descriptor was closed under the read in progress: \(fileSystem.events[before...])")
        fileSystem.releaseRead()
        #expect(try await read == [7, 8, 9])
        let after = Array(fileSystem.events[before...])
        let done = after.firstIndex(of: "read \(descriptor) done")
        let closed = after.firstIndex(of: "close \(descriptor)")
        #expect(done != nil && closed != nil && done! < closed!, "\(after)")
        #expect(throws: RecordLogError.closed) { try reader.read(location) }
        #expect(!fileSystem.wasHeldElsewhere, "a read to hold ran on another thread than the test's own")
    }
}
