import Dispatch
import Foundation
import SyncServer
import SyncWire
import Testing

@testable import SyncEngine

/// `sync-server` as a real subprocess: its command line, its signals, killing it at any moment, and a
/// third-party WebSocket client. Waits are for events with generous deadlines.
@Suite(.timeLimit(.minutes(5))) struct SyncServerProcessTests {
    func networkApp(port: Int, _ directory: TemporaryDirectory) -> SyncApp {
        SyncApp(
            configuration: .init(
                server: .webSocket(host: "127.0.0.1", port: port), directory: directory.url,
                backoff: ReconnectBackoff(initialDelay: .milliseconds(20), maximumDelay: .milliseconds(200)),
                timerExecutor: DispatchQueue(label: "SyncServerProcessTests.timers"),
                callbackExecutor: ImmediateExecutor(), logLevel: .off))
    }

    @Test(
        "bad usage exits 64 with the usage",
        arguments: [
            ["--data", "/tmp/x"], ["--port", "0"], ["--port", "70000", "--data", "/tmp/x"],
            ["--port", "0", "--data", "/tmp/x", "--bogus"],
            ["--port"],
        ])
    func usage(arguments: [String]) async throws {
        let server = try ServerProcess(arguments)
        #expect(try await server.waitForExit() == 64)
        #expect(server.stderr.contains("usage: sync-server"))
    }

    @Test("--help lists every option and exits 0")
    func help() async throws {
        let server = try ServerProcess(["--help"])
        #expect(try await server.waitForExit() == 0)
        for option in ["--port", "--data", "--host", "--api-keys", "--max-message-bytes", "--log-level"] {
            #expect(server.stdout.contains(option), "\(option)")
        }
    }

    @Test("it prints its ws:// URL, serves, and on SIGTERM closes connections with 1001 and exits 0")
    func serveAndStop() async throws {
        let data = TemporaryDirectory()
        defer { data.remove() }
        let server = try ServerProcess(["--port", "0", "--data", data.url.path])
        let port = try await server.port()
        let connection = WebSocketTransport().connect(to: .webSocket(host: "127.0.0.1", port: port))
        var events = connection.events.makeAsyncIterator()
        #expect(await events.next() == .opened)
        connection.send(.hello(Hello(credential: .anonymous)))
        #expect(await events.next() == .message(.welcome(protocolVersion: WireProtocol.version)))
        #expect(try await server.stop(SIGTERM) == 0)
        let last = await events.next()
        guard case .closed(.connectionLost(let reason)) = last else {
            Issue.record("expected a lost connection, got \(String(describing: last))")
            return
        }
        #expect(reason.contains("1001"), "\(reason)")
        #expect(server.stdout.contains("sync-server stopped"))
    }

    @Test("a second server on the same data directory refuses to start (exit 1)")
    func dataDirectoryLocked() async throws {
        let data = TemporaryDirectory()
        defer { data.remove() }
        let first = try ServerProcess(["--port", "0", "--data", data.url.path])
        _ = try await first.port()
        let second = try ServerProcess(["--port", "0", "--data", data.url.path])
        #expect(try await second.waitForExit() == 1)
        #expect(second.stderr.contains("in use"))
        #expect(try await first.stop(SIGINT) == 0)
    }

    @Test(
        "SIGKILLed mid-upload and mid-download and restarted: every client's log equals the server's, byte for byte",
        arguments: [0, 1])
    func killedAndRestarted(seed: Int) async throws {
        let data = TemporaryDirectory()
        let (dirA, dirB) = (TemporaryDirectory(), TemporaryDirectory())
        defer {
            data.remove()
            dirA.remove()
            dirB.remove()
        }
        let storePath = data.url.appendingPathComponent("server").path
        var server = try ServerProcess(["--port", "0", "--data", storePath])
        let port = try await server.port()
        let writer = try await networkApp(port: port, dirA).login(.anonymous).openSession(partition: "p")
        let reader = try await networkApp(port: port, dirB).login(.anonymous).openSession(partition: "p")
        let seen = Collected(reader.changesets)
        let written = (0..<300).map { index in
            Data(
                (0..<(1024 + (index * 7919 + seed * 131) % 16_000)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ index) })
        }
        for (index, bytes) in written.enumerated() {
            try await writer.write(bytes)
            if index == 100 || index == 200 {
                // Kill once some changesets reached the reader (downloads in flight, uploads behind).
                let threshold = seen.values.count + 1
                try await eventually("the reader got more", limit: .seconds(60)) { seen.values.count >= threshold }
                _ = try await server.stop(SIGKILL)
                server = try ServerProcess(["--port", "\(port)", "--data", storePath])
                _ = try await server.port()
            }
        }
        try await writer.wait(for: .upload)
        try await eventually("the reader holds all 300", limit: .seconds(120)) { seen.values.count == 300 }
        #expect(seen.values.map(\.data) == written)
        #expect(seen.values.map(\.serverVersion) == Array(1...300))
        #expect(try await server.stop(SIGTERM) == 0)
        let store = try FilePartitionStore(directory: storePath)
        _ = try await store.summaries(of: "p")
        let log = try await store.read(1...1000, of: "p")
        await store.close()
        #expect(log.map(\.data) == written.map { Array($0) })
    }

    /// Whether Python's `websockets` package (a third-party RFC 6455 implementation) is installed; CI
    /// installs it, and there the test must run.
    static let pythonWebSockets: Bool = {
        if ProcessInfo.processInfo.environment["CI"] != nil { return true }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", "import websockets"]
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }()

    @Test(
        "Python's websockets completes the handshake with sync-server, gets a pong and a welcome, and closes cleanly",
        .enabled(if: pythonWebSockets, "pip install websockets (CI does)"))
    func pythonInterop() async throws {
        let data = TemporaryDirectory()
        defer { data.remove() }
        let server = try ServerProcess(["--port", "0", "--data", data.url.path])
        let port = try await server.port()
        let hello = ClientMessage.hello(Hello(credential: .anonymous)).encoded().map { String(format: "%02x", $0) }
            .joined()
        let welcome = ServerMessage.welcome(protocolVersion: WireProtocol.version).encoded()
            .map { String(format: "%02x", $0) }.joined()
        let script = """
            import asyncio, sys
            from websockets.asyncio.client import connect
            async def main():
                async with connect("ws://127.0.0.1:\(port)") as ws:
                    pong = await ws.ping(b"interop")
                    await asyncio.wait_for(pong, 30)
                    print("pong")
                    await ws.send(bytes.fromhex("\(hello)"))
                    answer = await asyncio.wait_for(ws.recv(), 30)
                    print("answer", answer.hex())
                print("closed", ws.close_code)
            asyncio.run(main())
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = try await offPoolRead(output)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(text)")
        #expect(text.contains("pong"))
        #expect(text.contains("answer \(welcome)"), "\(text)")
        #expect(text.contains("closed 1000"), "\(text)")
        #expect(try await server.stop(SIGTERM) == 0)
    }

    /// Reads `pipe` to its end on a dispatch thread (it blocks), off the cooperative pool.
    private func offPoolRead(_ pipe: Pipe) async throws -> String {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                let data = pipe.fileHandleForReading.readDataToEndOfFile()
                continuation.resume(returning: String(decoding: data, as: UTF8.self))
            }
        }
    }
}
