import SyncStreams
import SyncWire
import Synchronization

/// The server's open connections and the tasks serving them; decides whether a new connection is taken.
final class ConnectionRegistry: Sendable {
    private struct Entry: Sendable {
        let handle: ConnectionHandle
        let task: Task<Void, Never>
    }

    private struct State: Sendable {
        var isStopped = false
        var nextID: UInt64 = 1
        var entries: [UInt64: Entry] = [:]
    }

    private let state = Locked(State())
    private let maximumConnections: Int
    /// Counts admissions and refusals (by reason), when given.
    private let metrics: ServerMetrics?

    /// A registry that admits at most `maximumConnections` connections at once.
    init(maximumConnections: Int = .max, metrics: ServerMetrics? = nil) {
        self.maximumConnections = maximumConnections
        self.metrics = metrics
    }

    /// Registers `transport` and starts `serve` for it, or returns `false` once stopped or when
    /// `maximumConnections` are open.
    ///
    /// `serve` only creates a task (it must not run it inline); it is called under the lock so that
    /// `stop()` either refuses the connection or sees its task.
    func admit(
        _ transport: any SyncServerConnection,
        serve: (ConnectionHandle) -> Task<Void, Never>
    ) -> Bool {
        state.withLock { state in
            guard !state.isStopped else {
                metrics?.refusedStopping.add(1, ordering: .relaxed)
                return false
            }
            guard state.entries.count < maximumConnections else {
                metrics?.refusedConnectionLimit.add(1, ordering: .relaxed)
                return false
            }
            metrics?.connectionsAccepted.add(1, ordering: .relaxed)
            let handle = ConnectionHandle(id: state.nextID, transport: transport)
            state.nextID += 1
            state.entries[handle.id] = Entry(handle: handle, task: serve(handle))
            return true
        }
    }

    /// Forgets a connection whose serving task is finishing.
    func remove(_ id: UInt64) {
        _ = state.withLock { $0.entries.removeValue(forKey: id) }
    }

    /// How many connections were ever admitted.
    var admittedCount: Int { state.withLock { Int($0.nextID - 1) } }

    /// Connections not closed by the server and still being served.
    var openCount: Int {
        state.withLock { state in state.entries.values.count { !$0.handle.isClosed } }
    }

    /// Refuses later connections and leaves the open ones open (draining before a stop).
    func refuseNew() {
        state.withLock { $0.isStopped = true }
    }

    /// Closes every registered connection; keeps accepting.
    func dropAll() {
        let handles = state.withLock { state in state.entries.values.map(\.handle) }
        for handle in handles { handle.close() }
    }

    /// Refuses later connections, closes every registered one, and returns their serving tasks.
    func stop() -> [Task<Void, Never>] {
        let entries = state.withLock { state in
            state.isStopped = true
            return Array(state.entries.values)
        }
        for entry in entries { entry.handle.close() }
        return entries.map(\.task)
    }
}
