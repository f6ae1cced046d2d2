import NIOCore

/// Sits between an upgraded connection's bytes and the WebSocket frame decoder, and decides what is read.
///
/// Until the client's `hello` is answered with `welcome` it holds the server to what `sync-server` allows
/// an unauthenticated client (docs/Server.md, "Limits"): a data frame, or the data frames of one message
/// together, larger than `limit` is refused with 1009 from the frame's header (before its payload is
/// read); once the first message (the `hello`) has passed, the socket is no longer read and the bytes
/// already received behind it are held, so that nothing else is decoded or buffered until `welcome` is
/// sent (`open()`), when they are passed on and reading resumes. After that it only passes bytes on, and
/// stops reading while the connection's `backlogged` (too much received and not yet taken by the core).
/// Event-loop confined.
final class HelloGate: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer

    enum Phase {
        /// Reading the `hello`: frame headers are checked against the limit.
        case awaitingHello
        /// The `hello` passed; nothing more is read or decoded until `welcome`.
        case awaitingWelcome
        /// `welcome` was sent: bytes pass freely.
        case open
        /// A frame above the limit was refused: the connection is closing; input is dropped.
        case refused
    }

    private(set) var phase = Phase.awaitingHello
    private let limit: Int
    /// Closes the connection with 1009 (set once the connection exists; cleared when removed).
    var refuse: (() -> Void)?
    /// Told when a read is withheld because the connection is backlogged (tests count them).
    var withheldForBacklog: (() -> Void)?
    /// Whether too many received messages wait for the core: reading is paused while `true`.
    var backlogged = false {
        didSet { resumeReadingIfAllowed() }
    }
    private var context: ChannelHandlerContext?
    private var header: [UInt8] = []
    private var payloadLeft = 0
    private var frameEndsHello = false
    private var dataBytes = 0
    private var held: ByteBuffer?
    private var readPending = false

    init(limit: Int) { self.limit = max(limit, 125) }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        refuse = nil
        withheldForBacklog = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        switch phase {
        case .open:
            context.fireChannelRead(data)
            return
        case .awaitingWelcome:
            if held == nil { held = buffer } else { held!.writeBuffer(&buffer) }
            return
        case .refused:
            return
        case .awaitingHello:
            break
        }
        let bytes = buffer.readableBytesView
        var index = bytes.startIndex
        var helloEnded = false
        while index < bytes.endIndex && !helloEnded {
            if payloadLeft > 0 {
                let step = min(payloadLeft, bytes.endIndex - index)
                index += step
                payloadLeft -= step
                helloEnded = payloadLeft == 0 && frameEndsHello
                continue
            }
            header.append(bytes[index])
            index += 1
            guard let length = Self.payloadLength(header) else { continue }
            let opcode = header[0] & 0x0F
            let final = header[0] & 0x80 != 0
            header = []
            let isData = opcode < 8
            guard length <= UInt64(limit), !isData || dataBytes + Int(length) <= limit else {
                phase = .refused
                refuse?()
                return
            }
            if isData { dataBytes += Int(length) }
            frameEndsHello = isData && final
            payloadLeft = Int(length)
            helloEnded = payloadLeft == 0 && frameEndsHello
        }
        guard helloEnded else {
            context.fireChannelRead(data)
            return
        }
        // The `hello` ends at `index`: pass it on, hold the rest, read no more until `welcome`.
        let hello = buffer.readSlice(length: index - bytes.startIndex)!
        phase = .awaitingWelcome
        if buffer.readableBytes > 0 { held = buffer }
        context.fireChannelRead(wrapInboundOut(hello))
    }

    /// The length a complete frame header announces, or `nil` while `header` is not complete yet.
    private static func payloadLength(_ header: [UInt8]) -> UInt64? {
        guard header.count >= 2 else { return nil }
        let short = header[1] & 0x7F
        let extended = short == 126 ? 2 : short == 127 ? 8 : 0
        let masked = header[1] & 0x80 != 0
        guard header.count == 2 + extended + (masked ? 4 : 0) else { return nil }
        guard extended > 0 else { return UInt64(short) }
        return header[2..<(2 + extended)].reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// `welcome` was sent: the bytes held behind the `hello` are passed on and reading resumes.
    func open() {
        guard phase == .awaitingWelcome || phase == .awaitingHello, let context else { return }
        phase = .open
        if let held {
            self.held = nil
            context.fireChannelRead(wrapInboundOut(held))
        }
        resumeReadingIfAllowed()
    }

    func read(context: ChannelHandlerContext) {
        if readingAllowed {
            context.read()
        } else {
            readPending = true
            if backlogged { withheldForBacklog?() }
        }
    }

    private var readingAllowed: Bool { phase != .awaitingWelcome && !backlogged }

    private func resumeReadingIfAllowed() {
        guard readPending, readingAllowed, let context else { return }
        readPending = false
        context.read()
    }
}
