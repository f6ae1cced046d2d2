/// What a multi-input operator's state machine (`combineLatest`, `zip`) asks its storage to do outside the
/// lock.
@usableFromInline
enum MultiInputEffect {
    /// End every input's subscription (the output has ended).
    case cancelInputs
}

/// The state machine of an operator that combines several inputs into one output (`combineLatest`,
/// `zip`): each input's value is written into `Buffers` by a closure the storage supplies (so inputs of
/// different types share one machine), and each event returns an `OperatorAction`.
@usableFromInline
protocol MultiInputStateMachine: SendableMetatype {
    associatedtype Buffers
    associatedtype Output
    associatedtype Failure: Error

    /// The output has ended (completion or cancellation): later events do nothing.
    var isTerminated: Bool { get }

    /// Input `index` emitted; `store` writes the value into the buffers.
    mutating func valueReceived(
        _ index: Int, _ store: (inout Buffers) -> Void
    ) -> OperatorAction<Output, Failure, MultiInputEffect>

    /// Input `index` completed.
    mutating func completed(
        _ index: Int, _ completion: StreamCompletion<Failure>
    ) -> OperatorAction<Output, Failure, MultiInputEffect>

    /// The subscriber invalidated.
    mutating func cancelled() -> MultiInputEffect?

    /// Once terminated: hands out what the machine still buffers (to be released outside the lock) and
    /// keeps nothing; nil when it buffers nothing of its own.
    mutating func takeBuffersAfterEnd() -> Buffers?
}

extension MultiInputStateMachine {
    @inlinable
    mutating func takeBuffersAfterEnd() -> Buffers? { nil }
}

/// One subscription of a multi-input operator: its state machine in a relay that delivers to one
/// subscriber, and a link per input.
///
/// The relay serializes delivery, so a value that arrives while the subscriber is busy (re-entrantly or
/// from another thread) is queued, never lost, and the last value is delivered before the completion. A
/// value an input's new value replaces in the buffers is handed out of the critical section and released
/// after it. User transforms are applied after the relay (a `map`), never under the lock.
@usableFromInline
final class MultiInputStorage<Machine: MultiInputStateMachine>: Cancellation, @unchecked Sendable
where Machine.Output: Sendable {
    // @unchecked Sendable: the state machine lives in the relay's `Extra`, guarded by its lock; `links` is
    // a fixed array of thread-safe objects; `subscriber` is written once in `init`, before sharing.
    @usableFromInline typealias Output = Machine.Output
    @usableFromInline typealias Failure = Machine.Failure

    @usableFromInline let relay: Relay<Output, Failure, Machine>
    @usableFromInline let links: [UpstreamLink]
    @usableFromInline var subscriber: Subscriber<Output, Failure>!

    @inlinable
    init(
        machine: Machine,
        inputCount: Int,
        onValue: @escaping @Sendable (Output) -> Void,
        onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
    ) {
        relay = Relay(extra: machine)
        links = (0..<inputCount).map { _ in UpstreamLink() }
        super.init()
        subscriber = relay.attach(onValue: onValue, onCompletion: onCompletion)
    }

    /// Subscribes to input `index`; `store` writes its value into the buffers and returns the value it
    /// replaced there, if any (released after the lock).
    @inlinable
    func connect<S: SyncStream>(
        _ index: Int,
        to stream: S,
        store: @escaping @Sendable (inout Machine.Buffers, S.Output) -> S.Output?
    ) where S.Failure == Failure {
        guard !(relay.withExtra { $0.isTerminated }) else { return }
        let token = stream.subscribe(
            onValue: { value in
                var displaced: S.Output?
                self.perform(self.relay.step { $0.valueReceived(index) { displaced = store(&$0, value) } })
                _ = displaced
            },
            onCompletion: { completion in self.perform(self.relay.step { $0.completed(index, completion) }) }
        )
        links[index].attach(token)
    }

    @inlinable
    func perform(_ effect: MultiInputEffect?) {
        switch effect {
        case nil:
            return
        case .cancelInputs:
            for link in links { link.end() }
            // Released here, outside the lock (releasing a value may run user code).
            _ = relay.withExtra { $0.takeBuffersAfterEnd() }
        }
    }

    @usableFromInline
    override func cancel(waiting: Bool) {
        relay.remove(subscriber, waiting: waiting)
        perform(relay.withExtra { $0.cancelled() })
    }
}
