import Foundation
import SyncServer
import SyncWire
import TestSupport
import Testing

@testable import SyncEngine

/// `sync-server`'s `GET /metrics` and `GET /healthz` (answered before any upgrade, on its port and on
/// `--metrics-port`), read with curl from the real subprocess while a real client syncs.
@Suite(.timeLimit(.minutes(5))) struct SyncServerMetricsTests {
    @Test(
        "/healthz answers ok and /metrics counts a real client's connection, session, partition, upload, bytes, fsyncs and client reset"
    )
    func metricsFollowASync() async throws {
        let data = TemporaryDirectory()
        defer { data.remove() }
        let server = try ChildProcess(syncServer: ["--port", "0", "--data", data.url.path])
        let port = try await server.port()
        let base = "http://127.0.0.1:\(port)"

        let health = try await HTTPAnswer.get(base + "/healthz")
        #expect(health.status == 200)
        #expect(health.body == "ok\n")
        let before = try await HTTPAnswer.get(base + "/metrics")
        #expect(before.status == 200)
        #expect(before.body.contains("# TYPE sync_connections gauge"))
        #expect(before.body.contains("# TYPE sync_fsync_seconds histogram"))
        let start = before.samples
        #expect(start["sync_connections"] == 0)
        #expect(start["sync_connections_accepted_total"] == 0)
        #expect(start["sync_sessions"] == 0)
        #expect(start["sync_uploads_total"] == 0)
        #expect(start["sync_fsync_seconds_count"] == 0)

        let client = WireClient(.webSocket(host: "127.0.0.1", port: port))
        try await client.welcome()
        client.send(.bind(Bind(sessionID: 1, partition: "p", clientFileID: 1, downloadedVersion: 0)))
        guard case .download = try await client.nextMessage() else {
            Issue.record("expected the first download")
            return
        }
        client.send(.upload(Upload(sessionID: 1, changesets: [UploadChangeset(clientVersion: 1, data: [1, 2, 3])])))
        guard case .download(let acknowledged) = try await client.nextMessage() else {
            Issue.record("expected the acknowledgement")
            return
        }
        #expect(acknowledged.entries == [.acknowledged(serverVersion: 1, clientVersion: 1)])
        // A bind of versions the log does not have: clientResetRequired (historyLost).
        client.send(.bind(Bind(sessionID: 2, partition: "q", clientFileID: 1, downloadedVersion: 99)))
        guard case .error(let reset) = try await client.nextMessage() else {
            Issue.record("expected a client reset")
            return
        }
        #expect(reset.code == .clientResetRequired)

        let during = try await HTTPAnswer.get(base + "/metrics").samples
        #expect(during["sync_connections"] == 1)
        #expect(during["sync_connections_accepted_total"] == 1)
        #expect(during["sync_sessions"] == 1)
        #expect((during["sync_partitions_loaded"] ?? 0) >= 1)
        #expect(during["sync_uploads_total"] == 1)
        #expect(during["sync_uploaded_changesets_total"] == 1)
        #expect(during["sync_client_resets_total"] == 1)
        #expect((during["sync_fsync_seconds_count"] ?? 0) >= 1)
        #expect(during["sync_fsync_seconds_bucket{le=\"+Inf\"}"] == during["sync_fsync_seconds_count"])
        // The client's handshake, hello, bind and upload came in; the 101, welcome and downloads went out
        // (plus the earlier HTTP requests and answers).
        #expect((during["sync_received_bytes_total"] ?? 0) > (start["sync_received_bytes_total"] ?? 0) + 100)
        #expect((during["sync_sent_bytes_total"] ?? 0) > (start["sync_sent_bytes_total"] ?? 0) + 100)

        client.send(.unbind(sessionID: 1))
        #expect(try await client.nextMessage() == .unbound(sessionID: 1))
        #expect(try await HTTPAnswer.get(base + "/metrics").samples["sync_sessions"] == 0)
        client.connection.close()
        try await waitUntil("the server saw the client leave") {
            try await HTTPAnswer.get(base + "/metrics").samples["sync_connections"] == 0
        }
        #expect(try await server.stop(SIGTERM) == 0)
    }

    @Test("--max-connections 1: a second client gets 503, counted as refused for the connection limit")
    func refusedByReason() async throws {
        let data = TemporaryDirectory()
        defer { data.remove() }
        let server = try ChildProcess(syncServer: ["--port", "0", "--data", data.url.path, "--max-connections", "1"])
        let port = try await server.port()
        let first = WireClient(.webSocket(host: "127.0.0.1", port: port))
        try await first.welcome()
        let second = WireClient(.webSocket(host: "127.0.0.1", port: port))
        let refused = try await second.next()
        guard case .closed = refused else {
            Issue.record("expected the second connection refused, got \(refused)")
            return
        }
        let samples = try await HTTPAnswer.get("http://127.0.0.1:\(port)/metrics").samples
        #expect(samples["sync_connections_refused_total{reason=\"connection_limit\"}"] == 1)
        #expect(samples["sync_connections_accepted_total"] == 1)
        #expect(samples["sync_connections"] == 1)
        #expect(try await server.stop(SIGTERM) == 0)
    }

    @Test("--metrics-port serves /metrics and /healthz on a port of its own and refuses WebSocket upgrades there")
    func metricsPort() async throws {
        let data = TemporaryDirectory()
        defer { data.remove() }
        let server = try ChildProcess(syncServer: ["--port", "0", "--data", data.url.path, "--metrics-port", "0"])
        let port = try await server.port()
        let match = try #require(server.stdout.firstMatch(of: /metrics: http:\/\/127\.0\.0\.1:(\d+)\/metrics/))
        let metricsPort = try #require(Int(match.1))
        #expect(metricsPort != port)
        let client = WireClient(.webSocket(host: "127.0.0.1", port: port))
        try await client.welcome()
        let samples = try await HTTPAnswer.get("http://127.0.0.1:\(metricsPort)/metrics").samples
        #expect(samples["sync_connections"] == 1)
        #expect(try await HTTPAnswer.get("http://127.0.0.1:\(metricsPort)/healthz").status == 200)
        #expect(try await HTTPAnswer.get("http://127.0.0.1:\(metricsPort)/other").status == 400)
        let refused = WireClient(.webSocket(host: "127.0.0.1", port: metricsPort))
        guard case .closed = try await refused.next() else {
            Issue.record("the metrics port upgraded a WebSocket connection")
            return
        }
        #expect(try await server.stop(SIGTERM) == 0)
    }
}
