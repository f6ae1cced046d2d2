import SyncStreams

/// The elements of an `AsyncStream`, consumed by a task of its own, so that a test can wait for them
/// with a deadline.
public final class Drained<Element: Sendable>: Sendable {
    private let state: Locked<(values: [Element], ended: Bool)>
    private let task: Task<Void, Never>

    public init(_ stream: AsyncStream<Element>) {
        let state = Locked<(values: [Element], ended: Bool)>(([], false))
        self.state = state
        task = Task {
            for await element in stream { state.withLock { $0.values.append(element) } }
            state.withLock { $0.ended = true }
        }
    }

    deinit { task.cancel() }

    public var values: [Element] { state.withLock { $0.values } }
    public var isFinished: Bool { state.withLock { $0.ended } }
}
