/// The operator options of the servers that keep their partitions in a data directory (`sync-server`,
/// `sync-server-nio`), beyond `CoreServerOptions`: the log format, the metrics port, the disk's cap on
/// partitions and the drain on stop. A program's `consume(_:from:)` offers them its arguments:
///
/// ```swift
/// mutating func consume(_ argument: String, from arguments: inout ArgumentCursor) throws(UsageError) -> Bool {
///     if try operations.consume(argument, from: &arguments) { return true }
///     …
/// }
/// ```
public struct OperatorOptions: Sendable, Equatable {
    /// `--log-format`: how log lines are written to standard error.
    public var logFormat = LogFormat.text
    /// `--metrics-port`: a second port serving only `GET /metrics` and `GET /healthz`; `nil`: none.
    public var metricsPort: Int?
    /// `--max-partitions-on-disk`: the file store's cap (`SyncServer.Configuration.maximumPartitionsInStore`).
    public var maximumPartitionsOnDisk = 1_000_000
    /// `--drain-timeout`: how long open connections may finish after a stop signal; `nil`: no drain, they
    /// are closed at once.
    public var drainTimeout: Duration?

    /// The defaults: text logs, no metrics port, 1,000,000 partitions on disk, no drain.
    public init() {}

    /// How log lines are written to standard error.
    public enum LogFormat: String, Sendable {
        /// `2026-11-24T04:20:00.123Z warn sync.server: …`
        case text
        /// One JSON object per line (see `JSONLogLine`).
        case json
    }

    /// The values `--max-partitions-on-disk` accepts.
    public static let partitionsOnDiskRange = 1...100_000_000
    /// The values `--drain-timeout` accepts.
    public static let drainTimeoutRange: ClosedRange<Duration> = .seconds(1) ... .seconds(3_600)

    /// Takes `argument` if it is `--log-format`, `--metrics-port`, `--max-partitions-on-disk` or
    /// `--drain-timeout`, reading and checking its value (`--log-format must be text or json, not xml`,
    /// `--drain-timeout must be 1s…3600s, not 2h`); returns `false`, having read nothing, otherwise.
    public mutating func consume(
        _ argument: String, from arguments: inout ArgumentCursor
    ) throws(UsageError) -> Bool {
        switch argument {
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

    /// The usage lines of these options, as `CoreServerOptions.Usage`'s: whole lines indented by two
    /// spaces, without a final newline, one block a line of the program's usage literal.
    public enum Usage {
        /// `--log-format`, `--metrics-port`.
        public static let logFormatAndMetrics = """
              --log-format FORMAT       text or json: one JSON object per line, with the connection's id and
                                        peer address when the line concerns one (default: text)
              --metrics-port PORT       also serve GET /metrics and /healthz on PORT (they are always served
                                        on --port too, to plain HTTP GETs without an Upgrade header)
            """

        /// `--max-partitions-on-disk`.
        public static let partitionsOnDisk = """
              --max-partitions-on-disk N
                                        partitions kept in DIR; binding a new one beyond it is refused
                                        (permissionDenied), 1…100000000 (default: 1000000)
            """

        /// `--drain-timeout`.
        public static let drainTimeout = """
              --drain-timeout DURATION  on SIGINT/SIGTERM, how long connections may finish before they are
                                        closed, 1s…1h (default: none, closed at once); a second signal
                                        ends the drain at once
            """
    }
}
