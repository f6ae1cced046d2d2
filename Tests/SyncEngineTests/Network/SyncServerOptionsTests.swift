import Foundation
import SyncServer
import SyncWire
import TestSupport
import Testing

@testable import SyncEngine

/// `sync-server`'s `--log-level` and `--max-offline` as a real subprocess.
@Suite(.timeLimit(.minutes(3))) struct SyncServerOptionsTests {
    @Test(
        "a bad --log-level or --max-offline exits 64 with the usage",
        arguments: [
            ["--log-level", "loud"], ["--log-level"], ["--max-offline", "30"], ["--max-offline", "0d"],
            ["--max-offline", "3w"], ["--max-offline", "-1h"], ["--max-offline", "d"],
            ["--max-offline", "99999999999999999d"],
        ])
    func badValues(arguments: [String]) async throws {
        let server = try ChildProcess(syncServer: ["--port", "0", "--data", "/tmp/unused-\(UUID())"] + arguments)
        #expect(try await server.waitForExit() == 64)
        #expect(server.stderr.contains("usage: sync-server"))
        #expect(server.stdout.isEmpty)
    }

    @Test("--help lists --max-offline")
    func help() async throws {
        let server = try ChildProcess(syncServer: ["--help"])
        #expect(try await server.waitForExit() == 0)
        #expect(server.stdout.contains("--max-offline DURATION"))
    }

    /// Starts a server with `arguments`, has a client say hello, and returns what it wrote to stderr once
    /// stopped.
    private func serveOneClient(_ arguments: [String], waitFor marker: String?) async throws -> String {
        let data = TemporaryDirectory()
        defer { data.remove() }
        let server = try ChildProcess(syncServer: ["--port", "0", "--data", data.url.path] + arguments)
        let port = try await server.port()
        let connection = WebSocketTransport().connect(to: .webSocket(host: "127.0.0.1", port: port))
        var events = connection.events.makeAsyncIterator()
        #expect(await events.next() == .opened)
        connection.send(.hello(Hello(credential: .anonymous)))
        #expect(await events.next() == .message(.welcome(protocolVersion: WireProtocol.version)))
        if let marker {
            try await eventually("\(marker) on stderr", limit: .seconds(20)) { server.stderr.contains(marker) }
        }
        connection.close()
        #expect(try await server.stop(SIGTERM) == 0)
        return server.stderr
    }

    @Test("--log-level info writes the server's info lines to stderr: timestamp, level, category, message")
    func logLevelInfo() async throws {
        let stderr = try await serveOneClient(["--log-level", "info"], waitFor: "welcomed as anonymous")
        let line = try #require(stderr.split(separator: "\n").first { $0.contains("welcomed as anonymous") })
        #expect(
            line.wholeMatch(
                of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z info sync\.server: connection \d+ welcomed as anonymous/)
                != nil, "\(line)")
    }

    @Test("at the default level (warn) a client's connection logs nothing")
    func defaultLevelIsQuiet() async throws {
        let stderr = try await serveOneClient([], waitFor: nil)
        #expect(!stderr.contains("sync.server"), "\(stderr)")
    }

    @Test("--max-offline 30d is accepted: the server starts and serves")
    func maxOfflineAccepted() async throws {
        _ = try await serveOneClient(["--max-offline", "30d", "--log-level", "info"], waitFor: "welcomed")
    }
}
