import Synchronization

extension SyncStream {
    /// Runs side effects at the events of each subscription, without changing them.
    ///
    /// - `receiveSubscription`: when a subscriber subscribes, before the upstream is subscribed to.
    /// - `receiveOutput`: before each value is passed on.
    /// - `receiveCompletion`: before the completion or failure is passed on.
    /// - `receiveCancel`: when the subscriber invalidates its token before the stream completed (not
    ///   after a completion).
    ///
    /// ```
    /// upstream:   1 2 |
    /// effects:    subscription, output(1), output(2), completion(.finished)
    /// downstream: 1 2 |
    /// ```
    public func handleEvents(
        receiveSubscription: (@Sendable () -> Void)? = nil,
        receiveOutput: (@Sendable (Output) -> Void)? = nil,
        receiveCompletion: (@Sendable (StreamCompletion<Failure>) -> Void)? = nil,
        receiveCancel: (@Sendable () -> Void)? = nil
    ) -> Streams.HandleEvents<Self> {
        Streams.HandleEvents(
            upstream: self,
            receiveSubscription: receiveSubscription,
            receiveOutput: receiveOutput,
            receiveCompletion: receiveCompletion,
            receiveCancel: receiveCancel
        )
    }
}

extension Streams {
    /// The stream returned by `SyncStream.handleEvents(receiveSubscription:receiveOutput:receiveCompletion:receiveCancel:)`.
    public struct HandleEvents<Upstream: SyncStream>: SyncStream {
        public typealias Output = Upstream.Output
        public typealias Failure = Upstream.Failure

        /// The stream observed.
        public let upstream: Upstream
        /// Runs when a subscriber subscribes.
        public let receiveSubscription: (@Sendable () -> Void)?
        /// Runs before each value is passed on.
        public let receiveOutput: (@Sendable (Output) -> Void)?
        /// Runs before the completion is passed on.
        public let receiveCompletion: (@Sendable (StreamCompletion<Failure>) -> Void)?
        /// Runs when the subscriber invalidates before completion.
        public let receiveCancel: (@Sendable () -> Void)?

        /// Creates the stream; usually reached through the operator method, which documents the semantics.
        public init(
            upstream: Upstream,
            receiveSubscription: (@Sendable () -> Void)?,
            receiveOutput: (@Sendable (Output) -> Void)?,
            receiveCompletion: (@Sendable (StreamCompletion<Failure>) -> Void)?,
            receiveCancel: (@Sendable () -> Void)?
        ) {
            self.upstream = upstream
            self.receiveSubscription = receiveSubscription
            self.receiveOutput = receiveOutput
            self.receiveCompletion = receiveCompletion
            self.receiveCancel = receiveCancel
        }

        public func subscribe(
            onValue: @escaping @Sendable (Output) -> Void,
            onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
        ) -> SubscriptionToken {
            receiveSubscription?()
            let isCompleted = CompletionFlag()
            let receiveCancel = self.receiveCancel
            let link = UpstreamLink(onDownstreamCancel: {
                if !isCompleted.isSet { receiveCancel?() }
            })
            let receiveOutput = self.receiveOutput
            let receiveCompletion = self.receiveCompletion
            let token = upstream.subscribe(
                onValue: { value in
                    receiveOutput?(value)
                    onValue(value)
                },
                onCompletion: { completion in
                    isCompleted.set()
                    link.discardCancelHandler()
                    receiveCompletion?(completion)
                    onCompletion(completion)
                }
            )
            link.attach(token)
            return SubscriptionToken(link)
        }
    }
}

/// A flag set once, readable from any thread.
final class CompletionFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    var isSet: Bool { flag.load(ordering: .acquiring) }
    func set() { flag.store(true, ordering: .releasing) }
}
