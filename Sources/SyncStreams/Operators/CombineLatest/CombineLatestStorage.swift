/// One `combineLatest` subscription: the state machine in a relay that delivers the combined values to
/// one subscriber, and a link per input.
///
/// The relay serializes delivery, so a value that arrives while the subscriber is busy (re-entrantly or
/// from another thread) is queued, never lost, and the last combined value is delivered before the
/// completion. User transforms are applied after the relay (a `map`), never under the lock.
@usableFromInline
final class CombineLatestStorage<Partial: Sendable, Output: Sendable, Failure: Error>: Cancellation,
    @unchecked Sendable
{
    // @unchecked Sendable: the state machine lives in the relay's `Extra`, guarded by its lock; `links` is
    // a fixed array of thread-safe objects; `subscriber` is written once in `init`, before sharing.
    @usableFromInline typealias Machine = CombineLatestStateMachine<Partial, Output, Failure>

    @usableFromInline let relay: Relay<Output, Failure, Machine>
    @usableFromInline let links: [UpstreamLink]
    @usableFromInline var subscriber: Subscriber<Output, Failure>!

    @inlinable
    init(
        empty partial: Partial,
        inputCount: Int,
        combine: @escaping @Sendable (Partial) -> Output,
        onValue: @escaping @Sendable (Output) -> Void,
        onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
    ) {
        relay = Relay(extra: Machine(empty: partial, inputCount: inputCount, combine: combine))
        links = (0..<inputCount).map { _ in UpstreamLink() }
        super.init()
        subscriber = relay.attach(onValue: onValue, onCompletion: onCompletion)
    }

    /// Subscribes to input `index`; `store` writes its value into the partial result.
    @inlinable
    func connect<S: SyncStream>(
        _ index: Int,
        to stream: S,
        store: @escaping @Sendable (inout Partial, S.Output) -> Void
    ) where S.Failure == Failure {
        guard !(relay.withExtra { $0.isTerminated }) else { return }
        let token = stream.subscribe(
            onValue: { value in self.perform(self.relay.step { $0.valueReceived(index) { store(&$0, value) } }) },
            onCompletion: { completion in self.perform(self.relay.step { $0.completed(index, completion) }) }
        )
        links[index].attach(token)
    }

    @inlinable
    func perform(_ effect: Machine.Effect?) {
        guard let effect else { return }
        switch effect {
        case .cancelInputs:
            for link in links { link.end() }
        }
    }

    @usableFromInline
    override func cancel(waiting: Bool) {
        relay.remove(subscriber, waiting: waiting)
        perform(relay.withExtra { $0.cancelled() })
    }
}
