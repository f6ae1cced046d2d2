/// One `observe(on:)` subscription: a relay whose drains run on the executor, with this single
/// subscriber. The relay's executor drain is the whole hop; its waiting `remove` gives the invalidation
/// guarantee; with `.latest` it conflates values still waiting.
@usableFromInline
final class ObserveOnStorage<Output: Sendable, Failure: Error>: Cancellation, @unchecked Sendable {
    // @unchecked Sendable: the state machine lives in the relay's `Extra`, guarded by its lock; `link` is
    // thread-safe; `subscriber` is written once in `init`, before sharing.
    @usableFromInline typealias Machine = ForwardingStateMachine<Output, Failure>

    @usableFromInline let relay: Relay<Output, Failure, Machine>
    @usableFromInline let link = UpstreamLink()
    @usableFromInline var subscriber: Subscriber<Output, Failure>!

    @inlinable
    init(
        executor: any StreamExecutor,
        buffering: BufferingPolicy,
        onValue: @escaping @Sendable (Output) -> Void,
        onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
    ) {
        relay = Relay(extra: Machine(), executor: executor, conflatesValues: buffering == .latest)
        super.init()
        subscriber = relay.attach(onValue: onValue, onCompletion: onCompletion)
    }

    @inlinable
    func connect<Upstream: SyncStream>(to upstream: Upstream)
    where Upstream.Output == Output, Upstream.Failure == Failure {
        let relay = self.relay
        let token = upstream.subscribe(
            onValue: { value in _ = relay.step { $0.valueReceived(value) } },
            onCompletion: { completion in _ = relay.step { $0.completed(completion) } }
        )
        link.attach(token)
    }

    @usableFromInline
    override func cancel(waiting: Bool) {
        relay.remove(subscriber, waiting: waiting)
        switch relay.withExtra({ $0.cancelled() }) {
        case .endUpstream:
            // Without waiting: late upstream events reach a relay with no subscriber.
            link.end()
        }
    }
}
