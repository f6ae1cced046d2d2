/// Which way bytes move between a client and the server.
///
/// Progress is tracked separately per direction: a `ProgressNotifier` keeps independent counters, an
/// independent "last complete point", and independent subscribers for `.upload` and `.download`.
public enum ProgressDirection: Sendable, Hashable, CaseIterable {
    /// Local changes sent to the server.
    case upload
    /// Server changes received by the client.
    case download
}
