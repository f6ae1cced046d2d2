/// One `zip` subscription: the state machine in a relay delivering to one subscriber, and a link per
/// input. Values that arrive while the subscriber is busy are queued, never lost; delivery is serialized.
final class ZipStorage<Buffers: Sendable, Output: Sendable, Failure: Error>: Cancellation, @unchecked Sendable {
    // @unchecked Sendable: the state machine lives in the relay's `Extra`, guarded by its lock; `links` is
    // a fixed array of thread-safe objects; `subscriber` is written once in `init`, before sharing.
    typealias Machine = ZipStateMachine<Buffers, Output, Failure>

    private let relay: Relay<Output, Failure, Machine>
    private let links: [UpstreamLink]
    private var subscriber: Subscriber<Output, Failure>!

    init(
        machine: Machine,
        inputCount: Int,
        onValue: @escaping @Sendable (Output) -> Void,
        onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
    ) {
        relay = Relay(extra: machine)
        links = (0..<inputCount).map { _ in UpstreamLink() }
        super.init()
        subscriber = relay.attach(onValue: onValue, onCompletion: onCompletion)
    }

    /// Subscribes to input `index`; `store` appends its value to its buffer.
    func connect<S: SyncStream>(
        _ index: Int,
        to stream: S,
        store: @escaping @Sendable (inout Buffers, S.Output) -> Void
    ) where S.Failure == Failure {
        guard !(relay.withExtra { $0.isTerminated }) else { return }
        let token = stream.subscribe(
            onValue: { value in self.perform(self.relay.step { $0.valueReceived(index) { store(&$0, value) } }) },
            onCompletion: { completion in self.perform(self.relay.step { $0.completed(index, completion) }) }
        )
        links[index].attach(token)
    }

    private func perform(_ effect: Machine.Effect?) {
        switch effect {
        case nil:
            return
        case .cancelInputs:
            for link in links { link.end() }
        }
    }

    override func cancel(waiting: Bool) {
        relay.remove(subscriber, waiting: waiting)
        perform(relay.withExtra { $0.cancelled() })
    }
}
