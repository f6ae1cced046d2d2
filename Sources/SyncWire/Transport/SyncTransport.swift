/// How a client reaches a sync server: opens message connections to an endpoint.
///
/// The engine speaks only to this protocol, so an in-memory transport (the embedded server, tests with
/// fault injection) and a network transport (WebSocket) are interchangeable.
public protocol SyncTransport: Sendable {
    /// Starts connecting to `endpoint` and returns the connection at once.
    ///
    /// The connection's `events` then report `.opened` when it can carry messages (or never, if opening
    /// fails or takes forever: the caller owns the connect timeout), the server's messages in order, and
    /// finally exactly one `.closed`, after which the stream finishes.
    func connect(to endpoint: SyncEndpoint) -> any SyncClientConnection
}

/// The client's side of one connection to a server.
public protocol SyncClientConnection: AnyObject, Sendable {
    /// What happens on the connection, in order: at most one `.opened`, then `.message`s, then one
    /// `.closed`, then the sequence ends. Read it from one task.
    var events: AsyncStream<SyncTransportEvent> { get }

    /// Queues `message` for the server. Never blocks; messages are delivered in the order sent. Sending
    /// on a closed connection does nothing.
    func send(_ message: ClientMessage)

    /// Closes the connection; `events` reports `.closed(nil)` unless it already reported a close.
    /// Idempotent.
    func close()
}

/// Something that happened on a client connection.
public enum SyncTransportEvent: Sendable, Hashable {
    /// The connection is open; messages can flow.
    case opened
    /// A message from the server.
    case message(ServerMessage)
    /// The connection ended: `nil` when this side closed it, otherwise why it ended.
    case closed(SyncTransportError?)
}

/// Why a connection failed or ended.
public enum SyncTransportError: Error, Sendable, Hashable {
    /// The server could not be reached or refused the connection.
    case refused(String)
    /// An open connection was lost (the peer went away, the network failed).
    case connectionLost(String)
    /// The peer sent bytes that are not a valid message.
    case malformedFrame(String)
    /// The server's TLS certificate was refused (expired, issued for another host name, not signed by a
    /// trusted authority): retrying cannot help, so the engine reports `SyncError.certificateRejected`,
    /// which is fatal. The root package's transport speaks no TLS; `SyncNIO`'s does.
    case certificateRejected(String)
}

/// The server's side of one connection to a client.
public protocol SyncServerConnection: AnyObject, Sendable {
    /// The client's messages, in order; the sequence ends when the client closes or the connection is
    /// lost. Read it from one task.
    var incoming: AsyncStream<ClientMessage> { get }

    /// Queues `message` for the client. Never blocks; delivered in the order sent. Does nothing once
    /// closed. A transport bounds what it queues for a client that does not read: past its limit it
    /// closes the connection (the client sees `.closed(.connectionLost)`), so one stalled client never
    /// holds the server's memory.
    func send(_ message: ServerMessage)

    /// Suspends until the client has taken enough of what was sent that more may be sent (the outgoing
    /// queue is below the transport's low-water mark), or the connection is closed. A server that awaits
    /// this before each bulk message keeps at most one message beyond that mark queued per connection.
    func writable() async

    /// Closes the connection; the client sees `.closed(.connectionLost)`. Idempotent.
    func close()
}

extension SyncServerConnection {
    /// Transports without flow control are always writable.
    public func writable() async {}
}

/// Something that takes server connections: a server running in this process.
public protocol SyncConnectionAcceptor: AnyObject, Sendable {
    /// Takes a newly opened connection. Returns `false` to refuse it (the server is stopped).
    func accept(_ connection: any SyncServerConnection) -> Bool
}
