import Foundation
import TestSupport
import Testing

extension PostgresTests {
    /// `sync-server-pg` warns at start when it accepts anyone on an address other machines can reach, as
    /// `sync-server` and `sync-server-nio` do.
    @Suite("sync-server-pg start warnings")
    struct StartWarningTests {
        @Test("anonymous access on 0.0.0.0 is warned about at start; on 127.0.0.1 it is not")
        func anonymousAccessOnANetworkAddressIsWarnedAbout() async throws {
            let url = try await TestDatabase.create()
            for (host, warned) in [("0.0.0.0", true), ("127.0.0.1", false)] {
                // Listening on every interface only to read the start-up warning: no traffic is sent to it.
                let server = try ChildProcess(
                    port: 0, database: url.description, extra: ["--host", host, "--max-partitions-on-disk", "500"])
                _ = try await server.port()
                #expect(try await server.stop(SIGTERM) == 0)
                #expect(
                    server.stderr.contains("sync-server-pg: warning: anonymous access") == warned,
                    "\(host): \(server.stderr)")
                if warned {
                    #expect(server.stderr.contains("(up to --max-partitions-on-disk 500)"), "\(server.stderr)")
                }
            }
        }
    }
}
