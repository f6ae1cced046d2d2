import Dispatch
import Foundation
import SyncStreams

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A child process for tests: started with pipes for its output, signalled, waited for.
///
/// Every wait has a deadline and none blocks Swift's cooperative pool: each pipe is read to its end by a
/// thread of its own, the exit arrives through `terminationHandler`, and a wait is a continuation resumed
/// by whichever comes first, the exit or a dispatch timer. The exit counts once the process ended and
/// both pipes reached their end (its children, if any, closed them too), so its whole output is there.
public final class ChildProcess: Sendable {
    public struct TimedOut: Error, CustomStringConvertible {
        public var description: String
    }

    /// A signal to send once the output so far satisfies a condition.
    public struct SignalTrigger: Sendable {
        let signal: Int32
        let when: @Sendable (_ stdout: String) -> Bool

        /// Sends `signal` as soon as `when(stdout)` holds, from the thread that reads standard output.
        public init(_ signal: Int32, when: @escaping @Sendable (_ stdout: String) -> Bool) {
            self.signal = signal
            self.when = when
        }
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
        var trigger: SignalTrigger?
    }

    public let process = Process()
    private let state = Locked(State())

    /// How long a wait on this process (`waitForOutput`, `port`, `stop`, `waitForExit`) lasts when the call
    /// names no deadline. Every wait, this one or a call's own, is multiplied by `BuildFlavor.deadlineScale`
    /// (a sanitizer build's child runs several times slower too).
    public let defaultDeadline: Duration

    /// The executable `name` built beside the test bundle (the test target depends on its product).
    public static func built(_ name: String) -> URL {
        let directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let beside = directory.appendingPathComponent(name)
        if FileManager.default.fileExists(atPath: beside.path) { return beside }
        return directory.deletingLastPathComponent().appendingPathComponent(name)
    }

    /// Starts `executable` with `arguments` (and `environment`, default: this process's), standard input
    /// from `/dev/null`; its waits last `defaultDeadline` unless a call names another.
    public init(
        _ executable: URL, _ arguments: [String], environment: [String: String]? = nil, trigger: SignalTrigger? = nil,
        defaultDeadline: Duration = .seconds(60)
    ) throws {
        self.defaultDeadline = defaultDeadline
        process.executableURL = executable
        process.arguments = arguments
        if let environment { process.environment = environment }
        process.standardInput = FileHandle.nullDevice
        state.withLock { $0.trigger = trigger }
        let state = self.state
        let process = self.process
        process.terminationHandler = { process in
            let status = process.terminationStatus
            Self.resumeIfDone(state) { $0.status = status }
        }
        let (output, errors) = try Self.spawning.withLock { started in
            started += 1
            let output = Pipe()
            let errors = Pipe()
            process.standardOutput = output
            process.standardError = errors
            try process.run()
            return (output, errors)
        }
        Self.drain(output.fileHandleForReading, name: 1, state) { state, chunk in
            state.stdout.append(chunk)
            guard let trigger = state.trigger, trigger.when(String(decoding: state.stdout, as: UTF8.self)) else {
                return nil
            }
            state.trigger = nil
            return trigger.signal
        } signal: {
            kill(process.processIdentifier, $0)
        }
        Self.drain(errors.fileHandleForReading, name: 2, state) { state, chunk in
            state.stderr.append(chunk)
            return nil
        } signal: { _ in
        }
    }

    /// How many children were started; its lock is held while one is started, so that one starts at a time.
    ///
    /// Foundation's `Pipe` is made without close-on-exec, and on Linux `Process.run` closes in the child
    /// the descriptors open when it starts preparing, not those another thread opens before the child
    /// starts. Without this lock, a child started at that moment inherited another test's output pipe (or
    /// the socket Foundation watches for that test's child's exit), and the other test saw its child's
    /// exit only when this child ended too: a `sync-server` that printed "stopped" did not "exit" within
    /// 60 s. The lock covers the pipes' making, their write ends' closing in `run`, and the start, so no
    /// child ever starts while another's write ends are open here. (A count, not `Locked<()>`: ThreadSanitizer
    /// reported an empty state's accesses, made at the object's start, as racing with other threads' reads of
    /// the object's header.)
    private static let spawning = Locked<UInt64>(0)

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

    public var stdout: String { state.withLock { String(decoding: $0.stdout, as: UTF8.self) } }
    public var stderr: String { state.withLock { String(decoding: $0.stderr, as: UTF8.self) } }
    public var processIdentifier: Int32 { process.processIdentifier }
    public var hasExited: Bool { state.withLock { $0.status != nil } }

    /// How the process ended: `.exit` with a status or `.uncaughtSignal` (after the exit).
    public var terminationReason: Process.TerminationReason { process.terminationReason }

    /// Waits (at most `deadline`, default: `defaultDeadline`) until `condition(stdout)` holds; throws if the
    /// process exits first.
    public func waitForOutput(
        _ what: String, deadline: Duration? = nil, _ condition: (String) -> Bool
    ) async throws {
        let end = ContinuousClock.now + (deadline ?? defaultDeadline).scaledForBuild
        while !condition(stdout) {
            guard !hasExited else { throw TimedOut(description: "exited before \(what): \(stdout) \(stderr)") }
            guard ContinuousClock.now < end else { throw TimedOut(description: "no \(what): \(stdout) \(stderr)") }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Sends `signal` and waits (at most `deadline`, default: `defaultDeadline`) for the exit; its status.
    public func stop(_ signal: Int32, deadline: Duration? = nil) async throws -> Int32 {
        kill(process.processIdentifier, signal)
        return try await waitForExit(deadline: deadline)
    }

    /// The exit status, waiting at most `deadline` (default: `defaultDeadline`); past it the process is
    /// killed and this throws.
    public func waitForExit(deadline: Duration? = nil) async throws -> Int32 {
        let deadline = (deadline ?? defaultDeadline).scaledForBuild
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
            let name = process.executableURL?.lastPathComponent ?? "the process"
            let (exited, ended) = state.withLock { ($0.status != nil, $0.endedPipes.count) }
            throw TimedOut(
                description: """
                    \(name) did not exit within \(deadline) (exit \(exited ? "seen" : "not seen"), \(ended) of 2 \
                    output pipes at their end): \(stdout) \(stderr)
                    """)
        }
        return status
    }

    deinit {
        if !hasExited { kill(process.processIdentifier, SIGKILL) }
    }
}
