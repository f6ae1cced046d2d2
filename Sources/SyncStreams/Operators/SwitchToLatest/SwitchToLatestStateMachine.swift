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

    /// Exhaustive: an event no state can receive (an outer event after the outer's completion, an event
    /// of the current inner stream after its completion) is a broken contract and traps with a message
    /// instead of being dropped silently.
    private enum State {
        /// The outer stream is live; `inner` is the current inner stream's link while it is live.
        case outerLive(inner: Link?)
        /// The outer stream finished while the current inner stream (its link) is live: the output finishes
        /// with it.
        case outerFinished(inner: Link)
        /// The output completed (a failure, or the last finish). The outer stream may still send while its
        /// subscription is being ended (after an inner failure): its new inner streams are ended at once.
        case completed
        /// The subscriber invalidated: events already on their way are dropped.
        case cancelled
    }

    /// The number of the current inner stream (the latest to arrive); 0 before the first.
    private var innerIndex = 0
    private var state = State.outerLive(inner: nil)

    init() {}

    /// The outer stream emitted a new inner stream, to be reached through `link`.
    mutating func innerArrived(_ link: Link) -> Action {
        switch state {
        case .outerLive(let previous):
            innerIndex += 1
            state = .outerLive(inner: link)
            return .perform(.subscribeInner(index: innerIndex, link: link, ending: previous))
        case .completed, .cancelled:
            return .perform(.endInner(link))
        case .outerFinished:
            preconditionFailure("switchToLatest: the outer stream sent a value after its completion")
        }
    }

    /// Inner stream number `index` emitted.
    mutating func innerValue(_ index: Int, _ value: Output) -> Action {
        guard index == innerIndex else { return .none }  // a replaced inner stream's late value
        switch state {
        case .outerLive(_?), .outerFinished:
            return .emit(value)
        case .completed, .cancelled:
            return .none
        case .outerLive(nil):
            preconditionFailure("switchToLatest: an inner stream sent a value after its completion")
        }
    }

    /// Inner stream number `index` completed. Its link is handed out in the effect, never dropped here:
    /// releasing it releases the inner token, whose invalidation is user code (a custom source's
    /// `onInvalidate`, deinits), which must not run under the relay's lock.
    mutating func innerCompleted(_ index: Int, _ completion: StreamCompletion<Failure>) -> Action {
        guard index == innerIndex else { return .none }  // a replaced inner stream's late completion
        switch state {
        case .outerLive(let finished?):
            if case .finished = completion {
                state = .outerLive(inner: nil)
                return .perform(.endInner(finished))
            }
            state = .completed
            return OperatorAction(completion: completion, effect: .endAll(inner: finished))
        case .outerFinished(let finished):
            state = .completed
            return OperatorAction(completion: completion, effect: .endAll(inner: finished))
        case .completed, .cancelled:
            return .none
        case .outerLive(nil):
            preconditionFailure("switchToLatest: an inner stream completed twice")
        }
    }

    /// The outer stream completed.
    mutating func outerCompleted(_ completion: StreamCompletion<Failure>) -> Action {
        switch state {
        case .outerLive(let inner):
            if case .finished = completion, let inner {
                state = .outerFinished(inner: inner)
                return .none
            }
            state = .completed
            return OperatorAction(completion: completion, effect: inner.map { .endInner($0) })
        case .completed, .cancelled:
            return .none
        case .outerFinished:
            preconditionFailure("switchToLatest: the outer stream completed twice")
        }
    }

    /// The subscriber invalidated.
    mutating func cancelled() -> Effect {
        let inner: Link?
        switch state {
        case .outerLive(let link): inner = link
        case .outerFinished(let link): inner = link
        case .completed, .cancelled: inner = nil
        }
        state = .cancelled
        return .endAll(inner: inner)
    }
}
