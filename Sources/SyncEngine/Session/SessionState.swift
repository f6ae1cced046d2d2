/// Whether a session syncs.
///
/// ```
/// .active ──suspend()/close()──▶ .inactive ──resume()──▶ .active
/// .active ──close() with .afterChangesUploaded and changes left──▶ .dying ──uploaded──▶ .inactive
/// any ──fatal error──▶ .invalid   (final)
/// ```
public enum SessionState: Sendable, Hashable {
    /// Syncing, or trying to (connecting, waiting to reconnect).
    case active
    /// Closed with the `.afterChangesUploaded` stop policy: uploading what is left, then `.inactive`.
    case dying
    /// Not syncing: suspended or closed. Local writes still work and are uploaded after `resume()`.
    case inactive
    /// Stopped by a fatal error; nothing can revive it.
    case invalid
}

/// The state of a session's connection to the server.
///
/// `.disconnected` also covers the wait between a lost connection and the next attempt, and an inactive
/// session.
public enum ConnectionState: Sendable, Hashable {
    /// No connection, and none being made.
    case disconnected
    /// Connecting or handshaking.
    case connecting
    /// Connected and bound: changes flow both ways.
    case connected
}

/// What happens when the app closes a session with `SyncSession.close()`.
public enum StopPolicy: Sendable, Hashable {
    /// Stop at once; unuploaded changes stay in the local store for the next time.
    case immediately
    /// Keep the session `.dying` until every change written so far is uploaded, then stop.
    case afterChangesUploaded
    /// Never stop: `close()` has no effect (the session lives as long as the app).
    case liveIndefinitely
}

/// How sessions share connections to the server.
public enum ConnectionSharing: Sendable, Hashable {
    /// One connection per user and server, shared by all the user's sessions.
    case perUser
    /// Each session has its own connection.
    case perSession
}
