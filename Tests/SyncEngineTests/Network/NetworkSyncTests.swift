import Dispatch
import Foundation
import SyncServer
import SyncWire
import TestSupport
import Testing

@testable import SyncEngine

/// The engine over real loopback WebSocket connections to a networked `SyncServer` with a file store.
/// Waits are for events, each with a generous deadline; nothing asserts on durations.
@Suite(.timeLimit(.minutes(5))) struct NetworkSyncTests {
    /// An app that reaches `server` over the network, with real timers and short reconnect delays.
    func networkApp(
        _ endpoint: SyncEndpoint, _ directory: TemporaryDirectory, uploadWindowBytes: Int = 8 << 20
    ) -> SyncApp {
        SyncApp(
            configuration: .init(
                server: endpoint, directory: directory.url, transport: WebSocketTransport.forTests(),
                backoff: ReconnectBackoff(initialDelay: .milliseconds(20), maximumDelay: .milliseconds(200)),
                timerExecutor: DispatchQueue(label: "NetworkSyncTests.timers"), callbackExecutor: ImmediateExecutor(),
                uploadWindowBytes: uploadWindowBytes, logLevel: .off))
    }

    @Test("two apps converge through a networked server; its file log holds the same bytes in the same order")
    func twoAppsConverge() async throws {
        let data = TemporaryDirectory()
        defer { data.remove() }
        let store = try FilePartitionStore(directory: data.url.appendingPathComponent("server").path)
        let server = try await SyncServer.listeningForTests(configuration: .init(store: store))
        let endpoint = try #require(server.webSocketEndpoint)
        let (dirA, dirB) = (TemporaryDirectory(), TemporaryDirectory())
        defer {
            dirA.remove()
            dirB.remove()
        }
        let writer = try await networkApp(endpoint, dirA).login(.anonymous).openSession(partition: "p")
        let reader = try await networkApp(endpoint, dirB).login(.anonymous).openSession(partition: "p")
        let seen = Collected(reader.changesets)
        var written: [Data] = []
        for index in 0..<50 {
            let bytes = Data((0..<(index * 997 % 20_000 + 1)).map { UInt8(truncatingIfNeeded: $0 &+ index) })
            written.append(bytes)
            try await writer.write(bytes)
        }
        try await writer.wait(for: .upload)
        try await eventually("the reader holds all 50", limit: .seconds(20)) { seen.values.count == 50 }
        #expect(seen.values.map(\.data) == written)
        let log = try await server.changesets(in: "p")
        #expect(log.map(\.data) == written.map { Array($0) })
        #expect(log.map(\.serverVersion) == Array(1...50))
        await server.stop()
    }

    @Test("a wrong API key is refused with a typed error and the session becomes invalid; a forbidden partition too")
    func keys() async throws {
        let data = TemporaryDirectory()
        defer { data.remove() }
        let store = try FilePartitionStore(directory: data.url.appendingPathComponent("server").path)
        let server = try await SyncServer.listeningForTests(
            configuration: .init(store: store, authentication: .apiKeys(["good": ["team/*"]])))
        let endpoint = try #require(server.webSocketEndpoint)
        let directory = TemporaryDirectory()
        defer { directory.remove() }

        let wrongApp = networkApp(endpoint, directory)
        let wrongErrors = Collected(wrongApp.errors)
        let wrong = try await wrongApp.login(.apiKey("bad")).openSession(partition: "team/a")
        try await eventually("invalid", limit: .seconds(20)) { wrong.state.value == .invalid }
        guard case .authenticationFailed = wrongErrors.values.first?.error else {
            Issue.record("expected authenticationFailed, got \(wrongErrors.values)")
            return
        }

        let other = TemporaryDirectory()
        defer { other.remove() }
        let app = networkApp(endpoint, other)
        let errors = Collected(app.errors)
        let user = try await app.login(.apiKey("good"))
        let forbidden = try await user.openSession(partition: "secret")
        let allowed = try await user.openSession(partition: "team/b")
        try await eventually("forbidden is invalid", limit: .seconds(20)) { forbidden.state.value == .invalid }
        #expect(errors.values.first?.session === forbidden)
        guard case .permissionDenied = errors.values.first?.error else {
            Issue.record("expected permissionDenied, got \(errors.values)")
            return
        }
        try await allowed.write(Data([1, 2, 3]))
        try await allowed.wait(for: .upload)
        #expect(try await server.changesets(in: "secret").isEmpty)
        #expect(try await server.changesets(in: "team/b").map(\.data) == [[1, 2, 3]])
        await server.stop()
    }

    @Test("the server restarts mid-upload on the same port and files: the upload resumes, nothing lost or doubled")
    func restartMidUpload() async throws {
        let data = TemporaryDirectory()
        defer { data.remove() }
        let storePath = data.url.appendingPathComponent("server").path
        var store = try FilePartitionStore(directory: storePath)
        var server = try await SyncServer.listeningForTests(configuration: .init(store: store))
        let endpoint = try #require(server.webSocketEndpoint)
        guard case .webSocket(_, let port) = endpoint.kind else {
            Issue.record("a listening server's endpoint is not a WebSocket address: \(endpoint.kind)")
            return
        }
        let (dirA, dirB) = (TemporaryDirectory(), TemporaryDirectory())
        defer {
            dirA.remove()
            dirB.remove()
        }
        // A 16 KiB upload window: four 4 KiB changesets in flight at most, so the 100 go in 25 or more round
        // trips and the stop lands in the middle of them.
        let writer = try await networkApp(endpoint, dirA, uploadWindowBytes: 16 * 1024).login(.anonymous)
            .openSession(partition: "p")
        let reader = try await networkApp(endpoint, dirB).login(.anonymous).openSession(partition: "p")
        let seen = Collected(reader.changesets)
        let uploads = Collected(writer.progress(for: .upload, mode: .reportIndefinitely))
        let written = (0..<200).map { index in Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 ^ index) }) }
        // Written while the writer is suspended (each durable locally), then uploaded all at once.
        writer.suspend()
        for bytes in written.prefix(100) { try await writer.write(bytes) }
        writer.resume()
        let first = server
        try await eventually("some reached the server", limit: .seconds(20)) {
            (try? await first.changesets(in: "p").count) ?? 0 > 0
        }
        await server.stop()
        // Mid-upload, shown rather than assumed: the stopped server holds some of the 100 and not all, and
        // the writer had not had all of them acknowledged.
        let storedAtStop = try await first.changesets(in: "p").count
        #expect(storedAtStop > 0 && storedAtStop < 100, "\(storedAtStop) of 100 stored when the server stopped")
        let acknowledgedAtStop = uploads.values.last?.transferredBytes ?? 0
        #expect(acknowledgedAtStop < 100 * 4096, "\(acknowledgedAtStop) bytes acknowledged when the server stopped")
        await store.close()
        for bytes in written.suffix(100) { try await writer.write(bytes) }
        store = try FilePartitionStore(directory: storePath)
        server = try await SyncServer.listeningForTests(port: port, configuration: .init(store: store))
        try await writer.wait(for: .upload)
        // Acknowledged, not only present: the writer's upload progress counts all 200 as acknowledged.
        let acknowledged = try #require(uploads.values.last)
        #expect(acknowledged.transferredBytes == 200 * 4096 && acknowledged.transferrableBytes == 200 * 4096)
        try await eventually("the reader holds all 200", limit: .seconds(20)) { seen.values.count == 200 }
        #expect(seen.values.map(\.data) == written)
        #expect(try await server.changesets(in: "p").map(\.data) == written.map { Array($0) })
        await server.stop()
    }

    @Test(
        "connect timeout over a real socket: a server that accepts TCP and never answers → .disconnected, then a retry")
    func connectTimeout() async throws {
        let silent = try SilentListener()
        defer { silent.stop() }
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        // Real timers on a dispatch queue, short on purpose; nothing below measures how long anything took.
        let app = SyncApp(
            configuration: .init(
                server: .webSocket(host: "127.0.0.1", port: silent.port), directory: directory.url,
                transport: WebSocketTransport.forTests(),
                backoff: ReconnectBackoff(initialDelay: .milliseconds(20), maximumDelay: .milliseconds(100)),
                connectTimeout: .milliseconds(200), timerExecutor: DispatchQueue(label: "NetworkSyncTests.timers"),
                callbackExecutor: ImmediateExecutor(), logLevel: .off))
        let errors = Collected(app.errors)
        let session = try await app.login(.anonymous).openSession(partition: "p")
        let states = Collected(session.connectionState)
        try await eventually("a second attempt after a timed-out one", limit: .seconds(20)) {
            silent.acceptedCount >= 2 && errors.values.count { $0.error == .connectTimedOut } >= 1
        }
        // connecting → disconnected (the timeout) → connecting again (the retry), never connected.
        let seen = states.values
        let firstConnecting = try #require(seen.firstIndex(of: .connecting))
        let disconnected = try #require(seen[firstConnecting...].firstIndex(of: .disconnected))
        #expect(seen[disconnected...].contains(.connecting), "\(seen)")
        #expect(!seen.contains(.connected))
        #expect(errors.values.allSatisfy { $0.error == .connectTimedOut }, "\(errors.values.map(\.error))")
        try await app.close()
    }
}
