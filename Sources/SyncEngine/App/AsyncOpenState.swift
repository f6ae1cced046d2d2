/// The steps of `SyncUser.asyncOpen(partition:)`: open a session and download everything the server
/// has before handing it over.
public enum AsyncOpenState: Sendable {
    /// Connecting to the server.
    case connecting
    /// Waiting while the server checks the user's credential: from the transport opening until the server's
    /// `welcome`. Emitted again if the connection drops and reopens before the download completes.
    case waitingForUser
    /// Download progress of the initial download (`.forCurrentlyOutstandingWork`).
    case progress(SyncProgress)
    /// Done: the session is open and holds everything the server had when it connected.
    case open(SyncSession)
    /// Failed; the stream finishes after this.
    case error(SyncError)
}
