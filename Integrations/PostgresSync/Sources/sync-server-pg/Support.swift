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

/// SIGINT and SIGTERM, delivered to a dispatch source rather than a signal handler.
enum StopSignal {
    /// Suspends until SIGINT or SIGTERM arrives; returns which.
    static func wait() async -> Int32 {
        await withCheckedContinuation { (continuation: CheckedContinuation<Int32, Never>) in
            let resumed = NIOLockedValueBox(false)
            for number in [SIGINT, SIGTERM] {
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler {
                    guard
                        !resumed.withLockedValue({ old in
                            defer { old = true }
                            return old
                        })
                    else { return }
                    continuation.resume(returning: number)
                }
                source.resume()
                sources.append(source)
            }
        }
    }

    /// Keeps the sources alive for the life of the process. `nonisolated(unsafe)`: only `wait()` touches
    /// it, once, from the main code before it suspends.
    nonisolated(unsafe) private static var sources: [any DispatchSourceSignal] = []
}
