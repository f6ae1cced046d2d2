import SyncStreams

extension SyncStream {
    /// `observe(on:)` for an executor known only as `any StreamExecutor` (a configuration value): opens the
    /// existential so the operator is specialised for the concrete executor, and erases the result.
    func observe(onAny executor: any StreamExecutor) -> AnySyncStream<Output, Failure> {
        observeErased(on: executor)
    }

    private func observeErased<Executor: StreamExecutor>(on executor: Executor) -> AnySyncStream<Output, Failure> {
        observe(on: executor).eraseToAnyStream()
    }
}
