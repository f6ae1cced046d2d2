/// The shared state behind `Streams.Share`: the current connection to the upstream, if any. A completed
/// connection stays current for good (late subscribers receive its replay and completion); an abandoned
/// one is replaced by the next subscriber's.
final class ShareStorage<Upstream: SyncStream>: Sendable {
    typealias Output = Upstream.Output
    typealias Failure = Upstream.Failure
    typealias Machine = ShareStateMachine<Output, Failure>

    /// One connection to the upstream: a relay fanning out to the subscribers, with the state machine
    /// (replay buffer, subscriber count) in its state.
    final class Connection: Sendable {
        let relay: Relay<Output, Failure, Machine>
        let link = UpstreamLink()

        init(replayCount: Int) { relay = Relay(extra: Machine(replayCount: replayCount)) }

        func perform(_ effect: Machine.Effect?) {
            switch effect {
            case .discard, nil: return
            case .endUpstream: link.end()
            }
        }
    }

    /// A subscriber's hold on a connection: invalidating it detaches the subscriber and, for the last
    /// one, ends the connection.
    final class Membership: Cancellation, @unchecked Sendable {
        // @unchecked Sendable: all properties are immutable references to Sendable objects.
        let storage: ShareStorage
        let connection: Connection
        let subscriber: Subscriber<Output, Failure>

        init(storage: ShareStorage, connection: Connection, subscriber: Subscriber<Output, Failure>) {
            self.storage = storage
            self.connection = connection
            self.subscriber = subscriber
        }

        override func cancel(waiting: Bool) {
            connection.relay.remove(subscriber, waiting: waiting)
            let effect = connection.relay.withExtra { $0.left() }
            if case .endUpstream = effect { storage.forget(connection) }
            connection.perform(effect)
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
        // Join the live connection, or open a new one. The count is taken under the storage's lock so a
        // connection cannot be ended between choosing it and joining it.
        let (connection, isNew, replaced) = current.withLock { current -> (Connection, Bool, Connection?) in
            if let live = current, live.relay.withExtra({ $0.join() }) { return (live, false, nil) }
            let fresh = Connection(replayCount: replayCount)
            _ = fresh.relay.withExtra { $0.join() }
            let replaced = current
            current = fresh
            return (fresh, true, replaced)
        }
        _ = replaced  // An ended connection, released here, outside the lock.
        let subscriber = connection.relay.attach(onValue: onValue, onCompletion: onCompletion) { machine in
            machine.replayedValues
        }
        if isNew { connect(connection) }
        return SubscriptionToken(Membership(storage: self, connection: connection, subscriber: subscriber))
    }

    private func connect(_ connection: Connection) {
        let token = upstream.subscribe(
            onValue: { [weak connection] value in
                guard let connection else { return }
                connection.perform(connection.relay.step { $0.valueReceived(value) })
            },
            onCompletion: { [weak connection] completion in
                // The connection stays current: later subscribers join it for its replay and completion.
                guard let connection else { return }
                connection.perform(connection.relay.step { $0.completed(completion) })
            }
        )
        connection.link.attach(token)
    }

    /// The connection was abandoned (its last subscriber left): the next subscriber connects anew.
    fileprivate func forget(_ connection: Connection) {
        let forgotten = current.withLock { current -> Connection? in
            guard current === connection else { return nil }
            defer { current = nil }
            return current
        }
        _ = forgotten  // Released here, outside the lock.
    }
}
