import Foundation
import SyncStreams
import SyncWire
import TestSupport
import Testing

@testable import SyncNetwork

/// `WebSocketLimits.closeTimeout` over a real loopback socket: a peer that never answers the server's
/// close frame is cut off anyway, so shutting down ends. The timer is the event loop's (real time), so
/// the test only waits for events, each with a generous deadline; it measures no duration.
@Suite(.timeLimit(.minutes(5))) struct CloseTimeoutTests {
    @Test(
        "a client that never answers the close: the server closes the socket after closeTimeout, and shutDown returns")
    func aClientThatNeverAnswersTheClose() async throws {
        let listener = try await startListener(limits: WebSocketLimits(closeTimeout: .milliseconds(200)))
        let port = listener.port
        // The raw client upgrades, then only reads: it never sends the close frame back.
        let upgraded = Locked(false)
        async let seen: (code: UInt16?, closed: Bool) = onThreadOfItsOwn {
            let socket = try RawSocket(port: port)
            try socket.upgrade()
            upgraded.withLock { $0 = true }
            let code = try socket.readCloseCode()
            return (code, try socket.readUntilClosed())
        }
        try await eventually("the client upgraded") { upgraded.withLock { $0 } }
        try await eventually("the server holds the connection") { await listener.openConnectionCount == 1 }

        let shutDown = Locked(false)
        let shutting = Task {
            await listener.shutDown()
            shutDown.withLock { $0 = true }
        }
        let (code, closed) = try await seen
        #expect(code == 1001)
        #expect(closed, "the server never closed the socket")
        try await eventually("shutDown returned") { shutDown.withLock { $0 } }
        _ = await shutting.value
    }
}

/// Runs blocking `body` on a new thread (never on the cooperative pool) and returns its result.
private func onThreadOfItsOwn<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}
