import SyncWire

/// Takes in-process connections for a server and serves each with one task.
///
/// The task reads the connection's messages in order and hands each to the core, waiting for it to be
/// handled before reading the next. Messages still queued when the server closes the connection are
/// ignored. When the messages end, the core unbinds the connection's sessions.
final class ConnectionAcceptor: SyncConnectionAcceptor {
    private let core: ServerCore
    private let registry: ConnectionRegistry

    init(core: ServerCore, registry: ConnectionRegistry) {
        self.core = core
        self.registry = registry
    }

    func accept(_ connection: any SyncServerConnection) -> Bool {
        registry.admit(connection) { handle in
            Task { [core, registry] in
                // Log events of this connection's work carry its id and peer (`ConnectionLogContext`).
                await ConnectionLogContext.$current.withValue(ConnectionLogContext(id: handle.id, peer: handle.peer)) {
                    for await message in handle.incoming {
                        if handle.isClosed { break }
                        await core.handle(message, from: handle)
                    }
                    await core.connectionEnded(handle)
                }
                registry.remove(handle.id)
            }
        }
    }
}
