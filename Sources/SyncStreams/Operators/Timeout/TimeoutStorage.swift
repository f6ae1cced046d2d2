/// One timeout subscription: the state machine in a relay that delivers inline (values pass on the
/// upstream's thread) and serializes them with the timer's completion, the timer on the executor, and
/// the upstream link.
final class TimeoutStorage<Output: Sendable, Failure: Error>: Cancellation, @unchecked Sendable {
    // @unchecked Sendable: the state machine lives in the relay's `Extra`, guarded by its lock; `link` is
    // thread-safe; `subscriber` is written once in `init`, before sharing; the rest is immutable.
    typealias Machine = TimeoutStateMachine<Output, Failure>

    private let relay: Relay<Output, Failure, Machine>
    private let executor: any StreamExecutor
    private let link = UpstreamLink()
    private var subscriber: Subscriber<Output, Failure>!

    init(
        interval: Duration,
        executor: any StreamExecutor,
        customError: (@Sendable () -> Failure)?,
        onValue: @escaping @Sendable (Output) -> Void,
        onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
    ) {
        self.executor = executor
        let machine = Machine(start: executor.now, interval: interval) {
            customError.map { .failure($0()) } ?? .finished
        }
        relay = Relay(extra: machine)
        super.init()
        subscriber = relay.attach(onValue: onValue, onCompletion: onCompletion)
    }

    /// Starts the clock, then subscribes to the upstream.
    func connect<Upstream: SyncStream>(to upstream: Upstream)
    where Upstream.Output == Output, Upstream.Failure == Failure {
        perform(relay.withExtra { $0.started() })
        let token = upstream.subscribe(
            onValue: { value in
                let now = self.executor.now
                self.perform(self.relay.step { $0.valueReceived(value, at: now) })
            },
            onCompletion: { completion in self.perform(self.relay.step { $0.completed(completion) }) }
        )
        link.attach(token)
    }

    private func perform(_ effect: TimedEffect<Output>?) {
        relay.perform(effect, executor: executor, link: link) { epoch in
            let now = self.executor.now
            self.perform(self.relay.step { $0.timerFired(epoch: epoch, at: now) })
        }
    }

    override func cancel(waiting: Bool) {
        relay.remove(subscriber, waiting: waiting)
        perform(relay.withExtra { $0.cancelled() })
    }
}
