/// The engine shared by every `merge`: N inputs forwarded through one relay to one subscriber.
///
/// Values from any input are enqueued in arrival order and delivered serialized; the output finishes when
/// every input finished; the first failure is forwarded at once and ends the other inputs.
final class MergeCore<Output: Sendable, Failure: Error>: Cancellation, @unchecked Sendable {
    // @unchecked Sendable: mutable state is the relay's `Extra`, guarded by its lock; `links` is a fixed
    // array of thread-safe objects; `subscriber` is written once in `init`.
    struct State {
        var liveCount: Int
        var isTerminated = false
    }

    private let relay: Relay<Output, Failure, State>
    private let links: [UpstreamLink]
    private var subscriber: Subscriber<Output, Failure>!

    init(
        inputCount: Int,
        onValue: @escaping @Sendable (Output) -> Void,
        onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
    ) {
        relay = Relay(extra: State(liveCount: inputCount))
        links = (0..<inputCount).map { _ in UpstreamLink() }
        super.init()
        subscriber = relay.attach(onValue: onValue, onCompletion: onCompletion)
    }

    func connect<S: SyncStream>(_ index: Int, to stream: S) where S.Output == Output, S.Failure == Failure {
        guard !(relay.withExtra { $0.isTerminated }) else { return }
        let token = stream.subscribe(
            onValue: { value in
                self.relay.update { state, delivery in
                    if !state.isTerminated { delivery.enqueue(value) }
                }
            },
            onCompletion: { self.complete($0) }
        )
        links[index].attach(token)
    }

    private func complete(_ completion: StreamCompletion<Failure>) {
        let ended = relay.update { state, delivery -> Bool in
            guard !state.isTerminated else { return false }
            state.liveCount -= 1
            if case .finished = completion, state.liveCount > 0 { return false }
            state.isTerminated = true
            delivery.enqueue(completion: completion)
            return true
        }
        if ended { endInputs() }
    }

    private func endInputs() {
        for link in links { link.end() }
    }

    override func cancel(waiting: Bool) {
        relay.remove(subscriber, waiting: waiting)
        relay.withExtra { $0.isTerminated = true }
        endInputs()
    }
}
