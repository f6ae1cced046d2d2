/// What an operator that may finish early does with one upstream value.
@usableFromInline
enum EarlyFinishStep {
    /// Emit the value and go on.
    case emit
    /// Drop the value and go on.
    case skip
    /// Emit the value, then finish.
    case emitAndFinish
    /// Finish without emitting the value.
    case finish
}

/// Subscribes to `upstream` for an operator that may finish before its upstream does (`prefix(_:)`,
/// `prefix(while:)`, `first(where:)`): `step` decides per value; on finishing early the operator
/// delivers `.finished` (unless the subscriber invalidated re-entrantly while receiving the last value)
/// and ends the upstream subscription without waiting. An upstream completion before that passes
/// through. `step` runs serialized (upstream events are), so it may keep state in a `SerialBox`.
@usableFromInline
func subscribeFinishingEarly<Upstream: SyncStream>(
    to upstream: Upstream,
    onValue: @escaping @Sendable (Upstream.Output) -> Void,
    onCompletion: @escaping @Sendable (StreamCompletion<Upstream.Failure>) -> Void,
    step: @escaping @Sendable (Upstream.Output) -> EarlyFinishStep
) -> SubscriptionToken {
    let isDone = SerialBox(false)
    let link = UpstreamLink()
    let token = upstream.subscribe(
        onValue: { value in
            guard !isDone.value else { return }
            switch step(value) {
            case .emit:
                onValue(value)
            case .skip:
                return
            case .emitAndFinish:
                isDone.value = true
                onValue(value)
                if !link.isCancelled { onCompletion(.finished) }
                link.end()
            case .finish:
                isDone.value = true
                onCompletion(.finished)
                link.end()
            }
        },
        onCompletion: { completion in
            guard !isDone.value else { return }
            isDone.value = true
            onCompletion(completion)
        }
    )
    link.attach(token)
    return SubscriptionToken(link)
}
