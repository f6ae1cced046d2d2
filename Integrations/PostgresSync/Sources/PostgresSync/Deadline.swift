import NIOConcurrencyHelpers

/// Runs `body` in a task of its own and returns its result, or throws
/// `PostgresPartitionStoreError.timedOut` once `timeout` passed without one (then the task is cancelled
/// and its result dropped).
///
/// Unlike a task group, the caller gets control back on time even when `body` ignores cancellation (a
/// query on a connection whose peer went silent).
func withDeadline<Result: Sendable>(
    _ timeout: Duration,
    _ operation: String,
    _ body: @escaping @Sendable () async throws -> Result
) async throws -> Result {
    let pending = NIOLockedValueBox<CheckedContinuation<Result, any Error>?>(nil)
    let timer = NIOLockedValueBox<Task<Void, Never>?>(nil)
    @Sendable func finish(_ outcome: Swift.Result<Result, any Error>) {
        let continuation = pending.withLockedValue { continuation in
            defer { continuation = nil }
            return continuation
        }
        continuation?.resume(with: outcome)
    }
    return try await withCheckedThrowingContinuation { continuation in
        pending.withLockedValue { $0 = continuation }
        let work = Task {
            do {
                finish(.success(try await body()))
            } catch {
                finish(.failure(error))
            }
            timer.withLockedValue { $0?.cancel() }
        }
        let sleeper = Task {
            do { try await Task.sleep(for: timeout) } catch { return }
            work.cancel()
            finish(.failure(PostgresPartitionStoreError.timedOut(operation: operation, after: timeout)))
        }
        timer.withLockedValue { $0 = sleeper }
        // The work may have finished before the timer was stored: cancel it then.
        if pending.withLockedValue({ $0 == nil }) { sleeper.cancel() }
    }
}
