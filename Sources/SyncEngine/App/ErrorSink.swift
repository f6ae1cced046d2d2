import SyncStreams

/// Where the engine reports errors: the subject behind `SyncApp.errors`, shared by the app's users and
/// sessions (who must not keep the app itself alive). Reports are delivered on the app's callback
/// executor, never on the engine's actor that met the error.
final class ErrorSink: Sendable {
    let subject = PassthroughSubject<(error: SyncError, session: SyncSession?), Never>()
    private let executor: any StreamExecutor
    let logger: SyncLogger

    init(executor: any StreamExecutor, logger: SyncLogger) {
        self.executor = executor
        self.logger = logger
    }

    /// Logs `error` (`.fatal` when it is, `.warn` for a repaired store, `.error` otherwise) and delivers it.
    func report(_ error: SyncError, session: SyncSession?) {
        let level: SyncLogLevel =
            switch error {
            case .storeRepaired: .warn
            default: error.isFatal ? .fatal : .error
            }
        logger.log(level, LogCategory.errors, session.map { "\($0.partition): \(error)" } ?? "\(error)")
        let subject = subject
        executor.execute { subject.send((error, session)) }
    }

    /// Ends the stream (the app closed): subscribers get `.finished` and are released.
    func finish() {
        let subject = subject
        executor.execute { subject.send(completion: .finished) }
    }
}

/// A weak reference that can be filled in after the object that needs it was made.
final class WeakReference<Object: AnyObject & Sendable>: Sendable {
    private let reference = Locked<Weak>(Weak())

    private struct Weak: @unchecked Sendable {
        // @unchecked Sendable: `Object` is Sendable; a weak reference to it is only read and written
        // under the enclosing lock.
        weak var object: Object?
    }

    var object: Object? {
        get { reference.withLock { $0.object } }
        set { reference.withLock { $0.object = newValue } }
    }
}
