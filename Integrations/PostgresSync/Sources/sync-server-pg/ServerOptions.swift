import PostgresSync
import SyncServer

/// The command line of `sync-server-pg`, parsed and checked: `sync-server`'s, with `--database URL`
/// instead of `--data DIR`.
struct ServerOptions {
    var port: Int?
    var database: DatabaseURL?
    var host = "127.0.0.1"
    var apiKeysFile: String?
    var maximumMessageBytes = WireProtocol.maximumMessageSize
    var logLevel: SyncLogLevel = .warn
    var showHelp = false

    struct UsageError: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }

    static let usage = """
        usage: sync-server-pg --port PORT --database postgres://USER@HOST[:PORT]/DATABASE [options]

        A sync-server front end: serves sync clients over WebSocket (ws://), keeping every partition's log in
        PostgreSQL, which several front ends may share (see docs/Scaling.md).

        options:
          --port PORT               the TCP port to listen on; 0 picks a free one (required)
          --database URL            postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=disable|prefer|
                                    require]; the schema is created or migrated at start (required)
          --host HOST               the address to listen on (default: 127.0.0.1)
          --api-keys FILE           accept only the API keys in FILE, each for its partitions
                                    (default: anyone may sync anything; see docs/Server.md)
          --max-message-bytes N     the largest message accepted or sent (default: 16777216)
          --log-level LEVEL         off, fatal, error, warn, info, detail, debug or trace (default: warn)
          --help                    show this help

        On start it prints one line with its ws:// URL. SIGINT or SIGTERM stop it: it stops accepting,
        finishes what is in flight, closes every connection with code 1001 and exits 0.
        exit status: 0 after a clean stop; 1 when it cannot start; 64 on bad usage.
        """

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
            case "--database":
                let text = try value(for: argument)
                do { options.database = try DatabaseURL(text) } catch {
                    throw UsageError(message: "--database: \(error)")
                }
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
            case "--help", "-h": options.showHelp = true
            default: throw UsageError(message: "unknown argument \(argument)")
            }
        }
        if !options.showHelp {
            guard options.port != nil else { throw UsageError(message: "--port is required") }
            guard options.database != nil else { throw UsageError(message: "--database is required") }
        }
        return options
    }
}
