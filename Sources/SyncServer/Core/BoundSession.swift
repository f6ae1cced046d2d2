/// A session bound to a partition, with its download cursor: where to send its entries, how to recognise
/// its own changesets, and how far it has been sent. Owned by `ServerCore`; used only on its executor.
///
/// Entries reach a session only through its pump (`ServerCore.pump(_:)`), which sends them in version
/// order, one message at a time, waiting for the connection to be writable before each: a backlog of any
/// size costs the server at most one message in memory per session, and a client that reads slowly slows
/// only its own sessions.
final class BoundSession {
    let connection: ConnectionHandle
    let sessionID: UInt32
    let partition: Partition
    let clientFileID: UInt64
    /// Whether the credential may upload to the partition (`PartitionPermission.write`), decided once at
    /// the bind rather than for every upload.
    let mayUpload: Bool
    /// Whether its downloads name the acknowledgements that are duplicates (`Download.acknowledgedDuplicates`,
    /// protocol version 9): an older client would refuse the field, and delivers its duplicates as written.
    let namesDuplicates: Bool
    /// The next server version to send.
    var nextVersion: UInt64
    /// Cleared when the session is unbound, its connection ends, or it fails; its pump then stops.
    var isBound = true
    /// Whether a pump is running or about to run for it.
    var isPumping = false
    /// Whether the first download (the server's first report, sent even when empty) went out.
    var hasSentFirstDownload = false
    /// `mark` requests waiting for the cursor to pass a version.
    var marks: [(id: UInt64, version: UInt64)] = []

    init(
        connection: ConnectionHandle, sessionID: UInt32, partition: Partition, clientFileID: UInt64,
        mayUpload: Bool, namesDuplicates: Bool, from version: UInt64
    ) {
        self.connection = connection
        self.sessionID = sessionID
        self.partition = partition
        self.clientFileID = clientFileID
        self.mayUpload = mayUpload
        self.namesDuplicates = namesDuplicates
        nextVersion = version + 1
    }

    var key: SessionKey { SessionKey(connectionID: connection.id, sessionID: sessionID) }

    /// Whether everything up to the partition's latest version has been sent.
    var isCaughtUp: Bool { hasSentFirstDownload && nextVersion > partition.latestVersion }

    /// Removes and returns the marks the cursor has passed.
    func takeAnsweredMarks() -> [UInt64] {
        guard hasSentFirstDownload else { return [] }
        let answered = marks.filter { $0.version < nextVersion }.map(\.id)
        marks.removeAll { $0.version < nextVersion }
        return answered
    }
}
