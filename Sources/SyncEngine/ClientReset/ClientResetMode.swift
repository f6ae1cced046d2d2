/// What a session does when the server says its local copy must be reset (`clientResetRequired`: the
/// client was offline longer than the server's maximum offline time, or the server lost history the
/// client holds). Set in `SyncApp.Configuration.clientResetMode`.
///
/// In both automatic modes the session's local store is replaced, crash-safely, by a new one with a new
/// client file id that downloads the server's log afresh; `SyncSession.clientResets` and the
/// configuration's `clientResetHandler` hear `.willReset` before anything is replaced and `.didReset` once
/// the new store is in place. The session stays `.active` throughout.
public enum ClientResetMode: Sendable, Hashable, CustomStringConvertible {
    /// The local copy becomes the server's: the local changesets the server does not hold (see
    /// `ClientReset.unsyncedChanges`) are reported in `.willReset`, then dropped.
    case discardUnsyncedChanges
    /// The local copy becomes the server's, and the local changesets the server does not hold — never
    /// acknowledged, or acknowledged and lost by the server — are uploaded again, after the server's
    /// state, each exactly once. The default.
    case recoverUnsyncedChanges
    /// Nothing automatic: the session becomes `.invalid` and `.clientResetRequired` reaches
    /// `SyncApp.errors`. The app decides (say, log the user out and `deleteLocalFiles(for:partition:)`).
    case manual

    public var description: String {
        switch self {
        case .discardUnsyncedChanges: "discardUnsyncedChanges"
        case .recoverUnsyncedChanges: "recoverUnsyncedChanges"
        case .manual: "manual"
        }
    }
}
