import Foundation
import SyncServer
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 23, item 6 (part): sync-server warns at start when it accepts anyone on a non-loopback address.
@Suite("Start warnings", .timeLimit(.minutes(5)))
struct StartWarningsTests {
    /// What sync-server wrote to stderr when started with `arguments`, once stopped.
    func stderr(_ arguments: [String]) async throws -> String {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("warn-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        let server = try ChildProcess(syncServer: ["--port", "0", "--data", data.path] + arguments)
        _ = try await server.port()
        #expect(try await server.stop(SIGTERM) == 0)
        return server.stderr
    }

    @Test("anonymous access on 0.0.0.0 is warned about; on 127.0.0.1 it is not")
    func anonymousOnNetwork() async throws {
        // Listening on every interface only to read the start-up warning: no traffic is sent to it.
        let warning = try await stderr(["--host", "0.0.0.0", "--max-partitions-on-disk", "500"])
        #expect(warning.contains("warning: anonymous access"))
        #expect(warning.contains("create new ones (up to --max-partitions-on-disk 500)"), "\(warning)")
        #expect(!(try await stderr(["--host", "127.0.0.1"]).contains("warning")))
    }
}
