/// One `subscribe(on:)` subscription. A relay (delivering inline) gates the downstream, because the
/// upstream subscription ends later, on the executor: removing the relay's subscriber is what makes "no
/// callback after `invalidate()` returns" hold.
final class SubscribeOnStorage<Output: Sendable, Failure: Error>: Cancellation, @unchecked Sendable {
    // @unchecked Sendable: the state machine lives in the relay's `Extra`, guarded by its lock; `link` is
    // thread-safe; `subscriber` is written once in `init`, before sharing; `executor` is immutable.
    typealias Machine = ForwardingStateMachine<Output, Failure>

    private let relay = Relay<Output, Failure, Machine>(extra: Machine())
    private let executor: any StreamExecutor
    private let link = UpstreamLink()
    private var subscriber: Subscriber<Output, Failure>!

    init(
        executor: any StreamExecutor,
        onValue: @escaping @Sendable (Output) -> Void,
        onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
    ) {
        self.executor = executor
        super.init()
        subscriber = relay.attach(onValue: onValue, onCompletion: onCompletion)
    }

    func connect<Upstream: SyncStream>(to upstream: Upstream)
    where Upstream.Output == Output, Upstream.Failure == Failure {
        let relay = self.relay
        let link = self.link
        executor.execute {
            guard !link.isCancelled else { return }
            let token = upstream.subscribe(
                onValue: { value in _ = relay.step { $0.valueReceived(value) } },
                onCompletion: { completion in _ = relay.step { $0.completed(completion) } }
            )
            // Ends the token at once if the subscription was invalidated meanwhile.
            link.attach(token)
        }
    }

    override func cancel(waiting: Bool) {
        relay.remove(subscriber, waiting: waiting)
        switch relay.withExtra({ $0.cancelled() }) {
        case .endUpstream:
            // Marks the link cancelled now (a subscribe job that has not run yet skips, or ends what it
            // subscribed at once, on the executor); the upstream token itself is invalidated on the
            // executor.
            guard let token = link.take().token else { return }
            executor.execute { token.invalidate(waiting: false) }
        }
    }
}
