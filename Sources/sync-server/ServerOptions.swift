import SyncServer

/// The command line of `sync-server`, parsed and checked.
struct ServerOptions {
    var port: Int?
    var dataDirectory: String?
    var host = "127.0.0.1"
    var apiKeysFile: String?
    var maximumMessageBytes = WireProtocol.maximumMessageSize
    var logLevel: SyncLogLevel = .warn
    var maximumOfflineTime: Duration?
    var metricsPort: Int?
    var logFormat = LogFormat.text
    var maximumConnections = 10_000
    var maximumSessionsPerConnection = 1_000
    var maximumPartitions = 100_000
    var maximumIdlePartitions = 128
    var maximumPartitionsOnDisk = 1_000_000
    var idleTimeout: Duration = .seconds(300)
    var handshakeTimeout: Duration = .seconds(10)
    /// `nil`: no drain, connections are closed at once.
    var drainTimeout: Duration?
    /// `--allow-origin` values, in order (`*`: any origin).
    var allowedOrigins: [String] = []
    var showHelp = false

    /// How log lines are written to standard error.
    enum LogFormat: String {
        /// `2026-11-24T04:20:00.123Z warn sync.server: …`
        case text
        /// One JSON object per line (see `JSONLogLine`).
        case json
    }

    /// The ranges the numeric limits accept.
    static let connectionsRange = 1...1_000_000
    static let sessionsPerConnectionRange = 1...100_000
    static let partitionsRange = 1...10_000_000
    static let idlePartitionsRange = 0...1_000_000
    static let partitionsOnDiskRange = 1...100_000_000
    static let idleTimeoutRange: ClosedRange<Duration> = .seconds(10) ... .seconds(86_400)
    static let handshakeTimeoutRange: ClosedRange<Duration> = .seconds(1) ... .seconds(300)
    static let drainTimeoutRange: ClosedRange<Duration> = .seconds(1) ... .seconds(3_600)

    struct UsageError: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }

    static let usage = """
        usage: sync-server --port PORT --data DIR [options]

        Serves sync clients over WebSocket (ws://), keeping each partition's log in DIR.

        options:
          --port PORT               the TCP port to listen on; 0 picks a free one (required)
          --data DIR                where partition logs are kept, created if missing (required)
          --host HOST               the address to listen on (default: 127.0.0.1)
          --api-keys FILE           accept only the API keys in FILE, each for its partitions
                                    (default: anyone may sync anything; see docs/Server.md)
          --max-message-bytes N     the largest message accepted or sent (default: 16777216)
          --log-level LEVEL         off, fatal, error, warn, info, detail, debug or trace (default: warn)
          --max-offline DURATION    forget a client unseen for longer (e.g. 30d, 12h, 45m, 90s); it must
                                    reset its copy when it returns (default: never forget)
          --log-format FORMAT       text or json: one JSON object per line, with the connection's id and
                                    peer address when the line concerns one (default: text)
          --metrics-port PORT       also serve GET /metrics and /healthz on PORT (they are always served
                                    on --port too, to plain HTTP GETs without an Upgrade header)
          --max-connections N       connections open at once, 1…1000000 (default: 10000)
          --max-sessions-per-connection N
                                    sessions one connection may bind, 1…100000 (default: 1000)
          --max-partitions N        live partitions, 1…10000000 (default: 100000)
          --max-idle-partitions N   idle partitions kept loaded, 0…1000000 (default: 128)
          --max-partitions-on-disk N
                                    partitions kept in DIR; binding a new one beyond it is refused
                                    (permissionDenied), 1…100000000 (default: 1000000)
          --idle-timeout DURATION   drop a connection silent for this long, 10s…1d (default: 300s)
          --handshake-timeout DURATION
                                    time for the opening handshake, 1s…300s (default: 10s)
          --drain-timeout DURATION  on SIGINT/SIGTERM, how long connections may finish before they are
                                    closed, 1s…1h (default: none, closed at once); a second signal
                                    ends the drain at once
          --allow-origin ORIGIN     let web pages of ORIGIN (e.g. https://app.example.com) connect;
                                    repeatable; * allows every page (default: none when anonymous,
                                    every page with --api-keys)
          --help                    show this help

        On start it prints one line with its ws:// URL. SIGINT or SIGTERM stop it: it stops accepting
        (/healthz answers 503), lets connections finish for --drain-timeout, closes every one with code
        1001 and exits 0; a second SIGINT or SIGTERM skips the rest of the drain. SIGHUP reloads the
        --api-keys file (a malformed one keeps the keys in use and logs an error).
        exit status: 0 after a clean stop; 1 when it cannot start; 64 on bad usage.
        """

    /// The origin policy `--allow-origin` asks for; `nil` when none was given (the server's default).
    var originPolicy: WebSocketOriginPolicy? {
        guard !allowedOrigins.isEmpty else { return nil }
        return allowedOrigins.contains("*") ? .anyOrigin : .allowList(Set(allowedOrigins))
    }

    static func parse(_ arguments: [String]) throws(UsageError) -> ServerOptions {
        var options = ServerOptions()
        var remaining = arguments[...]
        func value(for option: String) throws(UsageError) -> String {
            guard let value = remaining.popFirst(), !value.hasPrefix("--") else {
                throw UsageError(message: "\(option) needs a value")
            }
            return value
        }
        while let argument = remaining.popFirst() {
            switch argument {
            case "--port":
                let text = try value(for: argument)
                guard let port = Int(text), (0...65535).contains(port) else {
                    throw UsageError(message: "--port must be 0…65535, not \(text)")
                }
                options.port = port
            case "--data": options.dataDirectory = try value(for: argument)
            case "--host": options.host = try value(for: argument)
            case "--api-keys": options.apiKeysFile = try value(for: argument)
            case "--max-message-bytes":
                let text = try value(for: argument)
                guard let bytes = Int(text), (1024...WireProtocol.maximumMessageSize).contains(bytes) else {
                    throw UsageError(
                        message: "--max-message-bytes must be 1024…\(WireProtocol.maximumMessageSize), not \(text)")
                }
                options.maximumMessageBytes = bytes
            case "--log-level":
                let text = try value(for: argument)
                guard let level = SyncLogLevel(name: text) else {
                    throw UsageError(message: "unknown log level \(text)")
                }
                options.logLevel = level
            case "--max-offline":
                let text = try value(for: argument)
                guard let duration = parseDuration(text) else {
                    throw UsageError(
                        message: "--max-offline must be a positive whole number with a unit: s, m, h or d (e.g. 30d), "
                            + "not \(text)")
                }
                options.maximumOfflineTime = duration
            case "--log-format":
                let text = try value(for: argument)
                guard let format = LogFormat(rawValue: text) else {
                    throw UsageError(message: "--log-format must be text or json, not \(text)")
                }
                options.logFormat = format
            case "--metrics-port":
                let text = try value(for: argument)
                guard let port = Int(text), (0...65535).contains(port) else {
                    throw UsageError(message: "--metrics-port must be 0…65535, not \(text)")
                }
                options.metricsPort = port
            case "--max-connections":
                options.maximumConnections = try integer(argument, try value(for: argument), Self.connectionsRange)
            case "--max-sessions-per-connection":
                options.maximumSessionsPerConnection = try integer(
                    argument, try value(for: argument), Self.sessionsPerConnectionRange)
            case "--max-partitions":
                options.maximumPartitions = try integer(argument, try value(for: argument), Self.partitionsRange)
            case "--max-idle-partitions":
                options.maximumIdlePartitions = try integer(
                    argument, try value(for: argument), Self.idlePartitionsRange)
            case "--max-partitions-on-disk":
                options.maximumPartitionsOnDisk = try integer(
                    argument, try value(for: argument), Self.partitionsOnDiskRange)
            case "--idle-timeout":
                options.idleTimeout = try duration(argument, try value(for: argument), Self.idleTimeoutRange)
            case "--handshake-timeout":
                options.handshakeTimeout = try duration(
                    argument, try value(for: argument), Self.handshakeTimeoutRange)
            case "--drain-timeout":
                options.drainTimeout = try duration(argument, try value(for: argument), Self.drainTimeoutRange)
            case "--allow-origin": options.allowedOrigins.append(try value(for: argument))
            case "--help", "-h": options.showHelp = true
            default: throw UsageError(message: "unknown argument \(argument)")
            }
        }
        if !options.showHelp {
            guard options.port != nil else { throw UsageError(message: "--port is required") }
            guard options.dataDirectory != nil else { throw UsageError(message: "--data is required") }
        }
        return options
    }
}

/// `text` as a whole number within `range`, or a usage error naming `option` and the range.
private func integer(
    _ option: String, _ text: String, _ range: ClosedRange<Int>
) throws(ServerOptions.UsageError) -> Int {
    guard let value = Int(text), range.contains(value) else {
        throw ServerOptions.UsageError(
            message: "\(option) must be a whole number in \(range.lowerBound)…\(range.upperBound), not \(text)")
    }
    return value
}

/// `text` as a duration (see `parseDuration`) within `range`, or a usage error naming `option` and the range.
private func duration(
    _ option: String, _ text: String, _ range: ClosedRange<Duration>
) throws(ServerOptions.UsageError) -> Duration {
    guard let value = parseDuration(text), range.contains(value) else {
        throw ServerOptions.UsageError(
            message: "\(option) must be a duration in \(seconds(range.lowerBound))s…\(seconds(range.upperBound))s "
                + "(a whole number with s, m, h or d), not \(text)")
    }
    return value
}

private func seconds(_ duration: Duration) -> Int64 { duration.components.seconds }

/// A duration written as a positive whole number and a unit: `90s`, `45m`, `12h`, `30d`; `nil` otherwise
/// (no unit, another unit, zero, a sign, or more than about 290 million years).
func parseDuration(_ text: String) -> Duration? {
    guard let unit = text.last, let count = Int64(text.dropLast()), count > 0, text.first?.isNumber == true else {
        return nil
    }
    let seconds: Int64
    switch unit {
    case "s": seconds = 1
    case "m": seconds = 60
    case "h": seconds = 3_600
    case "d": seconds = 86_400
    default: return nil
    }
    let (total, overflow) = count.multipliedReportingOverflow(by: seconds)
    return overflow ? nil : .seconds(total)
}
