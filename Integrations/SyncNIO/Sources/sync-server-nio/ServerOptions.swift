import SyncServer

/// The command line of `sync-server-nio`, parsed and checked: `sync-server`'s core options, with
/// `--tls-cert` and `--tls-key` for `wss://`.
struct ServerOptions {
    var port: Int?
    var dataDirectory: String?
    var host = "127.0.0.1"
    var apiKeysFile: String?
    var maximumMessageBytes = WireProtocol.maximumMessageSize
    var logLevel: SyncLogLevel = .warn
    var maximumOfflineTime: Duration?
    var maximumConnections = 10_000
    var maximumSessionsPerConnection = 1_000
    var maximumPartitions = 100_000
    var maximumIdlePartitions = 128
    var tlsCertificateFile: String?
    var tlsKeyFile: String?
    var path: String?
    var idleTimeout: Duration = .seconds(300)
    var handshakeTimeout: Duration = .seconds(10)
    /// `--allow-origin` values, in order (`*`: any origin).
    var allowedOrigins: [String] = []
    var showHelp = false

    struct UsageError: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }

    static let usage = """
        usage: sync-server-nio --port PORT --data DIR [--tls-cert PEM --tls-key PEM] [options]

        Serves sync clients over WebSocket on swift-nio: wss:// (TLS) with --tls-cert and --tls-key, ws://
        without; keeps each partition's log in DIR (the same files as sync-server's).

        options:
          --port PORT               the TCP port to listen on; 0 picks a free one (required)
          --data DIR                where partition logs are kept, created if missing (required)
          --tls-cert FILE           the server's certificate chain, PEM (leaf first); needs --tls-key
          --tls-key FILE            the certificate's private key, PEM; needs --tls-cert
          --path PATH               upgrade requests for PATH only, e.g. /sync (default: any path)
          --host HOST               the address to listen on (default: 127.0.0.1)
          --api-keys FILE           accept only the API keys in FILE, each for its partitions
                                    (default: anyone may sync anything; see docs/Server.md)
          --max-message-bytes N     the largest message accepted or sent (default: 16777216)
          --log-level LEVEL         off, fatal, error, warn, info, detail, debug or trace (default: warn)
          --max-offline DURATION    forget a client unseen for longer (e.g. 30d, 12h, 45m, 90s)
          --max-connections N       connections open at once, 1…1000000 (default: 10000)
          --max-sessions-per-connection N
                                    sessions one connection may bind, 1…100000 (default: 1000)
          --max-partitions N        live partitions, 1…10000000 (default: 100000)
          --max-idle-partitions N   idle partitions kept loaded, 0…1000000 (default: 128)
          --idle-timeout DURATION   drop a connection silent for this long, 10s…1d (default: 300s)
          --handshake-timeout DURATION
                                    time for TLS and the opening handshake, 1s…300s (default: 10s)
          --allow-origin ORIGIN     let web pages of ORIGIN (e.g. https://app.example.com) connect;
                                    repeatable, * for any page (default: none when anonymous, any
                                    with --api-keys); other pages get 403
          --help                    show this help

        GET /healthz answers 200; other plain HTTP requests 426. On start it prints one line with its
        ws:// or wss:// URL. SIGINT or SIGTERM stop it: it stops accepting, closes every connection with
        code 1001 and exits 0.
        exit status: 0 after a clean stop; 1 when it cannot start; 64 on bad usage.
        """

    /// The origin policy: `--allow-origin`'s, or `sync-server`'s default (no browser page on an anonymous
    /// server, every page with API keys, which pages must still present).
    func originPolicy(anonymous: Bool) -> WebSocketOriginPolicy {
        if allowedOrigins.isEmpty { return anonymous ? .allowList([]) : .anyOrigin }
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
            case "--port": options.port = try integer(argument, try value(for: argument), 0...65535)
            case "--data": options.dataDirectory = try value(for: argument)
            case "--tls-cert": options.tlsCertificateFile = try value(for: argument)
            case "--tls-key": options.tlsKeyFile = try value(for: argument)
            case "--path":
                let text = try value(for: argument)
                guard text.hasPrefix("/"), !text.contains("?"), !text.contains(" ") else {
                    throw UsageError(message: "--path must start with / and hold no query or space, not \(text)")
                }
                options.path = text
            case "--host": options.host = try value(for: argument)
            case "--api-keys": options.apiKeysFile = try value(for: argument)
            case "--max-message-bytes":
                options.maximumMessageBytes = try integer(
                    argument, try value(for: argument), 1024...WireProtocol.maximumMessageSize)
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
            case "--max-connections":
                options.maximumConnections = try integer(argument, try value(for: argument), 1...1_000_000)
            case "--max-sessions-per-connection":
                options.maximumSessionsPerConnection = try integer(argument, try value(for: argument), 1...100_000)
            case "--max-partitions":
                options.maximumPartitions = try integer(argument, try value(for: argument), 1...10_000_000)
            case "--max-idle-partitions":
                options.maximumIdlePartitions = try integer(argument, try value(for: argument), 0...1_000_000)
            case "--idle-timeout":
                options.idleTimeout = try duration(
                    argument, try value(for: argument), .seconds(10) ... .seconds(86_400))
            case "--handshake-timeout":
                options.handshakeTimeout = try duration(
                    argument, try value(for: argument), .seconds(1) ... .seconds(300))
            case "--allow-origin": options.allowedOrigins.append(try value(for: argument))
            case "--help", "-h": options.showHelp = true
            default: throw UsageError(message: "unknown argument \(argument)")
            }
        }
        if !options.showHelp {
            guard options.port != nil else { throw UsageError(message: "--port is required") }
            guard options.dataDirectory != nil else { throw UsageError(message: "--data is required") }
            guard (options.tlsCertificateFile == nil) == (options.tlsKeyFile == nil) else {
                throw UsageError(message: "--tls-cert and --tls-key go together")
            }
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
            message: "\(option) must be a duration in \(range.lowerBound.components.seconds)s…"
                + "\(range.upperBound.components.seconds)s (a whole number with s, m, h or d), not \(text)")
    }
    return value
}

/// A duration written as a positive whole number and a unit: `90s`, `45m`, `12h`, `30d`; `nil` otherwise.
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
