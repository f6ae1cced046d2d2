import PostgresSync
import SyncServer
import SyncServerCommandLine

/// The command line of `sync-server-pg`, parsed and checked: the options every server takes
/// (`CoreServerOptions`, but `--max-offline`), with `--database URL` instead of `sync-server`'s `--data DIR`,
/// and `sync-server`'s `--max-partitions-on-disk`.
struct ServerOptions: ServerCommandLine {
    static let programName = "sync-server-pg"
    /// `--port`, `--host`, `--api-keys`, the limits and timeouts, `--allow-origin`, `--help`.
    var core = CoreServerOptions()
    var database: DatabaseURL?
    /// `--max-partitions-on-disk N`: partitions the database may hold, as `sync-server`'s.
    var maximumPartitionsOnDisk = 1_000_000

    /// What `--max-partitions-on-disk` accepts (`sync-server`'s range).
    static let partitionsOnDiskRange = 1...100_000_000

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
          --max-partitions-on-disk N
                                    partitions kept in the database; binding a new one beyond it is
                                    refused (permissionDenied), 1…100000000 (default: 1000000); the
                                    database enforces it across the front ends that share it
        \(CoreServerOptions.Usage.timeouts)
        \(CoreServerOptions.Usage.allowOrigin)
        \(CoreServerOptions.Usage.help)

        On start it prints one line with its ws:// URL. SIGINT or SIGTERM stop it: it stops accepting,
        finishes what is in flight, closes every connection with code 1001 and exits 0. SIGHUP is ignored.
        exit status: 0 after a clean stop; 1 when it cannot start; 64 on bad usage.
        """

    mutating func consume(_ argument: String, from arguments: inout ArgumentCursor) throws(UsageError) -> Bool {
        switch argument {
        case "--database":
            let text = try arguments.value(for: argument)
            do { database = try DatabaseURL(text) } catch { throw UsageError("--database: \(error)") }
        case "--max-partitions-on-disk":
            maximumPartitionsOnDisk = try arguments.integer(for: argument, in: Self.partitionsOnDiskRange)
        default: return false
        }
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
