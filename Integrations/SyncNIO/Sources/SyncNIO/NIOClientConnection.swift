import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket
import SyncEngine

/// The client's end of one connection of `NIOWebSocketTransport`.
final class NIOClientConnection: SyncClientConnection, Sendable {
    let events: AsyncStream<SyncTransportEvent>
    private let continuation: AsyncStream<SyncTransportEvent>.Continuation
    private let target: SyncNIOURL
    private let maximumMessageBytes: Int

    private struct State {
        /// `.closed` was reported: nothing more is.
        var reported = false
        var closeCalled = false
        /// The channel once the TCP connect succeeded.
        var channel: (any Channel)?
        /// The upgrade completed.
        var opened = false
        /// Why the connection is ending, as first noticed (an error the pipeline raised, a close frame).
        var ending: SyncTransportError?
    }

    private let state = NIOLockedValueBox(State())

    init(target: SyncNIOURL, maximumMessageBytes: Int) {
        self.target = target
        self.maximumMessageBytes = maximumMessageBytes
        (events, continuation) = AsyncStream<SyncTransportEvent>.makeStream()
    }

    /// Connects: NIO resolves the host and races its addresses (Happy Eyeballs); then TLS (when `tls`),
    /// then the WebSocket upgrade.
    func start(group: any EventLoopGroup, tls: NIOSSLContext?, connectTimeout: TimeAmount) {
        if state.withLockedValue({ $0.closeCalled }) { return }
        let target = target
        let bootstrap = ClientBootstrap(group: group)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .connectTimeout(connectTimeout)
            .channelInitializer { [self] channel in
                channel.eventLoop.makeCompletedFuture { try self.configure(channel, tls: tls) }
            }
        bootstrap.connect(host: target.host, port: target.port).whenComplete { [self] result in
            switch result {
            case .success(let channel):
                let closeNow = state.withLockedValue { state in
                    state.channel = channel
                    return state.closeCalled
                }
                if closeNow { channel.close(promise: nil) }
            case .failure(let error):
                fail(.refused("cannot connect to \(target): \(error)"))
            }
        }
    }

    /// The pipeline before the upgrade: TLS, HTTP with the WebSocket upgrader, this connection's handler.
    private func configure(_ channel: any Channel, tls: NIOSSLContext?) throws {
        let pipeline = channel.pipeline.syncOperations
        if let tls {
            // SNI and the name check use the URL's host; an IP address is checked against the certificate's
            // IP addresses instead (and sent no SNI).
            let isAddress = (try? SocketAddress(ipAddress: target.host, port: 0)) != nil
            try pipeline.addHandler(NIOSSLClientHandler(context: tls, serverHostname: isAddress ? nil : target.host))
        }
        let hostHeader: String
        let hostText = target.host.contains(":") ? "[\(target.host)]" : target.host
        let defaultPort = target.usesTLS ? SyncNIOURL.defaultTLSPort : SyncEndpoint.defaultWebSocketPort
        hostHeader = target.port == defaultPort ? hostText : "\(hostText):\(target.port)"
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: hostHeader)
        headers.add(name: "Content-Length", value: "0")
        let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: target.path, headers: headers)
        let maximumMessageBytes = maximumMessageBytes
        let upgrader = NIOWebSocketClientUpgrader(
            maxFrameSize: maximumMessageBytes, automaticErrorHandling: true
        ) { [self] channel, _ in
            channel.eventLoop.makeCompletedFuture {
                // The upgrader added the frame codec last: the request handler goes, the frame handlers follow.
                let pipeline = channel.pipeline.syncOperations
                pipeline.removeHandler(
                    context: try pipeline.context(handlerType: UpgradeRequestHandler.self), promise: nil)
                try pipeline.addHandler(
                    NIOWebSocketFrameAggregator(
                        minNonFinalFragmentSize: 0, maxAccumulatedFrameCount: Int.max,
                        maxAccumulatedFrameSize: maximumMessageBytes))
                try pipeline.addHandler(ClientFrameHandler(connection: self, maximumMessageBytes: maximumMessageBytes))
                self.opened()
            }
        }
        try pipeline.addHTTPClientHandlers(withClientUpgrade: (upgraders: [upgrader], completionHandler: { _ in }))
        try pipeline.addHandler(UpgradeRequestHandler(connection: self, request: head))
    }

    func send(_ message: ClientMessage) {
        guard let channel = state.withLockedValue({ $0.opened && !$0.reported ? $0.channel : nil }) else { return }
        let frame = WebSocketFrame(
            fin: true, opcode: .binary, maskKey: .random(), data: ByteBuffer(bytes: message.encoded()))
        channel.writeAndFlush(frame, promise: nil)
    }

    func close() {
        let (channel, opened) = state.withLockedValue { state in
            state.closeCalled = true
            return (state.channel, state.opened)
        }
        report(.closed(nil))
        guard let channel else { return }
        // Before the upgrade the pipeline speaks HTTP: no close frame, just the TCP close.
        guard opened else { return channel.close(promise: nil) }
        let frame = WebSocketFrame(
            fin: true, opcode: .connectionClose, maskKey: .random(), data: ByteBuffer(bytes: [0x03, 0xE8]))
        channel.writeAndFlush(frame).whenComplete { _ in channel.close(promise: nil) }
    }

    // MARK: From the pipeline (on the channel's loop)

    private func opened() {
        let report = state.withLockedValue { state in
            state.opened = true
            return !state.reported
        }
        if report { continuation.yield(.opened) }
    }

    fileprivate func received(_ message: ServerMessage) {
        if !state.withLockedValue({ $0.reported }) { continuation.yield(.message(message)) }
    }

    /// Remembers why the connection is ending (the first reason wins); reported once the channel is gone.
    fileprivate func ending(_ reason: SyncTransportError) {
        state.withLockedValue { state in
            if state.ending == nil { state.ending = reason }
        }
    }

    /// An error in the pipeline: a refused certificate, a broken protocol, a refused upgrade, a lost
    /// connection. The channel is closed after it.
    fileprivate func caught(_ error: any Error) {
        let opened = state.withLockedValue { $0.opened }
        if let problem = Self.certificateProblem(error) {
            ending(.certificateRejected("\(target): the server's certificate was not accepted: \(problem)"))
        } else if opened {
            if error is NIOWebSocketError || error is WireError {
                ending(.malformedFrame("\(error)"))
            } else {
                ending(.connectionLost("\(error)"))
            }
        } else {
            ending(.refused("\(target): \(error)"))
        }
    }

    fileprivate func channelEnded() {
        let (ending, opened) = state.withLockedValue { ($0.ending, $0.opened) }
        let reason =
            ending
            ?? (opened
                ? .connectionLost("the connection to \(target) was lost")
                : .refused("\(target) closed the connection before the WebSocket upgrade"))
        report(.closed(reason))
    }

    /// Fails the connection before it has a channel.
    func fail(_ reason: SyncTransportError) {
        report(.closed(reason))
    }

    private func report(_ event: SyncTransportEvent) {
        let first = state.withLockedValue { state in
            defer { state.reported = true }
            return !state.reported
        }
        guard first else { return }
        continuation.yield(event)
        continuation.finish()
    }

    /// What is wrong with the server's certificate, when `error` says verification refused it.
    static func certificateProblem(_ error: any Error) -> String? {
        if let error = error as? NIOSSLExtraError, error == .failedToValidateHostname {
            return "it is not for this host name (\(error))"
        }
        guard let error = error as? NIOSSLError else { return nil }
        switch error {
        case .handshakeFailed(let underlying):
            let text = "\(underlying)"
            guard text.contains("CERTIFICATE_VERIFY_FAILED") || text.contains("CERTIFICATE") else { return nil }
            return "verification failed (expired or not yet valid, for another host name, or not signed by a trusted "
                + "authority): \(text)"
        case .unableToValidateCertificate, .noCertificateToValidate:
            return "\(error)"
        default:
            return nil
        }
    }
}

/// The last handler until the upgrade: sends the upgrade request; notes why the connection failed.
private final class UpgradeRequestHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart

    private let connection: NIOClientConnection
    private let request: HTTPRequestHead

    init(connection: NIOClientConnection, request: HTTPRequestHead) {
        self.connection = connection
        self.request = request
    }

    func channelActive(context: ChannelHandlerContext) {
        context.write(NIOAny(HTTPClientRequestPart.head(request)), promise: nil)
        context.writeAndFlush(NIOAny(HTTPClientRequestPart.end(nil)), promise: nil)
        context.fireChannelActive()
    }

    /// A response that did not upgrade (the upgrade handler forwards it): its status says why, and the
    /// connection ends (a proxy may keep it open for more requests).
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let head) = unwrapInboundIn(data) {
            connection.ending(
                .refused("the server answered \(head.status.code) \(head.status.reasonPhrase) instead of upgrading"))
            context.close(promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if error is NIOHTTPClientUpgradeError {
            // The response follows: close once it was read.
            context.eventLoop.execute { [channel = context.channel] in channel.close(promise: nil) }
            return
        }
        connection.caught(error)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        connection.channelEnded()
        context.fireChannelInactive()
    }
}

/// The last handler after the upgrade: turns WebSocket messages into server messages, answers pings and
/// closes.
private final class ClientFrameHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame

    private let connection: NIOClientConnection
    private let maximumMessageBytes: Int

    init(connection: NIOClientConnection, maximumMessageBytes: Int) {
        self.connection = connection
        self.maximumMessageBytes = maximumMessageBytes
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .binary:
            let bytes = Array(frame.unmaskedData.readableBytesView)
            do {
                connection.received(try ServerMessage(decoding: bytes, maximumSize: maximumMessageBytes))
            } catch {
                connection.ending(.malformedFrame("a malformed sync message: \(error)"))
                closeWith(context: context, code: 1007)
            }
        case .ping:
            let pong = WebSocketFrame(fin: true, opcode: .pong, maskKey: .random(), data: frame.unmaskedData)
            context.writeAndFlush(NIOAny(pong), promise: nil)
        case .pong:
            break
        case .connectionClose:
            var data = frame.unmaskedData
            let code = data.readInteger(as: UInt16.self)
            let reason = data.readString(length: data.readableBytes) ?? ""
            let detail = reason.isEmpty ? "" : ": \(reason)"
            connection.ending(
                .connectionLost("the server closed the connection (\(code.map { "\($0)" } ?? "no code")\(detail))"))
            // Echo the close (RFC 6455 §5.5.1), then close the TCP connection.
            var echo = context.channel.allocator.buffer(capacity: 2)
            if let code { echo.writeInteger(code) }
            let answer = WebSocketFrame(fin: true, opcode: .connectionClose, maskKey: .random(), data: echo)
            context.writeAndFlush(NIOAny(answer)).whenComplete { [channel = context.channel] _ in
                channel.close(promise: nil)
            }
        default:
            connection.ending(.malformedFrame("an unexpected \(frame.opcode) frame from the server"))
            closeWith(context: context, code: 1003)
        }
    }

    private func closeWith(context: ChannelHandlerContext, code: UInt16) {
        var data = context.channel.allocator.buffer(capacity: 2)
        data.writeInteger(code)
        let frame = WebSocketFrame(fin: true, opcode: .connectionClose, maskKey: .random(), data: data)
        context.writeAndFlush(NIOAny(frame)).whenComplete { [channel = context.channel] _ in
            channel.close(promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        connection.caught(error)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        connection.channelEnded()
        context.fireChannelInactive()
    }
}
