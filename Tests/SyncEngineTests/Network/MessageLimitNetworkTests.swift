import Dispatch
import Foundation
import SyncServer
import SyncWire
import TestSupport
import Testing

@testable import SyncEngine

/// Issue 23 item 2: a server's message limit below 16 MiB travels in `welcome`, and a client whose
/// stored changeset cannot fit refuses to upload it with a typed error instead of being closed with 1009,
/// reconnecting and uploading it again forever.
@Suite(.timeLimit(.minutes(5))) struct MessageLimitNetworkTests {
    func networkApp(_ endpoint: SyncEndpoint, _ directory: TemporaryDirectory) -> SyncApp {
        SyncApp(
            configuration: .init(
                server: endpoint, directory: directory.url, transport: WebSocketTransport.forTests(),
                backoff: ReconnectBackoff(initialDelay: .milliseconds(20), maximumDelay: .milliseconds(200)),
                timerExecutor: DispatchQueue(label: "MessageLimitNetworkTests.timers"),
                callbackExecutor: ImmediateExecutor(), logLevel: .off))
    }

    @Test(
        "a changeset larger than the server's --max-message-bytes: the user sees messageTooLarge, the client does not reconnect, other sessions sync"
    )
    func uploadAboveServerLimit() async throws {
        let limit = 64 << 10
        let server = try await SyncServer.listeningForTests(configuration: .init(maximumMessageBytes: limit))
        let endpoint = try #require(server.webSocketEndpoint)
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let app = networkApp(endpoint, directory)
        let errors = Collected(app.errors)
        let user = try await app.login(.anonymous)
        let big = try await user.openSession(partition: "big")
        let small = try await user.openSession(partition: "small")
        try await big.write(Data(repeating: 7, count: 100 << 10))
        try await eventually("the user sees messageTooLarge") {
            errors.values.contains { if case .messageTooLarge = $0.error { true } else { false } }
        }
        let reported = try #require(errors.values.first { if case .messageTooLarge = $0.error { true } else { false } })
        #expect(reported.session === big)
        if case .messageTooLarge(let bytes, let reportedLimit) = reported.error {
            #expect(bytes > limit)
            #expect(reportedLimit == limit)
        }
        // The connection stays up: the other session uploads, and a round trip after the error passes.
        try await small.write(Data([1, 2, 3]))
        try await small.wait(for: .upload)
        try await small.wait(for: .download)
        #expect(try await server.changesets(in: "small").map(\.data) == [[1, 2, 3]])
        #expect(try await server.changesets(in: "big").isEmpty)
        #expect(
            server.admittedConnectionCount == 1, "the client reconnected \(server.admittedConnectionCount - 1) times")
        #expect(!errors.values.contains { if case .connectionFailed = $0.error { true } else { false } })
        try await app.close()
        await server.stop()
    }
}
