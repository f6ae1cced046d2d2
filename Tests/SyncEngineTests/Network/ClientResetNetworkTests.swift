import Dispatch
import Foundation
import SyncServer
import SyncWire
import TestSupport
import Testing

@testable import SyncEngine

/// Client reset over real sockets: a WebSocket server with a file store and a maximum offline time (its
/// wall clock set by the test), apps with the default transport. Waits are for events, with deadlines.
@Suite(.timeLimit(.minutes(5))) struct ClientResetNetworkTests {
    private func app(
        _ endpoint: SyncEndpoint, _ directory: TemporaryDirectory, recorder: ResetRecorder? = nil
    )
        -> SyncApp
    {
        SyncApp(
            configuration: .init(
                server: endpoint, directory: directory.url,
                backoff: ReconnectBackoff(initialDelay: .milliseconds(20), maximumDelay: .milliseconds(200)),
                timerExecutor: DispatchQueue(label: "ClientResetNetworkTests.timers"),
                callbackExecutor: ImmediateExecutor(), logLevel: .off, clientResetHandler: recorder?.handler))
    }

    @Test(
        "over loopback WebSocket: a client offline past the maximum resets, recovers its unsynced changeset once, and the other client receives it"
    )
    func resetOverTheNetwork() async throws {
        let data = TemporaryDirectory()
        let (dirA, dirB) = (TemporaryDirectory(), TemporaryDirectory())
        defer {
            data.remove()
            dirA.remove()
            dirB.remove()
        }
        let clock = ServerClock()
        let store = try FilePartitionStore(directory: data.url.path)
        let server = try await SyncServer.listeningForTests(
            configuration: .init(store: store, maximumOfflineTime: .seconds(30 * 86_400), clock: clock.read))
        let endpoint = try #require(server.webSocketEndpoint)
        let recorder = ResetRecorder()
        let appA = app(endpoint, dirA, recorder: recorder)
        let appB = app(endpoint, dirB)
        let a = try await appA.login(.anonymous).openSession(partition: "p")
        let b = try await appB.login(.anonymous).openSession(partition: "p")
        let seenByB = Collected(b.changesets)
        try await a.write(payload(1))
        try await a.wait(for: .upload)
        a.suspend()
        try await serverNoticed(server, connections: 1)  // A was last seen now
        try await a.write(payload(2))
        clock.advance(days: 31)
        try await b.write(payload(11))
        try await b.wait(for: .upload)
        a.resume()
        try await eventually("A reset", limit: .seconds(20)) { recorder.log.count == 2 }
        try await a.wait(for: .upload)
        try await a.wait(for: .download)
        let expected = [1, 11, 2].map { Array(payload(UInt8($0))) }
        #expect(try await server.changesets(in: "p").map(\.data) == expected)
        try await eventually("B has all three", limit: .seconds(20)) { seenByB.values.count == 3 }
        #expect(seenByB.bytes == expected)
        #expect(Collected(a.changesets).bytes == expected)
        #expect(recorder.log == ["handler willReset p", "handler didReset p"])
        try await appA.close()
        try await appB.close()
        await server.stop()
        await store.close()
    }
}
