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

/// SIGINT and SIGTERM, delivered to a dispatch source rather than a signal handler.
enum StopSignal {
    /// Suspends until SIGINT or SIGTERM arrives; returns which. The handler closures are formed here,
    /// outside the main actor, because dispatch runs them on its own threads.
    static func wait() async -> Int32 {
        await withCheckedContinuation { (continuation: CheckedContinuation<Int32, Never>) in
            let resumed = Locked(false)
            for number in [SIGINT, SIGTERM] {
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler {
                    guard
                        !resumed.withLock({ old in
                            defer { old = true }; return old
                        })
                    else { return }
                    continuation.resume(returning: number)
                }
                source.resume()
                sources.withLock { $0.append(SignalSource(source)) }
            }
        }
    }

    /// Keeps the sources alive for the life of the process.
    private static let sources = Locked<[SignalSource]>([])
}

/// A dispatch signal source kept alive in a lock.
private struct SignalSource: @unchecked Sendable {
    // @unchecked Sendable: Dispatch sources are thread-safe (Dispatch on Linux does not annotate them);
    // this one is only stored, never touched again.
    let source: any DispatchSourceSignal
    init(_ source: any DispatchSourceSignal) { self.source = source }
}
