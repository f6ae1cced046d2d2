import SyncServer
import SyncServerCommandLine

/// The command line of `sync-server`, parsed and checked: the options every server takes
/// (`CoreServerOptions`) and its own — the data directory, metrics, log format, drain, the disk's cap.
struct ServerOptions: ServerCommandLine {
    static let programName = "sync-server"
    /// `--port`, `--host`, `--api-keys`, the limits and timeouts, `--allow-origin`, `--help`.
    var core = CoreServerOptions()
    var dataDirectory: String?
    var metricsPort: Int?
    var logFormat = LogFormat.text
    var maximumPartitionsOnDisk = 1_000_000
    /// `nil`: no drain, connections are closed at once.
    var drainTimeout: Duration?

    /// How log lines are written to standard error.
    enum LogFormat: String {
        /// `2026-11-24T04:20:00.123Z warn sync.server: …`
        case text
        /// One JSON object per line (see `JSONLogLine`).
        case json
    }

    /// The ranges sync-server's own limits accept.
    static let partitionsOnDiskRange = 1...100_000_000
    static let drainTimeoutRange: ClosedRange<Duration> = .seconds(1) ... .seconds(3_600)

    static let usage = """
        usage: sync-server --port PORT --data DIR [options]

        Serves sync clients over WebSocket (ws://), keeping each partition's log in DIR.

        options:
        \(CoreServerOptions.Usage.port)
          --data DIR                where partition logs are kept, created if missing (required)
        \(CoreServerOptions.Usage.common)
        \(CoreServerOptions.Usage.maximumOffline)
          --log-format FORMAT       text or json: one JSON object per line, with the connection's id and
                                    peer address when the line concerns one (default: text)
          --metrics-port PORT       also serve GET /metrics and /healthz on PORT (they are always served
                                    on --port too, to plain HTTP GETs without an Upgrade header)
        \(CoreServerOptions.Usage.limits)
          --max-partitions-on-disk N
                                    partitions kept in DIR; binding a new one beyond it is refused
                                    (permissionDenied), 1…100000000 (default: 1000000)
        \(CoreServerOptions.Usage.timeouts)
          --drain-timeout DURATION  on SIGINT/SIGTERM, how long connections may finish before they are
                                    closed, 1s…1h (default: none, closed at once); a second signal
                                    ends the drain at once
        \(CoreServerOptions.Usage.allowOrigin)
        \(CoreServerOptions.Usage.help)

        On start it prints one line with its ws:// URL. SIGINT or SIGTERM stop it: it stops accepting
        (/healthz answers 503), lets connections finish for --drain-timeout, closes every one with code
        1001 and exits 0; a second SIGINT or SIGTERM skips the rest of the drain. SIGHUP reloads the
        --api-keys file (a malformed one keeps the keys in use and logs an error).
        exit status: 0 after a clean stop; 1 when it cannot start; 64 on bad usage.
        """

    mutating func consume(_ argument: String, from arguments: inout ArgumentCursor) throws(UsageError) -> Bool {
        switch argument {
        case "--data": dataDirectory = try arguments.value(for: argument)
        case "--log-format":
            let text = try arguments.value(for: argument)
            guard let format = LogFormat(rawValue: text) else {
                throw UsageError("--log-format must be text or json, not \(text)")
            }
            logFormat = format
        case "--metrics-port": metricsPort = try arguments.port(for: argument)
        case "--max-partitions-on-disk":
            maximumPartitionsOnDisk = try arguments.integer(for: argument, in: Self.partitionsOnDiskRange)
        case "--drain-timeout": drainTimeout = try arguments.duration(for: argument, in: Self.drainTimeoutRange)
        default: return false
        }
        return true
    }

    func validate() throws(UsageError) {
        guard dataDirectory != nil else { throw UsageError("--data is required") }
    }
}
