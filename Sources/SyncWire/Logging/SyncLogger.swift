import Dispatch
import Foundation
import SyncStreams

/// Where the engine's and the server's log events go: a level, a closure, and a stream.
///
/// `log` checks the level first and builds the message only when it passes (the message is an
/// autoclosure), so a disabled level costs one comparison of an immutable value: nothing on hot paths.
package final class SyncLogger: Sendable {
    /// The most detailed level logged.
    package let level: SyncLogLevel
    private let subject = PassthroughSubject<SyncLogEvent, Never>()
    /// The sink's subscription to `subject`, for the logger's life.
    private let sinkToken: SubscriptionToken

    /// A logger of events up to `level`, given to `sink` and to `events`' subscribers, on a logging thread
    /// (the sink decides where the work goes). The sink is the subject's first subscriber, so it and every
    /// subscriber see the events in one order, even when threads log at once (the subject delivers one
    /// event at a time; a thread that logs while another delivers only queues its event).
    package init(level: SyncLogLevel, sink: (@Sendable (SyncLogEvent) -> Void)?) {
        self.level = level
        sinkToken = subject.subscribe(sink ?? SyncLogger.standardError)
    }

    /// A logger that logs nothing.
    package static let off = SyncLogger(level: .off, sink: { _ in })

    /// Whether events of `level` are logged.
    @inline(__always)
    package func isEnabled(_ level: SyncLogLevel) -> Bool { level != .off && level <= self.level }

    /// Logs `message` at `level` under `category`, if the level is enabled.
    @inline(__always)
    package func log(_ level: SyncLogLevel, _ category: String, _ message: @autoclosure () -> String) {
        guard isEnabled(level) else { return }
        emit(SyncLogEvent(date: Date(), level: level, category: category, message: message()))
    }

    /// The logged events, as they are logged (on a logging thread), in the order the sink gets them.
    package var events: AnySyncStream<SyncLogEvent, Never> { subject.eraseToAnyStream() }

    private func emit(_ event: SyncLogEvent) {
        subject.send(event)
    }

    /// The default sink: one line per event on standard error, written on a queue of its own (a full pipe
    /// never blocks the thread that logs).
    package static let standardError: @Sendable (SyncLogEvent) -> Void = { event in
        let line = Data((event.description + "\n").utf8)
        standardErrorQueue.async { FileHandle.standardError.write(line) }
    }

    private static let standardErrorQueue = DispatchQueue(label: "SyncLogger.standardError")
}
