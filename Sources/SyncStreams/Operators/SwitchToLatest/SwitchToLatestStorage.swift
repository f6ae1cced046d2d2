/// One `switchToLatest` subscription: the state machine in a relay delivering to one subscriber, the
/// outer link, and the current inner link (held by the state machine, released outside the lock).
final class SwitchToLatestStorage<Inner: SyncStream>: Cancellation, @unchecked Sendable {
    // @unchecked Sendable: the state machine lives in the relay's `Extra`, guarded by its lock;
    // `outerLink` is thread-safe; `subscriber` is written once in `init`, before sharing.
    typealias Output = Inner.Output
    typealias Failure = Inner.Failure
    typealias Machine = SwitchToLatestStateMachine<Output, Failure, UpstreamLink>

    private let relay: Relay<Output, Failure, Machine>
    private let outerLink = UpstreamLink()
    private var subscriber: Subscriber<Output, Failure>!

    init(
        onValue: @escaping @Sendable (Output) -> Void,
        onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
    ) {
        relay = Relay(extra: Machine())
        super.init()
        subscriber = relay.attach(onValue: onValue, onCompletion: onCompletion)
    }

    func connect<Outer: SyncStream>(to outer: Outer) where Outer.Output == Inner, Outer.Failure == Failure {
        let token = outer.subscribe(
            onValue: { inner in
                self.perform(self.relay.step { $0.innerArrived(UpstreamLink()) }, inner: inner)
            },
            onCompletion: { completion in self.perform(self.relay.step { $0.outerCompleted(completion) }) }
        )
        outerLink.attach(token)
    }

    private func perform(_ effect: Machine.Effect?, inner: Inner? = nil) {
        guard let effect else { return }
        switch effect {
        case .subscribeInner(let index, let link, let previous):
            previous?.end()
            guard let inner else { return }
            let token = inner.subscribe(
                onValue: { value in self.perform(self.relay.step { $0.innerValue(index, value) }) },
                onCompletion: { completion in self.perform(self.relay.step { $0.innerCompleted(index, completion) }) }
            )
            link.attach(token)
        case .endInner(let link):
            link.end()
        case .endAll(let inner):
            outerLink.end()
            inner?.end()
        }
    }

    override func cancel(waiting: Bool) {
        relay.remove(subscriber, waiting: waiting)
        perform(relay.withExtra { $0.cancelled() })
    }
}
