import Foundation
import SyncServer
import SyncWire
import Testing

@testable import SyncNetwork

/// Every input kept in `Fuzz/Corpus/<target>/` (the seeds, what the fuzzers found interesting, and every
/// crash they found, once fixed) replayed through the same checks as the libFuzzer targets in
/// `Fuzz/Targets` (issue 23, item 10). A corpus file that crashes here crashed the fuzzer.
@Suite(.timeLimit(.minutes(5))) struct FuzzCorpusTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fuzz/Corpus")

    /// The files of one target's corpus (at least one: an empty corpus means the path is wrong).
    func inputs(_ target: String) throws -> [(name: String, bytes: [UInt8])] {
        let directory = Self.corpus.appendingPathComponent(target)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        try #require(!names.isEmpty, "no corpus in \(directory.path)")
        return try names.map { ($0, Array(try Data(contentsOf: directory.appendingPathComponent($0)))) }
    }

    @Test(
        "frame decoder and message assembler: every corpus input decodes or fails with a typed violation, and each frame gathered in pieces as a partial frame is the decoded one"
    )
    func frameDecoder() throws {
        for (name, bytes) in try inputs("frame-decoder") {
            for reader in [WebSocketFrameDecoder.Reader.server, .client] {
                for refusesText in [false, true] {
                    let decoder = WebSocketFrameDecoder(
                        reader: reader, maximumMessageBytes: 4096, refusesText: refusesText)
                    var assembler = WebSocketMessageAssembler(
                        maximumMessageBytes: 4096, maximumFragments: 8, minimumFragmentBytes: 2)
                    var offset = 0
                    do {
                        while let (frame, consumed) = try decoder.decode(bytes, from: offset) {
                            #expect(consumed > 0 && offset + consumed <= bytes.count, "\(name)")
                            let wire = Array(bytes[offset..<(offset + consumed)])
                            #expect(
                                gatheredInPieces(wire, decoder: decoder, seed: bytes.count) == frame,
                                "\(name): a frame gathered in pieces differs from the decoded one")
                            offset += consumed
                            if case .binary(let message) = try assembler.take(frame) {
                                #expect(message.count <= 4096, "\(name)")
                            }
                        }
                    } catch {
                        #expect(error.code.isValidOnTheWire, "\(name): \(error)")
                    }
                }
            }
        }
    }

    /// `wire` (one whole frame) gathered as the fuzz target's `checkPartialFrame` does: its header, then its
    /// payload through a `WebSocketPartialFrame` in pieces sized from `seed`, the last followed by bytes of a
    /// next frame; `nil` if the frame offered room for a byte of the next one.
    func gatheredInPieces(_ wire: [UInt8], decoder: WebSocketFrameDecoder, seed: Int) -> WebSocketFrame? {
        guard let header = try? decoder.header(in: wire, from: 0),
            header.size + header.payloadLength == wire.count
        else { return nil }
        let firstPiece = min(header.payloadLength, seed % 7)
        var partial = WebSocketPartialFrame(header: header, received: wire[header.size..<(header.size + firstPiece)])
        var offset = header.size + firstPiece
        var step = seed % 5 + 1
        while partial.missing > 0 {
            let end = min(wire.count, offset + step)
            // The read that ends the frame may carry the next frame's first bytes.
            let piece = Array(wire[offset..<end]) + (end == wire.count ? [0xEE, 0xEE] : [])
            // As a read does: fills the start of the space the frame offers, never more than it.
            let taken = partial.receive { missing in
                let count = min(piece.count, missing.count)
                piece.withUnsafeBytes { missing.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
                return (count, count)
            }
            guard taken == end - offset else { return nil }
            offset = end
            step = step * 3 % 11 + 1
        }
        return partial.takeFrame()
    }

    @Test("HTTP upgrade, both sides: every corpus input is accepted with 101 or refused with a response")
    func handshake() throws {
        for (name, bytes) in try inputs("handshake") {
            let head = WebSocketHandshake.headEnd(in: bytes[...]).map { bytes[..<$0] } ?? bytes[...]
            switch WebSocketHandshake.answer(request: head) {
            case .accept(let response): #expect(response.starts(with: Array("HTTP/1.1 101".utf8)), "\(name)")
            case .refuse(let response, _): #expect(!response.isEmpty, "\(name)")
            }
            _ = WebSocketHandshake.refusal(ofResponse: head, key: "dGhlIHNhbXBsZSBub25jZQ==")
        }
    }

    @Test("wire codec: every corpus input that decodes re-encodes to the same message")
    func wireCodec() throws {
        var decoded = 0
        for (name, bytes) in try inputs("wire-codec") {
            if let message = try? ClientMessage(decoding: bytes, maximumSize: 1 << 20) {
                decoded += 1
                #expect(try ClientMessage(decoding: message.encoded(), maximumSize: 1 << 21) == message, "\(name)")
            }
            if let message = try? ServerMessage(decoding: bytes, maximumSize: 1 << 20) {
                decoded += 1
                #expect(try ServerMessage(decoding: message.encoded(), maximumSize: 1 << 21) == message, "\(name)")
            }
        }
        #expect(decoded > 0)
    }

    @Test("API keys file: every corpus input parses to non-empty keys and patterns, or a typed error")
    func apiKeys() throws {
        for (name, bytes) in try inputs("api-keys") {
            guard let text = String(validating: bytes, as: UTF8.self), let keys = try? APIKeysFile.parse(text) else {
                continue
            }
            for (key, patterns) in keys {
                #expect(!patterns.isEmpty, "\(name)")
                for field in [key] + Array(patterns) {
                    #expect(!field.isEmpty, "\(name)")
                    #expect(
                        !field.unicodeScalars.contains { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "#" },
                        "\(name): \(field.debugDescription)")
                }
            }
        }
    }
}
