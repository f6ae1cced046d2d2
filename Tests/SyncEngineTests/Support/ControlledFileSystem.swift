import Dispatch
import SyncStorage
import SyncStreams

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The real file system, watched and steered per file for engine tests: it counts each file's fsyncs,
/// fails chosen writes, fsyncs and reads, and holds chosen calls (an open, an fsync, a read) until the test
/// releases them.
///
/// Files are named by the last component of their path (`"p.synclog"`), as the engine names a partition's
/// store.
final class ControlledFileSystem: FileSystem {
    /// The calls that can be held.
    enum Call: Sendable { case open, sync, read }

    /// One held call: `isBlocked` once the call waits in it; `release()` lets it go on. A call waits at
    /// most `limit` (then it goes on, and the test fails on its own deadline).
    final class Gate: Sendable {
        private let semaphore = DispatchSemaphore(value: 0)
        private let blocked = Locked(false)
        private let limit: DispatchTimeInterval = .seconds(300)

        var isBlocked: Bool { blocked.withLock { $0 } }

        func release() { semaphore.signal() }

        fileprivate func pass() {
            blocked.withLock { $0 = true }
            _ = semaphore.wait(timeout: .now() + limit)
            blocked.withLock { $0 = false }
        }
    }

    private struct State {
        var names: [Int32: String] = [:]
        var syncs: [String: Int] = [:]
        var syncFailures: [String: [Int32]] = [:]
        var writeFailures: [String: [Int32]] = [:]
        var readFailures: [String: [Int32]] = [:]
        var gates: [(call: Call, name: String, gate: Gate)] = []
    }

    private let real = SystemFileSystem()
    private let state = Locked(State())

    /// How many fsyncs (successful or not) reached the file called `name`.
    func syncCount(of name: String) -> Int { state.withLock { $0.syncs[name] ?? 0 } }

    /// The next fsync of the file called `name` fails with `code` (before reaching the disk).
    func failNextSync(of name: String, with code: Int32) {
        state.withLock { $0.syncFailures[name, default: []].append(code) }
    }

    /// The next write to the file called `name` fails with `code` (`ENOSPC`: the disk is full), writing
    /// nothing.
    func failNextWrite(of name: String, with code: Int32) {
        state.withLock { $0.writeFailures[name, default: []].append(code) }
    }

    /// The next read of the file called `name` fails with `code` (after a held read is released, if held).
    func failNextRead(of name: String, with code: Int32) {
        state.withLock { $0.readFailures[name, default: []].append(code) }
    }

    /// Holds the next `call` on the file called `name` until the returned gate is released.
    func hold(_ call: Call, of name: String) -> Gate {
        let gate = Gate()
        state.withLock { $0.gates.append((call, name, gate)) }
        return gate
    }

    private func takeGate(_ call: Call, _ name: String) -> Gate? {
        state.withLock { state in
            guard let index = state.gates.firstIndex(where: { $0.call == call && $0.name == name }) else { return nil }
            return state.gates.remove(at: index).gate
        }
    }

    private static func name(of path: String) -> String {
        String(path.split(separator: "/").last ?? Substring(path))
    }

    func open(_ path: String, flags: Int32, mode: mode_t) -> Result<Int32, FileSystemError> {
        let name = Self.name(of: path)
        takeGate(.open, name)?.pass()
        let result = real.open(path, flags: flags, mode: mode)
        if case .success(let descriptor) = result { state.withLock { $0.names[descriptor] = name } }
        return result
    }

    func read(
        _ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64
    ) -> Result<Int, FileSystemError> {
        if let name = state.withLock({ $0.names[descriptor] }) {
            takeGate(.read, name)?.pass()
            let failure = state.withLock { state -> Int32? in
                guard var failures = state.readFailures[name], !failures.isEmpty else { return nil }
                let code = failures.removeFirst()
                state.readFailures[name] = failures
                return code
            }
            if let failure { return .failure(FileSystemError(failure)) }
        }
        return real.read(descriptor, into: buffer, at: offset)
    }

    func write(_ descriptor: Int32, _ buffer: UnsafeRawBufferPointer, at offset: Int64) -> Result<Int, FileSystemError>
    {
        let failure = state.withLock { state -> Int32? in
            guard let name = state.names[descriptor], var failures = state.writeFailures[name], !failures.isEmpty
            else { return nil }
            let code = failures.removeFirst()
            state.writeFailures[name] = failures
            return code
        }
        if let failure { return .failure(FileSystemError(failure)) }
        return real.write(descriptor, buffer, at: offset)
    }

    func sync(_ descriptor: Int32) -> FileSystemError? {
        let (name, failure) = state.withLock { state -> (String?, Int32?) in
            guard let name = state.names[descriptor] else { return (nil, nil) }
            state.syncs[name, default: 0] += 1
            guard var failures = state.syncFailures[name], !failures.isEmpty else { return (name, nil) }
            let code = failures.removeFirst()
            state.syncFailures[name] = failures
            return (name, code)
        }
        if let name { takeGate(.sync, name)?.pass() }
        if let failure { return FileSystemError(failure) }
        return real.sync(descriptor)
    }

    func truncate(_ descriptor: Int32, to length: Int64) -> FileSystemError? { real.truncate(descriptor, to: length) }
    func lockExclusively(_ descriptor: Int32) -> FileSystemError? { real.lockExclusively(descriptor) }
    func size(_ descriptor: Int32) -> Result<Int64, FileSystemError> { real.size(descriptor) }

    func close(_ descriptor: Int32) {
        state.withLock { _ = $0.names.removeValue(forKey: descriptor) }
        real.close(descriptor)
    }
}
