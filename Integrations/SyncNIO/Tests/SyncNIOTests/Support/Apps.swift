import Dispatch
import Foundation
import SyncEngine
import SyncNIO
import TestSupport

/// An app that reaches its server through `transport` (at the transport's endpoint, or `server`), with
/// real timers and short reconnect delays, in a directory of its own.
func nioApp(
    _ transport: any SyncTransport, server: SyncEndpoint, _ directory: TemporaryDirectory
) -> SyncApp {
    SyncApp(
        configuration: SyncApp.Configuration(
            server: server, directory: directory.url, transport: transport,
            backoff: ReconnectBackoff(initialDelay: .milliseconds(20), maximumDelay: .milliseconds(200)),
            connectTimeout: .seconds(120),
            timerExecutor: DispatchQueue(label: "SyncNIOTests.timers"), callbackExecutor: ImmediateExecutor(),
            logLevel: .off))
}

/// One app of a test with its session on a partition, what the session received and the app's errors.
final class TestApp: Sendable {
    let directory = TemporaryDirectory()
    let app: SyncApp
    let session: SyncSession
    let received: Collected<Changeset>
    let errors: Collected<(error: SyncError, session: SyncSession?)>

    init(_ transport: any SyncTransport, server: SyncEndpoint, partition: String = "p") async throws {
        app = nioApp(transport, server: server, directory)
        errors = Collected(app.errors)
        session = try await app.login(.anonymous).openSession(partition: partition)
        received = Collected(session.changesets)
    }

    /// Whether the session received a changeset holding `text`.
    func hasReceived(_ text: String) -> Bool { received.values.contains { Array($0.data) == Array(text.utf8) } }

    /// The `certificateRejected` errors the app reported.
    var certificateErrors: [String] {
        errors.values.compactMap {
            if case .certificateRejected(let reason) = $0.error { reason } else { nil }
        }
    }

    func close() async {
        try? await app.close()
        directory.remove()
    }
}

/// A transport that counts the connections it was asked for, then lets `base` make them.
final class CountingTransport: SyncTransport, @unchecked Sendable {
    // @unchecked Sendable: `count` is used under `lock`; `base` is immutable.
    private let base: any SyncTransport
    private let lock = NSLock()
    private var count = 0

    init(_ base: any SyncTransport) { self.base = base }

    var connections: Int { lock.withLock { count } }

    func connect(to endpoint: SyncEndpoint) -> any SyncClientConnection {
        lock.withLock { count += 1 }
        return base.connect(to: endpoint)
    }
}
