import Foundation
import SyncWire
import TestSupport
import Testing

@testable import SyncNetwork

/// One memory budget for the input all of a listener's connections hold (frames and messages received in
/// part, `WebSocketLimits.maximumBufferedInputBytes`, issue 23 item 3): past it the connection holding
/// the most is closed with 1013 and its bytes dropped, over real loopback sockets.
@Suite(.timeLimit(.minutes(5))) struct InputBudgetTests {
    /// An upload of about 120 KiB (which the echo acceptor ignores).
    static let message = ClientMessage.upload(
        Upload(
            sessionID: 1, changesets: [UploadChangeset(clientVersion: 1, data: [UInt8](repeating: 5, count: 120 << 10))]
        )
    ).encoded()
    /// The upload in a masked binary frame.
    let frame = clientFrame(opcode: 2, payload: Self.message)
    /// The frame's header (a 64-bit length and the masking key): once it has arrived, the server holds the
    /// payload's bytes received so far (`WebSocketPartialFrame`), not the header's.
    var headerBytes: Int { frame.count - Self.message.count }

    /// The first `bytes` of `frame`: a frame received in part.
    func partialFrame(sending bytes: Int) -> [UInt8] { Array(frame.prefix(bytes)) }

    @Test(
        "three clients stall in frames of 100, 80 and 90 KiB against a 256 KiB budget: the largest is closed with 1013, the total stays within the budget, and a client that talks carries on"
    )
    func largestHolderIsClosed() async throws {
        let limits = WebSocketLimits(
            maximumMessageBytes: 128 << 10, closeTimeout: .seconds(1), maximumBufferedInputBytes: 256 << 10)
        let listener = try await startListener(limits: limits)
        let port = listener.port
        let talker = WebSocketTransport.forTests().connect(to: .webSocket(host: "127.0.0.1", port: port))
        var events = talker.events.makeAsyncIterator()
        #expect(await events.next() == .opened)

        let sockets = try await offPool { () -> UncheckedBox<[RawSocket]> in
            let sockets = try (0..<3).map { _ in try RawSocket(port: port) }
            for socket in sockets { try socket.upgrade() }
            return UncheckedBox(sockets)
        }
        let (first, second, third) = (
            UncheckedBox(sockets.value[0]), UncheckedBox(sockets.value[1]), UncheckedBox(sockets.value[2])
        )
        // Each partial frame is read whole before the next is sent, so the order of holders is known.
        var expected = 0
        for (socket, kibibytes) in [(first, 100), (second, 80)] {
            let bytes = partialFrame(sending: kibibytes << 10)
            try await offPool { try socket.value.send(bytes) }
            expected += bytes.count - headerBytes
            let total = expected
            try await eventually("the server to hold \(total) bytes") { await listener.bufferedInputBytes == total }
        }
        let last = partialFrame(sending: 90 << 10)
        try await offPool { try third.value.send(last) }

        // 100 + 80 + 90 KiB is past 256 KiB: the first (the largest) is closed with 1013 and dropped.
        let code = try await offPool { try first.value.readCloseCode() }
        #expect(code == WebSocketCloseCode.tryAgainLater.rawValue)
        let remaining = partialFrame(sending: 80 << 10).count + last.count - 2 * headerBytes
        try await eventually("the server to hold the other two's bytes") {
            await listener.bufferedInputBytes == remaining
        }
        #expect(remaining <= limits.maximumBufferedInputBytes)

        // The others are not closed: they finish their frames (the acceptor ignores them) and are answered.
        talker.send(.ping(id: 7))
        #expect(await events.next() == .message(.pong(id: 7)))
        for (socket, sent) in [(second, 80 << 10), (third, 90 << 10)] {
            let rest = Array(frame.dropFirst(sent))
            try await offPool { try socket.value.send(rest) }
        }
        try await eventually("the finished frames to release their bytes") { await listener.bufferedInputBytes == 0 }
        // The first is gone once its close handshake ends (it never answers: the close timeout); the talker
        // and the two others stay open.
        try await eventually("only the first to be closed") { await listener.openConnectionCount == 3 }
        talker.close()
        await listener.shutDown()
    }

    @Test("a budget below two maximum messages is raised to two, so one maximum-size message always fits")
    func budgetHoldsTwoMessages() {
        let limits = WebSocketLimits(maximumMessageBytes: 1 << 20, maximumBufferedInputBytes: 1 << 10)
        #expect(InputBudget(limits: limits).limit == 2 << 20)
        #expect(InputBudget(limits: WebSocketLimits()).limit == 256 << 20)
    }
}
