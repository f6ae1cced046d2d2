/// One `merge` subscription: the state machine in a relay that forwards every input's values to one
/// subscriber, serialized, and a link per input.
final class MergeStorage<Output: Sendable, Failure: Error>: Cancellation, @unchecked Sendable {
    // @unchecked Sendable: the state machine lives in the relay's `Extra`, guarded by its lock; `links` is
    // a fixed array of thread-safe objects; `subscriber` is written once in `init`, before sharing.
    typealias Machine = MergeStateMachine<Output, Failure>

    private let relay: Relay<Output, Failure, Machine>
    private let links: [UpstreamLink]
    private var subscriber: Subscriber<Output, Failure>!

    init(
        inputCount: Int,
        onValue: @escaping @Sendable (Output) -> Void,
        onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
    ) {
        relay = Relay(extra: Machine(inputCount: inputCount))
        links = (0..<inputCount).map { _ in UpstreamLink() }
        super.init()
        subscriber = relay.attach(onValue: onValue, onCompletion: onCompletion)
    }

    func connect<S: SyncStream>(_ index: Int, to stream: S) where S.Output == Output, S.Failure == Failure {
        guard !(relay.withExtra { $0.isTerminated }) else { return }
        let token = stream.subscribe(
            onValue: { value in self.perform(self.relay.step { $0.valueReceived(value) }) },
            onCompletion: { completion in self.perform(self.relay.step { $0.completed(completion) }) }
        )
        links[index].attach(token)
    }

    private func perform(_ effect: Machine.Effect?) {
        guard let effect else { return }
        switch effect {
        case .cancelInputs:
            for link in links { link.end() }
        }
    }

    override func cancel(waiting: Bool) {
        relay.remove(subscriber, waiting: waiting)
        perform(relay.withExtra { $0.cancelled() })
    }
}
