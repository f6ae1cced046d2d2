import SyncWire

/// The reference sync server: orders each partition's changesets and streams them to every bound session.
///
/// `SyncServer.embedded()` runs the server in this process; clients reach it with
/// `InMemoryTransport().connect(to: server.endpoint)`. Each connection's messages are handled one at a
/// time, in order, by the server's core, which answers as the `SyncWire` message docs describe:
///
/// - `hello` must come first. A wrong protocol version gets `.unsupportedProtocolVersion`, a refused
///   credential `.authenticationFailed`, anything else before it (or a second `hello`)
///   `.malformedMessage`; each such connection-level error is followed by closing the connection.
///   Otherwise the answer is `.welcome(protocolVersion: WireProtocol.version)`.
/// - `bind` loads the partition from the store (once) and sends the log after `downloadedVersion` as
///   one or more `download` messages (always at least one, even when empty), the client's own changesets
///   (same `clientFileID`) as `.acknowledged` entries. Then the session receives every later entry of the
///   partition exactly once, in server-version order, until it is unbound or its connection ends.
/// - `upload` integrates the changesets whose client version is above the last one integrated for the
///   session's `clientFileID` (others are re-uploads and are dropped silently), stores them durably,
///   then acknowledges them to the uploading session and forwards them to every other bound session.
/// - `unbind` answers `.unbound`; `ping` answers `.pong` with the same id.
///
/// A session-level error (`.permissionDenied`, `.badClientVersion`, `.messageTooLarge`, `.internalError`,
/// and `.malformedMessage` for a `downloadedVersion` beyond the log) leaves the session unbound on the
/// server, so the client may bind the same session number again; `.sessionAlreadyBound` and
/// `.unknownSession` leave the bound sessions as they were. Storage failures are reported as
/// `.internalError` with `retryAfterMilliseconds` 1000.
public final class SyncServer: Sendable {
    /// The address clients connect to: `.inProcess` with this server's acceptor.
    ///
    /// Connecting after `stop()` is refused (`.closed(.refused)`).
    public let endpoint: SyncEndpoint

    private let core: ServerCore
    private let registry: ConnectionRegistry

    private init(configuration: Configuration) {
        let core = ServerCore(configuration: configuration)
        let registry = ConnectionRegistry(maximumConnections: configuration.maximumConnections)
        self.core = core
        self.registry = registry
        endpoint = .inProcess(ConnectionAcceptor(core: core, registry: registry))
    }

    /// Starts a server in this process with `configuration`; it accepts connections at once.
    ///
    /// Nothing is loaded from the store until a session binds. Currently never throws; the signature
    /// leaves room for servers whose start-up can fail.
    public static func embedded(configuration: Configuration = .init()) async throws -> SyncServer {
        SyncServer(configuration: configuration)
    }

    /// Stops the server: refuses every later connection, closes every open one (clients see
    /// `.closed(.connectionLost)`), and returns once every connection's in-flight message is handled.
    ///
    /// Changesets whose upload was already integrated stay in the store. `changesets(in:)` keeps
    /// working. Calling it again does nothing more.
    public func stop() async {
        let tasks = registry.stop()
        for task in tasks { await task.value }
    }

    /// Closes every connection open now (clients see `.closed(.connectionLost)`) and keeps accepting new
    /// ones: a fault injection for tests.
    ///
    /// When it returns, `connectionCount` no longer counts those connections and the server ignores
    /// any message from them that it has not started handling; their sessions are unbound shortly after.
    public func dropAllConnections() {
        registry.dropAll()
    }

    /// The partition's whole log, in server-version order, loading it from the store if no session has
    /// bound it yet.
    ///
    /// Waits for an upload to the partition that is being stored. Throws what the store's `load` throws,
    /// or `PartitionLogError` when the stored log's versions are not 1, 2, 3, ….
    public func changesets(in partition: String) async throws -> [StoredChangeset] {
        try await core.changesets(in: partition)
    }

    /// How many connections are open: accepted, and closed neither by the server nor (as far as the
    /// server has noticed) by the client.
    ///
    /// Drops at once when the server closes connections; drops shortly after a client closes one, once
    /// the server has handled the messages it sent before closing.
    public var connectionCount: Int { registry.openCount }
}
