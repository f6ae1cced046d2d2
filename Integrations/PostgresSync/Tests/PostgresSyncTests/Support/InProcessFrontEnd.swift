import PostgresSync
import SyncServer

/// A front end in this process: a `SyncServer` listening on loopback (port 0, the kernel picks it) on a
/// `PostgresPartitionStore` of its own (its own pool and listening connection), whose connections to the
/// database are named `name`.
struct InProcessFrontEnd {
    let store: PostgresPartitionStore
    let server: SyncServer
    /// The port of the server's WebSocket endpoint, as bound.
    let port: Int

    /// Opens the store on `url` and starts the server on it; the server logs at `logLevel`. With
    /// `maximumPartitions`, both cap the partitions in the database, as `sync-server-pg
    /// --max-partitions-on-disk` sets them (the server's `maximumPartitionsInStore`, the store's
    /// `maximumPartitions`).
    static func start(
        _ url: DatabaseURL, name: String, logLevel: SyncLogLevel = .off, maximumPartitions: Int? = nil
    ) async throws
        -> InProcessFrontEnd
    {
        let store = try await openStore(url, name: name, maximumPartitions: maximumPartitions)
        var configuration = SyncServer.Configuration(store: store, logLevel: logLevel)
        if let maximumPartitions { configuration.maximumPartitionsInStore = maximumPartitions }
        do {
            let server = try await SyncServer.listening(configuration: configuration)
            do {
                return InProcessFrontEnd(store: store, server: server, port: try port(of: server))
            } catch {
                await server.stop()
                throw error
            }
        } catch {
            await store.close()
            throw error
        }
    }

    /// Front ends named `names`, one each, on `url`.
    static func start(
        _ url: DatabaseURL, names: [String], logLevel: SyncLogLevel = .off, maximumPartitions: Int? = nil
    ) async throws
        -> [InProcessFrontEnd]
    {
        var frontEnds: [InProcessFrontEnd] = []
        for name in names {
            frontEnds.append(
                try await start(url, name: name, logLevel: logLevel, maximumPartitions: maximumPartitions))
        }
        return frontEnds
    }

    /// The port of a listening server's WebSocket endpoint.
    static func port(of server: SyncServer) throws -> Int {
        guard let kind = server.webSocketEndpoint?.kind, case .webSocket(_, let port) = kind else {
            throw NoWebSocketEndpoint(endpoint: "\(String(describing: server.webSocketEndpoint))")
        }
        return port
    }

    /// A listening server without a WebSocket endpoint.
    struct NoWebSocketEndpoint: Error, CustomStringConvertible {
        let endpoint: String
        var description: String { "the listening server's endpoint is not a WebSocket address: \(endpoint)" }
    }

    /// Stops the server, then closes the store.
    func stop() async {
        await server.stop()
        await store.close()
    }
}
