/// What `SyncSession.write(_:)` returns: the written changeset's identity (its store's client file id and
/// its client version), to ask whether the server has it yet and to wait until it does.
///
/// - `session.isPending(receipt)` is `true` from the moment `write` returned until the server acknowledged
///   the changeset (the acknowledgement is durable in the local store), and `false` after — also when a
///   client reset discarded the changeset.
/// - `try await receipt.uploaded` returns once the server acknowledged it (at once if it already did).
/// - Across reconnects nothing changes: an upload lost with its connection is sent again, and the receipt
///   stays pending until then. Across a relaunch, `session.receipt(for:)` recreates a receipt from the
///   client version (the answers come from the store); a receipt kept from before answers the same.
/// - Across a client reset: a changeset the server already held counts as uploaded; one the reset
///   recovers (`.recoverUnsyncedChanges`) keeps its receipt, which answers for the changeset's new client
///   version, and completes once that is uploaded; one the reset discards makes `uploaded` throw
///   `.clientResetRequired`. The store remembers its last 32 resets, so this holds after a relaunch too:
///   `session.receipt(for:clientFileID:)` recreates a receipt from a store a reset replaced.
///
/// Two receipts are equal when they name the same changeset (client file id and client version), even
/// when made by different `SyncSession` objects (before and after a relaunch).
public struct WriteReceipt: Sendable, Hashable, CustomStringConvertible {
    /// The changeset's client version in its store: 1 for the store's first write, then 2, 3, …
    public let clientVersion: UInt64
    /// The store the changeset was written to (a client reset gives the store a new one).
    public let clientFileID: UInt64
    /// The session that wrote it.
    let session: SyncSession

    init(clientVersion: UInt64, clientFileID: UInt64, session: SyncSession) {
        self.clientVersion = clientVersion
        self.clientFileID = clientFileID
        self.session = session
    }

    /// Returns once the server acknowledged the changeset (at once if it already did).
    ///
    /// While waiting, the session must stay active: like `SyncSession.wait(for:)`, the await never hangs
    /// on a session that stopped syncing.
    ///
    /// - Throws: `.clientResetRequired` when a client reset discarded the changeset; `.sessionInactive` or
    ///   `.sessionInvalid` if the session is, or becomes, inactive (suspended or closed) or invalid before
    ///   the acknowledgement; `.appClosed` once the app closed or the user logged out; `.cancelled` if the
    ///   awaiting task is cancelled; `.invalidArgument` for a receipt whose store this session does not
    ///   know (another session's, or one replaced by a client reset older than the 32 its store remembers).
    public var uploaded: Void {
        get async throws(SyncError) {
            try await session.waitUntilUploaded(self)
        }
    }

    public static func == (lhs: WriteReceipt, rhs: WriteReceipt) -> Bool {
        lhs.clientVersion == rhs.clientVersion && lhs.clientFileID == rhs.clientFileID
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(clientFileID)
        hasher.combine(clientVersion)
    }

    public var description: String { "WriteReceipt(\(session.partition) #\(clientVersion))" }
}

/// The writes of a session not yet acknowledged by the server, as `SyncSession.pendingWrites` publishes
/// them: a range of client versions of the session's current store (acknowledgements come in order, so the
/// pending writes are always the newest ones).
public struct PendingWrites: Sendable, Hashable, CustomStringConvertible {
    /// The store the versions belong to.
    public let clientFileID: UInt64
    /// The client versions written and not yet acknowledged, oldest first.
    public let clientVersions: Range<UInt64>

    /// How many writes are pending.
    public var count: Int { clientVersions.count }
    /// Whether every write was acknowledged.
    public var isEmpty: Bool { clientVersions.isEmpty }

    /// Whether `receipt`'s write is among them. A receipt from before a client reset names the store the
    /// reset replaced: ask `SyncSession.isPending(_:)`, which follows it to its recovered version.
    public func contains(_ receipt: WriteReceipt) -> Bool {
        receipt.clientFileID == clientFileID && clientVersions.contains(receipt.clientVersion)
    }

    public var description: String {
        isEmpty
            ? "PendingWrites(none)" : "PendingWrites(\(clientVersions.lowerBound)...\(clientVersions.upperBound - 1))"
    }
}
