import Foundation
import SyncEngine

/// A condition a test waited for did not come true before its deadline.
struct TimedOut: Error, CustomStringConvertible {
    let what: String
    var description: String { "timed out waiting for \(what)" }
}

/// Polls `condition` until it holds, or throws `TimedOut` after `limit` (a generous deadline, never a
/// measurement).
func eventually(
    _ what: String,
    limit: Duration = .seconds(60),
    _ condition: () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + limit
    while try await !condition() {
        if ContinuousClock.now > deadline { throw TimedOut(what: what) }
        try await Task.sleep(for: .milliseconds(5))
    }
}

/// Everything a stream emitted so far, collected under a lock.
final class Collected<Value: Sendable>: @unchecked Sendable {
    // @unchecked Sendable: `values` is used under `lock`; `token` is immutable.
    private let lock = NSLock()
    private var storage: [Value] = []
    private var token: SubscriptionToken?

    init<S: SyncStream>(_ stream: S) where S.Output == Value, S.Failure == Never {
        let token = stream.subscribe(onValue: { [weak self] value in self?.append(value) }, onCompletion: { _ in })
        lock.withLock { self.token = token }
    }

    private func append(_ value: Value) { lock.withLock { storage.append(value) } }

    var values: [Value] { lock.withLock { storage } }
}

/// A directory under the system's temporary directory, removed by `remove()`.
struct TemporaryDirectory: Sendable {
    let url: URL

    init() {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("PostgresSyncTests-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func remove() { try? FileManager.default.removeItem(at: url) }
}

/// The elements of an `AsyncStream`, consumed by a task of its own, so that a test can wait for them
/// with a deadline.
final class Drained<Element: Sendable>: @unchecked Sendable {
    // @unchecked Sendable: `storage` and `ended` are used under `lock`.
    private let lock = NSLock()
    private var storage: [Element] = []
    private var ended = false
    private var task: Task<Void, Never>?

    init(_ stream: AsyncStream<Element>) {
        let task = Task { [weak self] in
            for await element in stream { self?.lock.withLock { self?.storage.append(element) } }
            self?.lock.withLock { self?.ended = true }
        }
        lock.withLock { self.task = task }
    }

    deinit { task?.cancel() }

    var values: [Element] { lock.withLock { storage } }
    var isFinished: Bool { lock.withLock { ended } }
}
