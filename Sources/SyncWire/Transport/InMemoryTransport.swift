import SyncStreams

/// A transport to servers running in this process: messages pass as values through a pair of
/// in-memory queues, with no encoding and no sockets.
///
/// Flow control works as over a network: each direction is a `MessageQueue` that counts the encoded size
/// of what it holds. The server's `writable()` waits until the client has taken its messages down to
/// `lowWater` bytes, and a server that keeps sending to a client that does not read is cut off once
/// `hardLimit` bytes are queued (the client sees `.closed(.connectionLost)`).
///
/// Connecting to a `.webSocket` endpoint fails at once with `.refused`; use a network transport for those.
public struct InMemoryTransport: SyncTransport {
    /// Queued bytes below which the server's `writable()` returns.
    public var lowWater: Int
    /// Queued bytes past which the server's sends close the connection.
    public var hardLimit: Int

    /// A transport with the given marks. Defaults: 1 MiB, and four maximum-size messages.
    public init(lowWater: Int = 1 << 20, hardLimit: Int = 4 * WireProtocol.maximumMessageSize) {
        self.lowWater = lowWater
        self.hardLimit = hardLimit
    }

    public func connect(to endpoint: SyncEndpoint) -> any SyncClientConnection {
        let pipe = InMemoryPipe(lowWater: lowWater, hardLimit: hardLimit)
        switch endpoint.kind {
        case .inProcess(let acceptor):
            if acceptor.accept(pipe.serverSide) {
                pipe.toClient.push(.opened)
            } else {
                pipe.shutDown(clientSees: .refused("the in-process server at \(endpoint) is stopped"))
            }
        case .webSocket:
            pipe.shutDown(clientSees: .refused("\(endpoint) is not in this process; use a network transport"))
        }
        return pipe.clientSide
    }
}

/// Both ends of one in-memory connection.
///
/// The `closed` flag makes sure exactly one side's close wins and reports one `.closed` to the client;
/// what was queued before the close is still delivered before it.
final class InMemoryPipe: Sendable {
    let toClient: MessageQueue<SyncTransportEvent>
    let toServer: MessageQueue<ClientMessage>
    let hardLimit: Int
    private let closed = Locked(false)

    init(lowWater: Int, hardLimit: Int) {
        toClient = MessageQueue(highWater: lowWater, lowWater: lowWater)
        toServer = MessageQueue(highWater: hardLimit, lowWater: hardLimit)
        self.hardLimit = hardLimit
    }

    var clientSide: ClientSide { ClientSide(pipe: self) }
    var serverSide: ServerSide { ServerSide(pipe: self) }

    /// Ends both directions once; the client's last event is `.closed(clientSees)`.
    func shutDown(clientSees error: SyncTransportError?) {
        guard
            !closed.withLock({ closed in
                defer { closed = true }; return closed
            })
        else { return }
        toClient.push(.closed(error))
        toClient.finish()
        toServer.finish()
    }

    var isClosed: Bool { closed.withLock { $0 } }

    final class ClientSide: SyncClientConnection {
        let pipe: InMemoryPipe
        let events: AsyncStream<SyncTransportEvent>
        init(pipe: InMemoryPipe) {
            self.pipe = pipe
            events = pipe.toClient.stream
        }
        func send(_ message: ClientMessage) {
            if !pipe.isClosed { pipe.toServer.push(message, cost: message.encodedSize) }
        }
        func close() { pipe.shutDown(clientSees: nil) }
    }

    final class ServerSide: SyncServerConnection {
        let pipe: InMemoryPipe
        let incoming: AsyncStream<ClientMessage>
        init(pipe: InMemoryPipe) {
            self.pipe = pipe
            incoming = pipe.toServer.stream
        }
        func send(_ message: ServerMessage) {
            guard !pipe.isClosed else { return }
            let queued = pipe.toClient.push(.message(message), cost: message.encodedSize) ?? 0
            if queued > pipe.hardLimit {
                pipe.shutDown(
                    clientSees: .connectionLost(
                        "the client did not read: \(queued) bytes were queued, the limit is \(pipe.hardLimit)"))
            }
        }
        func writable() async { await pipe.toClient.waitUntilDrained() }
        func close() { pipe.shutDown(clientSees: .connectionLost("the server closed the connection")) }
    }
}
