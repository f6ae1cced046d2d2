import SyncServer

/// The options every server program of this project takes — `sync-server`, `sync-server-pg`,
/// `sync-server-nio` — parsed and checked, with the configuration they make.
///
/// A program keeps one beside its own options (see `ServerCommandLine`, which runs the parse loop) and
/// hands each argument to `consume(_:from:)` first: a shared flag is taken with its value and checked
/// against the ranges below (a bad value throws the `UsageError` the programs print); any other argument
/// is left to the program.
///
/// ```swift
/// var core = CoreServerOptions()
/// var arguments = ArgumentCursor(["--max-connections", "100", "--data", "/srv"])
/// try core.consume(arguments.next()!, from: &arguments)  // true: maximumConnections == 100
/// try core.consume(arguments.next()!, from: &arguments)  // false: "--data" is the program's
/// ```
public struct CoreServerOptions: Sendable, Equatable {
    /// `--port PORT`: the TCP port to listen on, 0…65535 (0: a free one). Required (`nil` only with `--help`).
    public var port: Int?
    /// `--host HOST`: the address to listen on. Default: `127.0.0.1`.
    public var host = "127.0.0.1"
    /// `--api-keys FILE`: the API keys file (see `APIKeysFile`); `nil`: anonymous access.
    public var apiKeysFile: String?
    /// `--max-message-bytes N`: the largest message accepted or sent, 1024…`WireProtocol.maximumMessageSize`
    /// (the default).
    public var maximumMessageBytes = WireProtocol.maximumMessageSize
    /// `--log-level LEVEL`: the server's log level (a `SyncLogLevel` name). Default: `warn`.
    public var logLevel: SyncLogLevel = .warn
    /// `--max-offline DURATION`: forget a client unseen for longer (`parseDuration`'s form); `nil`: never.
    public var maximumOfflineTime: Duration?
    /// `--max-connections N`, within `connectionsRange`. Default: 10,000.
    public var maximumConnections = 10_000
    /// `--max-sessions-per-connection N`, within `sessionsPerConnectionRange`. Default: 1,000.
    public var maximumSessionsPerConnection = 1_000
    /// `--max-handshaking-connections N`: connections accepted and still in their opening handshake past
    /// which a new one is closed at once (`WebSocketLimits.maximumHandshakingConnections`), within
    /// `handshakingConnectionsRange`. Default: 1,024.
    public var maximumHandshakingConnections = 1_024
    /// `--max-partitions N`: live partitions, within `partitionsRange`. Default: 100,000.
    public var maximumPartitions = 100_000
    /// `--max-idle-partitions N`: idle partitions kept loaded, within `idlePartitionsRange`. Default: 128.
    public var maximumIdlePartitions = 128
    /// `--idle-timeout DURATION`, within `idleTimeoutRange`. Default: 300 s.
    public var idleTimeout: Duration = .seconds(300)
    /// `--handshake-timeout DURATION`, within `handshakeTimeoutRange`. Default: 10 s.
    public var handshakeTimeout: Duration = .seconds(10)
    /// `--hello-timeout DURATION`: how long a client may take from the opening handshake to its `hello`
    /// being answered (`WebSocketLimits.helloTimeout`), within `helloTimeoutRange`. Default: 10 s.
    public var helloTimeout: Duration = .seconds(10)
    /// `--allow-origin ORIGIN` values, in order (`*`: any origin); repeatable.
    public var allowedOrigins: [String] = []
    /// `--help` or `-h` was given: print the usage and exit 0 (required options are not checked).
    public var showHelp = false

    /// What `--max-connections` accepts.
    public static let connectionsRange = 1...1_000_000
    /// What `--max-handshaking-connections` accepts.
    public static let handshakingConnectionsRange = 1...1_000_000
    /// What `--max-sessions-per-connection` accepts.
    public static let sessionsPerConnectionRange = 1...100_000
    /// What `--max-partitions` accepts.
    public static let partitionsRange = 1...10_000_000
    /// What `--max-idle-partitions` accepts.
    public static let idlePartitionsRange = 0...1_000_000
    /// What `--idle-timeout` accepts.
    public static let idleTimeoutRange: ClosedRange<Duration> = .seconds(10) ... .seconds(86_400)
    /// What `--handshake-timeout` accepts.
    public static let handshakeTimeoutRange: ClosedRange<Duration> = .seconds(1) ... .seconds(300)
    /// What `--hello-timeout` accepts.
    public static let helloTimeoutRange: ClosedRange<Duration> = .seconds(1) ... .seconds(3_600)

    /// The defaults: no port yet, everything else as documented on each property.
    public init() {}

    /// Takes `argument` if it is one of the shared options, reading its value from `arguments` and
    /// checking it; returns `false`, having read nothing, when it is not one (the program's own, or
    /// unknown).
    public mutating func consume(_ argument: String, from arguments: inout ArgumentCursor) throws(UsageError) -> Bool {
        switch argument {
        case "--port": port = try arguments.port(for: argument)
        case "--host": host = try arguments.value(for: argument)
        case "--api-keys": apiKeysFile = try arguments.value(for: argument)
        case "--max-message-bytes":
            let text = try arguments.value(for: argument)
            guard let bytes = Int(text), (1024...WireProtocol.maximumMessageSize).contains(bytes) else {
                throw UsageError("--max-message-bytes must be 1024…\(WireProtocol.maximumMessageSize), not \(text)")
            }
            maximumMessageBytes = bytes
        case "--log-level":
            let text = try arguments.value(for: argument)
            guard let level = SyncLogLevel(name: text) else { throw UsageError("unknown log level \(text)") }
            logLevel = level
        case "--max-offline":
            let text = try arguments.value(for: argument)
            guard let duration = parseDuration(text) else {
                throw UsageError(
                    "--max-offline must be a positive whole number with a unit: s, m, h or d (e.g. 30d), not \(text)")
            }
            maximumOfflineTime = duration
        case "--max-connections":
            maximumConnections = try arguments.integer(for: argument, in: Self.connectionsRange)
        case "--max-handshaking-connections":
            maximumHandshakingConnections = try arguments.integer(
                for: argument, in: Self.handshakingConnectionsRange)
        case "--max-sessions-per-connection":
            maximumSessionsPerConnection = try arguments.integer(for: argument, in: Self.sessionsPerConnectionRange)
        case "--max-partitions": maximumPartitions = try arguments.integer(for: argument, in: Self.partitionsRange)
        case "--max-idle-partitions":
            maximumIdlePartitions = try arguments.integer(for: argument, in: Self.idlePartitionsRange)
        case "--idle-timeout": idleTimeout = try arguments.duration(for: argument, in: Self.idleTimeoutRange)
        case "--handshake-timeout":
            handshakeTimeout = try arguments.duration(for: argument, in: Self.handshakeTimeoutRange)
        case "--hello-timeout": helloTimeout = try arguments.duration(for: argument, in: Self.helloTimeoutRange)
        case "--allow-origin": allowedOrigins.append(try arguments.value(for: argument))
        case "--help", "-h": showHelp = true
        default: return false
        }
        return true
    }

    /// The origin policy `--allow-origin` asks for; `nil` when none was given (then `SyncServer.listening`
    /// applies its default, as `originPolicy(anonymous:)` spells out).
    public var originPolicy: WebSocketOriginPolicy? {
        guard !allowedOrigins.isEmpty else { return nil }
        return allowedOrigins.contains("*") ? .anyOrigin : .allowList(Set(allowedOrigins))
    }

    /// The origin policy in full: `--allow-origin`'s, or the servers' default — no browser page on an
    /// anonymous server (`anonymous`: no `--api-keys`), every page with API keys (which pages must still
    /// present).
    public func originPolicy(anonymous: Bool) -> WebSocketOriginPolicy {
        originPolicy ?? (anonymous ? .allowList([]) : .anyOrigin)
    }

    /// What `--api-keys` asks for: the keys of `apiKeysFile`, read now (blocking file I/O: call it from
    /// `main`, not from the cooperative pool), or anonymous access when there is none. Throws
    /// `APIKeysFile.load`'s error for a missing or malformed file.
    public func authentication() throws(APIKeysFile.Error) -> SyncServer.Authentication {
        guard let apiKeysFile else { return .anonymousAllowed }
        return .apiKeys(try APIKeysFile.load(path: apiKeysFile))
    }

    /// The server's configuration from these options — message size, sessions per connection, live and
    /// idle partitions, connections, log level, offline time — over `store` and `authentication`, with
    /// `logger` (`nil`: log lines as text on standard error). Everything else is `Configuration`'s default.
    public func configuration(
        store: any PartitionStore, authentication: SyncServer.Authentication,
        logger: (@Sendable (SyncLogEvent) -> Void)? = nil
    ) -> SyncServer.Configuration {
        SyncServer.Configuration(
            store: store, authentication: authentication, maximumMessageBytes: maximumMessageBytes,
            maximumSessionsPerConnection: maximumSessionsPerConnection, maximumPartitions: maximumPartitions,
            maximumIdlePartitions: maximumIdlePartitions, maximumConnections: maximumConnections,
            logLevel: logLevel, logger: logger, maximumOfflineTime: maximumOfflineTime)
    }

    /// The WebSocket limits these options set — message size, handshake, idle and hello timeouts,
    /// connections handshaking at once, origin policy (`nil` when no `--allow-origin`: the listener's
    /// default) — for `SyncServer.listening`; the others are `WebSocketLimits`' defaults.
    public var webSocketLimits: WebSocketLimits {
        WebSocketLimits(
            maximumMessageBytes: maximumMessageBytes, handshakeTimeout: handshakeTimeout, idleTimeout: idleTimeout,
            helloTimeout: helloTimeout, maximumHandshakingConnections: maximumHandshakingConnections,
            originPolicy: originPolicy)
    }
}
