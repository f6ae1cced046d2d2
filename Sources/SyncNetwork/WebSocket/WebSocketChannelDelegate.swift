/// What a `WebSocketChannel` tells its owner, on the channel's loop thread.
protocol WebSocketChannelDelegate: AnyObject {
    /// Server: a valid upgrade request arrived. Returns whether to answer `101` (open) or `503` (full or
    /// stopping: the client is refused before the upgrade). Default: `true`.
    func channelShouldOpen(_ channel: WebSocketChannel) -> Bool
    /// Server: a plain HTTP `GET` for `target` arrived instead of an upgrade. Returns the whole response
    /// to send before closing, or `nil` to refuse it like any bad upgrade request. Default: `nil`.
    func channelPlainHTTPResponse(_ channel: WebSocketChannel, target: String) -> [UInt8]?
    /// The opening handshake completed: messages flow.
    func channelOpened(_ channel: WebSocketChannel)
    /// A complete binary message. Returns `false` when the owner holds too much unread: the channel stops
    /// reading its socket until `resumeReading()`.
    func channel(_ channel: WebSocketChannel, received message: [UInt8]) -> Bool
    /// `count` bytes that were queued with `send(_:counted: true)` were written to the socket.
    func channel(_ channel: WebSocketChannel, wrote count: Int)
    /// The channel ended; called exactly once, last.
    func channelEnded(_ channel: WebSocketChannel, _ end: WebSocketChannelEnd)
}

extension WebSocketChannelDelegate {
    func channelShouldOpen(_ channel: WebSocketChannel) -> Bool { true }
    func channelPlainHTTPResponse(_ channel: WebSocketChannel, target: String) -> [UInt8]? { nil }
}
