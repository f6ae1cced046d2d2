import Foundation
import SyncEngine

/// P12 against a server process: 300 writes of 1 KiB at 100 per second on one app, each timed until
/// another app's `changesets` callback delivers it (durable copies on the path: writer, server, reader).
enum SideBySideP12 {
    struct Figure {
        var p50Milliseconds: Double
        var p99Milliseconds: Double
        var samples: Int
    }

    static func latencies(server: ServerProcess, samples: Int) async throws -> Figure {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("P12-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let sync = try await P12.writeToOtherAppLatencies(
            endpoint: .webSocket(host: "127.0.0.1", port: server.port), directory: root, samples: samples)
        return Figure(p50Milliseconds: quantile(sync, 0.5), p99Milliseconds: quantile(sync, 0.99), samples: sync.count)
    }
}
