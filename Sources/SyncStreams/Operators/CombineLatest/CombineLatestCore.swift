/// The engine shared by every `combineLatest`: N inputs, the latest value of each, and a relay that
/// delivers the combined values to one subscriber.
///
/// Each input's value updates `Partial` (the latest value per input, possibly missing) and, once every
/// input has a value, enqueues `complete(partial)` — in the same critical section, so the combined
/// values leave in exactly the order the inputs changed. The relay serializes delivery, so a value that
/// arrives while the subscriber is busy (re-entrantly or from another thread) is queued, never lost, and
/// the last combined value is always delivered before the completion. User transforms are applied after
/// the relay (a `map`), never under the lock.
@usableFromInline
final class CombineLatestCore<Partial: Sendable, Output: Sendable, Failure: Error>: Cancellation,
    @unchecked Sendable
{
    // @unchecked Sendable: mutable state lives in the relay's `Extra`, guarded by its lock; the other
    // properties are immutable after `init` (`links` is a fixed array of thread-safe objects).
    @usableFromInline
    struct State {
        @usableFromInline var partial: Partial
        @usableFromInline var hasValue: [Bool]
        @usableFromInline var missingCount: Int
        @usableFromInline var liveCount: Int
        @usableFromInline var isTerminated = false

        @inlinable
        init(partial: Partial, hasValue: [Bool], missingCount: Int, liveCount: Int) {
            self.partial = partial
            self.hasValue = hasValue
            self.missingCount = missingCount
            self.liveCount = liveCount
        }
    }

    @usableFromInline let relay: Relay<Output, Failure, State>
    @usableFromInline let links: [UpstreamLink]
    @usableFromInline let complete: @Sendable (Partial) -> Output
    @usableFromInline var subscriber: Subscriber<Output, Failure>!

    @inlinable
    init(
        empty partial: Partial,
        inputCount: Int,
        complete: @escaping @Sendable (Partial) -> Output,
        onValue: @escaping @Sendable (Output) -> Void,
        onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
    ) {
        let state = State(
            partial: partial,
            hasValue: Array(repeating: false, count: inputCount),
            missingCount: inputCount,
            liveCount: inputCount
        )
        relay = Relay(extra: state)
        links = (0..<inputCount).map { _ in UpstreamLink() }
        self.complete = complete
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
            onValue: { value in self.receive(index) { store(&$0, value) } },
            onCompletion: { self.complete(index, $0) }
        )
        links[index].attach(token)
    }

    @inlinable
    func receive(_ index: Int, _ store: (inout Partial) -> Void) {
        let complete = self.complete
        relay.update(emitting: { state -> Output? in
            guard !state.isTerminated else { return nil }
            store(&state.partial)
            if _slowPath(state.missingCount != 0) {
                if !state.hasValue[index] {
                    state.hasValue[index] = true
                    state.missingCount -= 1
                }
                if state.missingCount != 0 { return nil }
            }
            return complete(state.partial)
        })
    }

    @usableFromInline
    func complete(_ index: Int, _ completion: StreamCompletion<Failure>) {
        let ended = relay.update { state, delivery -> Bool in
            guard !state.isTerminated else { return false }
            state.liveCount -= 1
            let endsOutput: Bool
            switch completion {
            case .failure: endsOutput = true
            case .finished: endsOutput = !state.hasValue[index] || state.liveCount == 0
            }
            guard endsOutput else { return false }
            state.isTerminated = true
            delivery.enqueue(completion: completion)
            return true
        }
        if ended { endInputs() }
    }

    @usableFromInline
    func endInputs() {
        for link in links { link.end() }
    }

    @usableFromInline
    override func cancel(waiting: Bool) {
        relay.remove(subscriber, waiting: waiting)
        relay.withExtra { $0.isTerminated = true }
        endInputs()
    }
}
