import SyncServer
import SyncServerCommandLine

/// The command line of `sync-server-nio`, parsed and checked: the options every server takes
/// (`CoreServerOptions`), `--data DIR` and the operator options (`OperatorOptions`) as `sync-server` has
/// them, and `--tls-cert`, `--tls-key` for `wss://` and `--path`.
struct ServerOptions: ServerCommandLine {
    static let programName = "sync-server-nio"
    /// `--port`, `--host`, `--api-keys`, the limits and timeouts, `--allow-origin`, `--help`.
    var core = CoreServerOptions()
    var dataDirectory: String?
    var tlsCertificateFile: String?
    var tlsKeyFile: String?
    var path: String?
    /// `--log-format`, `--metrics-port`, `--max-partitions-on-disk`, `--drain-timeout`.
    var operations = OperatorOptions()

    static let usage = """
        usage: sync-server-nio --port PORT --data DIR [--tls-cert PEM --tls-key PEM] [options]

        Serves sync clients over WebSocket on swift-nio: wss:// (TLS) with --tls-cert and --tls-key, ws://
        without; keeps each partition's log in DIR (the same files as sync-server's).

        options:
        \(CoreServerOptions.Usage.port)
          --data DIR                where partition logs are kept, created if missing (required)
          --tls-cert FILE           the server's certificate chain, PEM (leaf first); needs --tls-key
          --tls-key FILE            the certificate's private key, PEM; needs --tls-cert
          --path PATH               upgrade requests for PATH only, e.g. /sync (default: any path)
        \(CoreServerOptions.Usage.common)
        \(CoreServerOptions.Usage.maximumOffline)
        \(OperatorOptions.Usage.logFormatAndMetrics)
                                    (--metrics-port: plain HTTP, without TLS)
        \(CoreServerOptions.Usage.limits)
        \(OperatorOptions.Usage.partitionsOnDisk)
        \(CoreServerOptions.Usage.timeouts)
                                    (with --tls-cert, the TLS handshake is part of it)
        \(OperatorOptions.Usage.drainTimeout)
        \(CoreServerOptions.Usage.allowOrigin)
                                    (pages of other origins get 403)
        \(CoreServerOptions.Usage.help)

        GET /metrics answers the server's metrics (Prometheus text format), GET /healthz 200 (503 while
        stopping); other plain HTTP requests 426. On start it prints one line with its ws:// or wss://
        URL. SIGINT or SIGTERM stop it: it stops accepting (/healthz answers 503), lets connections finish
        for --drain-timeout, closes every one with code 1001 and exits 0; a second SIGINT or SIGTERM skips
        the rest of the drain. SIGHUP reloads the --api-keys file (a malformed one keeps the keys in use
        and logs an error).
        exit status: 0 after a clean stop; 1 when it cannot start; 64 on bad usage.
        """

    mutating func consume(_ argument: String, from arguments: inout ArgumentCursor) throws(UsageError) -> Bool {
        if try operations.consume(argument, from: &arguments) { return true }
        switch argument {
        case "--data": dataDirectory = try arguments.value(for: argument)
        case "--tls-cert": tlsCertificateFile = try arguments.value(for: argument)
        case "--tls-key": tlsKeyFile = try arguments.value(for: argument)
        case "--path":
            let text = try arguments.value(for: argument)
            guard text.hasPrefix("/"), !text.contains("?"), !text.contains(" ") else {
                throw UsageError("--path must start with / and hold no query or space, not \(text)")
            }
            path = text
        default: return false
        }
        return true
    }

    func validate() throws(UsageError) {
        guard dataDirectory != nil else { throw UsageError("--data is required") }
        guard (tlsCertificateFile == nil) == (tlsKeyFile == nil) else {
            throw UsageError("--tls-cert and --tls-key go together")
        }
    }
}
