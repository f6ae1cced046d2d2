/// The state machine of a time-based operator (`throttle`, `debounce`, `timeout`, `delay`, `rate`), as its storage
/// drives it: upstream events and timer firings in, `OperatorAction`s whose effects are `TimedEffect`s out.
protocol TimedOperatorStateMachine: SendableMetatype {
    /// What the upstream delivers: the output itself, except for operators that compute something else
    /// from it (`rate` turns progress into `TransferRate`s).
    associatedtype Input = Output
    associatedtype Output
    associatedtype Failure: Error
    /// What the machine hands out to be released outside the lock.
    associatedtype Discarded

    typealias Action = OperatorAction<Output, Failure, TimedEffect<Discarded>>

    /// The machine's one timer; the storage stores a scheduled timer's handle back into it.
    var timer: OperatorTimer { get set }

    /// Whether events need the executor's time (the storage reads the clock only then).
    static var usesClock: Bool { get }

    /// The subscription starts (before the upstream is subscribed to).
    mutating func started() -> TimedEffect<Discarded>?
    mutating func valueReceived(_ value: Input, at now: StreamInstant) -> Action
    mutating func completed(_ completion: StreamCompletion<Failure>, at now: StreamInstant) -> Action
    mutating func timerFired(epoch: UInt64, at now: StreamInstant) -> Action
    /// The subscriber invalidated.
    mutating func cancelled() -> TimedEffect<Discarded>
    /// Makes the completion an effect with `computesCompletion` asks for; the storage calls it outside
    /// the lock, because it may be user code.
    var completionOutsideLock: (@Sendable () -> StreamCompletion<Failure>)? { get }
    /// The completion made by `completionOutsideLock`.
    mutating func completionComputed(_ completion: StreamCompletion<Failure>) -> Action
}

extension TimedOperatorStateMachine {
    static var usesClock: Bool { false }
    mutating func started() -> TimedEffect<Discarded>? { nil }
    var completionOutsideLock: (@Sendable () -> StreamCompletion<Failure>)? { nil }
    mutating func completionComputed(_: StreamCompletion<Failure>) -> Action { .none }
}

/// One subscription of a time-based operator: its state machine in a relay (delivering on the executor,
/// or inline where the events arrive), its timer on the executor, and the upstream link.
///
/// Every step runs under the relay's lock; its effect — schedule or cancel the timer, end the upstream,
/// release a value — is performed after unlocking. A timer job reports back with its epoch, so a timer
/// replaced or stopped meanwhile does nothing.
final class TimedOperatorStorage<Machine: TimedOperatorStateMachine>: Cancellation, @unchecked Sendable
where Machine.Output: Sendable {
    // @unchecked Sendable: the state machine lives in the relay's `Extra`, guarded by its lock; `link` is
    // thread-safe; `subscriber` is written once in `init`, before sharing; the rest is immutable.
    typealias Output = Machine.Output
    typealias Failure = Machine.Failure

    private let relay: Relay<Output, Failure, Machine>
    private let executor: any StreamExecutor
    private let link = UpstreamLink()
    private var subscriber: Subscriber<Output, Failure>!

    /// - Parameter deliversOnExecutor: Whether every event is delivered on `executor` (throttle,
    ///   debounce, rate), or where it is produced (timeout: the upstream's thread; delay: the timer's).
    init(
        machine: Machine,
        executor: any StreamExecutor,
        deliversOnExecutor: Bool,
        onValue: @escaping @Sendable (Output) -> Void,
        onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
    ) {
        self.executor = executor
        relay = Relay(extra: machine, executor: deliversOnExecutor ? executor : nil)
        super.init()
        subscriber = relay.attach(onValue: onValue, onCompletion: onCompletion)
    }

    private var now: StreamInstant { Machine.usesClock ? executor.now : .zero }

    /// Starts the machine (timeout's clock), then subscribes to the upstream.
    func connect<Upstream: SyncStream>(to upstream: Upstream)
    where Upstream.Output == Machine.Input, Upstream.Failure == Failure {
        perform(relay.withExtra { $0.started() })
        let token = upstream.subscribe(
            onValue: { value in
                let now = self.now
                self.perform(self.relay.step { $0.valueReceived(value, at: now) })
            },
            onCompletion: { completion in
                let now = self.now
                self.perform(self.relay.step { $0.completed(completion, at: now) })
            }
        )
        link.attach(token)
    }

    private func perform(_ effect: TimedEffect<Machine.Discarded>?) {
        guard let effect else { return }
        if effect.endsUpstream { link.end() }
        effect.cancelTimer?.cancel()
        if let (request, delay) = effect.startTimer {
            request.previous?.cancel()
            let epoch = request.epoch
            let scheduled = executor.schedule(after: delay) { [weak self] in self?.timerFired(epoch: epoch) }
            let stale = relay.withExtra { $0.timer.store(scheduled, epoch: epoch) }
            stale?.cancel()
        }
        if effect.computesCompletion, let makeCompletion = relay.withExtra({ $0.completionOutsideLock }) {
            let completion = makeCompletion()
            perform(relay.step { $0.completionComputed(completion) })
        }
        // `effect.discarded` is released with `effect`, here, outside the lock.
    }

    private func timerFired(epoch: UInt64) {
        let now = self.now
        perform(relay.step { $0.timerFired(epoch: epoch, at: now) })
    }

    override func cancel(waiting: Bool) {
        relay.remove(subscriber, waiting: waiting)
        perform(relay.withExtra { $0.cancelled() })
    }
}
