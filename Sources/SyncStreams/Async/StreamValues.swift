extension SyncStream {
    /// The stream's values as an `AsyncSequence`, for `for await` (or `for try await` when the stream can
    /// fail).
    ///
    /// Reading this property subscribes at once; from then on every value is buffered (without bound)
    /// until the loop takes it, so nothing sent while the consumer is busy is lost. The sequence ends when
    /// the stream finishes, throws the stream's failure, and ends (returns nil) when a consuming task is
    /// cancelled. Dropping the sequence and its iterators ends the subscription.
    ///
    /// Several iterators may wait at once (tasks consuming one sequence together): each value goes to one
    /// of them, to the one that has waited longest, and the end reaches every one — each iterator throws
    /// the failure once, then returns nil. Cancelling any consuming task ends the sequence for all of them
    /// (as `AsyncStream`).
    ///
    /// ```swift
    /// for await progress in session.progress(for: .upload, mode: .reportIndefinitely).values { … }
    /// ```
    @inlinable
    public var values: StreamValues<Output, Failure> { StreamValues(self) }

    /// The first value, or nil if the stream finished without one.
    ///
    /// Subscribes, waits for the first value (or the completion), then ends the subscription.
    /// - Throws: The stream's failure; `CancellationError` if the calling task is cancelled first.
    public func first() async throws -> Output? {
        var iterator = prefix(1).values.makeAsyncIterator()
        let value = try await iterator.next()
        if value == nil { try Task.checkCancellation() }
        return value
    }
}

/// An `AsyncSequence` of a stream's values; see `SyncStream.values`.
public struct StreamValues<Element: Sendable, Failure: Error>: AsyncSequence, Sendable {
    @usableFromInline let subscription: StreamValuesSubscription<Element, Failure>

    @inlinable
    init<S: SyncStream>(_ stream: S) where S.Output == Element, S.Failure == Failure {
        let buffer = StreamValuesBuffer<Element, Failure>()
        let token = stream.subscribe(
            onValue: { buffer.receive($0) },
            onCompletion: { completion in
                switch completion {
                case .finished: buffer.finish(nil)
                case .failure(let error): buffer.finish(error)
                }
            }
        )
        subscription = StreamValuesSubscription(buffer: buffer, token: token)
    }

    @inlinable
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(subscription: subscription) }

    /// The iterator of `StreamValues`.
    public struct AsyncIterator: AsyncIteratorProtocol {
        @usableFromInline let subscription: StreamValuesSubscription<Element, Failure>
        /// This iterator returned nil or threw: it returns nil from now on.
        @usableFromInline var isDone = false

        @inlinable
        init(subscription: StreamValuesSubscription<Element, Failure>) { self.subscription = subscription }

        @inlinable
        public mutating func next() async throws(Failure) -> Element? {
            try await next(isolation: nil)
        }

        @inlinable
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(Failure) -> Element? {
            if isDone { return nil }
            do throws(Failure) {
                let value = try await subscription.buffer.next(isolation: actor)
                if value == nil { isDone = true }
                return value
            } catch {
                isDone = true
                throw error
            }
        }
    }
}

/// Owns a `values` subscription: releasing the last sequence or iterator invalidates it. The
/// subscription's callbacks hold only the buffer, so there is no cycle.
@usableFromInline
final class StreamValuesSubscription<Element: Sendable, Failure: Error>: Sendable {
    @usableFromInline let buffer: StreamValuesBuffer<Element, Failure>
    @usableFromInline let token: SubscriptionToken

    @inlinable
    init(buffer: StreamValuesBuffer<Element, Failure>, token: SubscriptionToken) {
        self.buffer = buffer
        self.token = token
    }

    deinit { token.invalidate() }
}

/// The unbounded buffer between a stream's callbacks and the consuming tasks (one, or several waiting
/// at once: each value resumes the one that has waited longest).
@usableFromInline
final class StreamValuesBuffer<Element: Sendable, Failure: Error>: Sendable {
    @usableFromInline
    struct State: Sendable {
        @usableFromInline var values = FIFO<Element>()
        @usableFromInline var isFinished = false
        @usableFromInline var failure: Failure?
        /// The iterators waiting for a value, longest-waiting first.
        @usableFromInline var waiting = FIFO<UnsafeContinuation<Result<Element?, Failure>, Never>>()

        @inlinable init() {}

        /// Takes a buffered value or the end, if there is one. The failure stays: every iterator throws
        /// it (once: an iterator that threw returns nil afterwards).
        @inlinable
        func pollEnd() -> Result<Element?, Failure>? {
            guard isFinished else { return nil }
            return failure.map { .failure($0) } ?? .success(nil)
        }

        @inlinable
        mutating func poll() -> Result<Element?, Failure>? {
            if let value = values.popFirst() { return .success(value) }
            return pollEnd()
        }
    }

    @usableFromInline let state = Locked(State())

    @inlinable
    init() {}

    @inlinable
    func receive(_ value: Element) {
        let waiting = state.withLock { state -> UnsafeContinuation<Result<Element?, Failure>, Never>? in
            if state.isFinished { return nil }
            if let waiting = state.waiting.popFirst() { return waiting }
            state.values.append(value)
            return nil
        }
        waiting?.resume(returning: .success(value))
    }

    /// Ends the sequence: every waiting iterator is resumed with the end (the failure, or nil).
    @inlinable
    func finish(_ failure: Failure?) {
        let waiting = state.withLock { state -> FIFO<UnsafeContinuation<Result<Element?, Failure>, Never>> in
            guard !state.isFinished else { return FIFO() }
            state.isFinished = true
            state.failure = failure
            defer { state.waiting = FIFO() }
            return state.waiting
        }
        for continuation in waiting.elements {
            continuation.resume(returning: failure.map { .failure($0) } ?? .success(nil))
        }
    }

    /// How many iterators are waiting for a value now (for tests).
    var waitingIterators: Int { state.withLock { $0.waiting.count } }

    @inlinable
    func next(isolation actor: isolated (any Actor)?) async throws(Failure) -> Element? {
        if let ready = state.withLock({ $0.poll() }) { return try ready.get() }
        if Task.isCancelled { return nil }
        let result = await withTaskCancellationHandler(
            operation: {
                await withUnsafeContinuation(isolation: actor) { continuation in
                    let ready = state.withLock { state -> Result<Element?, Failure>? in
                        if let ready = state.poll() { return ready }
                        state.waiting.append(continuation)
                        return nil
                    }
                    if let ready { continuation.resume(returning: ready) }
                }
            },
            onCancel: { finish(nil) },
            isolation: actor
        )
        return try result.get()
    }
}
