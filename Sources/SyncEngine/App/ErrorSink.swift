import SyncStreams

/// Where the engine reports errors: the subject behind `SyncApp.errors`, shared by the app's users and
/// sessions (who must not keep the app itself alive).
final class ErrorSink: Sendable {
    let subject = PassthroughSubject<(error: SyncError, session: SyncSession?), Never>()

    func report(_ error: SyncError, session: SyncSession?) { subject.send((error, session)) }
}

/// A weak reference that can be filled in after the object that needs it was made.
final class WeakReference<Object: AnyObject & Sendable>: Sendable {
    private let reference = Locked<Weak>(Weak())

    private struct Weak { weak var object: Object? }

    var object: Object? {
        get { reference.withLock { $0.object } }
        set { reference.withLock { $0.object = newValue } }
    }
}
