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
    /// `--allow-origin` values, in order (`*`: any origin).
    var allowedOrigins: [String] = []
    var showHelp = false

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
          --allow-origin ORIGIN     let web pages of ORIGIN (e.g. https://app.example.com) connect;
                                    repeatable; * allows every page (default: none when anonymous,
                                    every page with --api-keys)
          --help                    show this help

        On start it prints one line with its ws:// URL. SIGINT or SIGTERM stop it: it stops accepting,
        finishes what is in flight, closes every connection with code 1001 and exits 0.
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
