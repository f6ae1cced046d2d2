/// The rate logic, without threads: the samples of the sliding window, the rate and time remaining they
/// give at a point in time, and the stall timer.
///
/// The stall timer is not rescheduled per value: each value moves the stall deadline (`window` after it),
/// and a timer that fires before the deadline is rescheduled for the remaining time, so a fast stream
/// costs one clock read per value (as `timeout`'s timer).
struct RateStateMachine<Progress: TransferProgress, Failure: Error>: TimedOperatorStateMachine {
    typealias Input = Progress
    typealias Output = TransferRate
    typealias Action = OperatorAction<TransferRate, Failure, TimedEffect<Never>>

    static var usesClock: Bool { true }

    /// One upstream value, when it arrived.
    struct Sample: Equatable {
        var time: StreamInstant
        var transferred: Int
        var transferrable: Int
    }

    /// What the machine measures.
    struct Measurement {
        /// From the baseline (first) to the newest (last); never empty.
        var samples: [Sample]
        /// The last rate emitted (values equal to it are not emitted again).
        var lastEmitted: TransferRate?
        /// When the stall timer finds a stall: `window` after the newest sample; nil when no stall check
        /// is needed (the rate is already 0).
        var stallDeadline: StreamInstant?
        /// Whether the stall timer is scheduled.
        var timerIsArmed = false
    }

    /// Exhaustive: an upstream event after the upstream's completion, or a current timer with no
    /// measurement, is a broken contract and traps with a message instead of being dropped silently.
    private enum State {
        /// No value yet.
        case waiting
        case measuring(Measurement)
        /// The upstream completed: it sends nothing more.
        case completed
        /// The subscriber invalidated: events already on their way are dropped.
        case cancelled
        /// Only inside `valueReceived` and `timerFired`, while the measurement is taken out to be changed
        /// (so it is the only reference to its samples: no copy on append).
        case updating
    }

    private var state = State.waiting
    var timer = OperatorTimer()
    let window: Duration

    init(window: Duration) { self.window = window }

    /// A value arrived at `now`: it becomes the newest sample (or the only one, when its count went
    /// backwards), and the rate at `now` goes out unless it equals the last one.
    mutating func valueReceived(_ value: Progress, at now: StreamInstant) -> Action {
        var measurement: Measurement
        switch state {
        case .waiting:
            measurement = Measurement(samples: [])
        case .measuring(let current):
            measurement = current
            state = .updating  // so `measurement` is the only reference to the samples (no copy on append)
        case .cancelled:
            return .none
        case .completed:
            preconditionFailure("rate: the upstream sent a value after its completion")
        case .updating:
            preconditionFailure("rate: an event inside another event's step")
        }
        let newest = measurement.samples.last
        // `now` can lag the newest sample's time by a hair when two values race on different threads.
        let time = max(now, newest?.time ?? now)
        let sample = Sample(time: time, transferred: value.transferredBytes, transferrable: value.transferrableBytes)
        if let newest, sample.transferred < newest.transferred {
            measurement.samples.removeAll(keepingCapacity: true)  // re-based progress: start again
        }
        measurement.samples.append(sample)
        let rate = Self.rate(of: &measurement.samples, at: time, window: window)
        measurement.stallDeadline = rate.bytesPerSecond > 0 ? time + window : nil
        var effect: TimedEffect<Never>?
        if measurement.stallDeadline != nil, !measurement.timerIsArmed {
            measurement.timerIsArmed = true
            effect = .start(timer.restart(), after: window)
        }
        let emitted = emit(rate, in: &measurement)
        state = .measuring(measurement)
        return OperatorAction(value: emitted, effect: effect)
    }

    /// The stall timer fired at `now` (`epoch` tells which): before the deadline (values came meanwhile)
    /// it waits for the rest; at or after it nothing moved for a whole window, so the rate at `now` (0)
    /// goes out.
    mutating func timerFired(epoch: UInt64, at now: StreamInstant) -> Action {
        guard timer.fire(epoch: epoch) else { return .none }
        // Only a measurement arms the timer, and ending stops it.
        guard case .measuring(var measurement) = state else {
            preconditionFailure("rate: a current timer fired with no measurement (state \(state))")
        }
        state = .updating  // see valueReceived
        measurement.timerIsArmed = false
        var action = Action.none
        if let deadline = measurement.stallDeadline {
            if now < deadline {
                measurement.timerIsArmed = true
                action.effect = .start(timer.restart(), after: deadline - now)
            } else {
                measurement.stallDeadline = nil
                let time = max(now, measurement.samples[measurement.samples.count - 1].time)
                action.value = emit(Self.rate(of: &measurement.samples, at: time, window: window), in: &measurement)
            }
        }
        state = .measuring(measurement)
        return action
    }

    /// The upstream completed: the completion passes at once; the timer stops.
    mutating func completed(_ completion: StreamCompletion<Failure>, at _: StreamInstant) -> Action {
        switch state {
        case .waiting, .measuring:
            state = .completed
            return OperatorAction(completion: completion, effect: .cancel(timer.stop()))
        case .cancelled:
            return .none
        case .completed:
            preconditionFailure("rate: the upstream completed twice")
        case .updating:
            preconditionFailure("rate: an event inside another event's step")
        }
    }

    /// The subscriber invalidated.
    mutating func cancelled() -> TimedEffect<Never> {
        state = .cancelled
        return TimedEffect(cancelTimer: timer.stop(), endsUpstream: true)
    }

    /// `rate`, unless it equals the last value emitted.
    private func emit(_ rate: TransferRate, in measurement: inout Measurement) -> TransferRate? {
        guard rate != measurement.lastEmitted else { return nil }
        measurement.lastEmitted = rate
        return rate
    }

    /// The rate at `now` over `samples` (non-empty, oldest first, none after `now`): bytes moved from
    /// the baseline — the latest sample with `time <= now − window`, or the oldest — to the newest,
    /// divided by `now − baseline.time`. Drops the samples before the baseline.
    static func rate(of samples: inout [Sample], at now: StreamInstant, window: Duration) -> TransferRate {
        let horizon = StreamInstant(sinceOrigin: now.sinceOrigin - window)
        if let baseline = samples.lastIndex(where: { $0.time <= horizon }), baseline > 0 {
            samples.removeSubrange(0..<baseline)
        }
        let baseline = samples[0]
        let newest = samples[samples.count - 1]
        let span = (now - baseline.time).seconds
        let moved = newest.transferred - baseline.transferred
        let bytesPerSecond = span > 0 ? Double(moved) / span : 0
        let remaining = max(newest.transferrable - newest.transferred, 0)
        let timeRemaining: Duration?
        if remaining == 0 {
            timeRemaining = .zero
        } else if bytesPerSecond > 0 {
            // Capped at Int64.max milliseconds (292 million years) so the conversion cannot trap.
            let milliseconds = (Double(remaining) / bytesPerSecond * 1000).rounded()
            timeRemaining = .milliseconds(milliseconds < 9.2e18 ? Int64(milliseconds) : Int64.max)
        } else {
            timeRemaining = nil
        }
        return TransferRate(bytesPerSecond: bytesPerSecond, estimatedTimeRemaining: timeRemaining)
    }
}

extension Duration {
    /// This duration in seconds, as a `Double`.
    fileprivate var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
