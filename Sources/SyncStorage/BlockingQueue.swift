import Dispatch

/// Runs blocking work (file reads, writes, fsync) on a dispatch queue, never on Swift's cooperative pool,
/// and hands the result back to the awaiting task.
package struct BlockingQueue: Sendable {
    fileprivate let queue: DispatchQueue

    /// A serial queue (the work of one file, in order), or a concurrent one.
    package init(label: String, concurrent: Bool = false) {
        queue = concurrent ? DispatchQueue(label: label, attributes: .concurrent) : DispatchQueue(label: label)
    }

    /// Runs `body` on the queue and returns what it returns or throws.
    package func run<T: Sendable, E: Error>(_ body: @escaping @Sendable () throws(E) -> T) async throws(E) -> T {
        try await run(body, afterEnqueue: {})
    }

    /// `run(_:)`, calling `afterEnqueue` once the work is queued, before the task suspends: a test lets the
    /// work finish there, which makes the task go on through the runtime's already-resumed path.
    package func run<T: Sendable, E: Error>(
        _ body: @escaping @Sendable () throws(E) -> T, afterEnqueue: () -> Void
    ) async throws(E) -> T {
        let result: Result<T, E> = await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: Result { () throws(E) -> T in try body() }) }
            afterEnqueue()
        }
        return try result.get()
    }
}

extension BlockingQueue {
    /// Runs `body` on the queue without waiting for it.
    package func runDetached(_ body: @escaping @Sendable () -> Void) {
        queue.async(execute: body)
    }
}
