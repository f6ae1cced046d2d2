/// The session's state as a value type: each event returns the new state when it changed.
///
/// | state \ event | suspend | resume | close (policy) | uploads done | fatal error |
/// | --- | --- | --- | --- | --- | --- |
/// | `.active` | `.inactive` | — | `.inactive` / `.dying` if changes are pending (`.afterChangesUploaded`) / — (`.liveIndefinitely`) | — | `.invalid` |
/// | `.dying` | `.inactive` | `.active` | — | `.inactive` | `.invalid` |
/// | `.inactive` | — | `.active` | — | — | `.invalid` |
/// | `.invalid` | — | — | — | — | — |
///
/// `shutDown` (the app closed, or the user logged out) makes a live session `.inactive` for good: every
/// later event is ignored, as in `.invalid`.
struct SessionStateMachine: Sendable {
    enum Event: Sendable {
        case suspend
        case resume
        case close
        /// Whether local changes are waiting for upload.
        case pendingUploads(Bool)
        case fatalError
        /// The app closed or the user logged out: stop for good.
        case shutDown
    }

    private(set) var state: SessionState = .active
    private(set) var hasPendingUploads = false
    /// Whether `shutDown` happened: the state never changes again.
    private(set) var isShutDown = false
    let stopPolicy: StopPolicy

    /// A machine in `.active`, or in `.inactive` when `suspended` (as after `suspend`).
    init(stopPolicy: StopPolicy, suspended: Bool = false) {
        self.stopPolicy = stopPolicy
        if suspended { state = .inactive }
    }

    /// Applies `event`; returns the new state if it changed.
    mutating func handle(_ event: Event) -> SessionState? {
        let old = state
        if isShutDown { return nil }
        switch (state, event) {
        case (.invalid, .pendingUploads(let pending)):
            hasPendingUploads = pending
        case (.invalid, .shutDown):
            isShutDown = true
        case (.invalid, _):
            break
        case (_, .shutDown):
            isShutDown = true
            state = .inactive
        case (_, .fatalError):
            state = .invalid
        case (.active, .suspend), (.dying, .suspend):
            state = .inactive
        case (.inactive, .resume), (.dying, .resume):
            state = .active
        case (.active, .close):
            switch stopPolicy {
            case .immediately: state = .inactive
            case .afterChangesUploaded: state = hasPendingUploads ? .dying : .inactive
            case .liveIndefinitely: break
            }
        case (_, .pendingUploads(let pending)):
            hasPendingUploads = pending
            if state == .dying && !pending { state = .inactive }
        case (.active, .resume), (.inactive, .suspend), (.inactive, .close), (.dying, .close):
            break
        }
        return state == old ? nil : state
    }

    /// Whether the session should be connected and bound.
    var wantsSync: Bool { state == .active || state == .dying }
}
