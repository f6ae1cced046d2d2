@testable import SyncStreams

/// The rate operator on a `TestExecutor`, with a subject feeding it and a log of what came out when.
final class RateHarness: Sendable {
    /// A progress report for the rate operator.
    struct Progress: TransferProgress, Sendable {
        var transferredBytes: Int
        var transferrableBytes: Int

        init(_ transferred: Int, of transferrable: Int) {
            transferredBytes = transferred
            transferrableBytes = transferrable
        }
    }

    /// What the subscriber saw, with the virtual time it saw it at (in whole seconds, rounded).
    enum Seen: Equatable, Sendable {
        case rate(at: Duration, bytesPerSecond: Double, remaining: Duration?)
        case finished
        case failure(StreamTestError)
    }

    let executor = TestExecutor()
    let subject = PassthroughSubject<Progress, StreamTestError>()
    private let log = Locked<[Seen]>([])
    let token: SubscriptionToken

    init(window: Duration) {
        let executor = self.executor
        let log = self.log
        token = subject.rate(window: window, on: executor).subscribe(
            onValue: { rate in
                log.withLock {
                    $0.append(
                        .rate(
                            at: executor.now.sinceOrigin, bytesPerSecond: rate.bytesPerSecond,
                            remaining: rate.estimatedTimeRemaining))
                }
            },
            onCompletion: { completion in
                switch completion {
                case .finished: log.withLock { $0.append(.finished) }
                case .failure(let error): log.withLock { $0.append(.failure(error)) }
                }
            })
    }

    var seen: [Seen] { log.withLock { $0 } }

    /// Sends `transferred/transferrable` at the current virtual time and runs what is due.
    func send(_ transferred: Int, of transferrable: Int) {
        subject.send(Progress(transferred, of: transferrable))
        executor.advance(by: .zero)
    }

    /// Advances virtual time to `seconds` since the origin.
    func at(_ seconds: Int) { executor.advance(to: StreamInstant(sinceOrigin: .seconds(seconds))) }

    /// Sends `transferred` of `transferrable` at each of `reports`' virtual times (whole seconds since
    /// the origin, in order), running what is due before each.
    func play(_ reports: [(second: Int, transferred: Int)], of transferrable: Int) {
        for report in reports {
            at(report.second)
            send(report.transferred, of: transferrable)
        }
    }
}
