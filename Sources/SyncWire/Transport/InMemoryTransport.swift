import Synchronization

/// A transport to servers running in this process: messages pass as values through a pair of
/// in-memory queues, with no encoding and no sockets.
///
/// Connecting to a `.webSocket` endpoint fails at once with `.refused`; use a network transport for those.
public struct InMemoryTransport: SyncTransport {
    public init() {}

    public func connect(to endpoint: SyncEndpoint) -> any SyncClientConnection {
        let pipe = InMemoryPipe()
        switch endpoint.kind {
        case .inProcess(let acceptor):
            if acceptor.accept(pipe.serverSide) {
                pipe.clientEvents.yield(.opened)
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
/// `AsyncStream` continuations are thread-safe and keep the order of yields from one thread; the
/// `closed` flag makes sure exactly one side's close wins and reports one `.closed` to the client.
final class InMemoryPipe: Sendable {
    let clientEvents: AsyncStream<SyncTransportEvent>.Continuation
    let clientEventStream: AsyncStream<SyncTransportEvent>
    let serverIncoming: AsyncStream<ClientMessage>.Continuation
    let serverIncomingStream: AsyncStream<ClientMessage>
    private let closed = Atomic<Bool>(false)

    init() {
        (clientEventStream, clientEvents) = AsyncStream.makeStream()
        (serverIncomingStream, serverIncoming) = AsyncStream.makeStream()
    }

    var clientSide: ClientSide { ClientSide(pipe: self) }
    var serverSide: ServerSide { ServerSide(pipe: self) }

    /// Ends both directions once; the client's last event is `.closed(clientSees)`.
    func shutDown(clientSees error: SyncTransportError?) {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        clientEvents.yield(.closed(error))
        clientEvents.finish()
        serverIncoming.finish()
    }

    var isClosed: Bool { closed.load(ordering: .acquiring) }

    final class ClientSide: SyncClientConnection {
        let pipe: InMemoryPipe
        init(pipe: InMemoryPipe) { self.pipe = pipe }
        var events: AsyncStream<SyncTransportEvent> { pipe.clientEventStream }
        func send(_ message: ClientMessage) {
            if !pipe.isClosed { pipe.serverIncoming.yield(message) }
        }
        func close() { pipe.shutDown(clientSees: nil) }
    }

    final class ServerSide: SyncServerConnection {
        let pipe: InMemoryPipe
        init(pipe: InMemoryPipe) { self.pipe = pipe }
        var incoming: AsyncStream<ClientMessage> { pipe.serverIncomingStream }
        func send(_ message: ServerMessage) {
            if !pipe.isClosed { pipe.clientEvents.yield(.message(message)) }
        }
        func close() { pipe.shutDown(clientSees: .connectionLost("the server closed the connection")) }
    }
}
