import Dispatch
import SyncServer
import SyncStreams

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes to standard output or error, unbuffered (a supervisor reading the URL line sees it at once).
enum FileHandleOutput {
    static func standardOutput(_ text: String) { write(text, to: 1) }
    static func standardError(_ text: String) { write(text, to: 2) }

    private static func write(_ text: String, to descriptor: Int32) {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let count = bytes[offset...].withUnsafeBytes { systemWrite(descriptor, $0.baseAddress, $0.count) }
            if count <= 0 { return }
            offset += count
        }
    }
}

private func systemWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
    write(descriptor, buffer, count)
}

/// SIGINT and SIGTERM, delivered to dispatch sources rather than a signal handler.
///
/// `install()` takes the signals over at once (their default action, ending the process, is gone from
/// then on); `wait()` returns the first that arrived, at once if one arrived before it was called. So
/// install before telling anyone the server is up: a signal right after the URL line then stops the
/// server cleanly.
final class StopSignal: Sendable {
    private struct State {
        var received: Int32?
        var waiter: CheckedContinuation<Int32, Never>?
    }

    private let state = Locked(State())
    private let sources = Locked<[any DispatchSourceSignal]>([])

    private init() {}

    /// Ignores SIGINT and SIGTERM's default action and starts listening for them.
    static func install() -> StopSignal {
        let stop = StopSignal()
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { stop.received(number) }
            source.resume()
            stop.sources.withLock { $0.append(source) }
        }
        return stop
    }

    private func received(_ number: Int32) {
        let waiter = state.withLock { state -> CheckedContinuation<Int32, Never>? in
            guard state.received == nil else { return nil }
            state.received = number
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: number)
    }

    /// Suspends until SIGINT or SIGTERM arrived (returns at once if one already did); returns which.
    func wait() async -> Int32 {
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

/// The process's limit on open file descriptors (`RLIMIT_NOFILE`).
enum DescriptorLimit {
    /// Raises the soft limit to the hard limit (on Darwin at most `OPEN_MAX`, what `setrlimit` accepts)
    /// and returns the soft limit in effect afterwards; `nil` if it cannot be read. Each connection costs
    /// the server one descriptor and each loaded partition two, so the default soft limit (often 1,024)
    /// would cap a server far below what it can serve.
    @discardableResult
    static func raiseToHardLimit() -> UInt64? {
        var limit = rlimit()
        guard getrlimit(resource, &limit) == 0 else { return nil }
        var target = limit.rlim_max
        #if canImport(Darwin)
            target = min(target, rlim_t(OPEN_MAX))
        #endif
        if limit.rlim_cur < target {
            var raised = limit
            raised.rlim_cur = target
            if setrlimit(resource, &raised) == 0 { return UInt64(target) }
        }
        return UInt64(limit.rlim_cur)
    }

    #if canImport(Glibc)
        private static let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
        private static let resource = RLIMIT_NOFILE
    #endif
}
