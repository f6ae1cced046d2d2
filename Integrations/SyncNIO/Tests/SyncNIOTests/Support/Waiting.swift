import Foundation
import SyncEngine

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A condition a test waited for did not come true before its deadline.
struct TimedOut: Error, CustomStringConvertible {
    let what: String
    var limit: Duration?
    var description: String { "timed out \(limit.map { "after \($0) " } ?? "")waiting for \(what)" }
}

/// How this test process was built: under a sanitizer or not (as the root package's
/// `Tests/TestSupport/BuildFlavor.swift` tells). Swift has no compile-time condition for a sanitizer, so
/// it is detected at run time: a build with `--sanitize=thread` (`address`) links the sanitizer's runtime,
/// whose entry point `__tsan_init` (`__asan_init`) `dlsym` then finds.
enum BuildFlavor {
    static let threadSanitizer = hasSymbol("__tsan_init")
    static let addressSanitizer = hasSymbol("__asan_init")

    /// What every deadline of the tests is multiplied by: 6 under ThreadSanitizer, 3 under
    /// AddressSanitizer (code runs 5–15× slower there), 1 otherwise.
    static let deadlineScale: Double = threadSanitizer ? 6 : addressSanitizer ? 3 : 1

    private static func hasSymbol(_ name: String) -> Bool {
        #if canImport(Darwin)
            let handle = UnsafeMutableRawPointer(bitPattern: -2)  // RTLD_DEFAULT
        #else
            let handle: UnsafeMutableRawPointer? = nil
        #endif
        return dlsym(handle, name) != nil
    }
}

extension Duration {
    /// This deadline multiplied by `BuildFlavor.deadlineScale`.
    var scaledForBuild: Duration { self * BuildFlavor.deadlineScale }
}

/// The one deadline wait of these tests: polls `condition` until it holds, sleeping between polls (so it
/// never holds a thread of the cooperative pool), and throws `TimedOut` naming `what` once `limit`
/// (multiplied by `BuildFlavor.deadlineScale` under a sanitizer) has passed and one last check after the
/// deadline still fails. The limit is a generous bound for work others do, never a measurement; the
/// default, 60 s (6 minutes under ThreadSanitizer), stays inside the suites' time limits (10 minutes), so a
/// regression reports what it waited for rather than a bare time limit.
func eventually(
    _ what: String,
    limit: Duration = .seconds(60),
    _ condition: () async throws -> Bool
) async throws {
    let limit = limit.scaledForBuild
    let deadline = ContinuousClock.now + limit
    while ContinuousClock.now < deadline {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(5))
    }
    // Once more after the deadline: the condition may have come true while this task waited to run.
    if try await condition() { return }
    throw TimedOut(what: what, limit: limit)
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
        url = FileManager.default.temporaryDirectory.appendingPathComponent("SyncNIOTests-\(UUID().uuidString)")
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
