import Foundation
import SyncServer
import SyncWire
import TestSupport
import Testing

@testable import SyncEngine

/// `sync-server`'s `--log-level` and `--max-offline` as a real subprocess.
@Suite(.timeLimit(.minutes(5))) struct SyncServerOptionsTests {
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

    @Test(
        "--max-message-bytes out of 1024…maximumMessageSize, or not a number, exits 64 with the range and the usage",
        arguments: ["1023", "0", "-1", "\(WireProtocol.maximumMessageSize + 1)", "4k", ""])
    func maximumMessageBytesOutOfRange(value: String) async throws {
        let server = try ChildProcess(
            syncServer: ["--port", "0", "--data", "/tmp/unused-\(UUID())", "--max-message-bytes", value])
        #expect(try await server.waitForExit() == 64)
        #expect(
            server.stderr.contains("--max-message-bytes must be 1024…\(WireProtocol.maximumMessageSize)"),
            "\(server.stderr)")
        #expect(server.stderr.contains("usage: sync-server"))
        #expect(server.stdout.isEmpty)
    }

    @Test(
        "--max-message-bytes at either end of its range is accepted: the server starts and serves",
        arguments: [1024, WireProtocol.maximumMessageSize])
    func maximumMessageBytesAtTheEnds(value: Int) async throws {
        _ = try await serveOneClient(["--max-message-bytes", "\(value)"], waitFor: nil)
    }

    /// Writes `contents` to a keys file in `directory` and returns its path.
    private func keysFile(_ contents: Data, in directory: TemporaryDirectory) throws -> String {
        let url = directory.url.appendingPathComponent("keys")
        try contents.write(to: url)
        return url.path
    }

    @Test("--api-keys with a missing, malformed or oversized file exits 1 with the reason, before listening")
    func badAPIKeysFiles() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cases: [(file: String, reason: String)] = [
            (directory.url.appendingPathComponent("no-such-keys").path, "cannot read the API keys file"),
            (
                try keysFile(Data("good team/*\nlonely\n".utf8), in: directory),
                "line 2: a key must be followed by at least one partition"
            ),
        ]
        for (file, reason) in cases {
            let server = try ChildProcess(
                syncServer: [
                    "--port", "0", "--data", directory.url.appendingPathComponent("data").path, "--api-keys", file,
                ])
            #expect(try await server.waitForExit() == 1, "\(file)")
            #expect(server.stderr.contains("sync-server: \(reason)"), "\(server.stderr)")
            #expect(!server.stdout.contains("ws://"), "\(server.stdout)")
        }
        // One byte over the limit, in a file that would otherwise parse.
        let line = Data("key p\n".utf8)
        var big = Data(capacity: APIKeysFile.maximumSize + line.count)
        var index = 0
        while big.count <= APIKeysFile.maximumSize {
            big.append(Data("k\(index) p\n".utf8))
            index += 1
        }
        let oversized = try keysFile(big, in: directory)
        let server = try ChildProcess(
            syncServer: [
                "--port", "0", "--data", directory.url.appendingPathComponent("data").path, "--api-keys", oversized,
            ])
        #expect(try await server.waitForExit() == 1)
        #expect(
            server.stderr.contains("the API keys file has \(big.count) bytes; the limit is \(APIKeysFile.maximumSize)"),
            "\(server.stderr)")
        #expect(!server.stdout.contains("ws://"))
    }

    @Test("--api-keys with a valid file: its key is welcomed, another key is refused")
    func validAPIKeysFile() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let file = try keysFile(Data("# keys\ngood p\n".utf8), in: directory)
        let server = try ChildProcess(
            syncServer: [
                "--port", "0", "--data", directory.url.appendingPathComponent("data").path, "--api-keys", file,
            ])
        let port = try await server.port()
        for (key, welcomed) in [("good", true), ("bad", false)] {
            let connection = WebSocketTransport.forTests().connect(to: .webSocket(host: "127.0.0.1", port: port))
            var events = connection.events.makeAsyncIterator()
            #expect(await events.next() == .opened)
            connection.send(.hello(Hello(credential: .apiKey(key))))
            let answer = await events.next()
            if welcomed {
                #expect(
                    answer
                        == .message(
                            .welcome(
                                protocolVersion: WireProtocol.version,
                                maximumMessageBytes: UInt32(WireProtocol.maximumMessageSize))),
                    "\(String(describing: answer))"
                )
            } else {
                guard case .message(.error(let error))? = answer else {
                    Issue.record("expected an error for \(key), got \(String(describing: answer))")
                    continue
                }
                #expect(error.code == .authenticationFailed)
            }
            connection.close()
        }
        #expect(try await server.stop(SIGTERM) == 0)
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
        let connection = WebSocketTransport.forTests().connect(to: .webSocket(host: "127.0.0.1", port: port))
        var events = connection.events.makeAsyncIterator()
        #expect(await events.next() == .opened)
        connection.send(.hello(Hello(credential: .anonymous)))
        let welcome = await events.next()
        let welcomed = if case .message(.welcome(WireProtocol.version, _))? = welcome { true } else { false }
        #expect(welcomed, "expected a welcome, got \(String(describing: welcome))")
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
