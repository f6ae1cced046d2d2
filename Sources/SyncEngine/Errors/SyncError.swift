/// Everything that can go wrong while syncing, as reported by `SyncApp.errors`, `SyncSession.wait(for:)`,
/// `SyncSession.write(_:)` and `SyncUser.asyncOpen(partition:)`.
///
/// `isFatal` errors move the session they concern to `.invalid`; the others are retried (with backoff).
public enum SyncError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The server could not be reached, refused the connection, or the connection was lost.
    case connectionFailed(String)
    /// The server did not complete the handshake within the connect timeout.
    case connectTimedOut
    /// The server did not answer a keepalive ping within the pong timeout.
    case pongTimedOut
    /// The server refused the credential. Fatal.
    case authenticationFailed(String)
    /// The credential may not sync this partition. Fatal.
    case permissionDenied(String)
    /// Client and server disagree about the protocol (version, malformed message, broken rule). Fatal when
    /// the server says retrying cannot help.
    case protocolViolation(String, isFatal: Bool)
    /// The server failed; it may say when to try again.
    case serverError(String)
    /// The local store could not be read or written. Fatal for the session.
    case storageFailure(String)
    /// The operation needs an active session, and the session is inactive (suspended or closed).
    case sessionInactive
    /// The operation needs a usable session, and the session hit a fatal error.
    case sessionInvalid
    /// The waiting task was cancelled.
    case cancelled
    /// The API was misused (e.g. an empty partition name).
    case invalidArgument(String)
    /// `write(_:)` refused a changeset of `bytes` bytes, more than `limit` (the largest that fits in one
    /// message); nothing was stored and the session stays usable.
    case changesetTooLarge(bytes: Int, limit: Int)
    /// A stored changeset cannot be uploaded: its upload message would be `bytes` bytes, and the server
    /// accepts messages of at most `limit` bytes (the limit its `welcome` announced). The session stops
    /// uploading at that changeset (later ones wait behind it) and keeps downloading; it is reported once
    /// per binding (each connection), and the upload is tried again on the next connection (the server's limit may have
    /// been raised). Never a reconnect loop.
    case messageTooLarge(bytes: Int, limit: Int)
    /// The server no longer has history the local copy depends on (its log ends before the client's
    /// downloaded version): the local copy must be reset before it can sync. Fatal.
    case clientResetRequired(String)
    /// The local store at `path` is open in another app or process (each store file has one writer).
    case storeInUse(path: String)
    /// The local store at `path` is damaged at byte `offset` (intact records follow the damage, so this
    /// is not a write torn by a crash); nothing was changed in the file. Fatal.
    case storeCorrupted(path: String, offset: UInt64)
    /// Opening the local store at `path` found a final record torn by a crash and cut its `bytes` bytes:
    /// a write that never completed (its `write(_:)` never returned). Reported for information; the session
    /// works normally.
    case storeRepaired(path: String, discardedBytes: Int)
    /// The app was closed (`SyncApp.close()`), or the user logged out: the object can no longer be used.
    case appClosed
    /// An operation with a time limit (`SyncUser.asyncOpen(partition:timeout:)`) did not finish in time.
    case timedOut(String)
    /// The server's TLS certificate was refused (expired, issued for another host name, not signed by a
    /// trusted authority; a transport that speaks `wss://` reports it, such as `SyncNIO`'s). Fatal: a
    /// wrong certificate is never retried.
    case certificateRejected(String)

    /// Whether retrying cannot help: the session concerned moves to `.invalid`.
    public var isFatal: Bool {
        switch self {
        case .authenticationFailed, .permissionDenied, .storageFailure, .clientResetRequired, .storeCorrupted,
            .certificateRejected:
            true
        case .protocolViolation(_, let isFatal): isFatal
        case .connectionFailed, .connectTimedOut, .pongTimedOut, .serverError, .sessionInactive, .sessionInvalid,
            .cancelled, .invalidArgument, .changesetTooLarge, .messageTooLarge, .storeInUse, .storeRepaired, .appClosed,
            .timedOut:
            false
        }
    }

    public var description: String {
        switch self {
        case .connectionFailed(let reason): "connection failed: \(reason)"
        case .connectTimedOut: "the server did not answer within the connect timeout"
        case .pongTimedOut: "the server did not answer a keepalive ping within the pong timeout"
        case .authenticationFailed(let reason): "authentication failed: \(reason)"
        case .permissionDenied(let reason): "permission denied: \(reason)"
        case .protocolViolation(let reason, _): "protocol violation: \(reason)"
        case .serverError(let reason): "server error: \(reason)"
        case .storageFailure(let reason): "local storage failed: \(reason)"
        case .sessionInactive: "the session is inactive"
        case .sessionInvalid: "the session is invalid after a fatal error"
        case .cancelled: "cancelled"
        case .invalidArgument(let reason): "invalid argument: \(reason)"
        case .changesetTooLarge(let bytes, let limit):
            "a changeset of \(bytes) bytes exceeds the limit of \(limit) bytes; nothing was stored"
        case .messageTooLarge(let bytes, let limit):
            "a stored changeset needs an upload message of \(bytes) bytes, and the server accepts at most \(limit) "
                + "bytes: it is not uploaded"
        case .clientResetRequired(let reason): "client reset required: \(reason)"
        case .storeInUse(let path): "the local store \(path) is in use by another app or process"
        case .storeCorrupted(let path, let offset): "the local store \(path) is corrupted at byte \(offset)"
        case .storeRepaired(let path, let bytes):
            "the local store \(path) ended in a write torn by a crash; its \(bytes) bytes were discarded"
        case .appClosed: "the app was closed or the user logged out"
        case .timedOut(let what): "timed out: \(what)"
        case .certificateRejected(let reason): "the server's certificate was rejected: \(reason)"
        }
    }

    /// The error's kind, whatever its message (kept with the backoff's state for the log; every
    /// consecutive failure grows the reconnect backoff, whatever its kind).
    var backoffKind: Int {
        switch self {
        case .connectionFailed: 0
        case .connectTimedOut: 1
        case .pongTimedOut: 2
        case .authenticationFailed: 3
        case .permissionDenied: 4
        case .protocolViolation: 5
        case .serverError: 6
        case .storageFailure: 7
        case .sessionInactive: 8
        case .sessionInvalid: 9
        case .cancelled: 10
        case .invalidArgument: 11
        case .changesetTooLarge: 12
        case .clientResetRequired: 13
        case .storeInUse: 14
        case .storeCorrupted: 15
        case .storeRepaired: 16
        case .appClosed: 17
        case .timedOut: 18
        case .messageTooLarge: 19
        case .certificateRejected: 20
        }
    }
}
