import SyncStreams

/// Everything a stream emitted so far, and whether it finished, collected under a lock for assertions.
public final class Collected<Value: Sendable>: Sendable {
    private let storage: Locked<(values: [Value], finished: Bool)>
    /// The subscription, held as long as this lives.
    public let token: SubscriptionToken

    public init<S: SyncStream>(_ stream: S) where S.Output == Value {
        let storage = Locked<(values: [Value], finished: Bool)>(([], false))
        self.storage = storage
        token = stream.subscribe(
            onValue: { value in storage.withLock { $0.values.append(value) } },
            onCompletion: { _ in storage.withLock { $0.finished = true } }
        )
    }

    public var values: [Value] { storage.withLock { $0.values } }
    public var isFinished: Bool { storage.withLock { $0.finished } }
}
