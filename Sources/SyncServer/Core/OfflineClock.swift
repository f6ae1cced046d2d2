import Foundation
import SyncStreams

/// The clock that offline time is measured with: the wall clock, corrected by a monotonic one while the
/// server runs.
///
/// Between two readings, the wall clock should move as far as the monotonic clock. When it moved otherwise
/// (set forward by days, or back), the difference is a jump, not time that passed: it is taken off every
/// later reading, so that a jump neither expires every client file at once nor keeps expired ones alive.
/// Readings are therefore "wall time as of the first reading, plus monotonic time since", with gradual
/// corrections (less than `tolerance` between readings) let through. Records written with these readings
/// stay in one frame for the life of the process; across a restart the server cannot tell a jump and takes
/// the wall clock as it is.
final class OfflineClock: Sendable {
    private let wall: @Sendable () -> Date
    private let uptime: (@Sendable () -> Duration)?
    /// The last readings of both clocks, and the correction applied to the wall clock so far.
    private let state = Locked<(wall: Date, uptime: Duration, correction: TimeInterval)?>(nil)
    /// How far the two clocks may drift apart between readings before it counts as a jump.
    static let tolerance: TimeInterval = 1

    init(wall: @escaping @Sendable () -> Date, uptime: (@Sendable () -> Duration)?) {
        self.wall = wall
        self.uptime = uptime
    }

    /// Now, in the frame of the first reading.
    func now() -> Date {
        let date = wall()
        guard let uptime else { return date }
        let elapsed = uptime()
        return state.withLock { state in
            var correction = state?.correction ?? 0
            if let last = state {
                let drift = date.timeIntervalSince(last.wall) - Self.seconds(elapsed - last.uptime)
                if abs(drift) > Self.tolerance { correction -= drift }
            }
            state = (date, elapsed, correction)
            return date.addingTimeInterval(correction)
        }
    }

    private static func seconds(_ duration: Duration) -> TimeInterval {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
    }
}
