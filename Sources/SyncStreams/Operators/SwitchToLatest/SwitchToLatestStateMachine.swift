/// The logic of `switchToLatest`, without threads: which inner stream is current, what has finished, and
/// what to emit or end. `Link` is whatever the storage uses to end a subscription (opaque here).
///
/// - A new inner stream becomes current (numbered, so a late event of a replaced one is recognised and
///   dropped); the previous one is ended.
/// - Values of the current inner stream are emitted.
/// - The output finishes when the outer stream finished and the current inner stream (if any) finished;
///   a failure of either ends it at once and ends the rest.
struct SwitchToLatestStateMachine<Output, Failure: Error, Link> {
    enum Effect {
        /// Subscribe to the new inner stream as number `index` through `link`; end `previous`, if any.
        case subscribeInner(index: Int, link: Link, ending: Link?)
        /// End this inner subscription (it arrived after the end, or the output ended).
        case endInner(Link)
        /// End the outer subscription and the current inner one (if any): the subscriber invalidated, or an
        /// inner failure or the last finish ended the output.
        case endAll(inner: Link?)
    }

    typealias Action = OperatorAction<Output, Failure, Effect>

    private var innerIndex = 0
    private var innerLink: Link?
    private var isInnerActive = false
    private var isOuterFinished = false
    private var isTerminated = false

    init() {}

    /// The outer stream emitted a new inner stream, to be reached through `link`.
    mutating func innerArrived(_ link: Link) -> Action {
        guard !isTerminated else { return .perform(.endInner(link)) }
        innerIndex += 1
        isInnerActive = true
        let previous = innerLink
        innerLink = link
        return .perform(.subscribeInner(index: innerIndex, link: link, ending: previous))
    }

    /// Inner stream number `index` emitted.
    mutating func innerValue(_ index: Int, _ value: Output) -> Action {
        guard index == innerIndex, !isTerminated else { return .none }
        return .emit(value)
    }

    /// Inner stream number `index` completed. Its link is handed out in the effect, never dropped here:
    /// releasing it releases the inner token, whose invalidation is user code (a custom source's
    /// `onInvalidate`, deinits), which must not run under the relay's lock.
    mutating func innerCompleted(_ index: Int, _ completion: StreamCompletion<Failure>) -> Action {
        guard index == innerIndex, !isTerminated else { return .none }
        isInnerActive = false
        let finished = innerLink
        innerLink = nil
        if case .finished = completion, !isOuterFinished { return finished.map { .perform(.endInner($0)) } ?? .none }
        isTerminated = true
        return OperatorAction(completion: completion, effect: .endAll(inner: finished))
    }

    /// The outer stream completed.
    mutating func outerCompleted(_ completion: StreamCompletion<Failure>) -> Action {
        guard !isTerminated else { return .none }
        isOuterFinished = true
        if case .finished = completion, isInnerActive { return .none }
        isTerminated = true
        let inner = innerLink
        innerLink = nil
        return OperatorAction(completion: completion, effect: inner.map { .endInner($0) })
    }

    /// The subscriber invalidated.
    mutating func cancelled() -> Effect {
        isTerminated = true
        let inner = innerLink
        innerLink = nil
        return .endAll(inner: inner)
    }
}
