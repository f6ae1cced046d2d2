import SyncWire

/// An upload waiting for its partition's next commit (`ServerCore.integrate(_:of:on:)`): one `upload`
/// message, or several consecutive ones of one session taken into one batch together.
struct QueuedUpload {
    private(set) var upload: Upload
    let session: BoundSession
    let connection: ConnectionState
    /// The `upload` messages it holds.
    private(set) var messageCount = 1
    /// The bytes of its changesets, as counted against its connection's queue (`ConnectionState`).
    private(set) var byteCount: Int

    init(upload: Upload, session: BoundSession, connection: ConnectionState) {
        self.upload = upload
        self.session = session
        self.connection = connection
        byteCount = upload.changesets.reduce(0) { $0 + $1.data.count }
    }

    /// Whether `next` continues this upload: the same session (so the same binding and connection), its
    /// first client version right after this one's last.
    func isContinued(by next: QueuedUpload) -> Bool {
        guard next.session === session, let last = upload.changesets.last, let first = next.upload.changesets.first
        else { return false }
        return first.clientVersion == last.clientVersion + 1
    }

    /// Takes `next` (which continues this upload, `isContinued(by:)`) into it.
    mutating func absorb(_ next: QueuedUpload) {
        upload.changesets += next.upload.changesets
        messageCount += next.messageCount
        byteCount += next.byteCount
    }
}
