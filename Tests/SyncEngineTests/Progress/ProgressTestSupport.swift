import Synchronization

@testable import SyncEngine

/// `SyncProgress(transferredBytes: t, transferrableBytes: total, progressEstimate: estimate)`, short for
/// the tables in these tests.
func progress(_ t: Int, _ total: Int, _ estimate: Double) -> SyncProgress {
    SyncProgress(transferredBytes: t, transferrableBytes: total, progressEstimate: estimate)
}

/// One event a `ProgressRecorder` saw.
enum ProgressEvent: Equatable, Sendable, CustomStringConvertible {
    case value(SyncProgress)
    case finished

    var description: String {
        switch self {
        case .value(let progress): "value(\(progress))"
        case .finished: "finished"
        }
    }
}

/// A test subscriber that records every event in order, thread-safely, and counts overlapping callbacks.
final class ProgressRecorder: Sendable {
    private let storage = Locked<[ProgressEvent]>([])
    private let inside = Atomic<Int>(0)
    private let overlapCount = Atomic<Int>(0)

    init() {}

    var events: [ProgressEvent] { storage.withLock { $0 } }

    var values: [SyncProgress] {
        events.compactMap { if case .value(let value) = $0 { value } else { nil } }
    }

    var finishCount: Int { events.count { $0 == .finished } }

    /// How many times a callback started while another one of this recorder was running.
    var overlaps: Int { overlapCount.load(ordering: .relaxed) }

    func record(_ event: ProgressEvent) {
        if inside.add(1, ordering: .sequentiallyConsistent).newValue != 1 {
            overlapCount.add(1, ordering: .relaxed)
        }
        storage.withLock { $0.append(event) }
        inside.subtract(1, ordering: .sequentiallyConsistent)
    }

    func subscribe(to stream: AnySyncStream<SyncProgress, Never>) -> SubscriptionToken {
        stream.subscribe(
            onValue: { self.record(.value($0)) },
            onCompletion: { _ in self.record(.finished) }
        )
    }
}

/// An ordered log of labelled steps from callbacks, to check interleavings in re-entrancy tests.
final class StepLog: Sendable {
    private let storage = Locked<[String]>([])

    init() {}

    var steps: [String] { storage.withLock { $0 } }

    func append(_ step: String) { storage.withLock { $0.append(step) } }
}

/// Holds a token (or anything) so that callbacks and other threads can reach it.
final class Slot<Value: Sendable>: Sendable {
    private let storage: Locked<Value?>

    init(_ value: Value? = nil) { storage = Locked(value) }

    var value: Value? {
        get { storage.withLock { $0 } }
        set { storage.withLock { $0 = newValue } }
    }
}

/// A flag any thread may set and read.
final class Flag: Sendable {
    private let storage = Atomic<Bool>(false)

    init() {}

    var isSet: Bool { storage.load(ordering: .sequentiallyConsistent) }

    func set() { storage.store(true, ordering: .sequentiallyConsistent) }
}

/// A counter any thread may change.
final class Counter: Sendable {
    private let storage = Atomic<Int>(0)

    init() {}

    var value: Int { storage.load(ordering: .sequentiallyConsistent) }

    /// Adds one; returns the new value.
    @discardableResult
    func increment() -> Int { storage.add(1, ordering: .sequentiallyConsistent).newValue }
}

/// An object whose lifetime a test watches through a weak reference.
final class Canary: Sendable {
    init() {}

    /// Gives a closure a use of the canary, so that it captures it.
    func touch() {}
}
