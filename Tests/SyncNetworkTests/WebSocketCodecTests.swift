import Testing

@testable import SyncNetwork

@Suite struct HandshakeTests {
    @Test("SHA-1 and Base64 match published vectors")
    func digestVectors() {
        func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
        #expect(hex(SHA1.digest(Array("abc".utf8))) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(hex(SHA1.digest([])) == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
        let long = Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)
        #expect(hex(SHA1.digest(long)) == "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
        #expect(Base64.encode(Array("foobar".utf8)) == "Zm9vYmFy")
        #expect(Base64.encode(Array("fooba".utf8)) == "Zm9vYmE=")
        #expect(Base64.encode(Array("foob".utf8)) == "Zm9vYg==")
        #expect(Base64.decode("Zm9vYg==") == Array("foob".utf8))
        #expect(Base64.decode("Zm9vYg=") == nil)
        #expect(Base64.decode("Zm=vYg==") == nil)
        #expect(Base64.decode("Zm9v!mE=") == nil)
    }

    @Test("the accept value of RFC 6455's example key is the RFC's")
    func rfcExample() {
        #expect(WebSocketHandshake.acceptValue(forKey: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    @Test("a valid upgrade request is answered 101 with the accept value; header names and tokens are case-insensitive")
    func acceptsUpgrade() {
        let request = Array(
            "GET /chat HTTP/1.1\r\nhost: x\r\nUPGRADE: WebSocket\r\nConnection: keep-alive, Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nsec-websocket-version: 13\r\n\r\n"
                .utf8)
        guard case .accept(let response) = WebSocketHandshake.answer(request: request[...]) else {
            Issue.record("refused a valid request")
            return
        }
        let text = String(decoding: response, as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 101 Switching Protocols\r\n"))
        #expect(text.contains("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"))
        #expect(WebSocketHandshake.refusal(ofResponse: response[...], key: "dGhlIHNhbXBsZSBub25jZQ==") == nil)
        #expect(WebSocketHandshake.refusal(ofResponse: response[...], key: "AAAAAAAAAAAAAAAAAAAAAA==") != nil)
    }

    @Test(
        "requests that are not upgrades are refused with the right status",
        arguments: [
            (
                "POST / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
                400
            ),
            (
                "GET / HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
                400
            ),
            (
                "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: c2hvcnQ=\r\nSec-WebSocket-Version: 13\r\n\r\n",
                400
            ),
            (
                "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 8\r\n\r\n",
                426
            ),
            ("GET / HTTP/1.0\r\n\r\n", 400),
            ("\u{1}\u{2}garbage\r\n\r\n", 400),
        ])
    func refusals(request: String, status: Int) {
        guard case .refuse(let response, _) = WebSocketHandshake.answer(request: Array(request.utf8)[...]) else {
            Issue.record("accepted \(request)")
            return
        }
        #expect(String(decoding: response, as: UTF8.self).hasPrefix("HTTP/1.1 \(status) "))
    }
}

@Suite struct FrameCodecTests {
    @Test(
        "frames of every length form round-trip, masked (client) and unmasked (server)",
        arguments: [0, 1, 125, 126, 65535, 65536, 200_000])
    func roundTrip(length: Int) throws {
        let payload = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let masked = WebSocketFrame.encode(opcode: .binary, payload: payload, maskingKey: (1, 2, 3, 4))
        let serverDecoder = WebSocketFrameDecoder(reader: .server, maximumMessageBytes: 1 << 20)
        let decoded = try #require(try serverDecoder.decode(masked, from: 0))
        #expect(decoded.frame == WebSocketFrame(opcode: .binary, payload: payload))
        #expect(decoded.consumed == masked.count)
        // The header says how long the length field is: 2, 4 or 10 bytes, plus 4 of mask.
        let headerSize = length <= 125 ? 2 : length <= 65535 ? 4 : 10
        #expect(masked.count == headerSize + 4 + length)

        let plain = WebSocketFrame.encode(opcode: .binary, payload: payload, maskingKey: nil)
        let clientDecoder = WebSocketFrameDecoder(reader: .client, maximumMessageBytes: 1 << 20)
        #expect(try clientDecoder.decode(plain, from: 0)?.frame.payload == payload)
        // Every proper prefix needs more bytes.
        for cut in [0, 1, headerSize - 1, plain.count - 1] where cut >= 0 && cut < plain.count {
            #expect(try clientDecoder.decode(Array(plain[0..<cut]), from: 0) == nil)
        }
    }

    static let brokenFrames: [([UInt8], UInt16)] = [
        (clientFrame(rsv: 4, opcode: 2, payload: [1]), 1002),
        (clientFrame(opcode: 3, payload: [1]), 1002),
        (clientFrame(opcode: 2, payload: [1], masked: false), 1002),
        (clientFrame(fin: false, opcode: 9, payload: []), 1002),
        (clientFrame(opcode: 9, payload: [UInt8](repeating: 0, count: 126)), 1002),
        (Array(clientFrame(opcode: 2, payload: [], declaredLength: 1 << 30).prefix(14)), 1009),
        (Array(clientFrame(opcode: 2, payload: [], declaredLength: 1 << 63).prefix(14)), 1002),
    ]

    @Test("frames that break RFC 6455 are refused with 1002 or 1009 from their header alone", arguments: brokenFrames)
    func violations(bytes: [UInt8], code: UInt16) {
        let decoder = WebSocketFrameDecoder(reader: .server, maximumMessageBytes: 1 << 20)
        #expect(throws: WebSocketViolation.self) { _ = try decoder.decode(bytes, from: 0) }
        do {
            _ = try decoder.decode(bytes, from: 0)
        } catch {
            #expect(error.code.rawValue == code, "\(error.reason)")
        }
    }

    @Test("a masked frame from a server is refused by the client")
    func maskedFromServer() {
        let decoder = WebSocketFrameDecoder(reader: .client, maximumMessageBytes: 1 << 20)
        let frame = WebSocketFrame.encode(opcode: .binary, payload: [1], maskingKey: (9, 9, 9, 9))
        #expect(throws: WebSocketViolation(code: .protocolError, reason: "a masked frame from a server")) {
            _ = try decoder.decode(frame, from: 0)
        }
    }
}

@Suite struct MessageAssemblerTests {
    typealias Event = WebSocketMessageAssembler.Event

    @Test("fragments join into one message; control frames between them pass at once")
    func fragments() throws {
        var assembler = WebSocketMessageAssembler(maximumMessageBytes: 100)
        #expect(try assembler.take(WebSocketFrame(isFinal: false, opcode: .binary, payload: [1, 2])) == nil)
        #expect(try assembler.take(WebSocketFrame(opcode: .ping, payload: [7])) == .ping([7]))
        #expect(try assembler.take(WebSocketFrame(isFinal: false, opcode: .continuation, payload: [3])) == nil)
        #expect(try assembler.take(WebSocketFrame(opcode: .continuation, payload: [4])) == .binary([1, 2, 3, 4]))
        #expect(try assembler.take(WebSocketFrame(opcode: .text, payload: Array("héllo".utf8))) == .text("héllo"))
    }

    @Test("continuations out of place, oversized messages, bad UTF-8 and bad close frames get their codes")
    func violations() {
        func code(_ frames: [WebSocketFrame], limit: Int = 10) -> UInt16? {
            var assembler = WebSocketMessageAssembler(maximumMessageBytes: limit)
            do {
                for frame in frames { _ = try assembler.take(frame) }
                return nil
            } catch {
                return error.code.rawValue
            }
        }
        #expect(code([WebSocketFrame(opcode: .continuation, payload: [1])]) == 1002)
        #expect(
            code([
                WebSocketFrame(isFinal: false, opcode: .binary, payload: [1]),
                WebSocketFrame(opcode: .binary, payload: [2]),
            ])
                == 1002)
        #expect(
            code([
                WebSocketFrame(isFinal: false, opcode: .binary, payload: [UInt8](repeating: 0, count: 6)),
                WebSocketFrame(opcode: .continuation, payload: [UInt8](repeating: 0, count: 6)),
            ]) == 1009)
        #expect(code([WebSocketFrame(opcode: .text, payload: [0xC3, 0x28])]) == 1007)
        // A UTF-8 sequence split across fragments is fine once joined.
        #expect(
            code([
                WebSocketFrame(isFinal: false, opcode: .text, payload: [0xC3]),
                WebSocketFrame(opcode: .continuation, payload: [0xA9]),
            ]) == nil)
        #expect(code([WebSocketFrame(opcode: .close, payload: [3])]) == 1002)
        for invalid: UInt16 in [0, 999, 1004, 1005, 1006, 1015, 1016, 2999, 5000] {
            #expect(
                code([WebSocketFrame(opcode: .close, payload: [UInt8(invalid >> 8), UInt8(invalid & 0xFF)])]) == 1002,
                "\(invalid)")
        }
        for valid: UInt16 in [1000, 1001, 1003, 1007, 1011, 3000, 4999] {
            #expect(
                code([WebSocketFrame(opcode: .close, payload: [UInt8(valid >> 8), UInt8(valid & 0xFF)])]) == nil,
                "\(valid)")
        }
        #expect(code([WebSocketFrame(opcode: .close, payload: [0x03, 0xE8, 0xFF])]) == 1007)
    }

    @Test("a close reason is cut to fit a control frame, never inside a UTF-8 sequence")
    func closeReasonCut() {
        let payload = WebSocketFrame.closePayload(.goingAway, reason: String(repeating: "é", count: 100))
        #expect(payload.count <= 125)
        #expect(String(validating: payload[2...], as: UTF8.self) != nil)
    }
}
