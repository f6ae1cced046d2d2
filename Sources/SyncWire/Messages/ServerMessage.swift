/// A message from the server to a client.
public enum ServerMessage: Sendable, Hashable {
    /// The server accepted `hello`, and will speak `protocolVersion`. From version 5 it says the largest
    /// message it accepts (`maximumMessageBytes`, encoded size): a client never sends a larger one (an
    /// upload that cannot fit is refused with `SyncError.messageTooLarge` instead of being closed with
    /// 1009 and retried). Present exactly when `protocolVersion` is 5 or more (the decoder reads it by the
    /// version); `nil` from a version 4 server, and in the welcome a version 4 client gets.
    case welcome(protocolVersion: UInt16, maximumMessageBytes: UInt32? = nil)
    /// The next entries of a bound session's partition log, in server-version order.
    case download(Download)
    /// The server finished unbinding a session.
    case unbound(sessionID: UInt32)
    /// The answer to `ping`.
    case pong(id: UInt64)
    /// The answer to `mark`: every entry the partition held when the mark arrived was sent before this.
    case marked(sessionID: UInt32, id: UInt64)
    /// Something went wrong for one session or, without a session, for the whole connection.
    case error(ProtocolError)
}

/// A run of a partition's log for one session.
///
/// Entries come in strictly increasing server version with no version skipped after the session's
/// `downloadedVersion`: each is either another client's changeset (with its bytes) or the
/// acknowledgement of one of this client's own uploads (without its bytes, which the client has).
/// The first `download` after `bind` is sent even when it has no entries: it is the server's first
/// report of how much there is to download.
public struct Download: Sendable, Hashable {
    /// The bound session.
    public var sessionID: UInt32
    /// Log entries, in server-version order.
    public var entries: [DownloadEntry]
    /// Changeset bytes the server still has to send this session after this message, as known when the
    /// message was sent. Only `.changeset` entries' bytes count.
    public var remainingBytes: UInt64
    /// The identity of the partition's log (a random number the server's store created with the log), in
    /// the first `download` of a bind; `nil` in the others, and 0 from a store that keeps no identity. The
    /// client stores it and sends it in its next `bind`s (`Bind.historyID`). Protocol version 3.
    public var historyID: UInt64?
    /// The CRC-32 (`CRC32.checksum`) of the bytes of each `.acknowledged` entry's changeset as the log holds
    /// it, one per `.acknowledged` entry, in their order; empty when the server gives none. A client whose
    /// own changeset under that client version has other bytes (its store was copied or restored from a
    /// backup, and the copy reused the version number) must not take it as acknowledged: it resets instead.
    /// Protocol version 4.
    public var acknowledgedDigests: [UInt32]
    /// The server versions of the `.acknowledged` entries that duplicate an earlier entry of the log (the
    /// server held the changeset's origin with the same bytes already: a store restored from a backup
    /// recovered it again), in increasing order; empty when there are none. Every other client receives such
    /// an entry as an empty changeset, and so does its uploader: its changesets feed delivers it empty.
    /// Protocol version 9: a download that names any has message type `0x87` instead of `0x82` (a server
    /// names none to an older client).
    public var acknowledgedDuplicates: [UInt64]

    public init(
        sessionID: UInt32, entries: [DownloadEntry], remainingBytes: UInt64, historyID: UInt64? = nil,
        acknowledgedDigests: [UInt32] = [], acknowledgedDuplicates: [UInt64] = []
    ) {
        self.sessionID = sessionID
        self.entries = entries
        self.remainingBytes = remainingBytes
        self.historyID = historyID
        self.acknowledgedDigests = acknowledgedDigests
        self.acknowledgedDuplicates = acknowledgedDuplicates
    }
}

/// One entry of a partition's log as a particular client receives it.
public enum DownloadEntry: Sendable, Hashable {
    /// Another client's changeset.
    case changeset(serverVersion: UInt64, data: [UInt8])
    /// This client's own changeset `clientVersion` was integrated as `serverVersion`.
    case acknowledged(serverVersion: UInt64, clientVersion: UInt64)

    /// The entry's server version.
    public var serverVersion: UInt64 {
        switch self {
        case .changeset(let version, _), .acknowledged(let version, _): version
        }
    }
}

/// An error reported by the server.
public struct ProtocolError: Error, Sendable, Hashable {
    /// The session it concerns, or `nil` for the connection as a whole (the server closes it after).
    public var sessionID: UInt32?
    /// What went wrong.
    public var code: ProtocolErrorCode
    /// A human-readable explanation.
    public var message: String
    /// When set, the client should wait at least this long before trying again.
    public var retryAfterMilliseconds: UInt32?
    /// With `.clientResetRequired` from a server that speaks protocol version 2: what the client needs to
    /// reset without losing or duplicating a changeset. `nil` otherwise.
    public var clientReset: ClientResetDetails?

    public init(
        sessionID: UInt32? = nil,
        code: ProtocolErrorCode,
        message: String,
        retryAfterMilliseconds: UInt32? = nil,
        clientReset: ClientResetDetails? = nil
    ) {
        self.sessionID = sessionID
        self.code = code
        self.message = message
        self.retryAfterMilliseconds = retryAfterMilliseconds
        self.clientReset = clientReset
    }
}

/// The kinds of error the server reports. The raw value is what goes on the wire.
public enum ProtocolErrorCode: UInt16, Sendable, Hashable, CaseIterable {
    /// A message could not be decoded, or broke the protocol's rules (e.g. `bind` before `hello`).
    case malformedMessage = 1
    /// The server does not speak the client's protocol version.
    case unsupportedProtocolVersion = 2
    /// The credential was refused.
    case authenticationFailed = 3
    /// The credential may not sync this partition.
    case permissionDenied = 4
    /// A message exceeded the server's size limit.
    case messageTooLarge = 5
    /// A message named a session that is not bound.
    case unknownSession = 6
    /// `bind` reused a session number that is still bound.
    case sessionAlreadyBound = 7
    /// An upload's client versions were not strictly increasing, or skipped a version (a client file's
    /// versions must follow each other: 1, 2, 3, …).
    case badClientVersion = 8
    /// The server is busy; try again later (see `retryAfterMilliseconds`).
    case serverBusy = 9
    /// The server failed internally (e.g. its storage); try again later.
    case internalError = 10
    /// The client's copy of the partition must be reset before it can sync again: it holds server versions
    /// the server does not have (the server lost history), or the server forgot its client file after it
    /// was offline too long. `ProtocolError.clientReset` says which and what the server holds. Retrying
    /// the same bind cannot help.
    case clientResetRequired = 11
    /// The `clientFileID` in `bind` belongs to another credential in this partition (a client file id
    /// belongs to the credential that first used it there).
    case foreignClientFile = 12

    /// Whether retrying cannot help: the session (or, without a session, the client) must give up.
    public var isFatal: Bool {
        switch self {
        case .unsupportedProtocolVersion, .authenticationFailed, .permissionDenied, .badClientVersion,
            .messageTooLarge, .clientResetRequired, .foreignClientFile:
            true
        case .malformedMessage, .unknownSession, .sessionAlreadyBound, .serverBusy, .internalError:
            false
        }
    }
}
