import Dispatch
import Foundation
import SyncServer
import SyncStorage
import SyncWire
import TestSupport
import Testing

@testable import SyncEngine

/// `sync-server` as a real subprocess: its command line, its signals, killing it at any moment, and a
/// third-party WebSocket client. Waits are for events with generous deadlines.
@Suite(.timeLimit(.minutes(5))) struct SyncServerProcessTests {
    func networkApp(port: Int, _ directory: TemporaryDirectory, uploadWindowBytes: Int = 8 << 20) -> SyncApp {
        SyncApp(
            configuration: .init(
                server: .webSocket(host: "127.0.0.1", port: port), directory: directory.url,
                backoff: ReconnectBackoff(initialDelay: .milliseconds(20), maximumDelay: .milliseconds(200)),
                timerExecutor: DispatchQueue(label: "SyncServerProcessTests.timers"),
                callbackExecutor: ImmediateExecutor(), uploadWindowBytes: uploadWindowBytes, logLevel: .off))
    }

    @Test(
        "bad usage exits 64 with the usage",
        arguments: [
            ["--data", "/tmp/x"], ["--port", "0"], ["--port", "70000", "--data", "/tmp/x"],
            ["--port", "0", "--data", "/tmp/x", "--bogus"],
            ["--port"],
        ])
    func usage(arguments: [String]) async throws {
        let server = try ChildProcess(syncServer: arguments)
        #expect(try await server.waitForExit() == 64)
        #expect(server.stderr.contains("usage: sync-server"))
    }

    @Test("--help lists every option and exits 0")
    func help() async throws {
        let server = try ChildProcess(syncServer: ["--help"])
        #expect(try await server.waitForExit() == 0)
        for option in [
            "--port", "--data", "--host", "--api-keys", "--max-message-bytes", "--log-level", "--hello-timeout",
        ] {
            #expect(server.stdout.contains(option), "\(option)")
        }
    }

    @Test("it prints its ws:// URL, serves, and on SIGTERM closes connections with 1001 and exits 0")
    func serveAndStop() async throws {
        let data = TemporaryDirectory()
        defer { data.remove() }
        let server = try ChildProcess(syncServer: ["--port", "0", "--data", data.url.path])
        let port = try await server.port()
        let connection = WebSocketTransport.forTests().connect(to: .webSocket(host: "127.0.0.1", port: port))
        var events = connection.events.makeAsyncIterator()
        #expect(await events.next() == .opened)
        connection.send(.hello(Hello(credential: .anonymous)))
        #expect(
            await events.next()
                == .message(
                    .welcome(
                        protocolVersion: WireProtocol.version,
                        maximumMessageBytes: UInt32(WireProtocol.maximumMessageSize))))
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
        let first = try ChildProcess(syncServer: ["--port", "0", "--data", data.url.path])
        _ = try await first.port()
        let second = try ChildProcess(syncServer: ["--port", "0", "--data", data.url.path])
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
        var server = try ChildProcess(syncServer: ["--port", "0", "--data", storePath])
        let port = try await server.port()
        // A 32 KiB upload window (a few changesets in flight at once), so the uploads take many round trips
        // and a kill lands among them.
        let writer = try await networkApp(port: port, dirA, uploadWindowBytes: 32 * 1024).login(.anonymous)
            .openSession(partition: "p")
        let reader = try await networkApp(port: port, dirB).login(.anonymous).openSession(partition: "p")
        let seen = Collected(reader.changesets)
        let uploads = Collected(writer.progress(for: .upload, mode: .reportIndefinitely))
        let written = (0..<300).map { index in
            Data(
                (0..<(1024 + (index * 7919 + seed * 131) % 16_000)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ index) })
        }
        for batch in [0..<100, 100..<200, 200..<300] {
            // Each hundred is written while the writer is suspended (durable locally), then uploaded at once:
            // the uploads then take many round trips, and the kill below lands among them.
            writer.suspend()
            for bytes in written[batch] { try await writer.write(bytes) }
            writer.resume()
            guard batch.upperBound < 300 else { break }
            // Kill once some of this hundred reached the reader (downloads in flight, uploads behind).
            try await eventually("the reader got some of this hundred", limit: .seconds(30)) {
                seen.values.count > batch.lowerBound
            }
            _ = try await server.stop(SIGKILL)
            // Mid-upload and mid-download, shown rather than assumed: the killed server's files hold some of the
            // changesets written so far and not all, and the reader lacked some of them too.
            let killed = try FilePartitionStore(directory: storePath)
            let stored = try await killed.summaries(of: "p").count
            await killed.close()
            #expect(stored > batch.lowerBound && stored < batch.upperBound, "\(stored) of \(batch.upperBound) stored")
            #expect(seen.values.count < batch.upperBound, "the reader held all \(batch.upperBound) at the kill")
            server = try ChildProcess(syncServer: ["--port", "\(port)", "--data", storePath])
            _ = try await server.port()
        }
        try await writer.wait(for: .upload)
        // Acknowledged, not only present: the writer's upload progress counts every byte as acknowledged.
        let totalBytes = written.reduce(0) { $0 + $1.count }
        let acknowledged = try #require(uploads.values.last)
        #expect(acknowledged.transferredBytes == totalBytes && acknowledged.transferrableBytes == totalBytes)
        try await eventually("the reader holds all 300", limit: .seconds(40)) { seen.values.count == 300 }
        #expect(seen.values.map(\.data) == written)
        #expect(seen.values.map(\.serverVersion) == Array(1...300))
        #expect(try await server.stop(SIGTERM) == 0)
        let store = try FilePartitionStore(directory: storePath)
        _ = try await store.summaries(of: "p")
        let log = try await store.read(1...1000, of: "p")
        await store.close()
        #expect(log.map(\.data) == written.map { Array($0) })
    }

    @Test("SIGTERM the moment the URL line is read: a clean stop (exit 0), every time; with a client: close code 1001")
    func signalRightAfterURL() async throws {
        let data = TemporaryDirectory()
        defer { data.remove() }
        for round in 0..<10 {
            // The signal goes out from the thread that reads the line, as soon as it arrives.
            let server = try ChildProcess(syncServer: ["--port", "0", "--data", data.url.path], signalOnURL: SIGTERM)
            #expect(try await server.waitForExit() == 0, "round \(round): \(server.stderr)")
            #expect(server.terminationReason == .exit, "round \(round): killed by the signal")
            #expect(server.stdout.contains("sync-server stopped"), "round \(round)")
        }
        let server = try ChildProcess(syncServer: ["--port", "0", "--data", data.url.path])
        let client = WireClient(.webSocket(host: "127.0.0.1", port: try await server.port()))
        try await client.welcome()
        #expect(try await server.stop(SIGTERM) == 0)
        let last = try await client.next()
        guard case .closed(.connectionLost(let reason)) = last else {
            Issue.record("expected a lost connection, got \(last)")
            return
        }
        #expect(reason.contains("1001"), "\(reason)")
    }

    /// Whether this machine has an IPv6 loopback to listen on.
    static let hasIPv6Loopback: Bool = {
        #if canImport(Glibc)
            let descriptor = socket(AF_INET6, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
            let descriptor = socket(AF_INET6, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_addr = in6addr_loopback
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) == 0
            }
        }
    }()

    @Test(
        "--host 127.0.0.1: it listens there and prints that host in its URL; a client reaches it through the parsed URL"
    )
    func hostIPv4() async throws { try await checkHost("127.0.0.1") }

    /// Recorded as skipped (not passed) on a machine without an IPv6 loopback.
    @Test(
        "--host ::1: it listens there and prints that host in its URL; a client reaches it through the parsed URL",
        .enabled(if: SyncServerProcessTests.hasIPv6Loopback, "this machine has no IPv6 loopback"))
    func hostIPv6() async throws { try await checkHost("::1") }

    private func checkHost(_ host: String) async throws {
        let data = TemporaryDirectory()
        defer { data.remove() }
        let server = try ChildProcess(syncServer: ["--port", "0", "--data", data.url.path, "--host", host])
        _ = try await server.port()
        let url = try #require(server.stdout.firstMatch(of: /ws:\/\/\S+/).map { String($0.0) })
        let endpoint = try SyncEndpoint(url: url)
        guard case .webSocket(let printedHost, _) = endpoint.kind else {
            Issue.record("the printed URL \(url) is not a WebSocket address")
            return
        }
        #expect(printedHost == host, "\(url)")
        let client = WireClient(endpoint)
        try await client.welcome()
        #expect(try await server.stop(SIGTERM) == 0)
    }

    @Test(
        "--max-message-bytes 4096: a changeset over the derived changeset limit gets messageTooLarge; a larger message is closed with 1009"
    )
    func maximumMessageBytes() async throws {
        let data = TemporaryDirectory()
        defer { data.remove() }
        let server = try ChildProcess(syncServer: [
            "--port", "0", "--data", data.url.path, "--max-message-bytes", "4096",
        ])
        let port = try await server.port()
        let limit = WireProtocol.maximumChangesetSize(forMessageSize: 4096)
        let client = WireClient(.webSocket(host: "127.0.0.1", port: port))
        try await client.welcome()
        client.send(.bind(Bind(sessionID: 1, partition: "p", clientFileID: 1, downloadedVersion: 0)))
        guard case .download(var first) = try await client.nextMessage() else {
            Issue.record("expected the first download")
            return
        }
        #expect(first.historyID != nil)
        first.historyID = nil
        #expect(first == Download(sessionID: 1, entries: [], remainingBytes: 0))

        // The largest allowed changeset is stored; one byte more is refused for the session.
        client.send(.upload(Upload(sessionID: 1, changesets: [UploadChangeset(clientVersion: 1, data: bytes(limit))])))
        guard case .download(let acknowledged) = try await client.nextMessage() else {
            Issue.record("expected the acknowledgement")
            return
        }
        #expect(acknowledged.entries == [.acknowledged(serverVersion: 1, clientVersion: 1)])
        client.send(
            .upload(Upload(sessionID: 1, changesets: [UploadChangeset(clientVersion: 2, data: bytes(limit + 1))])))
        guard case .error(let refusal) = try await client.nextMessage() else {
            Issue.record("expected a refusal")
            return
        }
        #expect(refusal.code == .messageTooLarge)
        #expect(refusal.sessionID == 1)

        // A message larger than 4,096 bytes never reaches the sync protocol: 1009 (message too big).
        client.send(.upload(Upload(sessionID: 1, changesets: [UploadChangeset(clientVersion: 2, data: bytes(5000))])))
        let closed = try await client.next()
        guard case .closed(.connectionLost(let reason)) = closed else {
            Issue.record("expected the connection to be closed, got \(closed)")
            return
        }
        #expect(reason.contains("1009"), "\(reason)")
        #expect(try await server.stop(SIGTERM) == 0)
    }

    func bytes(_ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0) } }

    /// `sync-server` under `/bin/sh` with `limit` applied first (`ulimit` arguments).
    func limitedServer(_ limit: String, data: TemporaryDirectory) throws -> ChildProcess {
        try ChildProcess(
            URL(fileURLWithPath: "/bin/sh"),
            ["-c", "ulimit \(limit) && exec \"$0\" \"$@\"", ChildProcess.syncServer.path]
                + ChildProcess.generousHelloTimeout + ["--port", "0", "--data", data.url.path])
    }

    #if os(Linux)
        static let isLinux = true
    #else
        static let isLinux = false
    #endif

    /// The soft and hard limits on open files of process `pid`, from `/proc/PID/limits`.
    func descriptorLimits(of pid: Int32) throws -> (soft: String, hard: String) {
        let limits = try String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8)
        let line = try #require(limits.split(separator: "\n").first { $0.hasPrefix("Max open files") })
        let fields = line.split(separator: " ", omittingEmptySubsequences: true)
        return (String(fields[3]), String(fields[4]))
    }

    @Test("it raises its soft limit on open files to the hard limit at start", .enabled(if: isLinux, "reads /proc"))
    func raisesDescriptorLimit() async throws {
        let data = TemporaryDirectory()
        defer { data.remove() }
        let server = try limitedServer("-S -n 64", data: data)
        _ = try await server.port()
        let limits = try descriptorLimits(of: server.processIdentifier)
        #expect(limits.soft == limits.hard, "\(limits)")
        #expect(limits.soft != "64")
        #expect(try await server.stop(SIGTERM) == 0)
    }

    @Test(
        "out of descriptors at any point of its start or of a client's bind, it never crashes: exit 1 with the error, or serve and stop with 0",
        .enabled(if: isLinux, "descriptor counts of this platform"))
    func descriptorExhaustion() async throws {
        // Below about 9, libdispatch cannot set itself up (it traps or stalls before any code of ours
        // opens a descriptor); from 10 on, every failure is ours to report.
        for limit in 10...20 {
            let data = TemporaryDirectory()
            defer { data.remove() }
            let server = try limitedServer("-n \(limit)", data: data)
            let port: Int
            do {
                port = try await server.port()
            } catch {
                #expect(try await server.waitForExit() == 1, "limit \(limit): \(server.stderr)")
                #expect(server.terminationReason == .exit, "limit \(limit): \(server.stderr)")
                #expect(server.stderr.contains("Too many open files"), "limit \(limit): \(server.stderr)")
                continue
            }
            // Serving with a descriptor or two to spare: a client may not get in, or its bind may fail
            // (typed, retry later); the server carries on either way.
            let client = WireClient(
                .webSocket(host: "127.0.0.1", port: port),
                transport: WebSocketTransport(limits: WebSocketLimits(handshakeTimeout: .seconds(2))))
            if case .opened = try await client.next() {
                client.send(.hello(Hello(credential: .anonymous)))
                #expect(
                    try await client.nextMessage()
                        == .welcome(
                            protocolVersion: WireProtocol.version,
                            maximumMessageBytes: UInt32(WireProtocol.maximumMessageSize)))
                client.send(.bind(Bind(sessionID: 1, partition: "p", clientFileID: 1, downloadedVersion: 0)))
                switch try await client.nextMessage() {
                case .download: break
                case .error(let error): #expect(error.code == .internalError, "limit \(limit): \(error)")
                case let other: Issue.record("limit \(limit): \(other)")
                }
            }
            #expect(try await server.stop(SIGTERM) == 0, "limit \(limit): \(server.stderr)")
            #expect(server.terminationReason == .exit, "limit \(limit)")
        }
    }

    @Test(
        "with 300 open files allowed, 200 partitions (2 descriptors each while loaded) bound and unbound one after another all succeed, and its descriptors stay bounded",
        .enabled(if: isLinux, "counts /proc/PID/fd"))
    func manyPartitions() async throws {
        let data = TemporaryDirectory()
        defer { data.remove() }
        let server = try limitedServer("-n 300", data: data)
        let client = WireClient(.webSocket(host: "127.0.0.1", port: try await server.port()))
        try await client.welcome()
        var most = 0
        for index in 0..<200 {
            client.send(.bind(Bind(sessionID: 1, partition: "p\(index)", clientFileID: 1, downloadedVersion: 0)))
            let bound = try await client.nextMessage()
            guard case .download(let first) = bound, first.entries.isEmpty, first.remainingBytes == 0 else {
                Issue.record("partition \(index): \(bound)")
                break
            }
            client.send(
                .upload(Upload(sessionID: 1, changesets: [UploadChangeset(clientVersion: 1, data: [1, 2, 3])])))
            #expect(
                try await client.nextMessage()
                    == .download(
                        Download(
                            sessionID: 1, entries: [.acknowledged(serverVersion: 1, clientVersion: 1)],
                            remainingBytes: 0, acknowledgedDigests: [CRC32.checksum([1, 2, 3])])))
            client.send(.unbind(sessionID: 1))
            #expect(try await client.nextMessage() == .unbound(sessionID: 1))
            if index % 50 == 49 {
                most = max(
                    most,
                    try FileManager.default.contentsOfDirectory(atPath: "/proc/\(server.processIdentifier)/fd").count)
            }
        }
        // Two per idle partition kept loaded (128 by default), a few for the server itself.
        #expect(most <= 2 * 128 + 32, "\(most) descriptors")
        #expect(try await server.stop(SIGTERM) == 0)
    }

    /// Whether Python's `websockets` package (a third-party RFC 6455 implementation) is installed; CI
    /// installs it, and there the test must run. Probed with a child process, waited for without blocking.
    static func pythonWebSockets() async -> Bool {
        if ProcessInfo.processInfo.environment["CI"] != nil { return true }
        guard
            let probe = try? ChildProcess(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", "import websockets"])
        else { return false }
        return (try? await probe.waitForExit(deadline: .seconds(60))) == 0
    }

    @Test(
        "Python's websockets completes the handshake with sync-server, gets a pong and a welcome, and closes cleanly",
        .enabled("pip install websockets (CI does)") { await pythonWebSockets() })
    func pythonInterop() async throws {
        let data = TemporaryDirectory()
        defer { data.remove() }
        let server = try ChildProcess(syncServer: ["--port", "0", "--data", data.url.path])
        let port = try await server.port()
        let hello = ClientMessage.hello(Hello(credential: .anonymous)).encoded().map { String(format: "%02x", $0) }
            .joined()
        let welcome = ServerMessage.welcome(
            protocolVersion: WireProtocol.version, maximumMessageBytes: UInt32(WireProtocol.maximumMessageSize)
        ).encoded()
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
        let python = try ChildProcess(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", script])
        let status = try await python.waitForExit()
        let text = python.stdout + python.stderr
        #expect(status == 0, "\(text)")
        #expect(text.contains("pong"))
        #expect(text.contains("answer \(welcome)"), "\(text)")
        #expect(text.contains("closed 1000"), "\(text)")
        #expect(try await server.stop(SIGTERM) == 0)
    }
}
