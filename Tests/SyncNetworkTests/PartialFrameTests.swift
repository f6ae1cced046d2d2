import Foundation
import SyncStreams
import SyncWire
import TestSupport
import Testing

@testable import SyncNetwork

/// A large frame whose payload arrives over several reads is read straight into its own array
/// (`WebSocketPartialFrame`, issue 26: one copy of each byte from the socket to the frame), over real
/// loopback sockets.
@Suite(.timeLimit(.minutes(5))) struct PartialFrameTests {
    @Test(
        "a 1 MiB masked frame sent in random pieces, the last one carrying the next frame, arrives intact and unmasked before it; the server holds exactly the payload received so far"
    )
    func pieces() async throws {
        let seed: UInt64 = 0x2626_0001
        print("PartialFrameTests.pieces: seed \(seed)")
        var random = SplitMix(seed: seed)
        let data = (0..<(1 << 20)).map { _ in UInt8.random(in: 0...255, using: &random) }
        let message = ClientMessage.upload(
            Upload(sessionID: 3, changesets: [UploadChangeset(clientVersion: 1, data: data)])
        ).encoded()
        let frame = clientFrame(opcode: 2, payload: message)
        let headerBytes = frame.count - message.count
        let next = clientFrame(opcode: 2, payload: ClientMessage.ping(id: 9).encoded())

        let acceptor = RecordingAcceptor()
        let listener = try await WebSocketListener.start(
            host: "127.0.0.1", port: 0, limits: WebSocketLimits(), acceptor: acceptor)
        let port = listener.port
        let socket = try await offPool { () -> UncheckedBox<RawSocket> in
            let socket = try RawSocket(port: port)
            try socket.upgrade()
            return UncheckedBox(socket)
        }
        // Pieces of 1 byte to 96 KiB; the first takes the header and at least one payload byte.
        var cuts = [headerBytes + 1 + Int.random(in: 0..<1000, using: &random)]
        while let last = cuts.last, last < frame.count {
            cuts.append(min(frame.count, last + 1 + Int.random(in: 0..<(96 << 10), using: &random)))
        }
        var sent = 0
        for cut in cuts.dropLast() {
            let piece = Array(frame[sent..<cut])
            try await offPool { try socket.value.send(piece) }
            sent = cut
            let held = sent - headerBytes
            try await eventually("the server to hold \(held) payload bytes (seed \(seed))") {
                await listener.bufferedInputBytes == held
            }
        }
        let last = Array(frame[sent...]) + next
        try await offPool { try socket.value.send(last) }

        let pong = try await offPool { try socket.value.readFrame() }
        #expect(pong.map { try? ServerMessage(decoding: $0.payload) } == .pong(id: 9), "seed \(seed)")
        let received = acceptor.messages.withLock { $0 }
        #expect(received.count == 2, "seed \(seed)")
        guard case .upload(let upload)? = received.first else {
            Issue.record("the large frame's message did not arrive first (seed \(seed))")
            return
        }
        #expect(upload.changesets.map(\.data) == [data], "seed \(seed): \(cuts.count) pieces")
        try await eventually("the finished frame to release its bytes") { await listener.bufferedInputBytes == 0 }
        await listener.shutDown()
    }
}

/// Records every message its connections receive, in order, and answers pings.
private final class RecordingAcceptor: SyncConnectionAcceptor {
    let messages = Locked<[ClientMessage]>([])

    func accept(_ connection: any SyncServerConnection) -> Bool {
        Task {
            for await message in connection.incoming {
                messages.withLock { $0.append(message) }
                if case .ping(let id) = message { connection.send(.pong(id: id)) }
            }
        }
        return true
    }
}
