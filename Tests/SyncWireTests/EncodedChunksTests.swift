import SyncWire
import TestSupport
import Testing

/// `ServerMessage.encodedChunks()`: the same bytes as `encoded()`, with a download's large changesets
/// left as the entries' own buffers, so a fan-out encodes a changeset once.
@Suite struct EncodedChunksTests {
    @Test("every sample message: the chunks joined are exactly encoded()")
    func samples() {
        for message in Samples.server {
            #expect(message.encodedChunks().flatMap { $0 } == message.encoded(), "\(message)")
        }
    }

    @Test(
        "random downloads mixing small and large changesets and acknowledgements: the chunks joined are exactly encoded() (seed printed)"
    )
    func randomDownloads() {
        let seed: UInt64 = 0x5EED_C4A7
        print("EncodedChunksTests.randomDownloads seed \(seed)")
        var rng = SeededGenerator(seed: seed)
        for round in 0..<200 {
            let entries = (0..<Int.random(in: 0...6, using: &rng)).map { index -> DownloadEntry in
                if Bool.random(using: &rng) {
                    return .acknowledged(
                        serverVersion: UInt64(index), clientVersion: UInt64.random(in: 0...9, using: &rng))
                }
                let sizes = [0, 1, ServerMessage.sharedChangesetBytes - 1, ServerMessage.sharedChangesetBytes, 70_000]
                let count = sizes.randomElement(using: &rng)!
                return .changeset(
                    serverVersion: UInt64(index), data: (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) })
            }
            let message = ServerMessage.download(
                Download(
                    sessionID: UInt32.random(in: 0...9, using: &rng), entries: entries,
                    remainingBytes: UInt64.random(in: 0...1_000, using: &rng),
                    historyID: Bool.random(using: &rng) ? 42 : nil,
                    acknowledgedDigests: (0..<Int.random(in: 0...2, using: &rng)).map { UInt32($0) }))
            #expect(message.encodedChunks().flatMap { $0 } == message.encoded(), "round \(round)")
        }
    }

    @Test(
        "one large changeset sent to 100 subscribers: every message's chunk is the changeset's own buffer, never a copy"
    )
    func fanOutSharesTheBuffer() {
        let data = (0..<64 * 1024).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let address = data.withUnsafeBufferPointer { $0.baseAddress }
        for sessionID in 1...100 {
            let message = ServerMessage.download(
                Download(
                    sessionID: UInt32(sessionID), entries: [.changeset(serverVersion: 7, data: data)], remainingBytes: 0
                ))
            let chunks = message.encodedChunks()
            let shared = chunks.filter { chunk in chunk.withUnsafeBufferPointer { $0.baseAddress } == address }
            #expect(shared.count == 1, "session \(sessionID): the changeset was copied")
            // Around it, only the message's framing: type, session, count, tag, version, length; the tail.
            #expect(chunks.reduce(0) { $0 + $1.count } - data.count < 64)
        }
    }
}
