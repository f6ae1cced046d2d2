import Foundation

/// One logged event: when, how important, from which part of the system, and what.
public struct SyncLogEvent: Sendable, Hashable, CustomStringConvertible {
    /// When it was logged (wall-clock time).
    public var date: Date
    /// How important it is (never `.off`).
    public var level: SyncLogLevel
    /// Which part logged it, e.g. `"sync.client.connection"`, `"sync.client.session"`, `"sync.server"`.
    public var category: String
    /// What happened.
    public var message: String

    public init(date: Date, level: SyncLogLevel, category: String, message: String) {
        self.date = date
        self.level = level
        self.category = category
        self.message = message
    }

    /// One line: an ISO 8601 timestamp with milliseconds, the level, the category and the message.
    ///
    /// `2026-11-24T04:20:00.123Z info sync.client.connection: connected to ws://127.0.0.1:9000 in 3 ms`
    public var description: String {
        "\(Self.timestamp(date)) \(level) \(category): \(message)"
    }

    private static func timestamp(_ date: Date) -> String {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        let seconds = milliseconds / 1000
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(Int32(milliseconds % 1000), 3))Z"
    }
}
