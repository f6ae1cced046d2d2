import Foundation
import Logging
import SyncServer

/// Where a `PostgresPartitionStore` logs: `SyncLogEvent`s at or below a level, to a sink (standard error
/// by default, like `SyncServer`).
struct StoreLog: Sendable {
    static let category = "sync.postgres"

    let level: SyncLogLevel
    let sink: @Sendable (SyncLogEvent) -> Void

    init(level: SyncLogLevel, sink: (@Sendable (SyncLogEvent) -> Void)?) {
        self.level = level
        self.sink = sink ?? { event in FileHandle.standardError.write(Data((event.description + "\n").utf8)) }
    }

    func callAsFunction(_ level: SyncLogLevel, _ message: @autoclosure () -> String, category: String = category) {
        guard level != .off, level <= self.level else { return }
        sink(SyncLogEvent(date: Date(), level: level, category: category, message: message()))
    }

    /// A swift-log `Logger` for PostgresNIO's own messages (category `postgres-nio`), through this log.
    var logger: Logger {
        let log = self
        var logger = Logger(label: "postgres-nio") { _ in Handler(target: log) }
        logger.logLevel = Handler.swiftLogLevel(for: level)
        return logger
    }

    private struct Handler: LogHandler {
        let target: StoreLog
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .warning

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let level: SyncLogLevel =
                switch event.level {
                case .trace: .trace
                case .debug: .debug
                case .info, .notice: .info
                case .warning: .warn
                case .error: .error
                case .critical: .fatal
                }
            target(level, "\(event.message)", category: "postgres-nio")
        }

        static func swiftLogLevel(for level: SyncLogLevel) -> Logger.Level {
            switch level {
            case .off, .fatal: .critical
            case .error: .error
            case .warn: .warning
            case .info: .info
            case .detail, .debug: .debug
            case .trace: .trace
            }
        }
    }
}
