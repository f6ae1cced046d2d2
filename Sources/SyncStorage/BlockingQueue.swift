import Dispatch
import SyncStreams

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
        // The result goes through a pthread mutex, not only through the continuation: when the work resumes
        // the continuation before this task has suspended, the task goes on through the concurrency
        // runtime's already-resumed path, which orders it after the work with an atomic ThreadSanitizer
        // cannot see (the runtime is not instrumented, and that path makes no TSan annotation), so every
        // read of what the work built was reported as a data race (issue 20: StoreFile.swift:65 against its
        // initialiser). The mutex is a happens-before edge TSan sees; the real ordering was never missing.
        let slot = Locked<Result<T, E>?>(nil)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async {
                let result = Result { () throws(E) -> T in try body() }
                slot.withLock { $0 = result }
                continuation.resume()
            }
            afterEnqueue()
        }
        // Set before the continuation was resumed.
        return try slot.withLock { $0! }.get()
    }
}

extension BlockingQueue {
    /// Runs `body` on the queue without waiting for it.
    package func runDetached(_ body: @escaping @Sendable () -> Void) {
        queue.async(execute: body)
    }
}
