import SyncWire

/// A client connection that never opened: its only event is `.closed(.refused(reason))`; sending and
/// closing do nothing. `WebSocketTransport` returns one when it cannot start its event loop (the process
/// is out of descriptors), so the engine backs off and retries instead of crashing.
final class RefusedClientConnection: SyncClientConnection {
    let events: AsyncStream<SyncTransportEvent>

    init(reason: String) {
        let (events, continuation) = AsyncStream<SyncTransportEvent>.makeStream()
        continuation.yield(.closed(.refused(reason)))
        continuation.finish()
        self.events = events
    }

    func send(_ message: ClientMessage) {}

    func close() {}
}
