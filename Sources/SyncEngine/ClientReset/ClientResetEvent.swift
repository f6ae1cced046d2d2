/// The two moments of a client reset, delivered in this order on `SyncSession.clientResets` and to the
/// configuration's `clientResetHandler`, on the session's callback executor.
public enum ClientResetEvent: Sendable, Hashable {
    /// Before anything is replaced: the reset waits until the handler returns, so an app can keep what
    /// it needs of `unsyncedChanges` (in `.discardUnsyncedChanges` they are dropped next).
    case willReset(ClientReset)
    /// The new local store is in place (with the recovered changesets, in `.recoverUnsyncedChanges`): the
    /// session binds again from server version 0, downloads the server's log afresh and uploads what it
    /// recovered.
    case didReset(ClientReset)

    /// The reset the event is about.
    public var reset: ClientReset {
        switch self {
        case .willReset(let reset), .didReset(let reset): reset
        }
    }
}
