@testable import SyncStreams

/// One event a `Recorder` saw.
enum RecordedEvent<Value: Sendable & Equatable, Failure: Error & Equatable>: Equatable, Sendable {
    case value(Value)
    case finished
    case failure(Failure)
}

/// A test subscriber that records every event in order, thread-safely.
final class Recorder<Value: Sendable & Equatable, Failure: Error & Equatable>: Sendable {
    // A pthread-based lock, not Synchronization.Mutex: ThreadSanitizer on Linux understands only the former.
    private let storage = Locked<[RecordedEvent<Value, Failure>]>([])

    init() {}

    var events: [RecordedEvent<Value, Failure>] { storage.withLock { $0 } }

    var values: [Value] {
        events.compactMap { if case .value(let value) = $0 { value } else { nil } }
    }

    var isCompleted: Bool {
        events.contains { if case .value = $0 { false } else { true } }
    }

    /// How many completions (finished or failure) were recorded; more than one breaks the contract.
    var completionCount: Int {
        events.count { if case .value = $0 { false } else { true } }
    }

    func record(_ event: RecordedEvent<Value, Failure>) { storage.withLock { $0.append(event) } }

    /// Records a value; usable as an `onValue` callback.
    func receive(_ value: Value) { record(.value(value)) }

    /// Records a completion; usable as an `onCompletion` callback.
    func receive(completion: StreamCompletion<Failure>) {
        switch completion {
        case .finished: record(.finished)
        case .failure(let error): record(.failure(error))
        }
    }

    func subscribe<S: SyncStream>(to stream: S) -> SubscriptionToken where S.Output == Value, S.Failure == Failure {
        stream.subscribe(
            onValue: { self.receive($0) },
            onCompletion: { self.receive(completion: $0) }
        )
    }

    /// Subscribes, records, and invalidates the subscription from inside the value callback of the first
    /// value for which `shouldInvalidate` is true (that value is recorded first). The token is returned
    /// already stored, so an invalidation that re-enters during `subscribe` finds it only afterwards.
    @discardableResult
    func subscribe<S: SyncStream>(
        to stream: S,
        invalidatingAfter shouldInvalidate: @escaping @Sendable (Value) -> Bool
    ) -> SubscriptionToken where S.Output == Value, S.Failure == Failure {
        let slot = TokenSlot()
        let token = stream.subscribe(
            onValue: { value in
                self.receive(value)
                if shouldInvalidate(value) { slot.invalidate() }
            },
            onCompletion: { self.receive(completion: $0) }
        )
        slot.token = token
        return token
    }
}
