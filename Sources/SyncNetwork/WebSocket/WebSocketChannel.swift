import Synchronization

/// One WebSocket connection on an event loop: the opening handshake, frames in and out, ping/pong, the
/// close handshake and backpressure, for either role.
///
/// Confined to its loop's thread: every method must be called there (other threads use
/// `loop.execute { channel.… }`). What it does:
/// - **Client:** waits for the non-blocking connect, sends the upgrade request, checks the `101` answer.
///   **Server:** reads the request within `handshakeTimeout` and `maximumHandshakeBytes`, answers it.
/// - Reads at most 1 MiB per wakeup (fairness between connections); stops reading while the delegate says
///   it holds too much (`received` returns `false`), so TCP slows a fast sender down.
/// - Answers pings with pongs; text messages are refused with 1003 (the sync protocol is binary).
/// - Control frames and handshake text queued but not written (a peer that pings and never reads) are
///   bounded by `limits.maximumQueuedControlBytes`: past it the connection is dropped.
/// - **Server, before authentication** (when `limits.helloTimeout` or
///   `limits.maximumUnauthenticatedMessageBytes` is set): frames and messages are limited to the
///   smaller size; after the first message the channel reads nothing more until `authenticated()` (so
///   nothing else is buffered); and the connection is closed with 1008 if `authenticated()` is not
///   called within `helloTimeout` of the handshake (pings do not extend it).
/// - A peer's protocol violation fails the connection: a close frame with the violation's code, then
///   the socket is closed.
/// - Close handshake: the side that closes sends a close frame and waits (at most `closeTimeout`) for the
///   peer's; the server then closes TCP first, the client waits for it to (RFC 6455 §7.1.1).
final class WebSocketChannel: EventLoopHandler, @unchecked Sendable {
    // @unchecked Sendable: confined to `loop`'s thread (see above).

    enum Role {
        case server
        /// A client that sends `request` and expects the answer for `key`.
        case client(key: String, request: [UInt8])
    }

    private enum Phase { case connecting, handshaking, open, closed }

    let loop: EventLoop
    let descriptor: Int32
    let role: Role
    let limits: WebSocketLimits
    var delegate: (any WebSocketChannelDelegate)?
    /// Server: counts the socket's bytes for metrics (`nil`: not counted).
    var counters: ListenerCounters?
    /// Server: the listener's budget for the input its connections hold (`nil`: none).
    var inputBudget: InputBudget?

    private var phase: Phase
    private var input: [UInt8] = []
    private var inputStart = 0
    /// A large frame whose payload is arriving (see `WebSocketPartialFrame`). While it is set, `input`
    /// holds no unread byte: what is read goes to the frame until it is whole.
    private var partialFrame: WebSocketPartialFrame?
    /// Frames and handshake text not written yet (written with one gathering write per 64 chunks).
    private var output = WebSocketOutput()
    /// When bytes last arrived (or the channel was made): what an idle check compares against.
    private(set) var lastReceived = ContinuousClock.now
    private var readPaused = false
    /// The readiness registered with the loop (`start()`, `updateInterest()`). It is set again only when
    /// it changes: each change is a system call (`epoll_ctl`), and `flush()` asks after every write (an
    /// unconditional call was about 6 % of the server loop's time in the ping → pong benchmark).
    private var registeredInterest = (readable: false, writable: false)
    private var closeSent = false
    private var closeReceived = false
    private var shutDownAfterFlush = false
    /// Set when this side failed the connection: nothing more that arrives is processed.
    private var failed = false
    private var end: WebSocketChannelEnd?
    private var timer: UInt64?
    private var decoder: WebSocketFrameDecoder
    /// Server: set until `authenticated()`, when the channel applies the unauthenticated limits.
    private var awaitingAuthentication: Bool
    /// Set once the first message arrived before authentication: nothing more is processed until then.
    private var heldForAuthentication = false
    private var helloTimer: UInt64?
    /// How far `input` was searched for the end of the handshake head.
    private var headScanned = 0
    private var assembler: WebSocketMessageAssembler

    /// A channel for `descriptor` (connected, or connecting when `connecting` is true).
    init(loop: EventLoop, descriptor: Int32, role: Role, limits: WebSocketLimits, connecting: Bool = false) {
        self.loop = loop
        self.descriptor = descriptor
        self.role = role
        self.limits = limits
        phase = connecting ? .connecting : .handshaking
        switch role {
        case .server: decoder = WebSocketFrameDecoder(reader: .server, maximumMessageBytes: limits.maximumMessageBytes)
        case .client: decoder = WebSocketFrameDecoder(reader: .client, maximumMessageBytes: limits.maximumMessageBytes)
        }
        assembler = WebSocketMessageAssembler(
            maximumMessageBytes: limits.maximumMessageBytes, maximumFragments: limits.maximumFragmentsPerMessage,
            minimumFragmentBytes: limits.minimumFragmentBytes)
        // The sync protocol is binary: a text frame is refused from its header, before its payload is read.
        decoder.refusesText = true
        awaitingAuthentication = false
        if case .server = role, limits.helloTimeout != nil || limits.maximumUnauthenticatedMessageBytes != nil {
            awaitingAuthentication = true
            let small = min(limits.maximumMessageBytes, limits.maximumUnauthenticatedMessageBytes ?? .max)
            decoder.maximumMessageBytes = small
            assembler.maximumMessageBytes = small
        }
    }

    /// Server: the application authenticated the client. Lifts the unauthenticated limits, cancels the
    /// hello deadline and goes on with what arrived meanwhile.
    func authenticated() {
        guard awaitingAuthentication else { return }
        awaitingAuthentication = false
        decoder.maximumMessageBytes = limits.maximumMessageBytes
        assembler.maximumMessageBytes = limits.maximumMessageBytes
        if let helloTimer { loop.cancelTimer(helloTimer) }
        helloTimer = nil
        releaseHold()
    }

    /// Goes on reading and processing after the message held for authentication.
    private func releaseHold() {
        guard heldForAuthentication else { return }
        heldForAuthentication = false
        guard phase == .open, !shutDownAfterFlush || closeReceived else { return }
        readPaused = false
        process()
        updateInterest()
    }

    var isClient: Bool {
        if case .client = role { return true }
        return false
    }

    /// Registers with the loop and starts the handshake (arming its timeout).
    func start() {
        registeredInterest = (readable: phase != .connecting, writable: phase == .connecting)
        loop.register(
            descriptor, self, readable: registeredInterest.readable, writable: registeredInterest.writable)
        timer = loop.schedule(after: limits.handshakeTimeout) { [weak self] in
            self?.finish(
                .handshakeFailed(
                    "the opening handshake did not complete within \(self?.limits.handshakeTimeout ?? .zero)"))
        }
        if phase == .handshaking, case .client(_, let request) = role { send(request, counted: false) }
    }

    // MARK: Sending

    /// Queues `bytes` (whole frames, or handshake text) and writes what the socket takes now. `counted`
    /// bytes are reported to the delegate as they are written. Ignored once a close frame was sent.
    func send(_ bytes: [UInt8], counted: Bool) {
        guard phase != .closed else { return }
        output.append(bytes, counted: counted)
        if !counted && output.uncountedQueued > limits.maximumQueuedControlBytes {
            abort(
                "the peer did not read: \(output.uncountedQueued) bytes of control frames were queued, the limit is "
                    + "\(limits.maximumQueuedControlBytes)")
            return
        }
        flush()
    }

    /// Whether the opening handshake completed and the channel has not ended.
    var isOpen: Bool { phase == .open }

    /// Whether the TCP connect has not completed yet (a client channel started with `connecting`).
    var isConnecting: Bool { phase == .connecting }

    /// Queues a binary message — its frame header, then its payload (already masked by a client) —
    /// unless closing; both count as written bytes for the delegate.
    func sendMessage(header: [UInt8], payload: [UInt8]) {
        sendMessage(header: header, chunks: [payload])
    }

    /// Queues a binary message whose payload is `chunks`, in order (each queued as it is — a shared buffer
    /// stays shared, nothing is copied); like `sendMessage(header:payload:)` otherwise.
    func sendMessage(header: [UInt8], chunks: [[UInt8]]) {
        guard phase == .open, !closeSent, let last = chunks.last else {
            // Released: never to be written.
            delegate?.channel(self, wrote: chunks.reduce(header.count) { $0 + $1.count })
            return
        }
        output.append(header, counted: true)
        for chunk in chunks.dropLast() { output.append(chunk, counted: true) }
        send(last, counted: true)
    }

    /// Starts the close handshake with `code`; before the connection opened, just closes it.
    func close(_ code: WebSocketCloseCode, reason: String = "") {
        switch phase {
        case .closed: return
        case .connecting, .handshaking: finish(.closedHere)
        case .open:
            guard !closeSent else { return }
            end = end ?? .closedHere
            if closeReceived { shutDownAfterFlush = true }
            sendClose(code, reason: reason)
            armCloseTimer()
            // A client refused before authentication: read on, so that its close frame is seen.
            releaseHold()
        }
    }

    /// Fails the connection for `violation` (RFC 6455 §7.1.7): a close frame with its code, then closes.
    func fail(_ violation: WebSocketViolation) {
        guard phase != .closed else { return }
        failed = true
        end = end ?? .violation(violation)
        guard phase == .open, !closeSent else {
            finish(end!)
            return
        }
        shutDownAfterFlush = true
        readPaused = true
        sendClose(violation.code, reason: violation.reason)
        armCloseTimer()
    }

    /// Drops the connection at once, without a close handshake.
    func abort(_ reason: String) {
        finish(.lost(reason))
    }

    /// Reads the socket again after `received` returned `false`.
    func resumeReading() {
        guard phase != .closed, readPaused, !heldForAuthentication, !shutDownAfterFlush || closeReceived else {
            return
        }
        readPaused = false
        updateInterest()
    }

    private func sendClose(_ code: WebSocketCloseCode?, reason: String) {
        closeSent = true
        let payload = code.map { WebSocketFrame.closePayload($0, reason: reason) } ?? []
        send(frame(.close, payload), counted: false)
    }

    private func frame(_ opcode: WebSocketOpcode, _ payload: [UInt8]) -> [UInt8] {
        WebSocketFrame.encode(opcode: opcode, payload: payload, maskingKey: isClient ? Self.randomMask() : nil)
    }

    static func randomMask() -> (UInt8, UInt8, UInt8, UInt8) {
        let value = UInt32.random(in: .min ... .max)
        return (UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF))
    }

    private func armCloseTimer() {
        if let timer { loop.cancelTimer(timer) }
        timer = loop.schedule(after: limits.closeTimeout) { [weak self] in
            guard let self else { return }
            self.finish(self.end ?? .closedHere)
        }
    }

    // MARK: Readiness

    func handle(_ readiness: Readiness) {
        if phase == .connecting {
            guard readiness.writable || readiness.hangUp else { return }
            let code = Socket.pendingError(descriptor)
            guard code == 0 else {
                finish(.connectFailed("cannot connect: \(Socket.describe(code))"))
                return
            }
            phase = .handshaking
            updateInterest()
            if case .client(_, let request) = role { send(request, counted: false) }
            return
        }
        if readiness.writable { flush() }
        if readiness.readable || readiness.hangUp {
            if readPaused {
                // Paused, but the peer hung up entirely: nothing more can be read or written.
                if readiness.hangUp && !readiness.readable { finish(end ?? .lost("the connection was reset")) }
            } else {
                readAvailable()
            }
        }
    }

    private func readAvailable() {
        var reads = 0
        while phase != .closed, !readPaused, reads < 16 {
            reads += 1
            let buffer = loop.readBuffer
            // A large frame's missing payload is read straight into the frame (only its own bytes: the
            // next frame's stay in the socket for the next read); anything else into the loop's buffer.
            let intoFrame = !shutDownAfterFlush && (partialFrame?.missing ?? 0) > 0
            let result =
                intoFrame
                ? partialFrame!.receive { missing in
                    let slice = missing[..<min(missing.count, WebSocketPartialFrame.maximumReadLength)]
                    let result = Socket.read(descriptor, into: UnsafeMutableRawBufferPointer(rebasing: slice))
                    guard case .transferred(let count) = result else { return (result, 0) }
                    return (result, count)
                }
                : Socket.read(descriptor, into: buffer)
            switch result {
            case .transferred(let count):
                lastReceived = .now
                counters?.bytesReceived.add(count, ordering: .relaxed)
                // Once this side is only waiting for the peer to close, what arrives is discarded unread.
                guard !shutDownAfterFlush else { continue }
                if !intoFrame {
                    let read = UnsafeRawBufferPointer(rebasing: buffer[0..<count])
                    if !beginsPartialFrame(read) { input.append(contentsOf: read) }
                }
                process()
            case .wouldBlock:
                return
            case .endOfFile:
                peerClosedTCP()
                return
            case .failed(let code):
                finish(end ?? .lost("read failed: \(Socket.describe(code))"))
                return
            }
        }
    }

    /// When `read` begins a large frame that it does not hold all of, and nothing else is waiting in
    /// `input`, the frame becomes the partial frame straight from the read buffer (one copy, not two via
    /// the input); otherwise, or when its header is refused (`process` then finds the refusal in `input`),
    /// returns false and the bytes go to `input` as usual.
    private func beginsPartialFrame(_ read: UnsafeRawBufferPointer) -> Bool {
        guard phase == .open, !failed, !heldForAuthentication, partialFrame == nil, inputStart == input.count,
            let header = try? decoder.header(in: read, from: 0),
            header.payloadLength >= WebSocketPartialFrame.minimumPayloadLength,
            read.count < header.frameSize
        else { return false }
        partialFrame = WebSocketPartialFrame(header: header, received: read[header.size...])
        return true
    }

    private func peerClosedTCP() {
        switch phase {
        case .closed: return
        case .connecting, .handshaking: finish(.handshakeFailed("the peer closed the connection during the handshake"))
        case .open:
            if closeSent || closeReceived, let end {
                finish(end)
            } else {
                finish(.lost("the peer closed the connection without a close frame"))
            }
        }
    }

    // MARK: Processing what arrived

    private func process() {
        if phase == .handshaking { processHandshake() }
        guard phase == .open else { return }
        do {
            while phase == .open, !failed, !heldForAuthentication {
                guard let frame = try nextFrame() else { break }
                guard let event = try assembler.take(frame) else { continue }
                handle(event)
            }
        } catch {
            fail(error)
        }
        guard phase != .closed else { return }
        compactInput()
        inputBudget?.update(
            self, holding: input.count - inputStart + assembler.bufferedBytes + (partialFrame?.received ?? 0))
    }

    /// The next whole frame: the partial frame once its payload has arrived, or the next frame in `input`.
    /// A large frame whose payload has not all arrived becomes the partial frame (`nil` then, as when more
    /// bytes are needed).
    private func nextFrame() throws(WebSocketViolation) -> WebSocketFrame? {
        if partialFrame != nil {
            // Taken in place, so that the payload is not shared (unmasking it would copy it).
            guard partialFrame?.missing == 0, let frame = partialFrame?.takeFrame() else { return nil }
            partialFrame = nil
            return frame
        }
        guard let header = try decoder.header(in: input, from: inputStart) else { return nil }
        guard let frame = header.frame(in: input, headerAt: inputStart) else {
            if header.payloadLength >= WebSocketPartialFrame.minimumPayloadLength {
                partialFrame = WebSocketPartialFrame(header: header, received: input[(inputStart + header.size)...])
                inputStart = input.count
            }
            return nil
        }
        inputStart += header.frameSize
        return frame
    }

    /// Server: the listener's input budget was passed and this connection holds the most: drops what it
    /// holds and fails the connection with 1013 (try again later).
    func shedInput(total: Int, limit: Int) {
        input = []
        inputStart = 0
        partialFrame = nil
        assembler.dropFragments()
        fail(
            WebSocketViolation(
                code: .tryAgainLater,
                reason: "the server holds too much input (\(total) bytes of \(limit)); try again later"))
    }

    private func compactInput() {
        if inputStart == input.count {
            // Keep a small buffer for the next message; give a large one back while the connection idles.
            input.removeAll(keepingCapacity: input.capacity <= 4096)
            inputStart = 0
        } else if inputStart >= 64 * 1024 && inputStart * 2 >= input.count {
            // Shift the unread bytes down only when they are at most half the buffer (amortised O(1)).
            input.removeFirst(inputStart)
            inputStart = 0
        }
    }

    private func handle(_ event: WebSocketMessageAssembler.Event) {
        switch event {
        case .binary(let message):
            guard !closeSent else { return }  // data after our close frame is discarded (§5.5.1)
            let wantsMore = delegate?.channel(self, received: message) != false
            if awaitingAuthentication && phase == .open {
                // One message (the hello) until the application answers it: nothing else is buffered.
                heldForAuthentication = true
            }
            if !wantsMore || heldForAuthentication {
                readPaused = true
                updateInterest()
            }
        case .text:
            fail(WebSocketViolation(code: .unsupportedData, reason: "text messages are not part of the sync protocol"))
        case .ping(let payload):
            if !closeSent { send(frame(.pong, payload), counted: false) }
        case .pong:
            break
        case .close(let code, let reason):
            closeReceived = true
            if !closeSent {
                end = .closedByPeer(code, reason)
                sendClose(code, reason: "")
                armCloseTimer()
            }
            // The server closes TCP once the close frames crossed; the client waits for that.
            if !isClient { shutDownAfterFlush = true }
            readPaused = isClient ? false : readPaused
            flush()
        }
    }

    private func processHandshake() {
        let pending = input[inputStart...]
        // Only the bytes not scanned yet (and the 3 before them) are looked at: a head that arrives a byte
        // at a time costs linear, not quadratic, time.
        let scanFrom = max(inputStart, headScanned - 3)
        guard let headEnd = WebSocketHandshake.headEnd(in: input[scanFrom...]) else {
            headScanned = input.count
            if pending.count > limits.maximumHandshakeBytes { refuseHandshake(431, "Request Header Fields Too Large") }
            return
        }
        let head = input[inputStart..<headEnd]
        guard head.count <= limits.maximumHandshakeBytes else {
            refuseHandshake(431, "Request Header Fields Too Large")
            return
        }
        inputStart = headEnd
        switch role {
        case .server:
            if let target = WebSocketHandshake.plainGetTarget(request: head),
                let response = delegate?.channelPlainHTTPResponse(self, target: target)
            {
                respondAndClose(response, reason: "a plain HTTP request for \(target)")
                return
            }
            var decision = WebSocketHandshake.answer(
                request: head, originPolicy: limits.originPolicy ?? .anyOrigin)
            if case .accept = decision, delegate?.channelShouldOpen(self) == false {
                decision = .refuse(
                    response: WebSocketHandshake.response(503, "Service Unavailable", headers: ["Retry-After: 5"]),
                    reason: "the server is not accepting connections")
            }
            switch decision {
            case .accept(let response):
                send(response, counted: false)
                open()
            case .refuse(let response, let reason):
                respondAndClose(response, reason: reason)
            }
        case .client(let key, _):
            if let refusal = WebSocketHandshake.refusal(ofResponse: head, key: key) {
                finish(.handshakeFailed(refusal))
            } else {
                open()
            }
        }
    }

    /// Server: sends `response` to the handshake request and closes the connection once it is written.
    private func respondAndClose(_ response: [UInt8], reason: String) {
        send(response, counted: false)
        end = .handshakeFailed(reason)
        shutDownAfterFlush = true
        readPaused = true
        armCloseTimer()
        updateInterest()
        flush()
    }

    private func refuseHandshake(_ status: Int, _ text: String) {
        guard !isClient else {
            finish(.handshakeFailed("the server's answer is larger than \(limits.maximumHandshakeBytes) bytes"))
            return
        }
        send(WebSocketHandshake.response(status, text), counted: false)
        end = .handshakeFailed("a handshake larger than \(limits.maximumHandshakeBytes) bytes")
        shutDownAfterFlush = true
        readPaused = true
        input = []
        inputStart = 0
        armCloseTimer()
        updateInterest()
        flush()
    }

    private func open() {
        phase = .open
        if let timer { loop.cancelTimer(timer) }
        timer = nil
        if awaitingAuthentication, let helloTimeout = limits.helloTimeout {
            helloTimer = loop.schedule(after: helloTimeout) { [weak self] in
                guard let self, self.awaitingAuthentication else { return }
                self.helloTimer = nil
                self.fail(WebSocketViolation(code: .policyViolation, reason: "no hello within \(helloTimeout)"))
            }
        }
        delegate?.channelOpened(self)
    }

    // MARK: Writing

    private func flush() {
        guard phase != .closed else { return }
        let descriptor = descriptor
        let flushed = output.flush { Socket.write(descriptor, $0) }
        if flushed.bytes > 0 { counters?.bytesSent.add(flushed.bytes, ordering: .relaxed) }
        if flushed.counted > 0 { delegate?.channel(self, wrote: flushed.counted) }
        switch flushed.stop {
        case .wouldBlock:
            updateInterest()
            return
        case .failed(let code):
            finish(end ?? .lost("write failed: \(Socket.describe(code))"))
            return
        case .drained:
            break
        }
        guard output.isEmpty else { return }  // the delegate queued more meanwhile, and flushed it
        if shutDownAfterFlush && phase != .closed {
            Socket.shutdownWrite(descriptor)
            // Read on until the peer closes too (bounded by the close timer), so it gets every byte.
            readPaused = false
        }
        updateInterest()
    }

    private func updateInterest() {
        guard phase != .closed else { return }
        let wanted = (readable: phase != .connecting && !readPaused, writable: phase == .connecting || !output.isEmpty)
        guard wanted != registeredInterest else { return }
        registeredInterest = wanted
        loop.setInterest(descriptor, readable: wanted.readable, writable: wanted.writable)
    }

    // MARK: Ending

    /// Unregisters and closes the socket, and tells the delegate how the channel ended. Once.
    func finish(_ reason: WebSocketChannelEnd) {
        guard phase != .closed else { return }
        phase = .closed
        if let timer { loop.cancelTimer(timer) }
        timer = nil
        if let helloTimer { loop.cancelTimer(helloTimer) }
        helloTimer = nil
        loop.unregister(descriptor)
        Socket.close(descriptor)
        inputBudget?.update(self, holding: 0)
        let unwritten = output.removeAll()
        // It may end in the middle of `process()` (an abort while answering a ping): nothing is left to read.
        input = []
        inputStart = 0
        partialFrame = nil
        let delegate = self.delegate
        self.delegate = nil
        if unwritten > 0 { delegate?.channel(self, wrote: unwritten) }
        delegate?.channelEnded(self, reason)
    }
}
