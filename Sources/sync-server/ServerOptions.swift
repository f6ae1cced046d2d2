import SyncServer
import SyncServerCommandLine

/// The command line of `sync-server`, parsed and checked: the options every server takes
/// (`CoreServerOptions`) and its own — the data directory, metrics, log format, drain, the disk's cap.
struct ServerOptions: ServerCommandLine {
    static let programName = "sync-server"
    /// `--port`, `--host`, `--api-keys`, the limits and timeouts, `--allow-origin`, `--help`.
    var core = CoreServerOptions()
    var dataDirectory: String?
    /// `--log-format`, `--metrics-port`, `--max-partitions-on-disk`, `--drain-timeout`.
    var operations = OperatorOptions()

    static let usage = """
        usage: sync-server --port PORT --data DIR [options]

        Serves sync clients over WebSocket (ws://), keeping each partition's log in DIR.

        options:
        \(CoreServerOptions.Usage.port)
          --data DIR                where partition logs are kept, created if missing (required)
        \(CoreServerOptions.Usage.common)
        \(CoreServerOptions.Usage.maximumOffline)
        \(OperatorOptions.Usage.logFormatAndMetrics)
        \(CoreServerOptions.Usage.limits)
        \(OperatorOptions.Usage.partitionsOnDisk)
        \(CoreServerOptions.Usage.timeouts)
        \(OperatorOptions.Usage.drainTimeout)
        \(CoreServerOptions.Usage.allowOrigin)
        \(CoreServerOptions.Usage.help)

        On start it prints one line with its ws:// URL. SIGINT or SIGTERM stop it: it stops accepting
        (/healthz answers 503), lets connections finish for --drain-timeout, closes every one with code
        1001 and exits 0; a second SIGINT or SIGTERM skips the rest of the drain. SIGHUP reloads the
        --api-keys file (a malformed one keeps the keys in use and logs an error).
        exit status: 0 after a clean stop; 1 when it cannot start; 64 on bad usage.
        """

    mutating func consume(_ argument: String, from arguments: inout ArgumentCursor) throws(UsageError) -> Bool {
        if try operations.consume(argument, from: &arguments) { return true }
        guard argument == "--data" else { return false }
        dataDirectory = try arguments.value(for: argument)
        return true
    }

    func validate() throws(UsageError) {
        guard dataDirectory != nil else { throw UsageError("--data is required") }
    }
}
