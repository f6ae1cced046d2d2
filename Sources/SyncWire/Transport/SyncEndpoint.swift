/// Where a sync server is: in this process, or at a network address.
public struct SyncEndpoint: Sendable, Hashable, CustomStringConvertible {
    /// The kinds of endpoint.
    public enum Kind: Sendable {
        /// A server running in this process (`SyncServer.embedded()`), reached without sockets.
        case inProcess(any SyncConnectionAcceptor)
        /// A WebSocket server at `host:port`.
        case webSocket(host: String, port: Int)
    }

    /// The kind of endpoint and its address.
    public let kind: Kind

    /// An endpoint of the given kind.
    public init(_ kind: Kind) { self.kind = kind }

    /// The in-process server `acceptor`.
    public static func inProcess(_ acceptor: any SyncConnectionAcceptor) -> SyncEndpoint {
        SyncEndpoint(.inProcess(acceptor))
    }

    /// A WebSocket server at `host:port` (an IPv6 address without brackets). `SyncEndpoint(url:)` reads
    /// `ws://host:port`.
    public static func webSocket(host: String, port: Int) -> SyncEndpoint {
        SyncEndpoint(.webSocket(host: host, port: port))
    }

    public static func == (lhs: SyncEndpoint, rhs: SyncEndpoint) -> Bool {
        switch (lhs.kind, rhs.kind) {
        case (.inProcess(let a), .inProcess(let b)): a === b
        case (.webSocket(let h1, let p1), .webSocket(let h2, let p2)): h1 == h2 && p1 == p2
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch kind {
        case .inProcess(let acceptor): hasher.combine(ObjectIdentifier(acceptor))
        case .webSocket(let host, let port):
            hasher.combine(host)
            hasher.combine(port)
        }
    }

    public var description: String {
        switch kind {
        case .inProcess(let acceptor): "in-process server \(ObjectIdentifier(acceptor))"
        case .webSocket: url ?? ""
        }
    }
}
