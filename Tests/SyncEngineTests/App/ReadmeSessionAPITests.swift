import Foundation
import SyncEngine
import SyncServer
import TestSupport
import Testing

/// The README's sections on logging, reconnecting, deleting local files and client reset, as written there
/// except that `print` is captured, timers run on a `TestExecutor`, callbacks are immediate, and the
/// server's wall clock is the test's (to send a client past the server's maximum offline time).
@Suite("README: logging, reconnect, deleting local files, client reset", .timeLimit(.minutes(5)))
struct ReadmeSessionAPITests {
    @Test("the README's logging, reconnect and delete-files code behaves as documented")
    func loggingReconnectAndDelete() async throws {
        let printed = Locked<[String]>([])
        let print: @Sendable (Any...) -> Void = { items in
            printed.withLock { $0.append(items.map { "\($0)" }.joined(separator: " ")) }
        }
        let temporary = TemporaryDirectory()
        defer { temporary.remove() }
        let directory = temporary.url
        let server = try await SyncServer.embedded()
        var tokens = Set<SubscriptionToken>()

        // README: Logging
        let app = SyncApp(
            configuration: .init(
                server: server.endpoint, directory: directory,
                timerExecutor: TestExecutor(), callbackExecutor: ImmediateExecutor(),
                logLevel: .info,  // .off costs one comparison per log point
                logger: { event in print(event) }))  // "2026-…Z info sync.client.connection: …"
        app.logs
            .filter { $0.category == "sync.client.connection" }
            .subscribe { event in print("connection:", event.message) }
            .store(in: &tokens)

        let user = try await app.login(.anonymous)
        let session = try await user.openSession(partition: "tasks")
        try await session.write(Data("buy milk".utf8))
        try await session.wait(for: .upload)
        let lines = printed.withLock { $0 }
        #expect(lines.contains { $0.hasPrefix("connection: connecting to") })
        #expect(lines.contains { $0.contains("Z info sync.client.connection: connected to ") })
        #expect(!lines.contains { $0.contains(" debug ") })

        // README: Reconnecting every session at once. First make the session wait to reconnect: the
        // connection drops and the backoff's timer is on the TestExecutor, whose time never moves here,
        // so only reconnect() can bring it back.
        server.dropAllConnections()
        try await eventually("the session waits to reconnect") { session.connectionState.value == .disconnected }
        app.reconnect()  // e.g. when the device's network comes back
        try await eventually("reconnected without the backoff's wait") {
            session.connectionState.value == .connected && server.connectionCount == 1
        }
        try await session.write(Data("and eggs".utf8))
        try await session.wait(for: .upload)

        // README: Deleting local files
        await user.logOut()  // sessions stop, stores unlock
        let again = try await app.login(.anonymous)
        try await app.deleteLocalFiles(for: again, partition: "tasks")  // then openSession downloads afresh

        let store = directory.appendingPathComponent("anonymous").appendingPathComponent("tasks.synclog")
        #expect(!FileManager.default.fileExists(atPath: store.path))
        let fresh = try await again.openSession(partition: "tasks")
        try await fresh.wait(for: .download)
        #expect(Collected(fresh.changesets).values.map(\.data) == [Data("buy milk".utf8), Data("and eggs".utf8)])
        try await app.close()
    }

    @Test("the README's client reset code: the handler and the stream hear .willReset then .didReset")
    func clientReset() async throws {
        let printed = Locked<[String]>([])
        let print: @Sendable (Any...) -> Void = { items in
            printed.withLock { $0.append(items.map { "\($0)" }.joined(separator: " ")) }
        }
        let temporary = TemporaryDirectory()
        defer { temporary.remove() }
        let directory = temporary.url
        let clock = ServerClock()
        let server = try await SyncServer.embedded(
            configuration: .init(maximumOfflineTime: .seconds(30 * 86_400), clock: clock.read))
        var tokens = Set<SubscriptionToken>()

        // README: Client reset
        let app = SyncApp(
            configuration: .init(
                server: server.endpoint, directory: directory,
                timerExecutor: TestExecutor(), callbackExecutor: ImmediateExecutor(),
                clientResetMode: .recoverUnsyncedChanges,  // default; or .discardUnsyncedChanges, .manual
                clientResetHandler: { event, session in
                    // On the session's callback executor; the reset waits for .willReset to return.
                    if case .willReset(let reset) = event {
                        print("\(session.partition): \(reset.unsyncedChanges.count) changesets the server lacks")
                    }
                }))
        let session = try await app.login(.anonymous).openSession(partition: "tasks")
        session.clientResets
            .subscribe { event in print(event) }  // .willReset(…), then .didReset(…)
            .store(in: &tokens)

        // Offline past the server's maximum, with one changeset the server never saw.
        try await session.wait(for: .download)
        session.suspend()
        try await serverNoticed(server, connections: 0)
        try await session.write(Data("offline".utf8))
        clock.advance(days: 31)
        session.resume()
        try await eventually("reset") { printed.withLock { $0.count } == 3 }
        try await session.wait(for: .upload)
        let lines = printed.withLock { $0 }
        #expect(lines[0] == "tasks: 1 changesets the server lacks")
        #expect(lines[1].hasPrefix("willReset("))
        #expect(lines[2].hasPrefix("didReset("))
        #expect(try await server.changesets(in: "tasks").map(\.data) == [Array("offline".utf8)])
        try await app.close()
    }
}
