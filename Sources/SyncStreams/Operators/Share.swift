extension SyncStream {
    /// Shares one upstream subscription among all subscribers (multicast, reference-counted).
    ///
    /// - The first subscriber connects to the upstream; later subscribers join that connection and
    ///   receive the values emitted after they subscribed.
    /// - When the last subscriber invalidates, the upstream subscription ends; the next subscriber
    ///   connects anew. When the upstream completes, every current subscriber receives the completion and
    ///   the connection is over; the next subscriber connects anew.
    /// - Delivery to each subscriber is serialized; fan-out never holds a lock.
    ///
    /// ```
    /// upstream:      1 2 3 4 |
    /// subscriber A:  1 2 3 4 |
    /// subscriber B:      3 4 |      (subscribed after 2)
    /// ```
    public func share() -> Streams.Share<Self> { Streams.Share(upstream: self, replay: 0) }

    /// Like `share()`, and a late subscriber first receives the last `count` values of the connection
    /// (a negative `count` counts as 0).
    ///
    /// ```
    /// upstream:               1 2 3 4 |
    /// share(replay: 1), B:        2 3 4 |   (subscribed after 2: gets 2 at once)
    /// ```
    public func share(replay count: Int) -> Streams.Share<Self> {
        Streams.Share(upstream: self, replay: max(count, 0))
    }
}

extension Streams {
    /// The stream returned by `share()` and `share(replay:)`. Copies share the same connection.
    public struct Share<Upstream: SyncStream>: SyncStream {
        public typealias Output = Upstream.Output
        public typealias Failure = Upstream.Failure

        private let core: ShareCore<Upstream>

        init(upstream: Upstream, replay: Int) { core = ShareCore(upstream: upstream, replay: replay) }

        public func subscribe(
            onValue: @escaping @Sendable (Output) -> Void,
            onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
        ) -> SubscriptionToken {
            core.subscribe(onValue: onValue, onCompletion: onCompletion)
        }
    }
}

/// The shared state behind `Streams.Share`: the current connection and its subscriber count.
final class ShareCore<Upstream: SyncStream>: Sendable {
    typealias Output = Upstream.Output
    typealias Failure = Upstream.Failure

    /// One connection to the upstream: a relay fanning out to the subscribers, with the replay buffer in
    /// its state.
    final class Connection: Sendable {
        struct State {
            var replay = FIFO<Output>()
            var subscriberCount = 0
            var isOver = false
        }

        let relay: Relay<Output, Failure, State>
        let link = UpstreamLink()

        init() { relay = Relay(extra: State()) }
    }

    /// A subscriber's hold on a connection: invalidating it detaches the subscriber and, for the last
    /// one, ends the connection.
    final class Membership: Cancellation, @unchecked Sendable {
        // @unchecked Sendable: all properties are immutable references to Sendable objects.
        let core: ShareCore
        let connection: Connection
        let subscriber: Subscriber<Output, Failure>

        init(core: ShareCore, connection: Connection, subscriber: Subscriber<Output, Failure>) {
            self.core = core
            self.connection = connection
            self.subscriber = subscriber
        }

        override func cancel(waiting: Bool) {
            connection.relay.remove(subscriber, waiting: waiting)
            core.release(connection)
        }
    }

    private let upstream: Upstream
    private let replayCount: Int
    private let current = Locked<Connection?>(nil)

    init(upstream: Upstream, replay: Int) {
        self.upstream = upstream
        self.replayCount = replay
    }

    func subscribe(
        onValue: @escaping @Sendable (Output) -> Void,
        onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
    ) -> SubscriptionToken {
        // Join the live connection, or open a new one. The count is taken under the core's lock so a
        // connection cannot be ended between choosing it and joining it.
        let (connection, isNew) = current.withLock { current -> (Connection, Bool) in
            if let live = current,
                live.relay.withExtra({ state in
                    guard !state.isOver else { return false }
                    state.subscriberCount += 1
                    return true
                })
            {
                return (live, false)
            }
            let fresh = Connection()
            fresh.relay.withExtra { $0.subscriberCount = 1 }
            current = fresh
            return (fresh, true)
        }
        let subscriber = connection.relay.attach(onValue: onValue, onCompletion: onCompletion) { state in
            state.replay.elements
        }
        if isNew { connect(connection) }
        return SubscriptionToken(Membership(core: self, connection: connection, subscriber: subscriber))
    }

    private func connect(_ connection: Connection) {
        let replayCount = self.replayCount
        let token = upstream.subscribe(
            onValue: { [weak connection] value in
                guard let connection else { return }
                connection.relay.update { state, delivery in
                    guard !state.isOver else { return }
                    if replayCount > 0 {
                        state.replay.append(value)
                        if state.replay.count > replayCount { _ = state.replay.popFirst() }
                    }
                    delivery.enqueue(value)
                }
            },
            onCompletion: { [weak self, weak connection] completion in
                guard let connection else { return }
                connection.relay.update { state, delivery in
                    state.isOver = true
                    delivery.enqueue(completion: completion)
                }
                self?.forget(connection)
            }
        )
        connection.link.attach(token)
    }

    /// A subscriber left: the last one ends the connection.
    fileprivate func release(_ connection: Connection) {
        let isLast = connection.relay.withExtra { state -> Bool in
            state.subscriberCount -= 1
            guard state.subscriberCount == 0, !state.isOver else { return false }
            state.isOver = true
            return true
        }
        guard isLast else { return }
        forget(connection)
        connection.link.end()
    }

    private func forget(_ connection: Connection) {
        current.withLock { current in
            if current === connection { current = nil }
        }
    }
}
