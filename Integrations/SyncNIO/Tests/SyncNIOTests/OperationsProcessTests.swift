import Foundation
import SyncEngine
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `sync-server-nio`'s operator features as a real subprocess, as `sync-server`'s: `/metrics` and `/healthz`
/// read with curl on its port and on `--metrics-port`, `--log-format json`, the drain on stop, SIGHUP
/// reloading the keys file, and `--max-partitions-on-disk`.
@Suite(.timeLimit(.minutes(5)))
struct OperationsProcessTests {
    @Test func metricsAndHealthAnswerOnThePortAndOnTheMetricsPortAndCountAClientsConnection() async throws {
        let data = TemporaryDirectory()
        defer { data.remove() }
        let server = try ChildProcess(syncServerNIO: ["--port", "0", "--data", data.url.path, "--metrics-port", "0"])
        let port = try await server.port()
        let match = try #require(server.stdout.firstMatch(of: /metrics: http:\/\/127\.0\.0\.1:(\d+)\/metrics/))
        let metricsPort = try #require(Int(match.1))
        #expect(metricsPort != port)
        for base in ["http://127.0.0.1:\(port)", "http://127.0.0.1:\(metricsPort)"] {
            let health = try await HTTPAnswer.get(base + "/healthz")
            #expect(health.status == 200, "\(base)")
            #expect(health.body == "ok\n", "\(base)")
            let before = try await HTTPAnswer.get(base + "/metrics")
            #expect(before.status == 200, "\(base)")
            #expect(before.body.contains("# TYPE sync_connections gauge"), "\(base)")
            #expect(before.body.contains("# TYPE sync_fsync_seconds histogram"), "\(base)")
            #expect(before.samples["sync_connections_accepted_total"] == 0, "\(base): \(before.body)")
        }

        let client = try NIOWireClient(port: port)
        try await client.welcome()
        client.send(.bind(Bind(sessionID: 1, partition: "p", clientFileID: 1, downloadedVersion: 0)))
        guard case .download = try await client.nextMessage() else {
            Issue.record("expected the first download")
            return
        }
        for base in ["http://127.0.0.1:\(port)", "http://127.0.0.1:\(metricsPort)"] {
            let after = try await HTTPAnswer.get(base + "/metrics").samples
            #expect(after["sync_connections"] == 1, "\(base): \(after)")
            #expect(after["sync_connections_accepted_total"] == 1, "\(base): \(after)")
            #expect(after["sync_sessions"] == 1, "\(base): \(after)")
            #expect(after["sync_partitions_loaded"] == 1, "\(base): \(after)")
            // The client's upgrade request, hello and bind in; the 101, welcome and download out.
            #expect((after["sync_received_bytes_total"] ?? 0) > 100, "\(base): \(after)")
            #expect((after["sync_sent_bytes_total"] ?? 0) > 100, "\(base): \(after)")
        }
        // The metrics port serves only metrics and health.
        #expect(try await HTTPAnswer.get("http://127.0.0.1:\(metricsPort)/other").status == 404)
        client.connection.close()
        #expect(try await server.stop(SIGTERM) == 0, "\(server.stderr)")
    }

    @Test func jsonLogLinesParseAndAConnectionsLinesCarryItsIDAndPeer() async throws {
        let data = TemporaryDirectory()
        defer { data.remove() }
        let server = try ChildProcess(syncServerNIO: [
            "--port", "0", "--data", data.url.path, "--log-format", "json", "--log-level", "debug",
        ])
        let client = try NIOWireClient(port: try await server.port())
        try await client.welcome()
        client.send(.bind(Bind(sessionID: 1, partition: "p", clientFileID: 1, downloadedVersion: 0)))
        guard case .download = try await client.nextMessage() else {
            Issue.record("expected the first download")
            return
        }
        #expect(try await server.stop(SIGTERM) == 0)
        let connectionLines = try expectJSONLogLines(
            server.stderr, connectionLinesContaining: ["welcomed", "bound session 1"])
        #expect(connectionLines >= 2, "\(server.stderr)")
        #expect(server.stderr.contains("SIGTERM"), "\(server.stderr)")
    }

    @Test func aDrainKeepsAnOpenClientWhileHealthzAndNewUpgradesAnswer503AndASecondSIGTERMStopsAtOnce() async throws {
        let data = TemporaryDirectory()
        defer { data.remove() }
        let server = try ChildProcess(syncServerNIO: ["--port", "0", "--data", data.url.path, "--drain-timeout", "1h"])
        let port = try await server.port()
        let client = try NIOWireClient(port: port)
        try await client.welcome()
        kill(server.processIdentifier, SIGTERM)
        try await eventually("the drain") { server.stderr.contains("draining 1 connections") }
        #expect(try await HTTPAnswer.get("http://127.0.0.1:\(port)/healthz").status == 503)
        // A new client is not upgraded.
        #expect(try await ServerLimitsTests.statusLine(port: port, origin: nil).hasPrefix("HTTP/1.1 503"))
        // The open client is still served.
        client.send(.bind(Bind(sessionID: 1, partition: "p", clientFileID: 1, downloadedVersion: 0)))
        guard case .download = try await client.nextMessage() else {
            Issue.record("the open client was not served while draining")
            return
        }
        #expect(!server.hasExited)
        #expect(try await server.stop(SIGTERM) == 0)
        #expect(server.stderr.contains("second signal"), "\(server.stderr)")
        guard case .closed = try await client.next() else {
            Issue.record("the client was not closed")
            return
        }
    }

    @Test func sighupReloadsTheKeysFileAndAMalformedFileKeepsTheKeysInUse() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let keys = directory.url.appendingPathComponent("keys")
        try Data("old p\n".utf8).write(to: keys)
        let server = try ChildProcess(syncServerNIO: [
            "--port", "0", "--data", directory.url.appendingPathComponent("data").path, "--api-keys", keys.path,
        ])
        let port = try await server.port()
        func isWelcomed(_ key: String) async throws -> Bool {
            let client = try NIOWireClient(port: port)
            defer { client.connection.close() }
            if case .welcome = try await client.hello(.apiKey(key)) { return true }
            return false
        }
        #expect(try await isWelcomed("old"))
        #expect(try await !isWelcomed("new"))

        try Data("new p\n".utf8).write(to: keys)
        kill(server.processIdentifier, SIGHUP)
        try await eventually("the reload") { server.stderr.contains("reloaded 1 API keys") }
        #expect(try await isWelcomed("new"))
        #expect(try await !isWelcomed("old"))

        try Data("new p\nlonely\n".utf8).write(to: keys)
        kill(server.processIdentifier, SIGHUP)
        try await eventually("the reload's error") { server.stderr.contains("cannot reload the API keys file") }
        #expect(try await isWelcomed("new"))
        #expect(try await server.stop(SIGTERM) == 0, "\(server.stderr)")
    }

    @Test func maxPartitionsOnDisk1RefusesASecondPartitionsBindWithPermissionDenied() async throws {
        let data = TemporaryDirectory()
        defer { data.remove() }
        let server = try ChildProcess(syncServerNIO: [
            "--port", "0", "--data", data.url.path, "--max-partitions-on-disk", "1",
        ])
        let client = try NIOWireClient(port: try await server.port())
        try await client.welcome()
        client.send(.bind(Bind(sessionID: 1, partition: "p", clientFileID: 1, downloadedVersion: 0)))
        guard case .download = try await client.nextMessage() else {
            Issue.record("expected the first download")
            return
        }
        client.send(.bind(Bind(sessionID: 2, partition: "q", clientFileID: 1, downloadedVersion: 0)))
        let answer = try await client.nextMessage()
        guard case .error(let error) = answer else {
            Issue.record("expected an error for the second bind: \(answer)")
            return
        }
        #expect(error.code == .permissionDenied)
        let logs = try FileManager.default.contentsOfDirectory(atPath: data.url.path).filter { $0.hasSuffix(".log") }
        #expect(logs == ["p.log"])
        client.connection.close()
        #expect(try await server.stop(SIGTERM) == 0)
    }

    @Test func helpListsTheOperatorOptionsAndABadValueIsAUsageError() async throws {
        let help = try ChildProcess(syncServerNIO: ["--help"])
        #expect(try await help.waitForExit() == 0)
        for option in [
            "--log-format", "--metrics-port", "--max-partitions-on-disk", "--drain-timeout", "SIGHUP reloads",
            "--max-handshaking-connections",
        ] {
            #expect(help.stdout.contains(option), "\(option)")
        }
        for (arguments, message) in [
            (["--log-format", "xml"], "--log-format must be text or json, not xml"),
            (["--drain-timeout", "2h"], "--drain-timeout must be"),
            (["--max-partitions-on-disk", "0"], "--max-partitions-on-disk must be"),
            (["--metrics-port", "65536"], "--metrics-port must be 0…65535"),
            (
                ["--max-handshaking-connections", "0"],
                "--max-handshaking-connections must be a whole number in 1…1000000"
            ),
        ] {
            let server = try ChildProcess(
                syncServerNIO: ["--port", "0", "--data", "/tmp/unused-\(UUID())"] + arguments)
            #expect(try await server.waitForExit() == 64, "\(arguments)")
            #expect(server.stderr.contains(message), "\(arguments): \(server.stderr)")
        }
    }

    @Test func maxHandshakingConnectionsClosesASocketPastItAtOnceAndTheMetricsCountIt() async throws {
        let data = TemporaryDirectory()
        defer { data.remove() }
        let server = try ChildProcess(syncServerNIO: [
            "--port", "0", "--data", data.url.path, "--metrics-port", "0", "--max-handshaking-connections", "1",
        ])
        let port = try await server.port()
        let match = try #require(server.stdout.firstMatch(of: /metrics: (http:\/\/127\.0\.0\.1:\d+)\/metrics/))
        let metrics = String(match.1) + "/metrics"
        // The first socket takes the one place and keeps it (half a request).
        let first = try await RawClient.connect(port: port)
        await first.send(Array("GET / HTTP/1.1\r\n".utf8))
        // Sockets after it are closed at once, each counted; the first is still served.
        let second = try await RawClient.connect(port: port)
        do {
            try await eventually("the second socket to be closed", limit: .seconds(20)) { second.isClosed }
            let samples = try await HTTPAnswer.get(metrics).samples
            #expect(samples["sync_connections_refused_total{reason=\"handshaking_limit\"}"] == 1, "\(samples)")
            await first.send(
                Array(
                    ("Host: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
                        + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n").utf8))
            try await eventually("the first socket's upgrade", limit: .seconds(20)) {
                first.receivedText.contains("\r\n\r\n")
            }
            #expect(first.receivedText.hasPrefix("HTTP/1.1 101"), "\(first.receivedText.prefix(80))")
        } catch {
            Issue.record("\(error)")
        }
        await first.close()
        await second.close()
        #expect(try await server.stop(SIGTERM) == 0, "\(server.stderr)")
    }

    @Test("anonymous access on 0.0.0.0 is warned about at start; on 127.0.0.1 it is not")
    func anonymousAccessOnANetworkAddressIsWarnedAbout() async throws {
        for (host, warned) in [("0.0.0.0", true), ("127.0.0.1", false)] {
            let data = TemporaryDirectory()
            defer { data.remove() }
            // Listening on every interface only to read the start-up warning: no traffic is sent to it.
            let server = try ChildProcess(syncServerNIO: [
                "--port", "0", "--data", data.url.path, "--host", host, "--max-partitions-on-disk", "500",
            ])
            _ = try await server.port()
            #expect(try await server.stop(SIGTERM) == 0)
            #expect(server.stderr.contains("warning: anonymous access") == warned, "\(host): \(server.stderr)")
            if warned {
                #expect(server.stderr.contains("(up to --max-partitions-on-disk 500)"), "\(server.stderr)")
            }
        }
    }
}
