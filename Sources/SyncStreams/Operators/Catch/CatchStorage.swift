/// One `catch` subscription: the state machine in a relay delivering inline to one subscriber, the
/// upstream's link and the replacement's.
///
/// The relay gates every delivery, so invalidation waits (when it waits at all) only for this
/// subscriber's own callback, and both upstream subscriptions are ended without waiting — also from
/// inside the upstream's failure callback, where the replacement is subscribed to.
final class CatchStorage<Upstream: SyncStream, Replacement: SyncStream>: Cancellation, @unchecked Sendable
where Replacement.Output == Upstream.Output {
    // @unchecked Sendable: the state machine lives in the relay's `Extra`, guarded by its lock; the links
    // are thread-safe; `subscriber` is written once in `init`, before sharing; `handler` is immutable.
    typealias Output = Upstream.Output
    typealias Failure = Replacement.Failure
    typealias Machine = CatchStateMachine<Output, Upstream.Failure, Failure>

    private let relay = Relay<Output, Failure, Machine>(extra: Machine())
    private let handler: @Sendable (Upstream.Failure) -> Replacement
    private let upstreamLink = UpstreamLink()
    private let replacementLink = UpstreamLink()
    private var subscriber: Subscriber<Output, Failure>!

    init(
        handler: @escaping @Sendable (Upstream.Failure) -> Replacement,
        onValue: @escaping @Sendable (Output) -> Void,
        onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
    ) {
        self.handler = handler
        super.init()
        subscriber = relay.attach(onValue: onValue, onCompletion: onCompletion)
    }

    func connect(to upstream: Upstream) {
        let token = upstream.subscribe(
            onValue: { value in self.perform(self.relay.step { $0.upstreamValue(value) }) },
            onCompletion: { completion in self.perform(self.relay.step { $0.upstreamCompleted(completion) }) }
        )
        upstreamLink.attach(token)
    }

    private func perform(_ effect: Machine.Effect?) {
        switch effect {
        case nil:
            return
        case .subscribeReplacement(let error):
            // Runs inside the upstream's failure callback, which a waiting `invalidate()` waits for (see
            // `cancel`): so the replacement is subscribed to before `invalidate()` returns, or not at all.
            // The upstream's subscription is ended only afterwards, so that wait finds it.
            if !replacementLink.isCancelled {
                let token = handler(error).subscribe(
                    onValue: { value in self.perform(self.relay.step { $0.replacementValue(value) }) },
                    onCompletion: { completion in
                        self.perform(self.relay.step { $0.replacementCompleted(completion) })
                    }
                )
                // Ends the token at once if the subscriber invalidated meanwhile.
                replacementLink.attach(token)
            }
            // The upstream has failed: ending its subscription only releases it.
            upstreamLink.end()
        case .endAll:
            upstreamLink.end()
            replacementLink.end()
        }
    }

    /// Ends the subscription. The replacement's link is cancelled first (a replacement subscribed to from
    /// now on is ended at once); then the upstream's subscription is invalidated with `waiting`, which
    /// waits for the upstream's callback in flight — the failure callback that may be subscribing to the
    /// replacement — so no replacement is subscribed to after a waiting `invalidate()` returned.
    override func cancel(waiting: Bool) {
        relay.remove(subscriber, waiting: waiting)
        _ = relay.withExtra { $0.cancelled() }
        replacementLink.end()
        upstreamLink.cancel(waiting: waiting)
    }
}
