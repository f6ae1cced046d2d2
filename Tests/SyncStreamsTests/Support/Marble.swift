@testable import SyncStreams

/// The failure a marble `#` stands for.
struct MarbleError: Error, Equatable, Sendable {
    var name = "#"
}

/// One event of a marble diagram, with the virtual time it happened at (since the executor's origin).
struct TimedEvent: Equatable, Sendable, CustomStringConvertible {
    var time: Duration
    var event: RecordedEvent<String, MarbleError>

    var description: String { "\(time): \(event)" }
}

/// Marble diagrams over a `TestExecutor`.
///
/// Notation: each character is one virtual tick (`Marble.tick`, 10 ms unless given), the first at time 0.
/// - `-` nothing happens in that tick;
/// - a letter or digit: that one-character string is sent;
/// - `|` finished, `#` failure (`MarbleError()`);
/// - `(ab|)` a group: all its events happen at the time of the `(`; time still advances by one tick per
///   character (RxJS convention).
///
/// `Marble.run` subscribes at time 0, sends the input events at their times (scheduled before anything
/// the operator schedules, so at equal times an input event runs before an operator's timer), runs the
/// executor until nothing is left, and returns what the output delivered, each with `executor.now` at the
/// moment of delivery.
enum Marble {
    static let tick: Duration = .milliseconds(10)

    /// The events of a marble diagram, with their times.
    static func parse(_ marble: String, tick: Duration = tick) -> [TimedEvent] {
        var events: [TimedEvent] = []
        var groupStart: Int?
        for (index, character) in marble.enumerated() {
            let time = tick * (groupStart ?? index)
            switch character {
            case "-", " ":
                break
            case "(":
                groupStart = index
            case ")":
                groupStart = nil
            case "|":
                events.append(TimedEvent(time: time, event: .finished))
            case "#":
                events.append(TimedEvent(time: time, event: .failure(MarbleError())))
            default:
                events.append(TimedEvent(time: time, event: .value(String(character))))
            }
        }
        return events
    }

    /// Runs `input` through the stream `makeStream` builds from a subject and the executor.
    ///
    /// - Parameters:
    ///   - until: Advance the virtual clock to this time only (default: run until nothing is queued).
    ///   - invalidateAt: Invalidate the subscription at this time (before input events due then).
    static func run<S: SyncStream>(
        _ input: String,
        tick: Duration = tick,
        until: Duration? = nil,
        invalidateAt: Duration? = nil,
        _ makeStream: (PassthroughSubject<String, MarbleError>, TestExecutor) -> S
    ) -> [TimedEvent] where S.Output == String {
        let executor = TestExecutor()
        let subject = PassthroughSubject<String, MarbleError>()
        let log = TimedLog(executor: executor)
        // Inputs (and the invalidation) are scheduled before subscribing, so at equal times they run
        // before anything the operator schedules.
        let box = TokenBox()
        if let invalidateAt {
            _ = executor.schedule(after: invalidateAt) { box.invalidate() }
        }
        for timed in parse(input, tick: tick) {
            _ = executor.schedule(after: timed.time) {
                switch timed.event {
                case .value(let value): subject.send(value)
                case .finished: subject.send(completion: .finished)
                case .failure(let error): subject.send(completion: .failure(error))
                }
            }
        }
        let token = log.subscribe(to: makeStream(subject, executor))
        box.token = token
        if let until { executor.advance(to: StreamInstant(sinceOrigin: until)) } else { executor.run(limit: 10_000) }
        token.invalidate()
        return log.events
    }
}

/// Records each event a stream delivers with the executor's time at that moment.
final class TimedLog: Sendable {
    private let executor: TestExecutor
    private let storage = Locked<[TimedEvent]>([])

    init(executor: TestExecutor) { self.executor = executor }

    var events: [TimedEvent] { storage.withLock { $0 } }

    var values: [String] { events.compactMap { if case .value(let value) = $0.event { value } else { nil } } }

    func record(_ event: RecordedEvent<String, MarbleError>) {
        let time = executor.now.sinceOrigin
        storage.withLock { $0.append(TimedEvent(time: time, event: event)) }
    }

    func subscribe<S: SyncStream>(to stream: S) -> SubscriptionToken where S.Output == String {
        stream.subscribe(
            onValue: { self.record(.value($0)) },
            onCompletion: { completion in
                switch completion {
                case .finished: self.record(.finished)
                case .failure(let error):
                    self.record(.failure(error as? MarbleError ?? MarbleError(name: "\(error)")))
                }
            }
        )
    }
}

extension Marble {
    /// A slot for a token that a callback of its own subscription needs (to invalidate re-entrantly).
    final class TokenBox: Sendable {
        private let storage = Locked<SubscriptionToken?>(nil)

        init() {}

        var token: SubscriptionToken? {
            get { storage.withLock { $0 } }
            set { storage.withLock { $0 = newValue } }
        }

        func invalidate() { token?.invalidate() }
    }

    /// An object whose release a test observes through a weak reference.
    final class Probe: Sendable {
        init() {}
    }

    /// Weakly holds an object, to check it was released.
    final class WeakBox<Object: AnyObject & Sendable>: @unchecked Sendable {
        // @unchecked Sendable: `object` is written only in `init`.
        weak var object: Object?

        init(_ object: Object) { self.object = object }
    }
}
