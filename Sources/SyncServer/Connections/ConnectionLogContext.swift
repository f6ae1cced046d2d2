/// The connection a log event concerns: bound (a task-local value) while the server handles that
/// connection's messages and runs its sessions' pumps, so a log sink called on that task can add the
/// connection's id and peer address to each line (`sync-server --log-format json`).
package struct ConnectionLogContext: Sendable {
    /// The connection's number (as in `connection N` in log messages).
    package let id: UInt64
    /// The client's address, `host:port` (`[v6]:port`); `nil` for an in-process connection.
    package let peer: String?

    /// The connection whose work the current task does, if any.
    @TaskLocal package static var current: ConnectionLogContext?
}
