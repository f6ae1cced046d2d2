import Dispatch
import NIOConcurrencyHelpers

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
/// `install()` takes the signals over at once (from then on they no longer end the process); `wait()`
/// returns the first that arrived, at once if one arrived before it was called. So install before the URL
/// line is printed: a signal sent the moment it is read stops the front end cleanly.
final class StopSignal: Sendable {
    private struct State {
        var received: Int32?
        var waiter: CheckedContinuation<Int32, Never>?
    }

    private let state = NIOLockedValueBox(State())

    private init() {}

    /// Ignores SIGINT and SIGTERM's default action and starts a dispatch source for each.
    static func install() -> StopSignal {
        let stop = StopSignal()
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { stop.received(number) }
            source.resume()
            sources.append(source)
        }
        return stop
    }

    private func received(_ number: Int32) {
        let waiter = state.withLockedValue { state -> CheckedContinuation<Int32, Never>? in
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
            let received = state.withLockedValue { state -> Int32? in
                if let received = state.received { return received }
                state.waiter = continuation
                return nil
            }
            if let received { continuation.resume(returning: received) }
        }
    }

    /// Keeps the sources alive for the life of the process. `nonisolated(unsafe)`: only `install()`
    /// touches it, once, from the main code before anything else runs.
    nonisolated(unsafe) private static var sources: [any DispatchSourceSignal] = []
}
