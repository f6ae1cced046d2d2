/// How much the engine and the server log, as Realm's log levels: each level includes the ones above it.
///
/// | level | what is logged |
/// | --- | --- |
/// | `.off` | nothing |
/// | `.fatal` | errors that stop a session or the client for good |
/// | `.error` | errors that are retried |
/// | `.warn` | unusual conditions: a torn write repaired, a slow peer cut off |
/// | `.info` | connection attempts, connections opened (with the time the connect took) and lost, session state changes |
/// | `.detail` | binds, unbinds, the handshake, a download completed, partitions evicted |
/// | `.debug` | each message's kind and size, each commit's size and duration |
/// | `.trace` | everything, keepalive pings included |
public enum SyncLogLevel: Int, Sendable, Hashable, Comparable, CaseIterable, CustomStringConvertible {
    case off = 0
    case fatal
    case error
    case warn
    case info
    case detail
    case debug
    case trace

    /// The level named `name` (`"info"`, `"debug"`, …, case-insensitive), or `nil`.
    public init?(name: String) {
        guard let level = Self.allCases.first(where: { $0.description == name.lowercased() }) else { return nil }
        self = level
    }

    public static func < (lhs: SyncLogLevel, rhs: SyncLogLevel) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String {
        switch self {
        case .off: "off"
        case .fatal: "fatal"
        case .error: "error"
        case .warn: "warn"
        case .info: "info"
        case .detail: "detail"
        case .debug: "debug"
        case .trace: "trace"
        }
    }
}
