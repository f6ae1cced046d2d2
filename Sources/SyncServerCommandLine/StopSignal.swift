import Dispatch
import Foundation
import SyncStreams

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// SIGINT, SIGTERM and SIGHUP, through a self-pipe: a signal handler writes the signal's number to a pipe made at
/// start, and a thread of its own reads it. Nothing is allocated when the signal arrives — no descriptor
/// (a dispatch signal source may need one, and none may be left), no memory.
///
/// `install(programName:)` takes the signals over at once (their default action, ending the process, is
/// gone from then on); `wait()` returns the first SIGINT or SIGTERM that arrived, at once if one arrived
/// before it was called. So install before telling anyone the server is up: a signal right after the URL
/// line then stops the server cleanly. Later SIGINTs and SIGTERMs are counted (`stopCount`: a second one
/// may cut a drain short); SIGHUP runs the `onHangUp` handler, and is ignored while there is none.
public final class StopSignal: Sendable {
    private struct State {
        var received: Int32?
        var waiter: CheckedContinuation<Int32, Never>?
        /// SIGINTs and SIGTERMs so far.
        var stops = 0
        var onHangUp: (@Sendable () -> Void)?
    }

    // A pthread mutex (`Locked`), which ThreadSanitizer understands (not `Synchronization.Mutex`: on Linux it
    // reports false races between the signal thread and `wait()`).
    private let state = Locked(State())

    private init() {}

    /// Makes the pipe, installs the handler for SIGINT, SIGTERM and SIGHUP, and starts the thread that
    /// reads the pipe. Call it once, first thing in `main` (before other threads start). Exits with status
    /// 1, after `<programName>: cannot make the signal pipe: errno N` on standard error, if the pipe cannot
    /// be made.
    public static func install(programName: String) -> StopSignal {
        let stop = StopSignal()
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else {
            FileHandleOutput.standardError("\(programName): cannot make the signal pipe: errno \(errno)\n")
            exit(1)
        }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        signalPipeWriteEnd = ends[1]
        for number in [SIGINT, SIGTERM, SIGHUP] {
            var action = sigaction()
            #if canImport(Glibc)
                action.__sigaction_handler.sa_handler = { number in
                    var byte = UInt8(truncatingIfNeeded: number)
                    _ = write(signalPipeWriteEnd, &byte, 1)
                }
            #else
                action.__sigaction_u.__sa_handler = { number in
                    var byte = UInt8(truncatingIfNeeded: number)
                    _ = write(signalPipeWriteEnd, &byte, 1)
                }
            #endif
            action.sa_flags = SA_RESTART
            sigemptyset(&action.sa_mask)
            sigaction(number, &action, nil)
        }
        let readEnd = ends[0]
        let thread = Thread {
            var byte: UInt8 = 0
            while true {
                let count = read(readEnd, &byte, 1)
                if count == 1 {
                    stop.received(Int32(byte))
                    continue
                }
                if count < 0 && errno == EINTR { continue }
                return
            }
        }
        thread.stackSize = 64 * 1024
        thread.start()
        return stop
    }

    /// Lets dispatch set up what it needs descriptors for — its event loop and the main queue's wake-up
    /// handle (used when code resumes on the main actor) — before the server opens anything. At a low
    /// descriptor limit the server's own calls then fail with `EMFILE` and a typed error, instead of
    /// dispatch failing later and trapping. Await it from the main actor.
    public static func prepareDispatch() async {
        // `asyncAfter` goes through dispatch's event loop; resuming from its thread onto the main actor
        // (twice: once the main thread has handed the main queue over) wakes the main queue.
        for _ in 0..<2 {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(5)) { continuation.resume() }
            }
        }
    }

    /// Runs `handler` on the signal thread for each SIGHUP from now on (before: SIGHUP is ignored). The
    /// thread reads no further signal until `handler` returns: blocking work (reading a file) is fine there,
    /// long work is not.
    public func onHangUp(_ handler: @escaping @Sendable () -> Void) {
        state.withLock { $0.onHangUp = handler }
    }

    /// How many SIGINTs and SIGTERMs arrived so far.
    public var stopCount: Int { state.withLock { $0.stops } }

    private func received(_ number: Int32) {
        if number == SIGHUP {
            state.withLock { $0.onHangUp }?()
            return
        }
        let waiter = state.withLock { state -> CheckedContinuation<Int32, Never>? in
            state.stops += 1
            guard state.received == nil else { return nil }
            state.received = number
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: number)
    }

    /// Suspends until SIGINT or SIGTERM arrived (returns at once if one already did); returns which. Call
    /// it from one task at a time.
    public func wait() async -> Int32 {
        await withCheckedContinuation { (continuation: CheckedContinuation<Int32, Never>) in
            let received = state.withLock { state -> Int32? in
                if let received = state.received { return received }
                state.waiter = continuation
                return nil
            }
            if let received { continuation.resume(returning: received) }
        }
    }
}

/// The write end of `StopSignal`'s pipe, read by its signal handler (set once, before the handler is
/// installed).
nonisolated(unsafe) private var signalPipeWriteEnd: Int32 = -1
