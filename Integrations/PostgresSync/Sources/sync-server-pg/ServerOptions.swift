import PostgresSync
import SyncServer
import SyncServerCommandLine

/// The command line of `sync-server-pg`, parsed and checked: the options every server takes
/// (`CoreServerOptions`, but `--max-offline`), with `--database URL` instead of `sync-server`'s `--data DIR`.
struct ServerOptions: ServerCommandLine {
    static let programName = "sync-server-pg"
    /// `--port`, `--host`, `--api-keys`, the limits and timeouts, `--allow-origin`, `--help`.
    var core = CoreServerOptions()
    var database: DatabaseURL?

    static let usage = """
        usage: sync-server-pg --port PORT --database postgres://USER@HOST[:PORT]/DATABASE [options]

        A sync-server front end: serves sync clients over WebSocket (ws://), keeping every partition's log in
        PostgreSQL, which several front ends may share (see docs/Scaling.md).

        options:
        \(CoreServerOptions.Usage.port)
          --database URL            postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=disable|prefer|
                                    require]; the schema is created or migrated at start (required)
        \(CoreServerOptions.Usage.common)
        \(CoreServerOptions.Usage.limits)
        \(CoreServerOptions.Usage.timeouts)
        \(CoreServerOptions.Usage.allowOrigin)
        \(CoreServerOptions.Usage.help)

        On start it prints one line with its ws:// URL. SIGINT or SIGTERM stop it: it stops accepting,
        finishes what is in flight, closes every connection with code 1001 and exits 0. SIGHUP is ignored.
        exit status: 0 after a clean stop; 1 when it cannot start; 64 on bad usage.
        """

    mutating func consume(_ argument: String, from arguments: inout ArgumentCursor) throws(UsageError) -> Bool {
        guard argument == "--database" else { return false }
        let text = try arguments.value(for: argument)
        do { database = try DatabaseURL(text) } catch { throw UsageError("--database: \(error)") }
        return true
    }

    func validate() throws(UsageError) {
        if core.maximumOfflineTime != nil {
            throw UsageError(
                "--max-offline is not supported by sync-server-pg yet: PostgreSQL keeps no client's last-seen "
                    + "time (docs/Scaling.md)")
        }
        guard database != nil else { throw UsageError("--database is required") }
    }
}
