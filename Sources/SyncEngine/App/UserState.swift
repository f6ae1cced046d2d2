/// Whether a user can be used.
///
/// ```
/// .loggedIn ──logOut()──▶ .loggedOut      .loggedIn / .loggedOut ──remove()──▶ .removed
/// ```
public enum UserState: Sendable, Hashable {
    /// Logged in: sessions can be opened.
    case loggedIn
    /// Logged out: its sessions stopped, its local files kept; `SyncApp.login` makes a new user.
    case loggedOut
    /// Logged out and its local files deleted.
    case removed
}
