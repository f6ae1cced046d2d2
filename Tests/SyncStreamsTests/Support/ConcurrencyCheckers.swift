import Synchronization

@testable import SyncStreams

/// Counts callbacks that overlap (run concurrently): serialized delivery keeps it at zero.
final class SerialChecker: Sendable {
    private let inside = Atomic<Int>(0)
    private let overlapCount = Atomic<Int>(0)

    func enter() {
        if inside.add(1, ordering: .sequentiallyConsistent).newValue != 1 {
            overlapCount.add(1, ordering: .relaxed)
        }
    }

    func leave() { inside.subtract(1, ordering: .sequentiallyConsistent) }

    var overlaps: Int { overlapCount.load(ordering: .relaxed) }
}

/// Tracks, per position, the latest value seen in combined arrays, checking it never goes backwards.
final class LastSeen: Sendable {
    private let state: Locked<(latest: [Int], monotonic: Bool)>

    init(count: Int) { state = Locked((Array(repeating: 0, count: count), true)) }

    func observe(_ values: [Int]) {
        state.withLock { state in
            for (index, value) in values.enumerated() {
                if value < state.latest[index] { state.monotonic = false }
                state.latest[index] = value
            }
        }
    }

    var isMonotonic: Bool { state.withLock { $0.monotonic } }
    var final: [Int] { state.withLock { $0.latest } }
}
