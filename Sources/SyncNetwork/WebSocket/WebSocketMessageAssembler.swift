/// Joins data frames into messages and sorts out control frames (RFC 6455 §5.4–5.5, §8.1).
///
/// - A `continuation` with no message started, or a new `text`/`binary` frame while one is unfinished:
///   1002.
/// - A message whose fragments add up to more than `maximumMessageBytes`: 1009.
/// - A message in more than `maximumFragments` frames, or with a fragment other than its last carrying
///   fewer than `minimumFragmentBytes`: 1008 (a peer that makes the server work per tiny frame).
/// - A text message that is not valid UTF-8: 1007 (checked once the message is complete).
/// - A close frame with a 1-byte payload or a code that may not appear on the wire: 1002; with a reason
///   that is not UTF-8: 1007.
/// Control frames may arrive between the fragments of a message and are passed on at once.
struct WebSocketMessageAssembler {
    /// What a frame amounts to.
    enum Event: Equatable {
        case binary([UInt8])
        case text(String)
        case ping([UInt8])
        case pong([UInt8])
        /// A close frame: its code (`nil` when it carried none) and reason.
        case close(WebSocketCloseCode?, String)
    }

    var maximumMessageBytes: Int
    let maximumFragments: Int
    let minimumFragmentBytes: Int
    private var fragments: [UInt8] = []
    private var fragmentOpcode: WebSocketOpcode?
    private var fragmentCount = 0

    init(maximumMessageBytes: Int, maximumFragments: Int = .max, minimumFragmentBytes: Int = 0) {
        self.maximumMessageBytes = maximumMessageBytes
        self.maximumFragments = maximumFragments
        self.minimumFragmentBytes = minimumFragmentBytes
    }

    /// The bytes of the unfinished message's fragments held so far.
    var bufferedBytes: Int { fragments.count }

    /// Forgets the unfinished message (its connection is being failed).
    mutating func dropFragments() {
        fragments = []
        fragmentOpcode = nil
        fragmentCount = 0
    }

    private mutating func countFragment(_ frame: WebSocketFrame) throws(WebSocketViolation) {
        fragmentCount += 1
        guard fragmentCount <= maximumFragments else {
            throw WebSocketViolation(
                code: .policyViolation, reason: "a message in more than \(maximumFragments) fragments")
        }
        guard frame.isFinal || frame.payload.count >= minimumFragmentBytes else {
            throw WebSocketViolation(
                code: .policyViolation,
                reason: "a fragment of \(frame.payload.count) bytes (at least \(minimumFragmentBytes) but the last)")
        }
    }

    /// Takes the next frame; returns the event it completes, or `nil` for a fragment of an unfinished message.
    mutating func take(_ frame: WebSocketFrame) throws(WebSocketViolation) -> Event? {
        switch frame.opcode {
        case .ping: return .ping(frame.payload)
        case .pong: return .pong(frame.payload)
        case .close: return try Self.close(frame.payload)
        case .text, .binary:
            guard fragmentOpcode == nil else {
                throw WebSocketViolation(code: .protocolError, reason: "a new message before the last one was finished")
            }
            if frame.isFinal { return try Self.complete(frame.opcode, frame.payload) }
            fragmentCount = 0
            try countFragment(frame)
            fragmentOpcode = frame.opcode
            fragments = frame.payload
            return nil
        case .continuation:
            guard let opcode = fragmentOpcode else {
                throw WebSocketViolation(
                    code: .protocolError, reason: "a continuation frame with no message to continue")
            }
            try countFragment(frame)
            guard fragments.count + frame.payload.count <= maximumMessageBytes else {
                throw WebSocketViolation(
                    code: .messageTooBig, reason: "a fragmented message of more than \(maximumMessageBytes) bytes")
            }
            fragments += frame.payload
            guard frame.isFinal else { return nil }
            let message = fragments
            fragments = []
            fragmentOpcode = nil
            return try Self.complete(opcode, message)
        }
    }

    private static func complete(_ opcode: WebSocketOpcode, _ payload: [UInt8]) throws(WebSocketViolation) -> Event {
        guard opcode == .text else { return .binary(payload) }
        guard let text = String(validating: payload, as: UTF8.self) else {
            throw WebSocketViolation(code: .invalidPayload, reason: "a text message that is not valid UTF-8")
        }
        return .text(text)
    }

    private static func close(_ payload: [UInt8]) throws(WebSocketViolation) -> Event {
        if payload.isEmpty { return .close(nil, "") }
        guard payload.count >= 2 else {
            throw WebSocketViolation(code: .protocolError, reason: "a close frame of 1 byte")
        }
        let code = WebSocketCloseCode(rawValue: UInt16(payload[0]) << 8 | UInt16(payload[1]))
        guard code.isValidOnTheWire else {
            throw WebSocketViolation(code: .protocolError, reason: "close code \(code.rawValue) may not be sent")
        }
        guard let reason = String(validating: payload[2...], as: UTF8.self) else {
            throw WebSocketViolation(code: .invalidPayload, reason: "a close reason that is not valid UTF-8")
        }
        return .close(code, reason)
    }
}
