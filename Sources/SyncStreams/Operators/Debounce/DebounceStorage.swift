/// One debounce subscription: the state machine in a relay delivering on the executor, the quiet-time
/// timer on the same executor, and the upstream link.
final class DebounceStorage<Output: Sendable, Failure: Error>: Cancellation, @unchecked Sendable {
    // @unchecked Sendable: the state machine lives in the relay's `Extra`, guarded by its lock; `link` is
    // thread-safe; `subscriber` is written once in `init`, before sharing; the rest is immutable.
    typealias Machine = DebounceStateMachine<Output, Failure>

    private let relay: Relay<Output, Failure, Machine>
    private let executor: any StreamExecutor
    private let link = UpstreamLink()
    private var subscriber: Subscriber<Output, Failure>!

    init(
        interval: Duration,
        executor: any StreamExecutor,
        onValue: @escaping @Sendable (Output) -> Void,
        onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
    ) {
        self.executor = executor
        relay = Relay(extra: Machine(interval: interval), executor: executor)
        super.init()
        subscriber = relay.attach(onValue: onValue, onCompletion: onCompletion)
    }

    func connect<Upstream: SyncStream>(to upstream: Upstream)
    where Upstream.Output == Output, Upstream.Failure == Failure {
        let token = upstream.subscribe(
            onValue: { value in self.perform(self.relay.step { $0.valueReceived(value) }) },
            onCompletion: { completion in self.perform(self.relay.step { $0.completed(completion) }) }
        )
        link.attach(token)
    }

    private func perform(_ effect: TimedEffect<Output>?) {
        relay.perform(effect, executor: executor, link: link) { epoch in
            self.perform(self.relay.step { $0.timerFired(epoch: epoch) })
        }
    }

    override func cancel(waiting: Bool) {
        relay.remove(subscriber, waiting: waiting)
        perform(relay.withExtra { $0.cancelled() })
    }
}
