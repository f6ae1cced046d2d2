import Foundation
import SyncServer
import SyncWire
import TestSupport
import Testing

@testable import SyncEngine

/// `sync-server`'s operator features as a real subprocess: limit flags, SIGHUP reloading the keys file,
/// draining on stop, and JSON logs.
@Suite(.timeLimit(.minutes(5))) struct SyncServerOperationsTests {
    @Test(
        "a limit flag out of its range, or not a number or duration, exits 64 naming the flag and its range",
        arguments: [
            ("--max-connections", "0", "1…1000000"), ("--max-connections", "1000001", "1…1000000"),
            ("--max-connections", "many", "1…1000000"),
            ("--max-sessions-per-connection", "0", "1…100000"),
            ("--max-sessions-per-connection", "100001", "1…100000"),
            ("--max-handshaking-connections", "0", "1…1000000"),
            ("--max-handshaking-connections", "1000001", "1…1000000"),
            ("--max-partitions", "0", "1…10000000"), ("--max-partitions", "-5", "1…10000000"),
            ("--max-partitions-on-disk", "0", "1…100000000"),
            ("--max-partitions-on-disk", "100000001", "1…100000000"),
            ("--max-idle-partitions", "-1", "0…1000000"), ("--max-idle-partitions", "1000001", "0…1000000"),
            ("--idle-timeout", "9s", "10s…86400s"), ("--idle-timeout", "2d", "10s…86400s"),
            ("--idle-timeout", "300", "10s…86400s"),
            ("--handshake-timeout", "0s", "1s…300s"), ("--handshake-timeout", "6m", "1s…300s"),
            ("--hello-timeout", "0s", "1s…3600s"), ("--hello-timeout", "2h", "1s…3600s"),
            ("--drain-timeout", "2h", "1s…3600s"), ("--drain-timeout", "soon", "1s…3600s"),
        ])
    func limitOutOfRange(flag: String, value: String, range: String) async throws {
        let server = try ChildProcess(syncServer: ["--port", "0", "--data", "/tmp/unused-\(UUID())", flag, value])
        #expect(try await server.waitForExit() == 64)
        #expect(server.stderr.contains("\(flag) must be"), "\(server.stderr)")
        #expect(server.stderr.contains(range), "\(server.stderr)")
        #expect(server.stderr.contains("not \(value)"), "\(server.stderr)")
        #expect(server.stdout.isEmpty)
    }

    @Test(
        "a bad --log-format or --metrics-port exits 64",
        arguments: [
            ["--log-format", "xml"], ["--metrics-port", "65536"], ["--metrics-port", "-1"],
        ])
    func badFormatOrPort(arguments: [String]) async throws {
        let server = try ChildProcess(syncServer: ["--port", "0", "--data", "/tmp/unused-\(UUID())"] + arguments)
        #expect(try await server.waitForExit() == 64)
        #expect(server.stderr.contains("usage: sync-server"))
    }

    @Test("every limit flag at the ends of its range is accepted and the server serves")
    func limitsAtTheirEnds() async throws {
        for arguments in [
            [
                "--max-connections", "1", "--max-sessions-per-connection", "1", "--max-partitions", "1",
                "--max-idle-partitions", "0", "--max-partitions-on-disk", "1", "--idle-timeout", "10s",
                "--handshake-timeout", "1s", "--max-handshaking-connections", "1",
                "--drain-timeout", "1s",
            ],
            [
                "--max-connections", "1000000", "--max-sessions-per-connection", "100000", "--max-partitions",
                "10000000", "--max-idle-partitions", "1000000", "--max-partitions-on-disk", "100000000",
                "--idle-timeout", "1d", "--handshake-timeout", "5m", "--hello-timeout", "1h",
                "--drain-timeout", "1h", "--max-handshaking-connections", "1000000",
            ],
        ] {
            let data = TemporaryDirectory()
            defer { data.remove() }
            let server = try ChildProcess(syncServer: ["--port", "0", "--data", data.url.path] + arguments)
            let client = WireClient(.webSocket(host: "127.0.0.1", port: try await server.port()))
            try await client.welcome()
            client.connection.close()
            #expect(try await server.stop(SIGTERM) == 0, "\(arguments): \(server.stderr)")
        }
    }

    @Test("--max-sessions-per-connection 1: a second bind on the connection gets serverBusy")
    func sessionsPerConnection() async throws {
        let data = TemporaryDirectory()
        defer { data.remove() }
        let (server, refusal) = try await secondBindAnswer(["--max-sessions-per-connection", "1"], data: data)
        #expect(refusal?.code == .serverBusy)
        #expect(try await server.stop(SIGTERM) == 0)
    }

    @Test("--max-partitions-on-disk 1: a second new partition is permissionDenied and no file is made for it")
    func partitionsOnDisk() async throws {
        let data = TemporaryDirectory()
        defer { data.remove() }
        let (server, refused) = try await secondBindAnswer(["--max-partitions-on-disk", "1"], data: data)
        #expect(refused?.code == .permissionDenied)
        #expect(refused != nil && refused?.retryAfterMilliseconds == nil)
        let logs = try FileManager.default.contentsOfDirectory(atPath: data.url.path).filter { $0.hasSuffix(".log") }
        #expect(logs == ["p.log"])
        #expect(try await server.stop(SIGTERM) == 0)
    }

    /// Starts `sync-server` on `data` with `limit`, binds partition `p` on one connection (its first
    /// download must come), then `q` on the same connection: the error that second bind got (`nil`, with an
    /// issue recorded, when something else came).
    private func secondBindAnswer(
        _ limit: [String], data: TemporaryDirectory
    ) async throws -> (server: ChildProcess, error: ProtocolError?) {
        let server = try ChildProcess(syncServer: ["--port", "0", "--data", data.url.path] + limit)
        let client = WireClient(.webSocket(host: "127.0.0.1", port: try await server.port()))
        try await client.welcome()
        client.send(.bind(Bind(sessionID: 1, partition: "p", clientFileID: 1, downloadedVersion: 0)))
        guard case .download = try await client.nextMessage() else {
            Issue.record("expected the first download")
            return (server, nil)
        }
        client.send(.bind(Bind(sessionID: 2, partition: "q", clientFileID: 1, downloadedVersion: 0)))
        guard case .error(let error) = try await client.nextMessage() else {
            Issue.record("expected an error for the second bind")
            return (server, nil)
        }
        return (server, error)
    }

    @Test(
        "--handshake-timeout: a silent connection to a server with 1s is dropped while one to a server with 300s stays open"
    )
    func handshakeTimeout() async throws {
        let (dataShort, dataLong) = (TemporaryDirectory(), TemporaryDirectory())
        defer {
            dataShort.remove()
            dataLong.remove()
        }
        let short = try ChildProcess(syncServer: [
            "--port", "0", "--data", dataShort.url.path, "--handshake-timeout", "1s",
        ])
        let long = try ChildProcess(syncServer: [
            "--port", "0", "--data", dataLong.url.path, "--handshake-timeout", "300s",
        ])
        let (shortPort, longPort) = (try await short.port(), try await long.port())
        // TCP connections that never send their upgrade request: curl's telnet mode sends nothing (stdin is
        // /dev/null) and exits when the server closes. The order of events is the claim, not a duration.
        func silent(_ port: Int) throws -> ChildProcess {
            try ChildProcess(
                URL(fileURLWithPath: "/usr/bin/env"),
                ["curl", "-sS", "--max-time", "250", "telnet://127.0.0.1:\(port)"])
        }
        let longSilent = try silent(longPort)
        let shortSilent = try silent(shortPort)
        #expect(try await shortSilent.waitForExit() == 0, "\(shortSilent.stderr)")
        #expect(!longSilent.hasExited, "the 300s server dropped its silent connection too")
        let samples = try await HTTPAnswer.get("http://127.0.0.1:\(shortPort)/metrics").samples
        #expect(samples["sync_connections_refused_total{reason=\"bad_handshake\"}"] == 1)
        #expect(try await short.stop(SIGTERM) == 0)
        #expect(try await long.stop(SIGTERM) == 0)
        _ = try await longSilent.waitForExit()
    }

    @Test(
        "--hello-timeout: a client that never says hello is closed with 1008 by a server with a short one, while a welcomed client and a silent client of a server with 1h stay open"
    )
    func helloTimeout() async throws {
        let (dataShort, dataLong) = (TemporaryDirectory(), TemporaryDirectory())
        defer {
            dataShort.remove()
            dataLong.remove()
        }
        // Short, but long enough for the welcomed client's own hello on a loaded (or sanitized) machine.
        let seconds = Int(2 * BuildFlavor.deadlineScale)
        let short = try ChildProcess(syncServer: [
            "--port", "0", "--data", dataShort.url.path, "--hello-timeout", "\(seconds)s",
        ])
        let long = try ChildProcess(syncServer: ["--port", "0", "--data", dataLong.url.path, "--hello-timeout", "1h"])
        let (shortPort, longPort) = (try await short.port(), try await long.port())
        let welcomed = WireClient(.webSocket(host: "127.0.0.1", port: shortPort))
        try await welcomed.welcome()
        // Upgraded, then silent: the long server's client first, so that its deadline, were it the short
        // one (or the default 10 s), would pass first. The order of events is the claim, not a duration.
        let longSilent = WireClient(.webSocket(host: "127.0.0.1", port: longPort))
        #expect(try await longSilent.next() == .opened)
        let shortSilent = WireClient(.webSocket(host: "127.0.0.1", port: shortPort))
        #expect(try await shortSilent.next() == .opened)
        let end = try await shortSilent.next(limit: .seconds(60))
        guard case .closed(.connectionLost(let reason)?) = end else {
            Issue.record("the short server did not close its silent client: \(end)")
            return
        }
        #expect(reason.contains("1008"), "\(reason)")
        #expect(reason.contains("no hello within"), "\(reason)")
        // The long server's silent client is still open and may still say hello.
        longSilent.send(.hello(Hello(credential: .anonymous)))
        guard case .welcome = try await longSilent.nextMessage() else {
            Issue.record("the long server's silent client was not welcomed")
            return
        }
        // The welcomed client connected before the silent one, past the same deadline: still served.
        welcomed.send(.ping(id: 3))
        #expect(try await welcomed.nextMessage() == .pong(id: 3))
        welcomed.connection.close()
        longSilent.connection.close()
        #expect(try await short.stop(SIGTERM) == 0, "\(short.stderr)")
        #expect(try await long.stop(SIGTERM) == 0, "\(long.stderr)")
    }

    @Test(
        "--idle-timeout: a silent client of a server with 10s is dropped while one of a server with 1d still gets its pong"
    )
    func idleTimeout() async throws {
        let (dataShort, dataLong) = (TemporaryDirectory(), TemporaryDirectory())
        defer {
            dataShort.remove()
            dataLong.remove()
        }
        // At debug level each server logs why it closed a connection: a failure below shows it.
        let short = try ChildProcess(syncServer: [
            "--port", "0", "--data", dataShort.url.path, "--idle-timeout", "10s", "--log-level", "debug",
        ])
        let long = try ChildProcess(syncServer: [
            "--port", "0", "--data", dataLong.url.path, "--idle-timeout", "1d", "--log-level", "debug",
        ])
        let longClient = WireClient(.webSocket(host: "127.0.0.1", port: try await long.port()))
        try await longClient.welcome()
        let shortClient = WireClient(.webSocket(host: "127.0.0.1", port: try await short.port()))
        try await shortClient.welcome()
        // Neither client sends anything more (the bare transport does not ping).
        guard case .closed = try await shortClient.next(limit: .seconds(60)) else {
            Issue.record("the 10s server did not drop its silent client")
            return
        }
        longClient.send(.ping(id: 7))
        do {
            #expect(try await longClient.nextMessage() == .pong(id: 7))
        } catch {
            Issue.record("the 1d server's client: \(error); that server's log:\n\(long.stderr.suffix(4_000))")
        }
        #expect(try await short.stop(SIGTERM) == 0)
        #expect(try await long.stop(SIGTERM) == 0, "\(long.stderr.suffix(4_000))")
    }

    private func keysFile(_ text: String, at url: URL) throws {
        try Data(text.utf8).write(to: url)
    }

    private func hello(_ port: Int, key: String) async throws -> ServerMessage {
        let client = WireClient(.webSocket(host: "127.0.0.1", port: port))
        guard try await client.next() == .opened else { throw WireClient.Unexpected(description: "not opened") }
        client.send(.hello(Hello(credential: .apiKey(key))))
        defer { client.connection.close() }
        return try await client.nextMessage()
    }

    @Test(
        "SIGHUP reloads the keys file: a new key is welcomed; a malformed file keeps the keys in use and logs an error")
    func reloadKeys() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let keys = directory.url.appendingPathComponent("keys")
        try keysFile("old p\n", at: keys)
        let server = try ChildProcess(syncServer: [
            "--port", "0", "--data", directory.url.appendingPathComponent("data").path, "--api-keys", keys.path,
            "--log-level", "info",
        ])
        let port = try await server.port()
        // Protocol 5's welcome also carries the server's message limit (the default, 16 MiB).
        let welcome = ServerMessage.welcome(
            protocolVersion: WireProtocol.version, maximumMessageBytes: UInt32(WireProtocol.maximumMessageSize))
        #expect(try await hello(port, key: "old") == welcome)
        #expect(try await hello(port, key: "new") != welcome)

        try keysFile("new p\n", at: keys)
        kill(server.processIdentifier, SIGHUP)
        try await waitUntil("the reload") { server.stderr.contains("reloaded 1 API keys") }
        #expect(try await hello(port, key: "new") == welcome)
        #expect(try await hello(port, key: "old") != welcome)

        try keysFile("new p\nlonely\n", at: keys)
        kill(server.processIdentifier, SIGHUP)
        try await waitUntil("the reload's error") { server.stderr.contains("cannot reload the API keys file") }
        #expect(server.stderr.contains("line 2"), "\(server.stderr)")
        #expect(try await hello(port, key: "new") == welcome)
        #expect(try await server.stop(SIGTERM) == 0)
    }

    @Test(
        "--drain-timeout: on SIGTERM /healthz answers 503, new clients are refused, open ones carry on; the server exits once the last one leaves"
    )
    func drainUntilEmpty() async throws {
        let data = TemporaryDirectory()
        defer { data.remove() }
        let server = try ChildProcess(syncServer: ["--port", "0", "--data", data.url.path, "--drain-timeout", "1h"])
        let port = try await server.port()
        let client = WireClient(.webSocket(host: "127.0.0.1", port: port))
        try await client.welcome()
        kill(server.processIdentifier, SIGTERM)
        try await waitUntil("the drain") { server.stderr.contains("draining 1 connections") }
        #expect(try await HTTPAnswer.get("http://127.0.0.1:\(port)/healthz").status == 503)
        let late = WireClient(.webSocket(host: "127.0.0.1", port: port))
        guard case .closed = try await late.next() else {
            Issue.record("a new client was accepted while draining")
            return
        }
        // The open client still syncs.
        client.send(.bind(Bind(sessionID: 1, partition: "p", clientFileID: 1, downloadedVersion: 0)))
        guard case .download = try await client.nextMessage() else {
            Issue.record("the open client was not served while draining")
            return
        }
        #expect(!server.hasExited)
        client.connection.close()
        // Exits long before the hour is up: the drain ended with the last connection.
        #expect(try await server.waitForExit() == 0)
        #expect(server.stderr.contains("drained: no connection left"), "\(server.stderr)")
    }

    @Test("--drain-timeout: a second SIGTERM ends the drain at once and the open client is closed with 1001")
    func secondSignalStopsAtOnce() async throws {
        let data = TemporaryDirectory()
        defer { data.remove() }
        let server = try ChildProcess(syncServer: ["--port", "0", "--data", data.url.path, "--drain-timeout", "1h"])
        let client = WireClient(.webSocket(host: "127.0.0.1", port: try await server.port()))
        try await client.welcome()
        kill(server.processIdentifier, SIGTERM)
        try await waitUntil("the drain") { server.stderr.contains("draining 1 connections") }
        #expect(try await server.stop(SIGTERM) == 0)
        #expect(server.stderr.contains("second signal"), "\(server.stderr)")
        guard case .closed(.connectionLost(let reason)) = try await client.next() else {
            Issue.record("the client was not closed")
            return
        }
        #expect(reason.contains("1001"), "\(reason)")
    }

    @Test("--drain-timeout 1s with a client that stays: the drain times out and the server stops")
    func drainTimesOut() async throws {
        let data = TemporaryDirectory()
        defer { data.remove() }
        let server = try ChildProcess(syncServer: ["--port", "0", "--data", data.url.path, "--drain-timeout", "1s"])
        let client = WireClient(.webSocket(host: "127.0.0.1", port: try await server.port()))
        try await client.welcome()
        #expect(try await server.stop(SIGTERM) == 0)
        #expect(server.stderr.contains("drain timeout: closing 1 connections"), "\(server.stderr)")
    }

    @Test(
        "--log-format json: every stderr line is a JSON object; a connection's lines carry its id and peer, escaped text survives"
    )
    func jsonLogs() async throws {
        let data = TemporaryDirectory()
        defer { data.remove() }
        let server = try ChildProcess(syncServer: [
            "--port", "0", "--data", data.url.path, "--log-format", "json", "--log-level", "debug",
        ])
        let client = WireClient(.webSocket(host: "127.0.0.1", port: try await server.port()))
        try await client.welcome()
        let name = "quote\" backslash\\ newline\n tab\t bell\u{7} é"
        client.send(.bind(Bind(sessionID: 1, partition: name, clientFileID: 1, downloadedVersion: 0)))
        guard case .download = try await client.nextMessage() else {
            Issue.record("expected the first download")
            return
        }
        client.send(.upload(Upload(sessionID: 1, changesets: [UploadChangeset(clientVersion: 1, data: [1])])))
        guard case .download = try await client.nextMessage() else {
            Issue.record("expected the acknowledgement")
            return
        }
        #expect(try await server.stop(SIGTERM) == 0)
        let lines = server.stderr.split(separator: "\n", omittingEmptySubsequences: true)
        #expect(lines.count >= 3, "\(server.stderr)")
        let connectionLines = try expectJSONLogLines(
            server.stderr, connectionLinesContaining: ["bound session 1", "integrated versions"])
        #expect(connectionLines >= 2, "\(server.stderr)")
        #expect(server.stderr.contains("SIGTERM"), "\(server.stderr)")
    }
}
