import SyncStreams

extension SyncStream {
    /// `observe(on:buffering:)` for an executor known only as `any StreamExecutor` (a configuration value):
    /// opens the existential so the operator is specialised for the concrete executor, and erases the result.
    func observe(
        onAny executor: any StreamExecutor,
        buffering: BufferingPolicy = .unbounded
    ) -> AnySyncStream<Output, Failure> {
        observeErased(on: executor, buffering: buffering)
    }

    private func observeErased<Executor: StreamExecutor>(
        on executor: Executor,
        buffering: BufferingPolicy
    ) -> AnySyncStream<Output, Failure> {
        observe(on: executor, buffering: buffering).eraseToAnyStream()
    }
}
