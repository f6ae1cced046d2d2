/// A message from a client to the server.
///
/// A connection starts with exactly one `hello`; the server answers `welcome` or an error and closes.
/// After `welcome` the client binds sessions (one per partition), uploads changesets in client-version
/// order, pings, marks, and unbinds. `docs/Protocol.md` describes the exchange and the binary encoding.
public enum ClientMessage: Sendable, Hashable {
    /// Opens the conversation: the protocol version the client speaks and who it is.
    case hello(Hello)
    /// Starts syncing one partition on this connection under a session number the client chose.
    case bind(Bind)
    /// Changesets written locally, in increasing client version, for a bound session.
    case upload(Upload)
    /// Stops syncing a session; the server answers `unbound`.
    case unbind(sessionID: UInt32)
    /// Keepalive; the server answers `pong` with the same number, at once.
    case ping(id: UInt64)
    /// Asks the server to answer `marked` with the same number once it has sent the bound session every
    /// entry the partition held when the `mark` arrived (the download-completion check of
    /// `SyncSession.wait(for: .download)`).
    case mark(sessionID: UInt32, id: UInt64)
}

/// The first message on a connection.
public struct Hello: Sendable, Hashable {
    /// The protocol version the client speaks (`WireProtocol.version`).
    public var protocolVersion: UInt16
    /// Who the client is.
    public var credential: WireCredential

    public init(protocolVersion: UInt16 = WireProtocol.version, credential: WireCredential) {
        self.protocolVersion = protocolVersion
        self.credential = credential
    }
}

/// A client's credential as sent on the wire.
public enum WireCredential: Sendable, Hashable {
    /// No identity; a server may refuse it.
    case anonymous
    /// An API key the server knows; it names the partitions the key may sync.
    case apiKey(String)
}

/// Binds a session to a partition.
public struct Bind: Sendable, Hashable {
    /// The client's number for this session on this connection; every later message about the session
    /// carries it.
    public var sessionID: UInt32
    /// The partition to sync.
    public var partition: String
    /// Identifies the client's local copy of the partition; the server uses it to recognise the
    /// client's own changesets (it acknowledges them instead of sending them back) and to drop
    /// re-uploads of changesets it already integrated.
    public var clientFileID: UInt64
    /// The highest server version the client already holds (0 for none): the server sends what follows.
    public var downloadedVersion: UInt64
    /// The identity of the partition log the client's versions come from, as the server's first `download`
    /// of an earlier bind gave it (`Download.historyID`); 0 when the client holds none. A server whose log
    /// has another identity refuses the bind with `clientResetRequired` (`historyLost`). Protocol version 3.
    public var historyID: UInt64
    /// The highest client version of this client file the client saw acknowledged (0 for none). A server
    /// whose log holds less of the client file lost history the client depends on: it refuses the bind
    /// with `clientResetRequired` (`historyLost`). Protocol version 3.
    public var acknowledgedClientVersion: UInt64
    /// A changeset of this log the client holds — or its changesets feed delivered, when a `clientExpired`
    /// reset replaced its store since — named by its server version and the CRC-32 of its bytes; usually the
    /// one at `downloadedVersion`. `nil` when it names none (nothing held, or a client of protocol version 5
    /// or older). A server whose log ends before that version, or holds other bytes there — restored from
    /// an older copy of the same history (same `historyID`) and grown past the client since — refuses the
    /// bind with `clientResetRequired` (`historyLost`). Protocol version 6.
    public var checkpoint: LogCheckpoint?

    public init(
        sessionID: UInt32, partition: String, clientFileID: UInt64, downloadedVersion: UInt64, historyID: UInt64 = 0,
        acknowledgedClientVersion: UInt64 = 0, checkpoint: LogCheckpoint? = nil
    ) {
        self.sessionID = sessionID
        self.partition = partition
        self.clientFileID = clientFileID
        self.downloadedVersion = downloadedVersion
        self.historyID = historyID
        self.acknowledgedClientVersion = acknowledgedClientVersion
        self.checkpoint = checkpoint
    }
}

/// A version of a partition's log and a digest of what a client holds there (`Bind.checkpoint`).
public struct LogCheckpoint: Sendable, Hashable {
    /// Its server version (at least 1).
    public var serverVersion: UInt64
    /// With `coversPrefix` (protocol version 8), the prefix digest of versions 1…`serverVersion`
    /// (`CRC32.prefixDigest` of SyncStorage); without, the CRC-32 of the one changeset at `serverVersion` (the same
    /// CRC-32 as `Download.acknowledgedDigests`; versions 6 and 7).
    public var digest: UInt32
    /// Whether `digest` covers every version up to `serverVersion` (version 8, a `bind` of type 0x09) or
    /// only the changeset there.
    public var coversPrefix: Bool

    public init(serverVersion: UInt64, digest: UInt32, coversPrefix: Bool = false) {
        self.serverVersion = serverVersion
        self.digest = digest
        self.coversPrefix = coversPrefix
    }
}

/// Changesets to integrate.
public struct Upload: Sendable, Hashable {
    /// The bound session they belong to.
    public var sessionID: UInt32
    /// In strictly increasing client version.
    public var changesets: [UploadChangeset]

    public init(sessionID: UInt32, changesets: [UploadChangeset]) {
        self.sessionID = sessionID
        self.changesets = changesets
    }
}

/// One locally written changeset.
public struct UploadChangeset: Sendable, Hashable {
    /// The client's sequence number for it (1, 2, 3, … per client file).
    public var clientVersion: UInt64
    /// The opaque changeset bytes.
    public var data: [UInt8]
    /// Where the changeset was first written, when that was under another identity: a changeset that a
    /// recovering client reset carried over from a replaced client file keeps the origin of the one it
    /// recovers (its client file and client version there, or that changeset's own origin if it was
    /// recovered too). `nil` for a changeset written here (its origin is this client file and
    /// `clientVersion`). The server integrates each origin once: an upload whose origin the log already holds
    /// with the same bytes (a store restored from a backup taken before a recovering reset, reset and
    /// recovering the same changeset again) is acknowledged without being delivered twice. Protocol version 7.
    public var origin: ChangesetOrigin?

    public init(clientVersion: UInt64, data: [UInt8], origin: ChangesetOrigin? = nil) {
        self.clientVersion = clientVersion
        self.data = data
        self.origin = origin
    }
}

/// The identity under which a changeset was first written: a client file and its client version there
/// (`UploadChangeset.origin`).
public struct ChangesetOrigin: Sendable, Hashable {
    /// The client file that first held the changeset.
    public var clientFileID: UInt64
    /// Its client version in that client file.
    public var clientVersion: UInt64

    public init(clientFileID: UInt64, clientVersion: UInt64) {
        self.clientFileID = clientFileID
        self.clientVersion = clientVersion
    }
}

/// Protocol constants.
public enum WireProtocol {
    /// The protocol version this build speaks. Version 2 added `ProtocolError.clientReset` at the end of
    /// the `error` message; version 3 added `Bind.historyID` and `Bind.acknowledgedClientVersion` at the end
    /// of `bind`, and `Download.historyID` at the end of `download`; version 4 added
    /// `Download.acknowledgedDigests` at the end of `download`; version 5 added the server's
    /// `maximumMessageBytes` at the end of `welcome`; version 6 added `Bind.checkpoint` at the end of `bind`,
    /// whose type is then 0x07 (a `bind` of type 0x02 names none: a version 4 or 5 one, or one with nothing
    /// to name); version 7 added `UploadChangeset.origin`, in an `upload` of type 0x08 that ends with the
    /// origins of the changesets that have one (an `upload` of type 0x03 carries none); version 8 added the
    /// prefix checkpoint (`LogCheckpoint.coversPrefix`), in a `bind` of type 0x09 (type 0x07 keeps the
    /// checkpoint of one changeset); version 9 added `Download.acknowledgedDuplicates`, in a `download` of
    /// type 0x87 that ends with them (a `download` of type 0x82 names none; only version 9 clients get 0x87).
    public static let version: UInt16 = 9

    /// The oldest version a server of this build still welcomes: a version 4 client gets a version 4
    /// `welcome` (without the message limit), a version 5 to 9 client the same `welcome` with it; a version
    /// 4 or 5 client's `bind` names no checkpoint (the server then skips that check), a version 6 or 7
    /// client's names the CRC-32 of one changeset (checked as such), a client older than version 7 names no
    /// origins (each changeset is its own), and every other message is the same in all five.
    public static let oldestSupportedVersion: UInt16 = 4
}
