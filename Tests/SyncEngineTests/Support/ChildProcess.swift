import Dispatch
import Foundation
import SyncStreams

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A child process for tests — `sync-server` unless told otherwise: started with pipes, its URL read from
/// its output, stopped with a signal. Every wait has a deadline and none blocks a thread: output arrives through readability
/// handlers, the exit through `terminationHandler`, and waiting is a continuation resumed by whichever
/// comes first, the event or a dispatch timer. The exit counts once the process ended and both pipes
/// reached their end, so its whole output is there.
final class ChildProcess: Sendable {
    struct TimedOut: Error, CustomStringConvertible {
        var description: String
    }

    private struct State {
        var stdout = Data()
        var stderr = Data()
        var status: Int32?
        /// The pipes that reached their end.
        var endedPipes: Set<Int> = []
        /// Exited, and everything it wrote was read.
        var isDone: Bool { status != nil && endedPipes.count == 2 }
        var exitWaiters: [UInt64: CheckedContinuation<Int32?, Never>] = [:]
        var nextWaiter: UInt64 = 0
        var signalled = false
    }

    let process = Process()
    private let state = Locked(State())

    /// The built executable beside the test bundle (the test target depends on it).
    static var executable: URL {
        let directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let beside = directory.appendingPathComponent("sync-server")
        if FileManager.default.fileExists(atPath: beside.path) { return beside }
        return directory.deletingLastPathComponent().appendingPathComponent("sync-server")
    }

    /// Starts `sync-server` with `arguments`, or `command` with `arguments` when given (say `/bin/sh` to
    /// change limits first). With `signalOnURL`, that signal is sent the moment the URL line arrives, from
    /// the thread that reads it.
    init(_ arguments: [String], command: URL? = nil, signalOnURL: Int32? = nil) throws {
        process.executableURL = command ?? Self.executable
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        let state = self.state
        let process = self.process
        // Each pipe is read to its end by a thread of its own (blocking reads, never on the cooperative
        // pool); the end of both, with the exit, makes the process done.
        Self.drain(output.fileHandleForReading, name: 1, state) { state, chunk in
            state.stdout.append(chunk)
            guard let signal = signalOnURL, !state.signalled,
                String(decoding: state.stdout, as: UTF8.self).contains("ws://")
            else { return nil }
            state.signalled = true
            return signal
        } signal: {
            kill(process.processIdentifier, $0)
        }
        Self.drain(errors.fileHandleForReading, name: 2, state) { state, chunk in
            state.stderr.append(chunk)
            return nil
        } signal: { _ in
        }
        process.terminationHandler = { process in
            let status = process.terminationStatus
            Self.resumeIfDone(state) { $0.status = status }
        }
        try process.run()
    }

    /// Reads `handle` to its end on a new thread, handing each chunk to `take` (under the lock; it may
    /// return a signal to send, which `signal` sends outside the lock).
    private static func drain(
        _ handle: FileHandle, name: Int, _ state: Locked<State>,
        take: @escaping @Sendable (inout State, Data) -> Int32?, signal: @escaping @Sendable (Int32) -> Void
    ) {
        let thread = Thread {
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                if let number = state.withLock({ take(&$0, chunk) }) { signal(number) }
            }
            resumeIfDone(state) { $0.endedPipes.insert(name) }
        }
        thread.stackSize = 256 * 1024
        thread.start()
    }

    /// Applies `change`; once the process is done, resumes every exit waiter.
    private static func resumeIfDone(_ state: Locked<State>, _ change: (inout State) -> Void) {
        let (waiters, status) = state.withLock { state -> ([CheckedContinuation<Int32?, Never>], Int32?) in
            change(&state)
            guard state.isDone else { return ([], nil) }
            defer { state.exitWaiters = [:] }
            return (Array(state.exitWaiters.values), state.status)
        }
        for waiter in waiters { waiter.resume(returning: status) }
    }

    var stdout: String { state.withLock { String(decoding: $0.stdout, as: UTF8.self) } }
    var stderr: String { state.withLock { String(decoding: $0.stderr, as: UTF8.self) } }
    var processIdentifier: Int32 { process.processIdentifier }
    var hasExited: Bool { state.withLock { $0.status != nil } }

    /// The port from the `ws://host:port` URL the server printed, waiting at most `deadline`.
    func port(deadline: Duration = .seconds(60)) async throws -> Int {
        let end = ContinuousClock.now + deadline
        while ContinuousClock.now < end {
            if let match = stdout.firstMatch(of: /ws:\/\/(?:\[[0-9a-f:.]+\]|[^:\s\/]+):(\d+)/), let port = Int(match.1)
            {
                return port
            }
            guard !hasExited else { throw TimedOut(description: "sync-server exited: \(stderr)") }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw TimedOut(description: "sync-server printed no URL: \(stdout) \(stderr)")
    }

    /// Sends `signal` and waits (at most `deadline`) for the exit; its status.
    func stop(_ signal: Int32, deadline: Duration = .seconds(60)) async throws -> Int32 {
        kill(process.processIdentifier, signal)
        return try await waitForExit(deadline: deadline)
    }

    /// The exit status, waiting at most `deadline`; past it the process is killed and this throws.
    func waitForExit(deadline: Duration = .seconds(60)) async throws -> Int32 {
        let state = self.state
        let status = await withCheckedContinuation { (continuation: CheckedContinuation<Int32?, Never>) in
            let id = state.withLock { state -> UInt64? in
                if state.isDone { return nil }
                state.nextWaiter += 1
                state.exitWaiters[state.nextWaiter] = continuation
                return state.nextWaiter
            }
            guard let id else {
                continuation.resume(returning: state.withLock { $0.status })
                return
            }
            let (seconds, attoseconds) = deadline.components
            let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
            DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) {
                state.withLock { $0.exitWaiters.removeValue(forKey: id) }?.resume(returning: nil)
            }
        }
        guard let status else {
            kill(process.processIdentifier, SIGKILL)
            throw TimedOut(
                description:
                    "\(process.executableURL?.lastPathComponent ?? "the process") did not exit within \(deadline): \(stderr)"
            )
        }
        return status
    }

    /// How the process ended: `.exit` with a status or `.uncaughtSignal` with the signal (after an exit).
    var terminationReason: Process.TerminationReason { process.terminationReason }

    deinit {
        if !hasExited { kill(process.processIdentifier, SIGKILL) }
    }
}
