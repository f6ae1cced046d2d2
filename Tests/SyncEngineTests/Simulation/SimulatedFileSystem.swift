import SyncStorage
import SyncStreams

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The real file system as one app incarnation of the simulation sees it: it can fail the next writes
/// (`ENOSPC`) or the next fsync (`EIO`), and it can *crash*: every file written since its last successful
/// fsync loses some of that unsynced tail (as after a power loss), every descriptor is closed (so the
/// store locks are released), and every later call fails with `EIO` without reaching the kernel (so the
/// crashed app's engine, which still runs in this process, can touch nothing the next incarnation owns).
final class SimulatedFileSystem: FileSystem {
    /// What a crash does to the unsynced tail of each written file.
    enum TornTail: String, Sendable, CaseIterable {
        /// Everything reached the disk.
        case none
        /// The file is cut at a random point of its unsynced tail (a torn final write).
        case cut
        /// One 512-byte sector inside the unsynced tail never reached the disk (zeros), the rest did:
        /// a group commit's pages landing out of order.
        case lostSector
    }

    private struct OpenFile {
        var path: String
        /// The size at open or at the last successful fsync: what survives any crash.
        var durableSize: Int64
        var written = false
    }

    private struct State {
        var files: [Int32: OpenFile] = [:]
        var failingWrites = 0
        var failingSyncs = 0
        var crashed = false
        /// Calls between their check and their system call: a crash waits for them, so no call reaches a
        /// descriptor number that the crash closed (and the kernel may have reused).
        var inFlight = 0
        /// Faults that took effect (for the run's figures).
        var injectedWriteFailures = 0
        var injectedSyncFailures = 0
    }

    private let real = SystemFileSystem()
    private let state = Locked(State())

    /// The next `count` writes fail with `ENOSPC` (nothing written).
    func failNextWrites(_ count: Int) { state.withLock { $0.failingWrites += count } }

    /// The next fsync fails with `EIO` (before reaching the disk).
    func failNextSync() { state.withLock { $0.failingSyncs += 1 } }

    /// Takes back the failures armed and not fired yet, and returns them (to `arm` again).
    func disarm() -> (writes: Int, syncs: Int) {
        state.withLock { state in
            defer {
                state.failingWrites = 0
                state.failingSyncs = 0
            }
            return (state.failingWrites, state.failingSyncs)
        }
    }

    /// Arms failures `disarm()` took back (added to any armed since).
    func arm(_ failures: (writes: Int, syncs: Int)) {
        state.withLock { state in
            state.failingWrites += failures.writes
            state.failingSyncs += failures.syncs
        }
    }

    /// Injects nothing more (armed failures that have not fired are dropped).
    func heal() {
        state.withLock { state in
            state.failingWrites = 0
            state.failingSyncs = 0
        }
    }

    /// How many injected failures reached a caller.
    var injectedFailures: (writes: Int, syncs: Int) {
        state.withLock { ($0.injectedWriteFailures, $0.injectedSyncFailures) }
    }

    /// Crashes this incarnation: applies `tornTail` to every written file's unsynced tail (choosing cut
    /// points and sectors with `random`), closes every descriptor and fails every later call. Blocking:
    /// call it off the cooperative pool. Returns how many files lost bytes.
    func crash(tornTail: TornTail, random: @Sendable (UInt64) -> UInt64) -> Int {
        state.withLock { $0.crashed = true }
        while state.withLock({ $0.inFlight }) > 0 { usleep(100) }
        let files = state.withLock { state -> [Int32: OpenFile] in
            defer { state.files = [:] }
            return state.files
        }
        var damaged = 0
        for (descriptor, file) in files.sorted(by: { $0.key < $1.key }) {
            defer { real.close(descriptor) }
            guard file.written, tornTail != .none, case .success(let size) = real.size(descriptor),
                size > file.durableSize
            else { continue }
            let unsynced = UInt64(size - file.durableSize)
            switch tornTail {
            case .none:
                break
            case .cut:
                let keep = Int64(random(unsynced))
                _ = real.truncate(descriptor, to: file.durableSize + keep)
                damaged += 1
            case .lostSector:
                let sectorCount = (unsynced + 511) / 512
                guard sectorCount > 1 else { continue }
                // A sector other than the last: the end of the batch reached the disk, a page before it did not.
                let sector = Int64(random(sectorCount - 2))
                let start = file.durableSize + sector * 512
                let length = Int(min(512, size - start))
                let zeros = [UInt8](repeating: 0, count: length)
                _ = zeros.withUnsafeBytes { real.writeAll(descriptor, $0, at: start) }
                damaged += 1
            }
        }
        return damaged
    }

    func open(_ path: String, flags: Int32, mode: mode_t) -> Result<Int32, FileSystemError> {
        guard
            state.withLock({ state in
                guard !state.crashed else { return false }
                state.inFlight += 1
                return true
            })
        else { return .failure(FileSystemError(EIO)) }
        defer { leave() }
        let result = real.open(path, flags: flags, mode: mode)
        guard case .success(let descriptor) = result else { return result }
        let size = (try? real.size(descriptor).get()) ?? 0
        let tracked = state.withLock { state -> Bool in
            guard !state.crashed else { return false }
            state.files[descriptor] = OpenFile(path: path, durableSize: size)
            return true
        }
        if !tracked {
            real.close(descriptor)
            return .failure(FileSystemError(EIO))
        }
        return result
    }

    func read(
        _ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64
    ) -> Result<Int, FileSystemError> {
        guard enter(descriptor) else { return .failure(FileSystemError(EIO)) }
        defer { leave() }
        return real.read(descriptor, into: buffer, at: offset)
    }

    func write(_ descriptor: Int32, _ buffer: UnsafeRawBufferPointer, at offset: Int64) -> Result<Int, FileSystemError>
    {
        let verdict = state.withLock { state -> Int32? in
            guard !state.crashed, state.files[descriptor] != nil else { return EIO }
            if state.failingWrites > 0 {
                state.failingWrites -= 1
                state.injectedWriteFailures += 1
                return ENOSPC
            }
            state.files[descriptor]?.written = true
            state.inFlight += 1
            return nil
        }
        if let verdict { return .failure(FileSystemError(verdict)) }
        defer { leave() }
        return real.write(descriptor, buffer, at: offset)
    }

    func sync(_ descriptor: Int32) -> FileSystemError? {
        let verdict = state.withLock { state -> Int32? in
            guard !state.crashed, state.files[descriptor] != nil else { return EIO }
            if state.failingSyncs > 0 {
                state.failingSyncs -= 1
                state.injectedSyncFailures += 1
                return EIO
            }
            state.inFlight += 1
            return nil
        }
        if let verdict { return FileSystemError(verdict) }
        defer { leave() }
        if let error = real.sync(descriptor) { return error }
        guard case .success(let size) = real.size(descriptor) else { return nil }
        state.withLock { state in
            if state.files[descriptor] != nil { state.files[descriptor]?.durableSize = size }
        }
        return nil
    }

    func truncate(_ descriptor: Int32, to length: Int64) -> FileSystemError? {
        guard enter(descriptor) else { return FileSystemError(EIO) }
        defer { leave() }
        if let error = real.truncate(descriptor, to: length) { return error }
        state.withLock { state in
            guard let file = state.files[descriptor] else { return }
            state.files[descriptor]?.durableSize = min(file.durableSize, length)
        }
        return nil
    }

    func lockExclusively(_ descriptor: Int32) -> FileSystemError? {
        guard enter(descriptor) else { return FileSystemError(EIO) }
        defer { leave() }
        return real.lockExclusively(descriptor)
    }

    func size(_ descriptor: Int32) -> Result<Int64, FileSystemError> {
        guard enter(descriptor) else { return .failure(FileSystemError(EIO)) }
        defer { leave() }
        return real.size(descriptor)
    }

    func close(_ descriptor: Int32) {
        let owned = state.withLock { state -> Bool in
            guard !state.crashed else { return false }
            return state.files.removeValue(forKey: descriptor) != nil
        }
        if owned { real.close(descriptor) }
    }

    /// Whether a call on `descriptor` may go on (counted in flight until `leave()`).
    private func enter(_ descriptor: Int32) -> Bool {
        state.withLock { state in
            guard !state.crashed, state.files[descriptor] != nil else { return false }
            state.inFlight += 1
            return true
        }
    }

    private func leave() { state.withLock { $0.inFlight -= 1 } }
}
